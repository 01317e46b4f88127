"""The referee's search service for Python bots: consistent-deal sampling and a forward model over gRPC.

    from rummybot.search import SearchClient

    search = SearchClient("127.0.0.1:50051", token=MY_TOKEN)     # the seat token, or the bot token
    for sample in search.sample_deals(request.match_id, n=8):    # deals consistent with what this seat saw
        sim = search.simulate(sample.token, [action], rollout="greedy", max_decisions=8, evaluate=True)
        sim.position.scores or sim.provisional                   # the hand's points, final or as it stands

``sample_deals`` asks the referee for deals of the cards this seat has not seen, uniformly among those
consistent with what it was shown; each sample is a signed state token plus the hands and stock as sampled.
``simulate`` applies actions to a token's state with the full rules and returns a new token, where the hand
stands (who acts, the legal actions, their view, the scores at the end) and, with ``evaluate``, the points
were the hand stopped now. ``legal_actions`` lists what the rules allow for a token or for the live seat.
The client is blocking (a plain ``decide`` runs in a worker thread); one client may be shared by threads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from referee.rules.cards import Card
from referee.rules.variants.base import Action, Phase, SeatView
from rummy.referee.v1 import referee_pb2 as pb
from rummy.search.v1 import search_pb2 as spb
from rummy.search.v1 import search_pb2_grpc as spb_grpc
from rummy.wire import protocodec as codec

__all__ = ["SearchClient", "Sample", "Samples", "Position", "Rejection", "Simulated", "ROLLOUTS"]

ROLLOUTS = {"none": spb.ROLLOUT_POLICY_NONE, "random": spb.ROLLOUT_POLICY_RANDOM,
            "default": spb.ROLLOUT_POLICY_DEFAULT, "greedy": spb.ROLLOUT_POLICY_GREEDY}
_PHASES = {pb.PHASE_DRAW: Phase.DRAW, pb.PHASE_PLAY: Phase.PLAY, pb.PHASE_DISCARD: Phase.DISCARD,
           pb.PHASE_OFFER: Phase.OFFER}


@dataclass(frozen=True)
class Sample:
    """One consistent deal: its state token, every seat's hand (yours as it is) and the stock, top first."""

    token: str
    hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]


@dataclass(frozen=True)
class Samples:
    seat: int
    variant: str
    unseen_cards: int  # cards dealt at random in each sample
    known: tuple[tuple[Card, ...], ...]  # per seat: cards it is known to hold (taken face up, passed by you)
    samples: tuple[Sample, ...]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.samples)

    def __len__(self) -> int:
        return len(self.samples)


@dataclass(frozen=True)
class Position:
    """Who acts now and what the rules allow (with their view), or the hand's points once it is over."""

    hand_over: bool
    to_act: int | None
    phase: Phase | None
    legal: tuple[Action, ...]
    view: SeatView | None
    scores: tuple[int, ...]
    end_reason: str


@dataclass(frozen=True)
class Rejection:
    index: int  # of the actions sent
    code: str
    message: str


@dataclass(frozen=True)
class Simulated:
    token: str  # the state after the last action applied
    applied: int
    rejected: Rejection | None
    rollout: tuple[tuple[int, Action], ...]  # (seat, action) of each rollout move
    position: Position
    provisional: tuple[int, ...]  # with evaluate: the points were the hand stopped now
    events: tuple[pb.MatchEvent, ...]

    @property
    def points(self) -> tuple[int, ...]:
        """The hand's points if it is over, else the provisional ones (empty without ``evaluate``)."""
        return self.position.scores if self.position.hand_over else self.provisional


def _position(p: spb.Position) -> Position:
    over = p.hand_over
    return Position(
        hand_over=over, to_act=None if over else p.to_act, phase=None if over else _PHASES.get(p.phase),
        legal=tuple(codec.action_from_pb(a) for a in p.legal_actions),
        view=codec.view_from_pb(p.view) if p.HasField("view") else None, scores=tuple(p.scores),
        end_reason=p.end_reason)


class SearchClient:
    """A blocking client of ``rummy.search.v1.SearchService``; ``token`` is this seat's secret (its seat token, or the bot
    token the seat was given to), sent with ``sample_deals`` and live ``legal_actions``."""

    def __init__(self, referee: str | grpc.Channel, token: str = "", credentials: grpc.ChannelCredentials | None = None,
                 timeout_s: float = 30.0) -> None:
        if isinstance(referee, str):
            self._channel = grpc.secure_channel(referee, credentials) if credentials else grpc.insecure_channel(referee)
            self._own = True
        else:
            self._channel, self._own = referee, False
        self.stub = spb_grpc.SearchServiceStub(self._channel)
        self.token = token
        self.timeout_s = timeout_s

    def sample_deals(self, match_id: str, n: int = 8, seed: str = "") -> Samples:
        """``n`` deals consistent with what this seat of ``match_id`` has seen (same seed, same samples)."""
        r = self.stub.SampleDeals(spb.SampleDealsRequest(seat=pb.SeatCredential(match_id=match_id, token=self.token),
                                                         n=n, seed=seed), timeout=self.timeout_s)
        samples = tuple(Sample(s.token, tuple(codec.cards_from_pb(h.cards) for h in s.hands), codec.cards_from_pb(s.stock))
                        for s in r.samples)
        return Samples(r.seat, r.variant, r.unseen_cards, tuple(codec.cards_from_pb(k.cards) for k in r.known), samples)

    def simulate(self, token: str, actions: Sequence[Action] = (), rollout: str = "none", max_decisions: int = 0,
                 seed: str = "", evaluate: bool = False, events: bool = False) -> Simulated:
        """Apply ``actions`` to ``token``'s state, then a rollout (``none``, ``random``, ``default`` or ``greedy``)
        of at most ``max_decisions`` (0: to the end of the hand). A refused action stops there (``rejected``)."""
        r = self.stub.Simulate(spb.SimulateRequest(
            token=token, actions=[codec.action_to_pb(a) for a in actions],
            rollout=spb.Rollout(policy=ROLLOUTS[rollout], max_decisions=max_decisions, seed=seed),
            evaluate=evaluate, events=events), timeout=self.timeout_s)
        rejected = Rejection(r.rejected.index, r.rejected.code, r.rejected.message) if r.HasField("rejected") else None
        rollout_moves = tuple((seat, codec.action_from_pb(a)) for seat, a in zip(r.rollout_seats, r.rollout_actions,
                                                                                 strict=True))
        return Simulated(r.token, r.applied, rejected, rollout_moves, _position(r.position), tuple(r.provisional),
                         tuple(r.events))

    def legal_actions(self, token: str | None = None, match_id: str | None = None) -> Position:
        """For a state token, or (``match_id``) for this live seat: empty unless it is this seat's decision."""
        if token is not None:
            req = spb.LegalActionsRequest(token=token)
        elif match_id is not None:
            req = spb.LegalActionsRequest(seat=pb.SeatCredential(match_id=match_id, token=self.token))
        else:
            raise ValueError("give a state token or a match id")
        return _position(self.stub.LegalActions(req, timeout=self.timeout_s).position)

    def close(self) -> None:
        if self._own:
            self._channel.close()

    def __enter__(self) -> SearchClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
