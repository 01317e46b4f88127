"""The gRPC servicer: translates the wire to the rules core and back, nothing else (grpc.aio).

``create_server(address)`` returns ``(server, port)`` for tests to bind port 0; ``EmbeddedReferee`` runs one on a
background thread for tournaments and the demo. Health checking and reflection are on.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import hmac
import os
import secrets
import threading
import time
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption, RefereeError
from referee.rules.evaluate import evaluate
from referee.rules.match import MatchConfig
from referee.rules.variants import all_variants, find
from referee.search.service import SERVICE_NAME as SEARCH_SERVICE
from referee.search.service import SearchService, add_search_service
from referee.service.credentials import is_minted
from referee.service.limits import (
    DEFAULT_LIMITS,
    LimitExceeded,
    ServerLimits,
    check_options,
    check_range,
    check_text,
    shown,
)
from referee.service.logs import get_logger
from referee.service.records import REASON_UNWRITABLE, RecordsUnwritable, probe_folder
from referee.service.resume import RESTARTED, Unresumable, mark_aborted, recover, token_digest, unfinished_records
from referee.service.session import DEFAULT_TIME, OUTBOX_LIMIT, Connection, MatchSession, TimeControl, Watcher
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire import loops
from rummy.wire import protocodec as codec

if TYPE_CHECKING:
    from referee.service.metrics import Metrics

__all__ = ["RefereeService", "create_server", "EmbeddedReferee", "STATUS_FOR", "VERSION", "server_credentials",
           "UNFINISHED_MODES"]

VERSION = "0.1.0"
JOIN_TIMEOUT_S = 10.0
HANDSHAKE_S = 10.0  # a connection's TLS handshake and HTTP/2 preface must be done by then
REASON_KEY = "rummy-reason"  # trailing metadata carrying the stable reason code
SEAT_HANDOVER_S = 1.0  # how long a second join on a live seat waits for the first stream to close
# The most cards (and groups) one Evaluate may send: no variant's game holds more (two packs and four jokers,
# SKA-1). The variants bound their own hands further where counting one is a search (Indian, IND-1).
EVALUATE_MAX_CARDS = 108
# What a starting referee does with the matches its records folder shows unfinished (it was killed mid-match):
# take them up again (their bots rejoin with their tokens), end them as aborted, or leave the records as they are.
UNFINISHED_MODES = ("resume", "abort", "leave")
RECORDS_PROBE_S = 5.0  # how often the records folder is probed (a small write): health follows what it finds
HEALTH_NAMES = ("", "rummy.referee.v1.RefereeService")  # the health entries a records folder that cannot be written turns off

class KeyReused(RefereeError):
    """A CreateMatch idempotency key sent again with a different request (``ALREADY_EXISTS``)."""


def request_digest(request: pb.CreateMatchRequest) -> str:
    """What a CreateMatch asked for, idempotency key aside: a repeat must ask for the same match."""
    copy = pb.CreateMatchRequest()
    copy.CopyFrom(request)
    copy.ClearField("idempotency_key")
    return hashlib.sha256(copy.SerializeToString(deterministic=True)).hexdigest()


# One table maps the referee's exceptions to gRPC status codes.
STATUS_FOR: dict[type[RefereeError], grpc.StatusCode] = {
    KeyReused: grpc.StatusCode.ALREADY_EXISTS,
    InvalidAction: grpc.StatusCode.INVALID_ARGUMENT,
    InvalidOption: grpc.StatusCode.INVALID_ARGUMENT,
    IllegalAction: grpc.StatusCode.FAILED_PRECONDITION,
    LimitExceeded: grpc.StatusCode.RESOURCE_EXHAUSTED,
}


async def _abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, reason: str, message: str) -> None:
    context.set_trailing_metadata(((REASON_KEY, reason),))
    await context.abort(code, f"{reason}: {message}")


async def _abort_with(context: grpc.aio.ServicerContext, exc: RefereeError) -> None:
    await _abort(context, STATUS_FOR.get(type(exc), grpc.StatusCode.INVALID_ARGUMENT), exc.code, exc.message)


class RefereeService(pb_grpc.RefereeServiceServicer):
    def __init__(self, records_dir: str | None = None, allow_stacked_decks: bool = False,
                 default_time: TimeControl = DEFAULT_TIME, keep_finished: int | None = None,
                 limits: ServerLimits = DEFAULT_LIMITS, admin_token: str | None = None,
                 metrics: Metrics | None = None) -> None:
        self.records_dir = records_dir
        self._admin_token = admin_token.encode() if admin_token else None  # None: admin calls are open
        self.streams: Counter[str] = Counter()  # client address -> long-lived calls with no credential open
        self.joining: dict[asyncio.Future[None], None] = {}  # Play streams yet to Join, oldest first (evicted first)
        self.unclaimed: set[Connection] = set()  # Play streams by bot tokens nothing names (an open server)
        self.named: Counter[str] = Counter()  # bot token -> live matches naming it
        self.watching = 0  # Watch streams open
        self.playing = 0  # Play streams that have joined (connected bots)
        self.metrics = metrics  # counted into when given (``referee.service.metrics``); its gauges read this service
        if metrics is not None:
            metrics.bind(self)
        self.limits = limits
        self.allow_stacked_decks = allow_stacked_decks
        self.default_time = default_time
        self.keep_finished = keep_finished if keep_finished is not None else limits.max_finished_kept
        self.sessions: dict[str, MatchSession] = {}
        self.by_key: dict[str, MatchSession] = {}  # CreateMatch idempotency key -> the match it made (while kept)
        self.finished: list[str] = []
        self.bots: dict[str, Connection] = {}  # bot token -> its live connection
        self.waiting: dict[str, list[tuple[MatchSession, int]]] = {}  # bot token -> seats to take on connect
        self.waiting_digest: dict[str, list[tuple[MatchSession, int]]] = {}  # the same for resumed matches, by digest
        self.tasks: set[asyncio.Task[None]] = set()  # the running matches
        self.live_by_client: Counter[str] = Counter()  # running matches per creating client (the per-client limit)
        self.log = get_logger(component="server")
        self.search: SearchService | None = None  # the Search service beside it (its workers stop with the server)
        self.records_error: RecordsUnwritable | None = None  # the folder cannot be written: no match is created
        self.health: health.aio.HealthServicer | None = None  # NOT_SERVING while ``records_error`` stands
        self._records_probed = 0.0  # when the folder was last probed (time.monotonic)
        self._health_tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------ the records folder

    def records_failed(self, exc: RecordsUnwritable) -> None:
        """A record could not be written: no match is created and health says NOT_SERVING until a probe writes."""
        if self.records_error is None:
            self.log.error("records_unwritable", error=exc.message, reason=REASON_UNWRITABLE)
            self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        self.records_error = exc

    def probe_records(self) -> RecordsUnwritable | None:
        """Write a probe in the records folder (``probe_folder``): health follows what it finds. Returns the failure."""
        self._records_probed = time.monotonic()
        if not self.records_dir:
            return None
        failed = probe_folder(self.records_dir)
        if failed is not None:
            self.records_failed(failed)
        elif self.records_error is not None:
            self.log.info("records_writable_again", folder=self.records_dir)
            self.records_error = None
            self._set_health(health_pb2.HealthCheckResponse.SERVING)
        return failed

    async def watch_records(self, servicer: health.aio.HealthServicer, every_s: float | None = None) -> None:
        """Probe the records folder now (made 0700 if it was not) and then every ``every_s`` seconds
        (``RECORDS_PROBE_S``) for as long as the loop runs (a timer, not a task: nothing to cancel at shutdown)."""
        self.health = servicer
        if not self.records_dir:
            return
        if self.probe_records() is not None:
            for name in HEALTH_NAMES:
                await servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        loop = asyncio.get_running_loop()
        period = every_s or RECORDS_PROBE_S

        def tick() -> None:
            try:
                self.probe_records()
            finally:
                loop.call_later(period, tick)

        loop.call_later(period, tick)

    def _set_health(self, status: health_pb2.HealthCheckResponse.ServingStatus) -> None:
        if self.health is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for name in HEALTH_NAMES:
            task = loop.create_task(self.health.set(name, status))
            self._health_tasks.add(task)
            task.add_done_callback(self._health_tasks.discard)

    def _bears_admin_token(self, authorization: str) -> bool:
        """``authorization`` is ``Bearer`` and this server's admin token (compared in constant time)."""
        scheme, _, token = authorization.partition(" ")
        return self._admin_token is not None and scheme.lower() == "bearer" and \
            hmac.compare_digest(token.strip().encode(), self._admin_token)

    def _is_admin(self, context: grpc.aio.ServicerContext) -> bool:
        """The call carries this server's admin token (a server with none has no admin)."""
        given = _authorization(context)
        return given is not None and self._bears_admin_token(given)

    def bot_token_known(self, token: str) -> bool:
        """A bot token this server has reason to seat: a match names it, or its admin minted it
        (``referee.service.credentials``). Anything else is a stranger's invention."""
        if token in self.named or token_digest(token) in self.waiting_digest:  # (``waiting`` is named too)
            return True
        return self._admin_token is not None and is_minted(self._admin_token.decode(), token)

    def _claim(self, conn: Connection) -> None:
        """A match names this unclaimed stream's bot token: it leaves the anonymous budget."""
        if conn.unclaimed:
            self._close_stream(conn.unclaimed)
            conn.unclaimed = ""
            self.unclaimed.discard(conn)

    async def _require_admin(self, context: grpc.aio.ServicerContext) -> None:
        """Admin calls (CreateMatch, AbortMatch) need ``authorization: Bearer TOKEN`` when the server has a token."""
        if self._admin_token is None:
            return
        given = _authorization(context)
        if given is None:
            await _abort(context, grpc.StatusCode.UNAUTHENTICATED, "ADMIN_TOKEN_MISSING",
                         "this call needs the admin token as metadata 'authorization: Bearer TOKEN'")
        if not self._bears_admin_token(given or ""):
            await _abort(context, grpc.StatusCode.PERMISSION_DENIED, "ADMIN_TOKEN_WRONG",
                         "the admin token given is not this server's")

    async def _open_stream(self, context: grpc.aio.ServicerContext) -> str:
        """Count a long-lived call against its client address. :returns: the address, for ``_close_stream``."""
        client = _client(context)
        if self.streams[client] >= self.limits.max_client_streams:
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_CLIENT_STREAMS",
                         f"this client has {self.limits.max_client_streams} long-lived calls open (Play, Watch, GetResult "
                         "with wait), the most one client may have; close one")
        self.streams[client] += 1
        return client

    def _close_stream(self, client: str) -> None:
        self.streams[client] -= 1
        if self.streams[client] <= 0:
            del self.streams[client]

    def track(self, session: MatchSession) -> None:
        task = asyncio.get_running_loop().create_task(session.run())
        session.task = task
        self.tasks.add(task)
        self.live_by_client[session.client] += 1
        if self.metrics is not None:
            self.metrics.match_started(session.match.variant.name)

        def ended(t: asyncio.Task[None]) -> None:
            self.tasks.discard(t)
            self.live_by_client[session.client] -= 1
            if self.live_by_client[session.client] <= 0:
                del self.live_by_client[session.client]

        task.add_done_callback(ended)

    # ------------------------------------------------------------ unary calls

    async def ListVariants(self, request: pb.ListVariantsRequest, context: grpc.aio.ServicerContext) -> pb.ListVariantsResponse:
        return pb.ListVariantsResponse(variants=[
            pb.VariantInfo(name=v.name, aliases=list(v.aliases), title=v.title, min_seats=v.min_seats,
                           max_seats=v.max_seats, team_play=v.team_play, lower_is_better=v.lower_is_better,
                           options=[pb.OptionInfo(name=o.name, choices=list(o.choices), default_value=o.default,
                                                  doc=o.doc, clause=o.clause) for o in v.options])
            for v in all_variants()])

    async def CreateMatch(self, request: pb.CreateMatchRequest, context: grpc.aio.ServicerContext) -> pb.CreateMatchResponse:
        await self._require_admin(context)
        if self.records_error is not None and time.monotonic() - self._records_probed >= 1.0:
            self.probe_records()  # the folder may be writable again: at most one probe a second from here
        if self.records_error is not None:
            await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, REASON_UNWRITABLE,
                         f"no match can be recorded: {self.records_error.message}")
        try:
            if request.idempotency_key and (made := self._repeat(request)) is not None:
                self.log.info("match_create_repeated", match_id=made.match_id)
                return pb.CreateMatchResponse(match_id=made.match_id, seat_tokens=[""] * len(made.seats))
            session = self._create(request, _client(context))
        except RecordsUnwritable as exc:
            self.records_failed(exc)
            await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, REASON_UNWRITABLE,
                         f"no match can be recorded: {exc.message}")
            raise AssertionError("unreachable") from exc
        except RefereeError as exc:
            await _abort_with(context, exc)
            raise AssertionError("unreachable") from exc
        return pb.CreateMatchResponse(match_id=session.match_id, seat_tokens=[s.token for s in session.seats])

    def _repeat(self, request: pb.CreateMatchRequest) -> MatchSession | None:
        """The match a CreateMatch with this idempotency key made already (its first answer was lost), or None.
        :raises KeyReused: the key names a match made by a different request."""
        check_text("the idempotency key", request.idempotency_key, self.limits.max_id_length)
        made = self.by_key.get(request.idempotency_key)
        if made is None:
            return None
        assert made.idempotency is not None  # (only sessions made with a key are in by_key)
        if made.idempotency[1] != request_digest(request):
            raise KeyReused("IDEMPOTENCY_KEY_REUSED", f"the idempotency key {shown(request.idempotency_key)} made match "
                            f"{made.match_id} from a different CreateMatch request; a new match needs a new key")
        return made

    def _live(self, client: str | None = None) -> int:
        """Running matches (of ``client``): counted as they start and end, not by walking every kept session."""
        return len(self.tasks) if client is None else self.live_by_client[client]

    def _check_limits(self, request: pb.CreateMatchRequest, client: str) -> None:
        """Refuse what this server will not run: every number and string a client sends is bounded."""
        lim = self.limits
        if self._live() >= lim.max_live_matches:
            raise LimitExceeded("LIMIT_LIVE_MATCHES", f"the server runs {lim.max_live_matches} matches already; try again later")
        if self._live(client) >= lim.max_client_matches:
            raise LimitExceeded("LIMIT_CLIENT_MATCHES", f"this client has {lim.max_client_matches} live matches already, "
                                "the most one client may have; wait for one to end")
        check_text("the variant name", request.variant, lim.max_id_length)
        check_text("the seed", request.seed, lim.max_id_length)
        check_options(request.options, lim)
        if len(request.seats) > 16:
            raise InvalidOption("LIMIT_SEATS", f"{len(request.seats)} seats: no variant seats more than 8")
        for seat in request.seats:
            check_text("a seat name", seat.name, lim.max_name_length)
            check_text("a bot token", seat.bot_token, lim.max_id_length)
        check_range("max_hands", request.max_hands, 0, lim.max_hands)
        check_range("max_turns_per_hand", request.max_turns_per_hand, 0, lim.max_turns_per_hand)
        check_range("forfeit_after", request.forfeit_after, 0, lim.max_forfeit_after)
        tc = request.time_control
        if tc.per_move_ms:
            check_range("per_move_ms", tc.per_move_ms, lim.min_per_move_ms, lim.max_per_move_ms, " ms")
        if tc.connect_ms:
            check_range("connect_ms", tc.connect_ms, lim.min_connect_ms, lim.max_connect_ms, " ms")
        check_range("bank_ms", tc.bank_ms, 0, lim.max_bank_ms, " ms")
        check_range("grace_ms", tc.grace_ms, 0, lim.max_grace_ms, " ms")
        check_range("stacked_decks", len(request.decks), 0, lim.max_stacked_decks)
        for deck in request.decks:
            check_range("deck_cards", len(deck.cards), 0, lim.max_deck_cards)

    def _create(self, request: pb.CreateMatchRequest, client: str = "") -> MatchSession:
        self._check_limits(request, client)
        if not request.seats:
            raise InvalidOption("NO_SEATS", "CreateMatch needs one SeatSpec per seat")
        if request.decks and not self.allow_stacked_decks:
            raise InvalidOption("STACKED_DECKS_DISABLED", "explicit deck orders need a server run with --allow-stacked-decks")
        tokens = [s.bot_token for s in request.seats]
        named = [t for t in tokens if t]
        if len(named) != len(set(named)):
            raise InvalidOption("BOT_TOKEN_TWICE", "one bot connection may hold only one seat of a match: partners must "
                                "not share a process, or they would see each other's hands (COM-6); start two")
        variant = find(request.variant)
        config = MatchConfig(
            variant=variant.name, seats=len(request.seats), options=dict(request.options),
            seed=request.seed if request.HasField("seed") else secrets.token_hex(8),
            decks=tuple(codec.cards_from_pb(d.cards) for d in request.decks), teams=tuple(request.teams),
            max_turns_per_hand=request.max_turns_per_hand or 400, max_hands=request.max_hands or 100,
            forfeit_after=request.forfeit_after or None,
        )
        tc = request.time_control
        time = TimeControl(per_move_ms=tc.per_move_ms or self.default_time.per_move_ms, bank_ms=tc.bank_ms,
                           grace_ms=tc.grace_ms or self.default_time.grace_ms,
                           connect_ms=tc.connect_ms or self.default_time.connect_ms,
                           max_rejections=self.default_time.max_rejections)
        match_id = secrets.token_hex(6)
        names = [s.name or f"seat{i}" for i, s in enumerate(request.seats)]
        key = request.idempotency_key
        session = MatchSession(match_id, config, names, tokens, time, self.records_dir, on_finish=self._finished,
                               limits=self.limits, client=client, metrics=self.metrics,
                               idempotency=(key, request_digest(request)) if key else None)
        self.sessions[match_id] = session
        if key:
            self.by_key[key] = session
        for seat, token in enumerate(tokens):
            if not token:
                continue
            self.named[token] += 1
            conn = self.bots.get(token)
            if conn is not None and not conn.closed:
                self._claim(conn)
                session.attach(seat, conn)
            else:
                self.waiting.setdefault(token, []).append((session, seat))
        self.track(session)
        self.log.info("match_created", match_id=match_id, variant=variant.name, seats=names, seed_set=request.HasField("seed"))
        return session

    def _finished(self, session: MatchSession) -> None:
        self.finished.append(session.match_id)
        if self.metrics is not None:
            self.metrics.match_finished(session.match.variant.name, session.end)
        for seat in session.seats:
            if seat.bot_token and self.named[seat.bot_token] > 0:
                self.named[seat.bot_token] -= 1
                if self.named[seat.bot_token] <= 0:
                    del self.named[seat.bot_token]
        if session.writer is not None and session.writer.failed is not None:
            self.records_failed(session.writer.failed)
        for waiting in (self.waiting, self.waiting_digest):
            for token, seats in list(waiting.items()):
                if left := [(s, i) for s, i in seats if s is not session]:
                    waiting[token] = left
                else:
                    del waiting[token]
        while len(self.finished) > self.keep_finished:
            forgotten = self.sessions.pop(self.finished.pop(0), None)
            if forgotten is not None and forgotten.idempotency is not None:
                self.by_key.pop(forgotten.idempotency[0], None)

    def recover_unfinished(self, mode: str = "resume") -> list[MatchSession]:
        """At start: the matches this referee's records folder shows unfinished (a referee killed mid-match) are
        resumed from their records (``referee.service.resume``), or, in mode "abort" or when a record cannot be resumed,
        ended with an ``aborted`` line whose reason starts "referee restarted:". Returns the resumed sessions."""
        if not self.records_dir or mode == "leave":
            return []
        for part in Path(self.records_dir).glob("*.jsonl.part"):  # a record cut off before it reached the folder
            with contextlib.suppress(OSError):  # a read-only folder: left, and the probe says NOT_SERVING
                part.unlink(missing_ok=True)  # (``RecordWriter``): its match was never announced to anyone
            self.log.warning("record_start_discarded", match_id=part.name.removesuffix(".jsonl.part"))
        resumed = []
        for path in unfinished_records(self.records_dir):
            try:
                found = recover(path)
            except Exception as exc:  # a record the recovery does not foresee is ended, never fatal to the start
                found = Unresumable(path, path.stem, f"its record cannot be recovered ({type(exc).__name__}: {exc})")
            if found is None:
                continue
            if isinstance(found, Unresumable) or mode == "abort":
                why = found.reason if isinstance(found, Unresumable) else "it does not resume matches (--unfinished abort)"
                mark_aborted(path, f"{RESTARTED}: {why}")
                self.log.warning("match_not_resumed", match_id=found.match_id, reason=why)
                continue
            try:
                session = MatchSession(found.match_id, found.config, list(found.seat_names), [""] * found.config.seats,
                                       MatchSession.time_control_from(found.time_control, self.default_time),
                                       on_finish=self._finished, limits=self.limits, resume=found,
                                       metrics=self.metrics)
            except Exception as exc:
                mark_aborted(path, f"{RESTARTED}: its record does not replay ({type(exc).__name__}: {exc})")
                self.log.exception("match_not_resumed", match_id=found.match_id)
                continue
            self.sessions[session.match_id] = session
            if found.idempotency is not None:
                self.by_key[found.idempotency[0]] = session
            for seat, s in enumerate(session.seats):
                if s.bot_token_hash:
                    self.waiting_digest.setdefault(s.bot_token_hash, []).append((session, seat))
            self.track(session)
            resumed.append(session)
            self.log.info("match_resumed", match_id=session.match_id, restart=found.restarts + 1,
                          moves=len(found.inputs))
        return resumed

    async def _session(self, match_id: str, context: grpc.aio.ServicerContext) -> MatchSession:
        """The match named by ``match_id``, or the call ends ``INVALID_ARGUMENT`` (an overlong id) or ``NOT_FOUND``."""
        if len(match_id) > self.limits.max_id_length:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "LIMIT_LENGTH",
                         f"a match id is at most {self.limits.max_id_length} characters, not {len(match_id)}")
        session = self.sessions.get(match_id)
        if session is None:
            await _abort(context, grpc.StatusCode.NOT_FOUND, "NO_SUCH_MATCH", f"no match {shown(match_id)}")
        assert session is not None
        return session

    async def GetResult(self, request: pb.GetResultRequest, context: grpc.aio.ServicerContext) -> pb.GetResultResponse:
        session = await self._session(request.match_id, context)
        if request.wait and not session.done.is_set():
            if self._is_admin(context):  # the runner's and the admin's waits never compete with bots' budgets
                await session.done.wait()
            else:
                client = await self._open_stream(context)
                try:
                    await session.done.wait()
                finally:
                    self._close_stream(client)
        if session.result is not None:
            return pb.GetResultResponse(result=session.result)
        return pb.GetResultResponse(result=pb.MatchResult(
            match_id=session.match_id, status=session.status, variant=session.match.variant.name,  # type: ignore[arg-type]
            totals=list(session.match.game.totals), seat_names=[s.name for s in session.seats]))

    async def AbortMatch(self, request: pb.AbortMatchRequest, context: grpc.aio.ServicerContext) -> pb.AbortMatchResponse:
        await self._require_admin(context)
        session = await self._session(request.match_id, context)
        session.abort(request.reason[:200] or "aborted by request")
        await session.done.wait()
        assert session.result is not None
        return pb.AbortMatchResponse(result=session.result)

    async def Evaluate(self, request: pb.EvaluateRequest, context: grpc.aio.ServicerContext) -> pb.EvaluateResponse:
        try:
            lim = self.limits
            check_text("the variant name", request.variant, lim.max_id_length)
            check_options(request.options, lim)
            cards = sum(len(g.cards) for g in request.groups)
            if cards > EVALUATE_MAX_CARDS or len(request.groups) > EVALUATE_MAX_CARDS:
                raise InvalidOption("LIMIT_EVALUATE_CARDS", f"Evaluate takes at most {EVALUATE_MAX_CARDS} cards in at most "
                                    f"{EVALUATE_MAX_CARDS} groups, not {cards} in {len(request.groups)} (no game of "
                                    "these variants has more cards)")
            groups = [codec.cards_from_pb(g.cards) for g in request.groups]
            if bad := [r for r in request.wild_ranks if r not in codec.RANK_FROM_PB]:
                what = "unset (RANK_UNSPECIFIED)" if bad[0] == pb.RANK_UNSPECIFIED else f"not a rank: {bad[0]}"
                raise InvalidAction("BAD_RANK", f"a wild rank is {what} ({len(bad)} of the wild ranks given are none)")
            result = evaluate(request.variant, dict(request.options), [codec.RANK_FROM_PB[r] for r in request.wild_ranks],
                              groups,
                              request.seats or None)
        except RefereeError as exc:
            await _abort_with(context, exc)
            raise AssertionError("unreachable") from exc
        return codec.evaluation_to_pb(result)

    # ------------------------------------------------------------ streams

    async def Watch(self, request: pb.WatchRequest, context: grpc.aio.ServicerContext) -> AsyncIterator[pb.WatchResponse]:
        """A spectator's stream of the match's public events, encoded once per event for every watcher; bounded per
        match, over all matches and per client, and a watcher that falls behind is dropped (``WATCH_TOO_SLOW``)."""
        session = await self._session(request.match_id, context)
        if session.done.is_set():
            return
        lim = self.limits
        admin = self._is_admin(context)  # the admin's watchers (a tournament's display) never wait for a crowd's
        counted = sum(not w.admin for w in session.watchers)
        if not admin and counted >= lim.max_match_watchers:
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_MATCH_WATCHERS",
                         f"this match has {lim.max_match_watchers} watchers, the most one match may have; a crowd "
                         "watches through the viewer's live page")
        if not admin and self.watching >= lim.max_watchers:
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_WATCHERS",
                         f"this server has {lim.max_watchers} watchers, the most it takes; try again later")
        client = "" if admin else await self._open_stream(context)
        watcher = Watcher(lim.max_watch_queue, admin=admin)
        session.watchers.append(watcher)
        self.watching += not admin
        try:
            async for frame in watcher.frames():
                yield frame  # type: ignore[misc]  # an encoded WatchResponse: Watch's serializer passes bytes through
        finally:
            session.watchers.remove(watcher)
            self.watching -= not admin
            if client:
                self._close_stream(client)
        if watcher.dropped:
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "WATCH_TOO_SLOW",
                         f"this watcher fell {lim.max_watch_queue} events behind the match and was dropped")

    async def Play(self, request_iterator: AsyncIterator[pb.PlayRequest], context: grpc.aio.ServicerContext
                   ) -> AsyncIterator[bytes]:
        """A bot's stream: its Join, then its answers; the referee's messages go out encoded (``Connection``).

        Budgets go by credential, not by address (every bot on one host shares an address): a seat token holds its
        seat's one stream, a bot token a match names or the admin minted holds its one stream (a new one replaces
        it); streams yet to Join share ``max_joining`` (the oldest is closed first), and on a server with no admin
        token, bot tokens nothing names share ``max_unclaimed_streams`` and their address's budget."""
        conn: Connection | None = None
        stream = self._play(request_iterator, context)
        try:
            async for msg in stream:
                if isinstance(msg, Connection):
                    conn = msg
                    continue
                yield msg
        finally:
            await stream.aclose()  # at once: a seat is free to rejoin as soon as its stream is gone
            if conn is not None:
                self._claim(conn)
        if conn is not None and conn.dropped:
            code, _, message = conn.dropped.partition(": ")
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, code, message)

    async def _first_message(self, request_iterator: AsyncIterator[pb.PlayRequest]) -> pb.PlayRequest | str:
        """The stream's first message, or why there is none: it did not come within ``JOIN_TIMEOUT_S``, or newer
        streams needed its place (``max_joining``)."""
        evicted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        while len(self.joining) >= self.limits.max_joining:
            oldest = next(iter(self.joining))
            del self.joining[oldest]
            oldest.set_result(None)
        self.joining[evicted] = None
        first = asyncio.ensure_future(anext(request_iterator))
        try:
            await asyncio.wait((first, evicted), timeout=JOIN_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.joining.pop(evicted, None)
        if not first.done():
            first.cancel()
            return "evicted" if evicted.done() else "timeout"
        if first.exception() is not None:
            return "ended"
        return first.result()

    async def _play(self, request_iterator: AsyncIterator[pb.PlayRequest], context: grpc.aio.ServicerContext
                    ) -> AsyncGenerator[bytes | Connection, None]:
        first = await self._first_message(request_iterator)
        if first == "evicted":
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_JOINING",
                         f"{self.limits.max_joining} newer streams were waiting to join: send the Join at once")
            return
        if isinstance(first, str):
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "NO_JOIN", "the first message must be a Join")
            return
        if first.WhichOneof("body") != "join":
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "NO_JOIN", "the first message must be a Join")
            return
        join = first.join
        conn = Connection(join.bot_name or "bot", batch=join.batch, max_bytes=self.limits.max_outbox_bytes)
        yield conn  # to Play, which lets its budget go with the stream and says why the referee dropped it
        cred = join.WhichOneof("credential")
        if len(join.bot_name) > self.limits.max_name_length or len(join.sdk) > self.limits.max_name_length or \
                len(join.bot_token) > self.limits.max_id_length or len(join.seat.token) > self.limits.max_id_length:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "LIMIT_LENGTH",
                         f"a Join's names are at most {self.limits.max_name_length} characters and its tokens "
                         f"{self.limits.max_id_length}")
            return
        if len(join.resume) > self.limits.max_live_matches:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "LIMIT_RESUME",
                         f"a Join names at most {self.limits.max_live_matches} matches to resume, not {len(join.resume)}")
            return
        resume = {p.match_id: p.last_seq for p in join.resume}
        if cred == "seat":
            session = await self._session(join.seat.match_id, context)
            digest = token_digest(join.seat.token)  # a resumed match knows its seat tokens only by their digests
            seat = next((i for i, s in enumerate(session.seats)
                         if s.token_hash and hmac.compare_digest(s.token_hash, digest)), None)
            if seat is None:  # a wrong token and another match's token alike: the referee never says which
                await _abort(context, grpc.StatusCode.PERMISSION_DENIED, "BAD_SEAT_TOKEN",
                             "that token is not a seat of this match: a token plays only its own seat")
                return
            if session.done.is_set():
                await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER",
                             "that match is over; GetResult has its result")
                return
            if not await _seat_free(session, seat, SEAT_HANDOVER_S):
                await _abort(context, grpc.StatusCode.PERMISSION_DENIED, "SEAT_TAKEN",
                             "that seat is held by another live stream: one stream per seat token; join again once "
                             "it has closed (within the grace period)")
                return
            conn.send(pb.PlayResponse(welcome=pb.Welcome(bot_name=conn.name, server_version=VERSION)))
            session.seats[seat].token = session.seats[seat].token or join.seat.token
            session.attach(seat, conn, resume.get(session.match_id, resume.get("")))
        elif cred == "bot_token" and join.bot_token:
            if not self.bot_token_known(join.bot_token):
                if self._admin_token is not None:
                    await _abort(context, grpc.StatusCode.UNAUTHENTICATED, "BOT_TOKEN_UNKNOWN",
                                 "no match names this bot token and this server's admin did not mint it "
                                 "(referee.service.credentials.mint_bot_token); ask the referee's operator for one")
                    return
                if len(self.unclaimed) >= self.limits.max_unclaimed_streams:
                    await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_UNCLAIMED_STREAMS",
                                 f"{self.limits.max_unclaimed_streams} streams wait with bot tokens no match names, the "
                                 "most this server takes; join once a match names yours")
                    return
                conn.unclaimed = await self._open_stream(context)
                self.unclaimed.add(conn)
            old = self.bots.get(join.bot_token)
            if old is not None and not old.closed:
                old.close()
            conn.bot_token = join.bot_token
            self.bots[join.bot_token] = conn
            conn.send(pb.PlayResponse(welcome=pb.Welcome(bot_name=conn.name, server_version=VERSION)))
            claimed = self.waiting.pop(join.bot_token, []) + self.waiting_digest.pop(token_digest(join.bot_token), [])
            for session, seat in claimed:
                if not session.done.is_set():
                    if not session.seats[seat].bot_token:  # a resumed match knew only its digest: named from now on,
                        self.named[join.bot_token] += 1  # so the bot is known when it reconnects (``_finished``)
                    session.seats[seat].bot_token = join.bot_token
                    session.attach(seat, conn, resume.get(session.match_id))
            # reconnect: seats this token held in running matches (the old stream may not have closed yet)
            for session in self.sessions.values():
                if session.done.is_set():
                    continue
                for seat, s in enumerate(session.seats):
                    if s.bot_token == join.bot_token and s.conn is not conn and (s.conn is None or s.conn.closed):
                        session.attach(seat, conn, resume.get(session.match_id))
        else:
            await _abort(context, grpc.StatusCode.UNAUTHENTICATED, "NO_CREDENTIAL", "Join needs a seat token or a bot token")
            return
        reader = asyncio.get_running_loop().create_task(self._read(request_iterator, conn))
        self.playing += 1
        try:
            async for msg in conn.outgoing():
                yield msg
        finally:
            self.playing -= 1
            reader.cancel()
            conn.closed = True
            if conn.bot_token and self.bots.get(conn.bot_token) is conn:
                del self.bots[conn.bot_token]
            for match_id, _seat in list(conn.seats):
                if (held := self.sessions.get(match_id)) is not None:
                    held.detach(conn)

    async def _read(self, request_iterator: AsyncIterator[pb.PlayRequest], conn: Connection) -> None:
        try:
            async for msg in request_iterator:
                body = msg.WhichOneof("body")
                if body == "action":
                    session = self.sessions.get(msg.action.match_id)
                    if session is not None:
                        session.deliver(conn, msg.action.request_id, msg.action.action)
                        continue
                    if self.metrics is not None:
                        self.metrics.rejected("NO_SUCH_MATCH")
                    if conn.waiting() < OUTBOX_LIMIT:
                        conn.send(pb.PlayResponse(rejected=pb.ActionRejected(
                            match_id=msg.action.match_id[:self.limits.max_id_length], request_id=msg.action.request_id,
                            code="NO_SUCH_MATCH", message=f"no match {shown(msg.action.match_id)} on this connection")))
                elif body == "resign":
                    session = self.sessions.get(msg.resign.match_id)
                    if session is not None:
                        session.resign(conn)
        except (grpc.aio.AioRpcError, asyncio.CancelledError):
            pass
        finally:
            conn.close()


