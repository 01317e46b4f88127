"""What the search pool's worker processes run: each call's work, from small picklable inputs to its encoded answer.

A worker holds the token key (given once, by ``init``) and never a live match: SampleDeals gets the seat's record
(``seat_record``, built on the event loop: what the seat was shown, nothing hidden), Simulate its request's bytes,
LegalActions a state token. Each returns ``(answer bytes, None)`` or ``(None, refusal)``: the answer is sent as it
is (the event loop neither parses nor encodes it again), and typed errors cross back as plain values (the gRPC
status's name, the reason code, the message) rather than pickled exceptions.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterable

import referee.rules.match  # noqa: F401 - the rules core, imported once (in the forkserver) before any worker starts
from referee.rules import native
from referee.rules.cards import Card
from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption, RefereeError
from referee.rules.variants.base import Phase
from referee.search.errors import BadToken, KnowledgeMismatch, NotSearchable, OutOfTime
from referee.search.knowledge import SeatRecord, know
from referee.search.sampling import sample_states
from referee.search.simulate import Position, Rollout, RolloutPolicy, position, simulate
from referee.search.tokens import TokenCodec
from referee.service.limits import LimitExceeded
from rummy.referee.v1 import referee_pb2 as pb
from rummy.search.v1 import search_pb2 as spb
from rummy.wire import protocodec as codec

__all__ = ["Refusal", "Answer", "STATUS", "init", "refusal", "sample_deals", "simulate_request", "token_position",
           "position_pb", "phase_pb", "ping"]

Refusal = tuple[str, str, str]  # gRPC status name, reason code, message
Answer = tuple[bytes | None, Refusal | None]

# The search errors' gRPC statuses, by name: the workers need no gRPC.
STATUS: dict[type[RefereeError], str] = {
    InvalidAction: "INVALID_ARGUMENT",
    InvalidOption: "INVALID_ARGUMENT",
    IllegalAction: "FAILED_PRECONDITION",
    NotSearchable: "FAILED_PRECONDITION",
    BadToken: "PERMISSION_DENIED",
    KnowledgeMismatch: "INTERNAL",
    LimitExceeded: "RESOURCE_EXHAUSTED",
    OutOfTime: "DEADLINE_EXCEEDED",
}
POLICY = {spb.ROLLOUT_POLICY_NONE: RolloutPolicy.NONE, spb.ROLLOUT_POLICY_RANDOM: RolloutPolicy.RANDOM,
          spb.ROLLOUT_POLICY_DEFAULT: RolloutPolicy.DEFAULT, spb.ROLLOUT_POLICY_GREEDY: RolloutPolicy.GREEDY}
_PHASES = {Phase.DRAW: pb.PHASE_DRAW, Phase.PLAY: pb.PHASE_PLAY, Phase.DISCARD: pb.PHASE_DISCARD,
           Phase.OFFER: pb.PHASE_OFFER}

_tokens: TokenCodec | None = None


def init(key: bytes, nice: int = 0) -> None:
    """A worker's start: the token key; Ctrl-C is the server's to handle (it stops the pool); a lower priority,
    so the event loop that runs the matches wins the CPU over search work whenever both want it."""
    global _tokens
    _tokens = TokenCodec(key)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        try:
            os.nice(nice)
        except OSError:  # pragma: no cover - a host that forbids it: search runs at the server's priority
            pass


def _codec() -> TokenCodec:
    if _tokens is None:
        raise RuntimeError("referee.search.work.init was not called in this process")
    return _tokens


def ping(deadline: float = 0.0) -> tuple[int, bool]:
    """A worker is up (the pool's warm-up): its process id, and whether its rules core runs compiled."""
    return os.getpid(), native.compiled(sys.modules["referee.rules.match"])


def refusal(exc: RefereeError) -> Refusal:
    return STATUS.get(type(exc), "INVALID_ARGUMENT"), exc.code, exc.message


def phase_pb(phase: Phase) -> pb.Phase:
    return _PHASES[phase]


def _cards(cards: Iterable[Card]) -> list[pb.Card]:
    return [codec.card_to_pb(c) for c in cards]


def position_pb(p: Position, legal: bool = True) -> spb.Position:
    out = spb.Position(hand_over=p.over, scores=list(p.scores), end_reason=p.end_reason)
    if p.to_act is not None:
        out.to_act = p.to_act
    if p.phase is not None:
        out.phase = phase_pb(p.phase)
    if legal:
        out.legal_actions.extend(codec.action_to_pb(a) for a in p.legal)
    if p.view is not None:
        out.view.CopyFrom(codec.view_to_pb(p.view))
    return out


def sample_deals(record: SeatRecord, n: int, seed: str, owner: str, deadline: float) -> Answer:
    """``n`` samples of what ``record``'s seat has not seen, their tokens charged to ``owner``."""
    try:
        k = know(record)
        out = spb.SampleDealsResponse(variant=record.variant, seat=record.seat, unseen_cards=k.hidden_places(),
                                      known=[pb.Cards(cards=_cards(sorted(c.elements()))) for c in k.known])
        for state, d in sample_states(record, n, seed, k, deadline):
            out.samples.append(spb.Sample(token=_codec().seal(state, owner), hands=[pb.Cards(cards=_cards(h)) for h in d.hands],
                                          stock=_cards(d.stock)))
        return out.SerializeToString(), None
    except RefereeError as exc:
        return None, refusal(exc)


def simulate_request(request: bytes, most: int, deadline: float) -> Answer:
    """A ``SimulateRequest`` (checked against the limits already) with rollouts of at most ``most`` decisions."""
    try:
        req = spb.SimulateRequest.FromString(request)
        owner, state = _codec().open_owned(req.token)
        actions = [codec.action_from_pb(a) for a in req.actions]
        ro = req.rollout
        policy = POLICY[ro.policy] if req.HasField("rollout") else RolloutPolicy.NONE  # checked by the service
        sim = simulate(state, actions, Rollout(policy, most, ro.seed), evaluate=req.evaluate,
                       keep_events=req.events, deadline=deadline)
        out = spb.SimulateResponse(token=_codec().seal(sim.state, owner), applied=sim.applied,
                                   provisional=list(sim.provisional))
        if sim.rejected is not None:
            out.rejected.CopyFrom(spb.Rejection(index=sim.rejected.index, code=sim.rejected.code,
                                                message=sim.rejected.message))
        for seat, action in sim.rollout:
            out.rollout_actions.append(codec.action_to_pb(action))
            out.rollout_seats.append(seat)
        assert sim.position is not None
        out.position.CopyFrom(position_pb(sim.position))
        hand = sim.state.state.hand_number
        out.events.extend(codec.event_to_pb(e, "", i + 1, hand) for i, e in enumerate(sim.events))
        return out.SerializeToString(), None
    except RefereeError as exc:
        return None, refusal(exc)


def token_position(token: str, deadline: float) -> Answer:
    """Where a token's hand stands, for LegalActions."""
    try:
        state = _codec().open(token)
        return spb.LegalActionsResponse(position=position_pb(position(state))).SerializeToString(), None
    except RefereeError as exc:
        return None, refusal(exc)
