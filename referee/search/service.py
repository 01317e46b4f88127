"""The ``rummy.search.v1.Search`` servicer: a few lines per call over ``referee.search``.

It reads live matches only through ``seat_record`` (what one seat was shown) and never changes them. The work
runs on a small thread pool, so a burst of searches cannot stall the event loop that runs the matches; a
client may have ``max_in_flight`` calls running at once (``RESOURCE_EXHAUSTED``, ``LIMIT_SEARCH_CALLS``).
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, TypeVar

import grpc

from referee import protocodec as codec
from referee.cards import Card
from referee.errors import IllegalAction, InvalidAction, InvalidOption, RefereeError
from referee.limits import LimitExceeded, shown
from referee.search.errors import BadToken, KnowledgeMismatch, NotSearchable
from referee.search.knowledge import SeatRecord, know, seat_record
from referee.search.sampling import sample_states
from referee.search.simulate import Position, Rollout, RolloutPolicy, SearchState, position, simulate
from referee.search.tokens import TokenCodec
from referee.session import MatchSession
from referee.variants.base import Phase
from rummy.referee.v1 import referee_pb2 as pb
from rummy.search.v1 import search_pb2 as spb
from rummy.search.v1 import search_pb2_grpc as spb_grpc

__all__ = ["SearchService", "SearchLimits", "SERVICE_NAME", "add_search_service"]

SERVICE_NAME = spb.DESCRIPTOR.services_by_name["Search"].full_name
REASON_KEY = "rummy-reason"  # as the Referee service: the reason code in trailing metadata

_STATUS: dict[type[RefereeError], grpc.StatusCode] = {
    InvalidAction: grpc.StatusCode.INVALID_ARGUMENT,
    InvalidOption: grpc.StatusCode.INVALID_ARGUMENT,
    IllegalAction: grpc.StatusCode.FAILED_PRECONDITION,
    NotSearchable: grpc.StatusCode.FAILED_PRECONDITION,
    BadToken: grpc.StatusCode.PERMISSION_DENIED,
    KnowledgeMismatch: grpc.StatusCode.INTERNAL,
    LimitExceeded: grpc.StatusCode.RESOURCE_EXHAUSTED,
}
_POLICY = {spb.ROLLOUT_POLICY_NONE: RolloutPolicy.NONE, spb.ROLLOUT_POLICY_RANDOM: RolloutPolicy.RANDOM,
           spb.ROLLOUT_POLICY_DEFAULT: RolloutPolicy.DEFAULT, spb.ROLLOUT_POLICY_GREEDY: RolloutPolicy.GREEDY}
T = TypeVar("T")


@dataclass(frozen=True)
class SearchLimits:
    max_samples: int = 256  # per SampleDeals
    max_actions: int = 1000  # per Simulate
    max_rollout_decisions: int = 5000  # per Simulate (0 asks for the end of the hand, capped here)
    max_in_flight: int = 32  # calls of one client running at once
    workers: int = 2  # threads doing the work


class _Sessions(Protocol):
    @property
    def sessions(self) -> Mapping[str, MatchSession]: ...


class _Refused(Exception):
    def __init__(self, status: grpc.StatusCode, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _client(context: grpc.aio.ServicerContext) -> str:
    peer = context.peer() or ""
    return peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer


def _cards(cards: Iterable[Card]) -> list[pb.Card]:
    return [codec.card_to_pb(c) for c in cards]


_PHASES = {Phase.DRAW: pb.PHASE_DRAW, Phase.PLAY: pb.PHASE_PLAY, Phase.DISCARD: pb.PHASE_DISCARD,
           Phase.OFFER: pb.PHASE_OFFER}


def _phase(phase: Phase) -> pb.Phase:
    return _PHASES[phase]


def _position_pb(p: Position, legal: bool = True) -> spb.Position:
    out = spb.Position(hand_over=p.over, scores=list(p.scores), end_reason=p.end_reason)
    if p.to_act is not None:
        out.to_act = p.to_act
    if p.phase is not None:
        out.phase = _phase(p.phase)
    if legal:
        out.legal_actions.extend(codec.action_to_pb(a) for a in p.legal)
    if p.view is not None:
        out.view.CopyFrom(codec.view_to_pb(p.view))
    return out


class SearchService(spb_grpc.SearchServicer):
    """SampleDeals, Simulate, LegalActions over the matches of ``referee`` (read, never changed)."""

    def __init__(self, referee: _Sessions, key: bytes | None = None, limits: SearchLimits = SearchLimits()) -> None:
        self.referee = referee
        self.tokens = TokenCodec(key if key is not None else secrets.token_bytes(32))
        self.limits = limits
        self.pool = ThreadPoolExecutor(max_workers=limits.workers, thread_name_prefix="search")
        self.in_flight: Counter[str] = Counter()

    # ------------------------------------------------------------ plumbing

    async def _run(self, context: grpc.aio.ServicerContext, work: Callable[[], T]) -> T:
        """``work`` on the pool, its typed errors as gRPC statuses, within the client's in-flight limit."""
        client = _client(context)
        try:
            if self.in_flight[client] >= self.limits.max_in_flight:
                raise LimitExceeded("LIMIT_SEARCH_CALLS", f"this client has {self.limits.max_in_flight} search calls "
                                    "running already; wait for some to finish")
            self.in_flight[client] += 1
            try:
                return await asyncio.get_running_loop().run_in_executor(self.pool, work)
            finally:
                self.in_flight[client] -= 1
                if not self.in_flight[client]:
                    del self.in_flight[client]
        except (_Refused, RefereeError) as exc:
            await self._refuse(context, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    @classmethod
    async def _refuse(cls, context: grpc.aio.ServicerContext, exc: _Refused | RefereeError) -> None:
        """End the call with the refusal's status (a rules error's by its type) and reason code."""
        if isinstance(exc, _Refused):
            await cls._abort(context, exc.status, exc.code, exc.message)
        else:
            await cls._abort(context, _STATUS.get(type(exc), grpc.StatusCode.INVALID_ARGUMENT), exc.code, exc.message)

    @staticmethod
    async def _abort(context: grpc.aio.ServicerContext, status: grpc.StatusCode, code: str, message: str) -> None:
        context.set_trailing_metadata(((REASON_KEY, code),))
        await context.abort(status, f"{code}: {message}")

    def _seat(self, cred: pb.SeatCredential) -> tuple[MatchSession, int]:
        """The live seat ``cred`` names: its match id and its own seat token, or the bot token it was given to."""
        if len(cred.match_id) > 128 or len(cred.token) > 128:
            raise _Refused(grpc.StatusCode.INVALID_ARGUMENT, "LIMIT_LENGTH", "a match id or token is at most 128 characters")
        session = self.referee.sessions.get(cred.match_id)
        if session is None:
            raise _Refused(grpc.StatusCode.NOT_FOUND, "NO_SUCH_MATCH", f"no match {shown(cred.match_id)}")
        for i, s in enumerate(session.seats):
            for secret in (s.token, s.bot_token):
                if secret and cred.token and hmac.compare_digest(secret, cred.token):
                    return session, i
        raise _Refused(grpc.StatusCode.PERMISSION_DENIED, "BAD_SEAT_TOKEN",
                       "that token is not a seat of this match: search uses a seat's own token or its bot's token")

    def _record(self, cred: pb.SeatCredential) -> SeatRecord:
        session, seat = self._seat(cred)
        if session.done.is_set():
            raise NotSearchable("NO_HAND", "the match is over")
        return seat_record(session.match, seat)  # on the event loop: a consistent snapshot of what the seat saw

    def _open(self, token: str) -> SearchState:
        return self.tokens.open(token)

    # ------------------------------------------------------------ calls

    async def SampleDeals(self, request: spb.SampleDealsRequest, context: grpc.aio.ServicerContext) -> spb.SampleDealsResponse:
        n = request.n
        seed = request.seed[:128] or secrets.token_hex(8)
        try:
            record = self._record(request.seat)
        except (_Refused, RefereeError) as exc:
            await self._refuse(context, exc)
            raise

        def work() -> spb.SampleDealsResponse:
            if not 1 <= n <= self.limits.max_samples:
                raise InvalidAction("LIMIT_SAMPLES", f"ask for 1 to {self.limits.max_samples} samples, not {n}")
            k = know(record)
            out = spb.SampleDealsResponse(variant=record.variant, seat=record.seat, unseen_cards=k.hidden_places(),
                                          known=[pb.Cards(cards=_cards(sorted(c.elements()))) for c in k.known])
            for state, d in sample_states(record, n, seed, k):
                out.samples.append(spb.Sample(token=self.tokens.seal(state),
                                              hands=[pb.Cards(cards=_cards(h)) for h in d.hands],
                                              stock=_cards(d.stock)))
            return out

        return await self._run(context, work)

    async def Simulate(self, request: spb.SimulateRequest, context: grpc.aio.ServicerContext) -> spb.SimulateResponse:
        def work() -> spb.SimulateResponse:
            lim = self.limits
            if len(request.actions) > lim.max_actions:
                raise InvalidAction("LIMIT_ACTIONS", f"at most {lim.max_actions} actions per Simulate, not {len(request.actions)}")
            ro = request.rollout
            most = ro.max_decisions or lim.max_rollout_decisions
            if most > lim.max_rollout_decisions:
                raise InvalidAction("LIMIT_ROLLOUT", f"a rollout plays at most {lim.max_rollout_decisions} decisions")
            policy = _POLICY.get(ro.policy)
            if policy is None:
                raise InvalidAction("BAD_POLICY", f"no rollout policy {ro.policy}")
            state = self._open(request.token)
            actions = [codec.action_from_pb(a) for a in request.actions]
            sim = simulate(state, actions, Rollout(policy, most, ro.seed[:128]), evaluate=request.evaluate,
                           keep_events=request.events)
            out = spb.SimulateResponse(token=self.tokens.seal(sim.state), applied=sim.applied,
                                       provisional=list(sim.provisional))
            if sim.rejected is not None:
                out.rejected.CopyFrom(spb.Rejection(index=sim.rejected.index, code=sim.rejected.code,
                                                    message=sim.rejected.message))
            for seat, action in sim.rollout:
                out.rollout_actions.append(codec.action_to_pb(action))
                out.rollout_seats.append(seat)
            assert sim.position is not None
            out.position.CopyFrom(_position_pb(sim.position))
            hand = sim.state.state.hand_number
            out.events.extend(codec.event_to_pb(e, "", i + 1, hand) for i, e in enumerate(sim.events))
            return out

        return await self._run(context, work)

    async def LegalActions(self, request: spb.LegalActionsRequest, context: grpc.aio.ServicerContext) -> spb.LegalActionsResponse:
        which = request.WhichOneof("source")
        if which == "seat":
            try:
                session, seat = self._seat(request.seat)
            except _Refused as exc:
                await self._refuse(context, exc)
                raise
            if session.done.is_set():
                return spb.LegalActionsResponse(position=spb.Position(hand_over=True, end_reason="the match is over"))
            m = session.match
            d = m.pending()
            out = spb.Position(hand_over=d is None)
            if d is not None:
                out.to_act, out.phase = d.seat, _phase(d.phase)
                if d.seat == seat:
                    out.legal_actions.extend(codec.action_to_pb(a) for a in m.legal_actions(seat))
            if m.state is not None:
                out.view.CopyFrom(codec.view_to_pb(m.view(seat)))  # the asking seat's own view, never another's
            return spb.LegalActionsResponse(position=out)
        if which != "token":
            await self._abort(context, grpc.StatusCode.INVALID_ARGUMENT, "NO_SOURCE", "give a state token or a live seat")

        def work() -> spb.LegalActionsResponse:
            return spb.LegalActionsResponse(position=_position_pb(position(self._open(request.token))))

        return await self._run(context, work)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def add_search_service(server: grpc.aio.Server, referee: _Sessions, key: bytes | None = None,
                       limits: SearchLimits = SearchLimits()) -> SearchService:
    """Register the Search service on ``server`` beside the Referee service whose matches it reads."""
    service = SearchService(referee, key, limits)
    spb_grpc.add_SearchServicer_to_server(service, server)  # type: ignore[no-untyped-call]
    return service