async def _seat_free(session: MatchSession, seat: int, wait_s: float) -> bool:
    """The seat has no live stream, or its stream closes within ``wait_s`` (a bot reconnecting at once)."""
    ends = time.monotonic() + wait_s
    while (conn := session.seats[seat].conn) is not None and not conn.closed:
        if time.monotonic() >= ends:
            return False
        await asyncio.sleep(0.02)
    return True


def server_credentials(cert_file: str | Path, key_file: str | Path, client_ca_file: str | Path | None = None,
                       ) -> grpc.ServerCredentials:
    """TLS for ``create_server`` from PEM files; with ``client_ca_file``, mutual TLS: every client must present a
    certificate signed by that CA."""
    ca = Path(client_ca_file).read_bytes() if client_ca_file else None
    return grpc.ssl_server_credentials([(Path(key_file).read_bytes(), Path(cert_file).read_bytes())],
                                       root_certificates=ca, require_client_auth=ca is not None)


def server_options(limits: ServerLimits) -> list[tuple[str, int]]:
    """gRPC channel options that bound what a connection may hold: connections with no call open are closed after
    ``idle_connection_s``, a connection that has not finished its handshake (or its HTTP/2 preface) after
    ``HANDSHAKE_S``, and keepalive pings find dead peers (a bot whose machine vanished frees its seat's stream)."""
    return [
        ("grpc.max_receive_message_length", limits.max_message_bytes),
        ("grpc.max_connection_idle_ms", limits.idle_connection_s * 1000),
        ("grpc.server_handshake_timeout_ms", int(HANDSHAKE_S * 1000)),
        ("grpc.keepalive_time_ms", limits.keepalive_s * 1000),
        ("grpc.keepalive_timeout_ms", 20_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),  # clients may ping every 5 s (SDKs' keepalive)
        ("grpc.max_concurrent_streams", 1024),  # per connection
    ]


