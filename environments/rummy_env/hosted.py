"""Opponents that are bot processes over gRPC: the env's match is hosted by an embedded referee.

``GrpcBot(("python", "-m", "rummybot.bots.greedy"))`` as a Gymnasium opponent is any SDK's bot command, run as a
tournament runs it (``tournaments.botproc.BotProcess``: ``--referee ADDRESS`` appended, a minted bot token in
``RUMMY_BOT_TOKEN`` only, killed with its process group at ``close()``, and with the env's process if that dies).
Why a real referee rather than asking the bot for one decision at a time: the bot then gets exactly what it gets in
a tournament (its seat's events and hand results, decision requests with its view and legal actions, deadlines,
rejections, a forfeit to the autopilot if it dies or never comes), all from the referee's own session code, and the
env adds no second copy of the protocol nor of any rule.

The match is a ``MatchSession`` of the embedded referee (made by ``CreateMatch`` over gRPC with the referee's admin
token). The learner's seat, and opponents that are in-process policies, are ``Connection``s of this process attached
to the session (``_InProcessSeat``): the session sends them what it sends a bot's stream and takes their answers
through ``MatchSession.deliver``, the path a bot's decoded answer takes. Everything that reads or answers the match
runs on the referee's event loop (``Host.call``), so the session never moves the match while the env reads it.
The learner's seat has an unbounded time bank: a learner thinks between ``step`` calls; the bots keep the time
control (``per_move_ms``: a missed deadline plays the default move, as in any match).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import tempfile
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

import grpc
import structlog

# Every name the hosted mode takes from the referee's service, the tournament runner and the wire: imported here
# and not in ``_core`` because they load gRPC, which the rest of the environments never need.
from referee.service.logs import configure_logging
from referee.service.server import EmbeddedReferee
from referee.service.session import Connection, MatchSession
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire import protocodec as codec
from rummy_env._core import Action
from rummy_env.gym_env import GrpcBot
from tournaments.botproc import BotProcess, cannot_start
from tournaments.config import BotSpec

__all__ = ["GrpcBot", "Host", "HostError", "LEARNER_BANK_MS"]

T = TypeVar("T")
LEARNER_BANK_MS = 2**31  # the learner's time bank (~24 days): it is never timed out (the field is a uint32)


class HostError(RuntimeError):
    """The hosted match could not go on: ``code`` says why (``BOT_CANNOT_START``, ``MATCH_CREATE_FAILED``,
    ``ACTION_REJECTED`` with the referee's own code after it, ``REFEREE_GONE``, ``POLICY_FAILED``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class _InProcessSeat(Connection):
    """A seat played in this process: the session's messages to it are read here instead of written to a stream.
    Only what asks something (``urgent``: a decision, a rejection, the match's result) is decoded; events are
    dropped (the env reads the match itself, on the loop)."""

    def __init__(self, name: str, on_decision: Callable[[int], None] | None = None) -> None:
        super().__init__(name)
        self.turn = asyncio.Event()
        self.request: int | None = None  # the open decision request's id
        self.result: pb.MatchResult | None = None
        self.refused: tuple[str, str] | None = None
        self._on_decision = on_decision

    def send_encoded(self, data: bytes, urgent: bool) -> None:
        if not urgent or self.closed:
            return
        msg = pb.PlayResponse.FromString(data)
        body = msg.WhichOneof("body")
        if body == "decision":
            self.request = msg.decision.request_id
            if self._on_decision is not None:  # answered on the loop's next turn, as a bot's answer would come
                asyncio.get_running_loop().call_soon(self._on_decision, msg.decision.request_id)
        elif body == "match_result":
            self.result = msg.match_result
        elif body == "rejected":
            self.refused = (msg.rejected.code, msg.rejected.message)
        self.turn.set()


class Host:
    """An embedded referee and the opponents' bot processes, for one env: made once, a match per episode. The
    bots' output goes to ``log_dir`` (a temporary folder by default: ``<name>-<seat>.log``); the referee's own log
    lines are kept to ``log_level`` and up unless the program configured structlog itself."""

    def __init__(self, bots: Mapping[int, GrpcBot], per_move_ms: int = 5000, connect_ms: int = 15000,
                 log_dir: str | Path | None = None, log_level: str = "warning", start_s: float = 60.0) -> None:
        if not structlog.is_configured():  # the referee logs five lines a match: a training loop would drown in them
            configure_logging(log_level, json=False)
        specs = {seat: BotSpec(b.name, tuple(b.command), Path(b.cwd) if b.cwd else None, dict(b.env))
                 for seat, b in bots.items()}
        for seat, spec in specs.items():  # a mistyped command is an error now, not a forfeit per episode
            if not spec.command:
                raise HostError("BOT_CANNOT_START", f"seat {seat}: a GrpcBot needs a command")
            if (why := cannot_start(spec)) is not None:
                raise HostError("BOT_CANNOT_START", f"seat {seat} ({spec.name}): {why}")
        self.per_move_ms = per_move_ms
        self.connect_ms = connect_ms
        self._admin = secrets.token_hex(16)  # CreateMatch needs it; the bots' tokens are minted with it
        self._logs = tempfile.TemporaryDirectory(prefix="rummy-env-bots-") if log_dir is None else None
        self.log_dir = Path(self._logs.name if self._logs is not None else str(log_dir))
        self.referee = EmbeddedReferee(admin_token=self._admin)
        self.address = self.referee.start()
        self.procs = {seat: BotProcess(spec, seat, self.address, self.log_dir, admin_token=self._admin)
                      for seat, spec in specs.items()}
        self._channel = grpc.insecure_channel(self.address)
        self._stub = pb_grpc.RefereeServiceStub(self._channel)  # type: ignore[no-untyped-call]  # generated, untyped
        self.error: BaseException | None = None  # an in-process policy's failure, raised to the env at its next wait
        self.closed = False

        async def start() -> None:
            """Each bot joined the referee (or ended) before the env is handed out, at most ``start_s``: a Python
            bot takes a second or more to start, and a seat not joined within ``connect_ms`` of a match forfeits."""
            for p in self.procs.values():
                p.start()
            ends = asyncio.get_running_loop().time() + start_s
            service = self.referee.service
            assert service is not None
            while asyncio.get_running_loop().time() < ends:
                if all(p.exits or p.token in service.bots for p in self.procs.values()):
                    return
                await asyncio.sleep(0.02)

        self.call(start())

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = self.referee.loop  # the embedded referee's own loop (its thread runs it)
        if loop is None or self.closed:
            raise HostError("REFEREE_GONE", "the env's embedded referee is stopped (the env was closed)")
        return loop

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the referee's loop and wait for it. Waits are bounded by the referee's own clocks (every
        bot move has a deadline); this only checks, once a second, that the referee's thread still runs."""
        try:
            loop = self._loop
        except HostError:
            coro.close()  # never to run
            raise
        fut = asyncio.run_coroutine_threadsafe(coro, loop)
        while True:
            try:
                return fut.result(timeout=1.0)
            except TimeoutError:
                if not self.referee.is_running():
                    fut.cancel()
                    raise HostError("REFEREE_GONE", "the embedded referee's thread ended") from None

    def create(self, variant: str, seats: int, options: Mapping[str, str], seed: str, max_hands: int,
               max_turns_per_hand: int) -> MatchSession:
        """A new match (``CreateMatch`` over gRPC, as any client makes one): bot seats named by their processes'
        tokens, the others issued seat tokens (played in process). :raises HostError: the referee refused it."""
        req = pb.CreateMatchRequest(
            variant=variant, options=dict(options), seed=seed, max_hands=max_hands,
            max_turns_per_hand=max_turns_per_hand,
            seats=[pb.SeatSpec(name=self.procs[s].spec.name if s in self.procs else f"seat{s}",
                               bot_token=self.procs[s].token if s in self.procs else "") for s in range(seats)],
            time_control=pb.TimeControl(per_move_ms=self.per_move_ms, connect_ms=self.connect_ms))
        try:
            made = self._stub.CreateMatch(req, metadata=[("authorization", f"Bearer {self._admin}")], timeout=30)
        except grpc.RpcError as exc:
            raise HostError("MATCH_CREATE_FAILED", str(exc.details() if hasattr(exc, "details") else exc)) from None

        async def session() -> MatchSession:
            assert self.referee.service is not None
            return self.referee.service.sessions[made.match_id]

        return self.call(session())

    def seat(self, session: MatchSession, seat: int, on_decision: Callable[[int], None] | None = None,
             learner: bool = False) -> _InProcessSeat:
        """Attach an in-process seat to ``session`` (call on the loop). The learner's seat gets an unbounded bank."""
        conn = _InProcessSeat(f"seat{seat}", on_decision)
        if learner:
            session.seats[seat].bank_left_ms = LEARNER_BANK_MS
        session.attach(seat, conn)
        return conn

    @staticmethod
    def answer(session: MatchSession, conn: _InProcessSeat, action: Action) -> None:
        """Answer ``conn``'s open request with one of the rules core's actions (call on the loop)."""
        rid = conn.request
        if rid is None:
            raise HostError("NO_REQUEST", "the seat has no open decision request")
        conn.request = None
        session.deliver(conn, rid, codec.action_to_pb(action))

    async def until_turn(self, conn: _InProcessSeat) -> None:
        """Wait until ``conn``'s seat is asked to decide or the match is over. :raises HostError: its answer was
        refused, or an in-process policy failed."""
        while True:
            if self.error is not None:
                err, self.error = self.error, None
                raise HostError("POLICY_FAILED", f"an opponent's policy raised {err!r}") from err
            if conn.refused is not None:
                code, message = conn.refused
                conn.refused = None
                raise HostError("ACTION_REJECTED", f"{code}: {message}")
            if conn.result is not None or conn.request is not None:
                return
            conn.turn.clear()
            await conn.turn.wait()

    def close(self, grace: float = 3.0) -> None:
        """Stop the bot processes (SIGTERM to each process group, SIGKILL after ``grace``), then the referee."""
        if self.closed:
            return

        async def stop() -> None:
            await asyncio.gather(*(p.stop(grace) for p in self.procs.values()))

        with contextlib.suppress(HostError):
            self.call(stop())
        self.closed = True
        self._channel.close()
        self.referee.stop()
        if self._logs is not None:
            self._logs.cleanup()

    def alive(self) -> list[int]:
        """The pids of bot processes running now."""
        return [p.proc.pid for p in self.procs.values() if p.proc is not None and p.proc.returncode is None]



