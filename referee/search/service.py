"""The ``rummy.search.v1.SearchService`` servicer: a few lines per call over ``referee.search``.

It reads live matches only through ``seat_record`` (what one seat was shown) and never changes them. On the event
loop it does only what is quick: check the request, find the seat its credential names, take the seat's record.
The work itself (sampling, simulating, a token's legal actions) runs in the search pool's worker processes
(``referee.search.pool``): a burst of searches cannot stall the matches, each seat has its share of the workers,
and every call ends within its time. The answers come back encoded and go out as they are.

A seat credential ``{match_id, token}`` answers for one seat only: the seat that token (its seat token, or the bot
token it was given to) holds in that match. A wrong token, another match's token, another seat's and an unknown
match all get the same answer (``PERMISSION_DENIED``, ``BAD_SEAT_TOKEN``), which never says which part was wrong.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol, TypeVar, cast

import grpc

from referee.rules.errors import InvalidAction, InvalidOption, RefereeError
from referee.search import work
from referee.search.errors import NotSearchable
from referee.search.knowledge import seat_record
from referee.search.pool import PoolLimits, SearchPool
from referee.search.tokens import MAX_TOKEN_CHARS, TokenCodec
from referee.search.work import Answer
from referee.service.limits import DEFAULT_LIMITS, ServerLimits
from referee.service.logs import get_logger
from referee.service.resume import token_digest
from referee.service.session import MatchSession
from rummy.search.v1 import search_pb2 as spb
from rummy.wire import protocodec as codec

__all__ = ["SearchService", "SearchLimits", "SERVICE_NAME", "add_search_service"]

SERVICE_NAME = spb.DESCRIPTOR.services_by_name["SearchService"].full_name
REASON_KEY = "rummy-reason"  # as the Referee service: the reason code in trailing metadata
_CACHE_ENTRIES = 4096  # seat records and live legal actions kept (a few KB each); then all are dropped
T = TypeVar("T")
_NO_SEAT = ("no seat of a live match here has that match id and token: search answers a seat's own token (or the "
            "bot token it was given to) with its own match id")


@dataclass(frozen=True)
class SearchLimits:
    max_samples: int = 256  # per SampleDeals
    max_actions: int = 1000  # per Simulate
    max_rollout_decisions: int = 5000  # per Simulate (0 asks for the end of the hand, capped here)
    max_id_length: int = 128  # a match id, a seat token, a seed
    pool: PoolLimits = PoolLimits()

    @classmethod
    def of(cls, limits: ServerLimits) -> SearchLimits:
        """The search limits of a server started with ``limits`` (``referee serve --max-search-ms`` ...)."""
        return cls(max_id_length=limits.max_id_length, pool=PoolLimits(
            workers=limits.search_workers, client_calls=limits.max_search_client_calls,
            calls=limits.max_search_calls, call_ms=limits.max_search_ms))


class _Sessions(Protocol):
    @property
    def sessions(self) -> Mapping[str, MatchSession]: ...


class _Refused(Exception):
    def __init__(self, status: grpc.StatusCode, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _text(what: str, text: str, limit: int, ascii_only: bool = True) -> str:
    """:raises InvalidOption: ``LIMIT_LENGTH`` past ``limit`` characters, ``BAD_CHARACTERS`` for anything but
    printable ASCII (ids and tokens are; seeds may be any text)."""
    if len(text) > limit:
        raise InvalidOption("LIMIT_LENGTH", f"{what} is at most {limit} characters, not {len(text)}")
    if ascii_only and not (text.isascii() and text.isprintable()):
        raise InvalidOption("BAD_CHARACTERS", f"{what} is printable ASCII only")
    return text


class SearchService:
    """SampleDeals, Simulate, LegalActions over the matches of ``referee`` (read, never changed)."""

    def __init__(self, referee: _Sessions, key: bytes | None = None, limits: SearchLimits = SearchLimits()) -> None:
        self.referee = referee
        key = key if key is not None else secrets.token_bytes(32)
        self.tokens = TokenCodec(key)
        self.limits = limits
        self.pool = SearchPool(key, limits.pool)
        self._cache: dict[tuple[str, int, str], tuple[tuple[int, bool], object]] = {}
        self.log = get_logger(component="search")

    # ------------------------------------------------------------ plumbing

    @staticmethod
    async def _abort(context: grpc.aio.ServicerContext, status: grpc.StatusCode, code: str, message: str) -> NoReturn:
        context.set_trailing_metadata(((REASON_KEY, code),))
        await context.abort(status, f"{code}: {message}")
        raise AssertionError("unreachable")  # pragma: no cover - abort raises

    @classmethod
    async def _refuse(cls, context: grpc.aio.ServicerContext, exc: _Refused | RefereeError) -> NoReturn:
        """End the call with the refusal's status (a rules error's by its type) and reason code."""
        if isinstance(exc, _Refused):
            await cls._abort(context, exc.status, exc.code, exc.message)
        status, code, message = work.refusal(exc)
        await cls._abort(context, grpc.StatusCode[status], code, message)

    def _deadline(self, context: grpc.aio.ServicerContext) -> float:
        """When the call's work must stop: the server's budget from now, or the client's deadline if nearer."""
        budget = self.limits.pool.call_ms / 1000
        left = context.time_remaining()
        return time.monotonic() + (budget if left is None else min(budget, max(0.0, left)))

    async def _pooled(self, context: grpc.aio.ServicerContext, client: str, fn: Callable[..., Answer],
                      *args: Any) -> bytes:
        """``fn(*args, deadline)`` in the search pool, charged to ``client``; its encoded answer or the refusal."""
        answer, refusal = await self.pool.run(client, fn, args, self._deadline(context))
        if refusal is not None:
            await self._abort(context, grpc.StatusCode[refusal[0]], refusal[1], refusal[2])
        assert answer is not None
        return answer

    def _seat(self, cred: Any) -> tuple[MatchSession, int]:
        """The live seat ``cred`` names: its match id and its own seat token, or the bot token it was given to.
        Tokens are compared by digest (what a resumed match knows of them), in constant time."""
        lim = self.limits.max_id_length
        _text("a match id", cred.match_id, lim)
        _text("a seat token", cred.token, lim)
        session = self.referee.sessions.get(cred.match_id) if cred.token else None
        if session is not None:
            digest = token_digest(cred.token)
            for i, s in enumerate(session.seats):
                if any(h and hmac.compare_digest(h, digest) for h in (s.token_hash, s.bot_token_hash)):
                    return session, i
        raise _Refused(grpc.StatusCode.PERMISSION_DENIED, "BAD_SEAT_TOKEN", _NO_SEAT)

    def _cached(self, session: MatchSession, seat: int, what: str, make: Callable[[], T]) -> T:
        """``make()`` once per seat and state of its match (its log only grows): a client asking again and again
        at one decision costs the loop a look-up, not a legal-action search or a deep copy each time."""
        key = (session.match_id, seat, what)
        version = (len(session.match.log), session.done.is_set())
        hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return cast(T, hit[1])
        value = make()
        if len(self._cache) >= _CACHE_ENTRIES:
            self._cache.clear()
        self._cache[key] = (version, value)
        return value

    def _owner(self, token: str) -> str:
        """The seat a state token is charged to (its checked owner tag). :raises RefereeError: not a token."""
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidAction("BAD_SEARCH_TOKEN", f"a state token is at most {MAX_TOKEN_CHARS} characters")
        return self.tokens.owner_of(token)

    # ------------------------------------------------------------ calls

    async def SampleDeals(self, request: spb.SampleDealsRequest, context: grpc.aio.ServicerContext) -> bytes:
        try:
            n = request.n
            if not 1 <= n <= self.limits.max_samples:
                raise InvalidAction("LIMIT_SAMPLES", f"ask for 1 to {self.limits.max_samples} samples, not {n}")
            seed = _text("the seed", request.seed, self.limits.max_id_length, ascii_only=False) or secrets.token_hex(8)
            session, seat = self._seat(request.seat)
            if session.done.is_set():
                raise NotSearchable("NO_HAND", "the match is over")
            owner = self.tokens.owner_for(session.match_id, str(seat))
            if (full := self.pool.refusal(owner)) is not None:  # before any work for it
                raise _Refused(grpc.StatusCode[full[0]], full[1], full[2])
            # on the loop: a consistent snapshot of what the seat saw (small), once per seat and match state
            record = self._cached(session, seat, "record", lambda: seat_record(session.match, seat))
        except (_Refused, RefereeError) as exc:
            await self._refuse(context, exc)
        return await self._pooled(context, owner, work.sample_deals, record, n, seed, owner)

    async def Simulate(self, request: spb.SimulateRequest, context: grpc.aio.ServicerContext) -> bytes:
        lim = self.limits
        try:
            if len(request.actions) > lim.max_actions:
                raise InvalidAction("LIMIT_ACTIONS", f"at most {lim.max_actions} actions per Simulate, not "
                                    f"{len(request.actions)}")
            ro = request.rollout
            most = ro.max_decisions or lim.max_rollout_decisions
            if most > lim.max_rollout_decisions:
                raise InvalidAction("LIMIT_ROLLOUT", f"a rollout plays at most {lim.max_rollout_decisions} decisions")
            if request.HasField("rollout") and ro.policy not in work.POLICY:  # unset: no rollout
                raise InvalidAction("BAD_POLICY", "a rollout names its policy (leave the rollout unset for none)"
                                    if ro.policy == spb.ROLLOUT_POLICY_UNSPECIFIED else f"no rollout policy {ro.policy}")
            _text("the rollout seed", ro.seed, lim.max_id_length, ascii_only=False)
            owner = self._owner(request.token)
        except RefereeError as exc:
            await self._refuse(context, exc)
        return await self._pooled(context, owner, work.simulate_request, request.SerializeToString(), most)

    async def LegalActions(self, request: spb.LegalActionsRequest, context: grpc.aio.ServicerContext) -> bytes:
        which = request.WhichOneof("source")
        try:
            if which == "seat":
                session, seat = self._seat(request.seat)
                return self._cached(session, seat, "legal", lambda: self._live_legal(session, seat))
            if which != "token":
                raise _Refused(grpc.StatusCode.INVALID_ARGUMENT, "NO_SOURCE", "give a state token or a live seat")
            owner = self._owner(request.token)
        except (_Refused, RefereeError) as exc:
            await self._refuse(context, exc)
        return await self._pooled(context, owner, work.token_position, request.token)

    @staticmethod
    def _live_legal(session: MatchSession, seat: int) -> bytes:
        """The live seat's own view and, when it is to act, its legal actions (the match's own list: quick)."""
        if session.done.is_set():
            over: bytes = spb.LegalActionsResponse(position=spb.Position(hand_over=True, end_reason="the match is over")
                                                   ).SerializeToString()
            return over
        m = session.match
        d = m.pending()
        out = spb.Position(hand_over=d is None)
        if d is not None:
            out.to_act, out.phase = d.seat, work.phase_pb(d.phase)
            if d.seat == seat:
                out.legal_actions.extend(codec.action_to_pb(a) for a in m.legal_actions(seat))
        if m.state is not None:
            out.view.CopyFrom(codec.view_to_pb(m.view(seat)))  # the asking seat's own view, never another's
        answer: bytes = spb.LegalActionsResponse(position=out).SerializeToString()
        return answer

    def close(self) -> None:
        """Stop the search workers (with the server): calls waiting are refused ``UNAVAILABLE``."""
        self.pool.close()


def _handler(method: Callable[[Any, grpc.aio.ServicerContext], Awaitable[bytes]],
             request: Any) -> grpc.RpcMethodHandler:
    # no response serializer: the workers' answers are encoded already, sent as they are
    handler: grpc.RpcMethodHandler = grpc.unary_unary_rpc_method_handler(method, request_deserializer=request.FromString)
    return handler


def add_search_service(server: grpc.aio.Server, referee: _Sessions, key: bytes | None = None,
                       limits: SearchLimits | None = None) -> SearchService:
    """Register the Search service on ``server`` beside the Referee service whose matches it reads; its limits
    are the referee's (``referee.service.limits``) unless given. Call the service's ``close`` when the server stops."""
    if limits is None:
        server_limits = getattr(referee, "limits", DEFAULT_LIMITS)
        limits = SearchLimits.of(server_limits if isinstance(server_limits, ServerLimits) else DEFAULT_LIMITS)
    service = SearchService(referee, key, limits)
    handlers = {"SampleDeals": _handler(service.SampleDeals, spb.SampleDealsRequest),
                "Simulate": _handler(service.Simulate, spb.SimulateRequest),
                "LegalActions": _handler(service.LegalActions, spb.LegalActionsRequest)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)
    return service