def descriptors_needed(limits: ServerLimits) -> int:
    """File descriptors the configured limits can take at once: a connection per seat of every live match (up to
    four seats), every watcher and stream waiting to join on its own connection, and some to spare (records are
    opened only to write)."""
    return 4 * limits.max_live_matches + limits.max_watchers + limits.max_joining + limits.max_unclaimed_streams + 256


def descriptor_budget(limits: ServerLimits) -> int:
    """Raise the soft limit on open files to the hard one, and warn when even that is below what ``limits`` can
    need: past it, new connections and records fail with 'Too many open files'. :returns: the limit in force."""
    try:
        import resource
    except ImportError:  # not on POSIX: nothing to budget
        return -1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        want = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    need = descriptors_needed(limits)
    if soft != resource.RLIM_INFINITY and soft < need:
        get_logger(component="server").warning(
            "descriptor_limit_low", limit=soft, needed=need,
            hint="raise `ulimit -n`, or lower --max-live-matches / --max-watchers / --max-joining")
    return soft


def _authorization(context: grpc.aio.ServicerContext) -> str | None:
    """The call's ``authorization`` metadata as text, or None when it has none."""
    given = next((v for k, v in context.invocation_metadata() or () if k == "authorization"), None)
    if given is None:
        return None
    return given if isinstance(given, str) else bytes(given).decode("utf-8", "replace")


