"""How one match is played: the request and outcome types, the backend interface and the gRPC backend.

Its own module so that every backend depends on it and the runner depends on the backends, not the other way
round: the Dask backend (``tournaments.cluster``) and the runner (``tournaments.runner``, which picks the backend)
imported each other while these lived in the runner. ``tournaments.runner`` re-exports the public names.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import structlog

from tournaments.config import TimeControl, TournamentConfig
from tournaments.faults import BotRun, SeatFaults
from tournaments.schedule import Game

__all__ = [
    "MatchRequest",
    "MatchOutcome",
    "MatchError",
    "MatchFn",
    "Backend",
    "Backoff",
    "Plan",
    "static_backend",
    "grpc_backend",
    "GrpcMatches",
    "PerMatchProcesses",
    "admin_token_from_env",
    "make_logger",
]


@dataclass(frozen=True)
class MatchRequest:
    game: Game
    variant: str
    options: Mapping[str, str] = field(default_factory=dict)
    time_control: TimeControl = TimeControl()
    max_turns_per_hand: int | None = None
    max_hands: int | None = None
    forfeit_after: int | None = None
    timeout_s: float = 3600.0
    # names this try of the game to the referee: a CreateMatch asked again after a lost answer (a restart) gets the
    # match the first made instead of a second, orphaned one
    idempotency_key: str = ""


@dataclass(frozen=True)
class MatchOutcome:
    """A finished match as the referee reports it: ``ranking`` is groups of tied seats, best first."""

    ranking: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    reason: str
    forfeited: tuple[int, ...] = ()
    match_id: str = ""
    record_path: str = ""
    faults: tuple[SeatFaults, ...] = ()  # per seat, as the referee counted them (none from an older referee)


class MatchError(Exception):
    """The match could not be played to a result (not a bot's fault): it is not recorded, so it is replayed.
    ``code``: the gRPC status's name when a call failed (``UNAVAILABLE``: the referee is restarting or gone);
    ``reason``: the referee's reason code (``RECORDS_UNWRITABLE``: it cannot record matches, so the run stops)."""

    def __init__(self, message: str, *, code: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


RECORDS_UNWRITABLE = "RECORDS_UNWRITABLE"  # the referee's reason code for a records folder it cannot write
# A referee that does not answer (UNAVAILABLE: restarting, or gone) is retried with exponential backoff and jitter,
# from BACKOFF_BASE_S doubling to BACKOFF_CAP_S, for at most UNAVAILABLE_GIVE_UP_S in a row; then the run stops.
BACKOFF_BASE_S = 0.25
BACKOFF_CAP_S = 8.0
UNAVAILABLE_GIVE_UP_S = 60.0  # RUMMY_REFEREE_RETRY_S sets another bound
REFEREE_GONE = "REFEREENOT_ANSWERING"  # a MatchError's reason once the backoff has given up on the referee
NOT_ANSWERING = ("UNAVAILABLE", "DEADLINE_EXCEEDED")  # a call's codes that say the referee is away, not the match
RESULT_POLL_S = 30.0  # a GetResult(wait) is asked again this often, and the referee checked to answer at all
CREATE_TIMEOUT_S = 10.0  # a CreateMatch writes a record's first lines: a referee that takes longer is not answering
LIVENESS_TIMEOUT_S = 5.0


def referee_retry_s() -> float:
    """How long a referee that does not answer is retried: RUMMY_REFEREE_RETRY_S, else ``UNAVAILABLE_GIVE_UP_S``."""
    import os

    try:
        return max(0.0, float(os.environ.get("RUMMY_REFEREE_RETRY_S", UNAVAILABLE_GIVE_UP_S)))
    except ValueError:
        return UNAVAILABLE_GIVE_UP_S


class Backoff:
    """Exponential backoff with jitter for one streak of failures, bounded by the time since the streak began."""

    def __init__(self, give_up_s: float | None = None, base_s: float | None = None, cap_s: float | None = None) -> None:
        self.give_up_s = referee_retry_s() if give_up_s is None else give_up_s
        self.base_s = BACKOFF_BASE_S if base_s is None else base_s
        self.cap_s = BACKOFF_CAP_S if cap_s is None else cap_s
        self.since: float | None = None
        self.failures = 0

    def reset(self) -> None:
        self.since, self.failures = None, 0

    def next_delay(self, began: float | None = None) -> float | None:
        """The wait before the next try, or None: the streak has lasted ``give_up_s`` (give up). Half the doubled
        delay is fixed, half random, so workers that failed together do not come back together. ``began``: when
        the first failed call of a streak was made (a call that timed out counts from its start)."""
        now = time.monotonic()
        if self.since is None:
            self.since = now if began is None else min(began, now)
        left = self.since + self.give_up_s - now
        if left <= 0:
            return None
        delay = min(self.cap_s, self.base_s * float(2 ** min(self.failures, 30)))
        self.failures += 1
        return min(left, delay / 2 + random.uniform(0, delay / 2))

    @property
    def waited_s(self) -> float:
        return 0.0 if self.since is None else time.monotonic() - self.since


MatchFn = Callable[[MatchRequest], Awaitable[MatchOutcome]]
Backend = Callable[[], AbstractAsyncContextManager[MatchFn]]


def static_backend(fn: MatchFn) -> Backend:
    """A backend for a match function that needs no setup (fakes in tests)."""

    @contextlib.asynccontextmanager
    async def cm() -> AsyncIterator[MatchFn]:
        yield fn

    return cm


@dataclass
class Plan:
    games: list[Game]
    new_bots: list[str] = field(default_factory=list)  # ladder: the bots being rated
    pool: list[str] = field(default_factory=list)  # ladder: the rated pool, best first

    def bots_used(self) -> set[str]:
        return {b for g in self.games for b in g.seats}

    def seats_per_bot(self) -> dict[str, int]:
        """The most seats one bot holds in one match (partners need two processes: COM-6)."""
        out: dict[str, int] = {}
        for g in self.games:
            for b, n in Counter(g.seats).items():
                out[b] = max(out.get(b, 0), n)
        return out


def create_request(req: MatchRequest, tokens: Sequence[str]) -> Any:
    from rummy.referee.v1 import referee_pb2 as pb

    tc = req.time_control
    return pb.CreateMatchRequest(
        variant=req.variant,
        options=dict(req.options),
        seats=[pb.SeatSpec(name=bot, bot_token=tok) for bot, tok in zip(req.game.seats, tokens, strict=True)],
        seed=req.game.seed,
        time_control=pb.TimeControl(per_move_ms=tc.per_move_ms, bank_ms=tc.bank_ms, grace_ms=tc.grace_ms,
                                    connect_ms=tc.connect_ms),
        max_turns_per_hand=req.max_turns_per_hand or 0,
        max_hands=req.max_hands or 0,
        forfeit_after=req.forfeit_after or 0,
        idempotency_key=req.idempotency_key,
    )


def outcome_of(result: Any) -> MatchOutcome:
    from rummy.referee.v1 import referee_pb2 as pb

    if result.status != pb.MATCH_STATUS_FINISHED:
        # a match the referee could not record ends ABORTED with a reason that starts with the code
        reason = RECORDS_UNWRITABLE if result.reason.startswith(f"{RECORDS_UNWRITABLE}:") else ""
        raise MatchError(f"match {result.match_id} ended {pb.MatchStatus.Name(result.status)}: "
                         f"{result.reason or 'no reason given'}", reason=reason)
    return MatchOutcome(
        ranking=tuple(tuple(p.seats) for p in result.ranking),
        totals=tuple(result.totals),
        reason=result.reason,
        forfeited=tuple(result.forfeited),
        match_id=result.match_id,
        record_path=result.record_path,
        faults=tuple(SeatFaults.from_pb(f) for f in result.faults),
    )


def _with_logs(out: MatchOutcome, logs: Sequence[str]) -> MatchOutcome:
    """The outcome with each seat's faults naming the log of the bot process that held the seat."""
    faults = tuple(dataclasses.replace(f, log_path=logs[f.seat]) if 0 <= f.seat < len(logs) else f for f in out.faults)
    return dataclasses.replace(out, faults=faults)


async def rpc(what: str, call: Awaitable[Any]) -> Any:
    import grpc

    try:
        return await call
    except grpc.aio.AioRpcError as exc:
        raise MatchError(f"{what}: {exc.code().name}: {exc.details()}", code=exc.code().name,
                         reason=_reason_of(exc)) from exc


def _reason_of(exc: Any) -> str:
    """The referee's reason code of a failed call (trailing metadata ``rummy-reason``), or ""."""
    try:
        return next((str(v) for k, v in exc.trailing_metadata() or () if k == "rummy-reason"), "")
    except Exception:  # no metadata (the call never reached a referee)
        return ""


async def await_result(stub: Any, match_id: str, poll_s: float | None = None,
                        give_up_s: float | None = None) -> Any:
    """The match's result: GetResult(wait), asked again every ``poll_s`` (``RESULT_POLL_S``) with a quick check
    that the referee answers at all, so a referee that is gone (or stopped) is noticed instead of waited on until
    the match's timeout. A referee that drops the call (UNAVAILABLE: restarting) is asked again with backoff: a
    restarted referee that resumed the match gives its result; one that did not answers NOT_FOUND (MatchError).
    :raises MatchError: ``code`` UNAVAILABLE once it has not answered for ``give_up_s``."""
    import grpc

    from rummy.referee.v1 import referee_pb2 as pb

    poll = poll_s or RESULT_POLL_S
    backoff = Backoff(give_up_s)
    while True:
        asked = time.monotonic()
        try:
            result = (await stub.GetResult(pb.GetResultRequest(match_id=match_id, wait=True), timeout=poll)).result
            return result
        except grpc.aio.AioRpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:  # the match runs on; does the referee still answer?
                asked = time.monotonic()
                try:
                    now = (await stub.GetResult(pb.GetResultRequest(match_id=match_id), timeout=LIVENESS_TIMEOUT_S)).result
                except grpc.aio.AioRpcError as again:
                    exc, code = again, again.code()
                else:
                    backoff.reset()
                    if now.status in (pb.MATCH_STATUS_FINISHED, pb.MATCH_STATUS_ABORTED):
                        return now
                    continue
            if code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise MatchError(f"GetResult: {code.name}: {exc.details()}", code=code.name, reason=_reason_of(exc)) from exc
            delay = backoff.next_delay(asked)
            if delay is None:
                raise MatchError(f"GetResult: the referee has not answered for {backoff.waited_s:.0f} s "
                                 f"({code.name}: {exc.details()})", code="UNAVAILABLE", reason=REFEREE_GONE) from exc
            await asyncio.sleep(delay)


async def abort_quietly(stub: Any, match_id: str) -> None:
    """Stop a match this run will not wait for (Ctrl-C), so the referee does not play it on unseen."""
    from rummy.referee.v1 import referee_pb2 as pb

    try:
        await asyncio.wait_for(stub.AbortMatch(pb.AbortMatchRequest(match_id=match_id, reason="tournament stopped")), 5)
    except Exception:  # the referee may be gone already; the game is replayed on resume either way
        pass


class GrpcMatches:
    """Matches on a referee, seated with the persistent bot processes' bot tokens."""

    def __init__(self, stub: Any, pool: Any) -> None:
        self.stub = stub
        self.pool = pool

    async def __call__(self, req: MatchRequest) -> MatchOutcome:

        with self.pool.lease_seats(req.game.seats) as procs:
            created = await rpc("CreateMatch", self.stub.CreateMatch(create_request(req, [p.token for p in procs]),
                                                                   timeout=CREATE_TIMEOUT_S))
            try:
                result = await await_result(self.stub, created.match_id)
            except asyncio.CancelledError:
                await abort_quietly(self.stub, created.match_id)
                raise
        return _with_logs(outcome_of(result), [str(p.log.path) for p in procs])

    def bot_runs(self) -> list[BotRun]:
        """Each bot process's starts and unasked-for exits so far (final once the pool has stopped)."""
        out = []
        for p in self.pool.all():
            deaths = [c for c in p.exits if c is not None]
            out.append(BotRun(p.spec.name, p.index, p.starts, len(deaths), len(p.exits) - len(deaths),
                              deaths[-1] if deaths else None, str(p.log.path)))
        return out


class PerMatchProcesses:
    """Matches on a referee with a fresh bot process per seat (``--match ID --token T``): for bots that play one
    match per process, and to measure what persistent processes save."""

    def __init__(self, stub: Any, oneshot: Any) -> None:
        self.stub = stub
        self.oneshot = oneshot

    async def __call__(self, req: MatchRequest) -> MatchOutcome:

        created = await rpc("CreateMatch", self.stub.CreateMatch(create_request(req, [""] * len(req.game.seats)),
                                                               timeout=CREATE_TIMEOUT_S))
        procs = [await self.oneshot.play(bot, created.match_id, tok) for bot, tok in zip(req.game.seats, created.seat_tokens, strict=True)]
        try:
            result = await await_result(self.stub, created.match_id)
        finally:
            await self.oneshot.finish(procs)
        return _with_logs(outcome_of(result), [str(self.oneshot.logs[bot].path) for bot in req.game.seats])


def admin_token_from_env() -> str | None:
    """For a referee run with ``--admin-token-file``: its token from RUMMY_ADMIN_TOKEN (or the file named by
    RUMMY_ADMIN_TOKEN_FILE)."""
    import os
    from pathlib import Path

    token = os.environ.get("RUMMY_ADMIN_TOKEN", "").strip()
    if not token and os.environ.get("RUMMY_ADMIN_TOKEN_FILE"):
        token = Path(os.environ["RUMMY_ADMIN_TOKEN_FILE"]).read_text(encoding="utf-8").strip()
    return token or None


def admin_interceptors(token: str | None) -> list[Any]:
    """``authorization: Bearer TOKEN`` on every call the runner makes: its calls are the admin's, which never
    compete with the bots' budgets on the referee."""
    import grpc

    if not token:
        return []

    class Bearer(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]  # grpc is untyped
        async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
            metadata = grpc.aio.Metadata(*(details.metadata or ()), ("authorization", f"Bearer {token}"))
            return await continuation(details._replace(metadata=metadata), request)

    return [Bearer()]


def grpc_backend(config: TournamentConfig, address: str, plan_: Plan, log: Any = None, bot_logs: Path | None = None,
                 unix_socket: Path | None = None, admin_token: str | None = None) -> Backend:
    """The real thing: bot processes (persistent, or per match) and a gRPC channel to the referee at
    ``address``. Bot logs go to ``bot_logs`` (default: the output's ``bots/``). Sandboxed bots reach the referee
    through ``unix_socket`` (or ``address`` itself if it is ``unix:PATH``), bound into their sandbox; without
    one, over TCP, so their sandbox keeps the network. ``admin_token`` (else ``admin_token_from_env``): the
    runner's calls carry it, and the bots' tokens are minted with it (``referee.service.credentials``), so the referee
    seats them and refuses tokens anyone else makes up."""
    admin = admin_token or admin_token_from_env()

    @contextlib.asynccontextmanager
    async def cm() -> AsyncIterator[MatchFn]:
        import grpc

        from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
        from tournaments.botproc import BotPool, OneShot, isolations
        from tournaments.sandbox import unix_socket_of

        log_dir = bot_logs or config.output / "bots"
        socket = unix_socket or unix_socket_of(address)
        # reconnect soon after a referee restart (gRPC's own default backoff grows to 120 s between attempts)
        channel = grpc.aio.insecure_channel(address, interceptors=admin_interceptors(admin), options=[
            ("grpc.initial_reconnect_backoff_ms", 250), ("grpc.min_reconnect_backoff_ms", 250),
            ("grpc.max_reconnect_backoff_ms", int(BACKOFF_CAP_S * 1000))])
        try:
            try:
                await asyncio.wait_for(channel.channel_ready(), 15)
            except TimeoutError as exc:
                raise MatchError(f"no referee answering at {address}") from exc
            stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]  # generated stub
            used = plan_.bots_used()
            specs = [b for b in config.bots if b.name in used]
            isolation, cgroups = isolations(config, specs, socket, hidden=[log_dir])
            if log is not None and isolation:
                first = next(iter(isolation.values())).sandbox
                assert first is not None
                log.info("sandbox", bots=sorted(isolation), network=first.share_net,
                         limits=cgroups.kinds if cgroups is not None else [], referee=str(socket or address))
            try:
                if config.process_per_match:
                    oneshot = OneShot(specs, address, log_dir, isolation=isolation)
                    try:
                        yield PerMatchProcesses(stub, oneshot)
                    finally:
                        oneshot.flush()
                else:
                    need = plan_.seats_per_bot()
                    pool = BotPool(specs, address, log_dir, log, min_processes=need, isolation=isolation,
                                   admin_token=admin)
                    pool.start()
                    try:
                        yield GrpcMatches(stub, pool)
                    finally:
                        await pool.stop()
            finally:
                if cgroups is not None:
                    cgroups.remove_all()
        finally:
            await channel.close()

    return cm


def make_logger(f: TextIO) -> Any:
    """A structlog logger writing JSON lines to ``f`` (the output folder's ``tournament.log``, appended across
    resumed runs). Not the global structlog configuration: that belongs to the referee's own logs."""
    return structlog.wrap_logger(
        structlog.WriteLogger(f),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.BoundLogger,
        context_class=dict,
    )