def _client(context: grpc.aio.ServicerContext) -> str:
    """The client's address without its port (``ipv4:127.0.0.1``): the unit of per-client limits."""
    peer = context.peer() or ""
    return peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer


async def create_server(address: str = "127.0.0.1:0", records_dir: str | None = None, allow_stacked_decks: bool = False,
                        default_time: TimeControl = DEFAULT_TIME, limits: ServerLimits = DEFAULT_LIMITS,
                        admin_token: str | None = None, credentials: grpc.ServerCredentials | None = None,
                        unfinished: str = "leave", unix_path: str | None = None, metrics: Metrics | None = None,
                        ) -> tuple[grpc.aio.Server, int, RefereeService]:
    """A started server bound to ``address`` (port 0 picks one); returns it, its port and the service.
    ``admin_token``: CreateMatch and AbortMatch need it; ``credentials`` (``server_credentials``): TLS only;
    ``unfinished``: what to do with unfinished records in ``records_dir`` before serving (``UNFINISHED_MODES``);
    ``unix_path``: also listen on this Unix socket (plain gRPC: who may connect is the socket folder's mode), the
    way into a sandbox that has no network; ``metrics``: count into these (``referee.service.metrics``).
    :raises OSError: the socket cannot be bound."""
    server = grpc.aio.server(options=server_options(limits))
    descriptor_budget(limits)
    service = RefereeService(records_dir, allow_stacked_decks, default_time, limits=limits, admin_token=admin_token,
                             metrics=metrics)
    service.recover_unfinished(unfinished)  # before the port opens: a rejoining seat always finds its match
    add_referee_service(service, server)
    service.search = add_search_service(server, service)  # rummy.search.v1.SearchService: reads what a seat was shown
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in (*HEALTH_NAMES, SEARCH_SERVICE):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    await service.watch_records(health_servicer)  # NOT_SERVING while the records folder cannot be written
    names = (pb.DESCRIPTOR.services_by_name["RefereeService"].full_name, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
             SEARCH_SERVICE, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    port = server.add_secure_port(address, credentials) if credentials is not None else server.add_insecure_port(address)
    if unix_path is not None:
        _bind_unix(server, unix_path)
    await server.start()
    return server, port, service


def _bind_unix(server: grpc.aio.Server, path: str) -> None:
    """Listen on a Unix socket at ``path`` (a stale socket file there, left by a killed referee, is replaced;
    any other file is not). The socket itself is 0600: only the referee's user may connect."""
    p = Path(path)
    if p.is_socket():
        p.unlink()
    elif p.exists():
        raise OSError(errno.EEXIST, f"not a socket; refusing to replace it: {path}")
    if not p.parent.is_dir():
        raise OSError(errno.ENOENT, f"cannot listen on unix:{path}: no folder {p.parent}")
    try:
        bound = server.add_insecure_port(f"unix:{path}")
    except RuntimeError as exc:  # gRPC's word for a socket it could not bind
        raise OSError(errno.EADDRNOTAVAIL, f"cannot listen on unix:{path}") from exc
    if bound == 0:
        raise OSError(errno.EADDRNOTAVAIL, f"cannot listen on unix:{path}")
    os.chmod(path, 0o600)  # bound at once by add_insecure_port; a umask would reach every thread's files


class _Registration:
    """Stands in for a server to the generated registration, keeping the method handlers it is given."""

    service = ""
    handlers: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, _handlers: object) -> None:
        pass

    def add_registered_method_handlers(self, service: str, handlers: dict[str, grpc.RpcMethodHandler]) -> None:
        self.service, self.handlers = service, handlers


def add_referee_service(service: RefereeService, server: grpc.aio.Server) -> None:
    """The generated registration, but Play's replies go out as they come: ``Connection.outgoing`` yields them
    encoded (``referee.service.encoded``), so gRPC is given no serializer for them (as for raw bytes)."""
    got = _Registration()
    pb_grpc.add_RefereeServiceServicer_to_server(service, got)
    handlers = {**got.handlers, "Play": got.handlers["Play"]._replace(response_serializer=None),
                "Watch": got.handlers["Watch"]._replace(response_serializer=None)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(got.service, handlers),))
    server.add_registered_method_handlers(got.service, handlers)


class EmbeddedReferee:
    """A referee on a background thread with its own event loop (tournaments, the demo, tests)."""

    def __init__(self, records_dir: str | Path | None = None, allow_stacked_decks: bool = False,
                 default_time: TimeControl = DEFAULT_TIME, host: str = "127.0.0.1",
                 limits: ServerLimits = DEFAULT_LIMITS, admin_token: str | None = None,
                 credentials: grpc.ServerCredentials | None = None, unfinished: str = "leave",
                 unix_path: str | Path | None = None, metrics: Metrics | None = None) -> None:
        self.metrics = metrics  # counted into (serve it with ``referee.tools.metrics_server.MetricsServer`` or a mounted handler)
        self.records_dir = str(records_dir) if records_dir else None
        self.unix_path = str(unix_path) if unix_path else None  # also listen here (sandboxed bots' way in)
        self.unfinished = unfinished
        self.admin_token = admin_token
        self.credentials = credentials
        self.limits = limits
        self.allow_stacked_decks = allow_stacked_decks
        self.default_time = default_time
        self.host = host
        self.address = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: grpc.aio.Server | None = None
        self.service: RefereeService | None = None

    def start(self) -> str:
        ready = threading.Event()

        def run() -> None:
            loop = loops.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)

            async def boot() -> None:
                self._server, port, self.service = await create_server(
                    f"{self.host}:0", self.records_dir, self.allow_stacked_decks, self.default_time, self.limits,
                    self.admin_token, self.credentials, self.unfinished, self.unix_path, self.metrics)
                self.address = f"{self.host}:{port}"
                ready.set()

            loop.run_until_complete(boot())
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="embedded-referee", daemon=True)
        self._thread.start()
        if not ready.wait(30):
            raise RuntimeError("the embedded referee did not start")
        return self.address

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop the referee runs on, None once stopped: another thread schedules its reads of a match here, so
        the match cannot move under them."""
        return self._loop

    def is_running(self) -> bool:
        """Whether the referee's thread still runs (a wait on its loop checks it rather than hang)."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, grace: float = 1.0) -> None:
        if self._loop is None or self._server is None:
            return
        async def shutdown() -> None:
            assert self._server is not None
            await self._server.stop(grace)
            if self.service is not None and self.service.search is not None:
                self.service.search.close()
            if self.service is not None:
                for task in list(self.service.tasks):
                    task.cancel()
                await asyncio.gather(*self.service.tasks, return_exceptions=True)

        fut = asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        fut.result(timeout=grace + 5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._loop = None

    def __enter__(self) -> EmbeddedReferee:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
