"""Testing helpers shipped for variant authors and bot authors: random playouts that check the invariants every
variant must keep (no card appears or vanishes, every listed legal action applies, the hand ends, and no seat
is ever shown a card it could not know, COM-6)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from referee.cards import Card, shuffled
from referee.errors import IllegalAction
from referee.melds import Placed
from referee.variants import find
from referee.variants.base import Action, Event, HandState, PileView, SeatView, Table, default_teams

__all__ = ["HiddenCardLeak", "HandRun", "table_cards", "zone_cards", "cards_named", "random_hand", "KnowledgeTracker"]


class HiddenCardLeak(AssertionError):
    """A message to a seat named a card that seat could not know."""


def zone_cards(state: HandState) -> Counter[Card]:
    """Every card in every zone of the hand: the conservation check counts these."""
    c: Counter[Card] = Counter()
    for h in state.hands:
        c.update(h)
    c.update(state.stock)
    c.update(state.discards)
    for m in state.melds:
        c.update(p.card for p in m.cards)
    c.update(state.face_up)
    for f in state.in_front:
        c.update(f)
    c.update(card for card, _ in state.face_down)
    return c


def table_cards(state: HandState) -> set[Card]:
    """Cards face up for everyone right now."""
    out: set[Card] = set()
    for m in state.melds:
        out.update(p.card for p in m.cards)
        out.update(_standins(m.cards))
    out.update(state.face_up)
    for f in state.in_front:
        out.update(f)
    if state.pile_view is PileView.FANNED:
        out.update(state.discards)
    elif state.pile_view is PileView.TOP and state.discards:
        out.add(state.discards[-1])
    return out


def _standins(placed: Iterable[Any]) -> set[Card]:
    from referee.cards import Rank, Suit

    out = set()
    for p in placed:
        if p.suit is not Suit.NONE and p.rank is not Rank.JOKER:
            out.add(Card(p.rank, p.suit))
    return out


def cards_named(obj: Any) -> set[Card]:
    """Every ``Card`` inside a view, event or action, however deeply nested."""
    out: set[Card] = set()

    def walk(x: Any) -> None:
        if isinstance(x, Card):
            out.add(x)
        elif is_dataclass(x) and not isinstance(x, type):
            if isinstance(x, Placed):
                out.add(x.card)
                return
            for f in fields(x):
                walk(getattr(x, f.name))
        elif isinstance(x, (list, tuple, set, frozenset)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    walk(obj)
    return out


@dataclass
class KnowledgeTracker:
    """What each seat may know so far: every card it has held, every card that has been face up, and face-down
    cards it was let in on. A card named to a seat outside this is a leak."""

    seats: int
    seen: list[set[Card]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.seen = [set() for _ in range(self.seats)]

    def update(self, state: HandState, decision_offer: Card | None = None) -> None:
        public = table_cards(state)
        if decision_offer is not None:
            public.add(decision_offer)
        for s in range(self.seats):
            self.seen[s] |= public
            self.seen[s].update(state.hands[s])
            self.seen[s].update(c for c, who in state.face_down if s in who)
            if state.over:
                for h in state.hands:
                    self.seen[s].update(h)

    def check(self, seat: int, message: Any, what: str) -> None:
        leaked = cards_named(message) - self.seen[seat]
        if leaked:
            raise HiddenCardLeak(f"{what} to seat {seat} names {sorted(map(str, leaked))}, which it cannot know")


@dataclass
class HandRun:
    """The outcome of one random playout."""

    state: HandState
    steps: int
    events: list[Event]
    actions: list[tuple[int, Action]]
    rejected_legal: list[str]


def random_hand(
    variant_name: str,
    seats: int,
    seed: int,
    options: Mapping[str, str] | None = None,
    max_steps: int = 3000,
    choose: Callable[[random.Random, SeatView, Sequence[Action]], Action] | None = None,
    check_hidden: bool = True,
    deck: list[Card] | None = None,
    hand_number: int = 1,
    totals: tuple[int, ...] | None = None,
) -> HandRun:
    """Deal one hand from a seeded shuffle and play random legal actions until it ends or ``max_steps`` pass,
    checking card conservation, legality of listed actions and hidden information at every step."""
    variant = find(variant_name)
    rules = variant.configure(options or {}, seats)
    rng = random.Random(seed)
    full = deck if deck is not None else shuffled(variant.deck(rules, seats), seed)
    expected = Counter(full)
    teams = default_teams(variant.team_play, seats)
    table = Table(seats, seed % seats, hand_number, teams, tuple([True] * seats), totals or tuple([0] * seats))
    state = variant.new_hand(rules, table, list(full), f"test:{seed}")
    tracker = KnowledgeTracker(seats)
    tracker.update(state)
    events: list[Event] = []
    actions: list[tuple[int, Action]] = []
    steps = 0
    while steps < max_steps:
        d = variant.decision(state)
        if d is None:
            break
        tracker.update(state, d.offer)
        legal = variant.legal_actions(state, d.seat)
        assert legal, f"{variant_name}: no legal action listed for seat {d.seat} in {d.phase}"
        view = variant.observe(state, d.seat)
        assert Counter(view.hand) == Counter(state.hands[d.seat]), "the view's hand is not the seat's hand"
        if check_hidden:
            for s in range(seats):
                tracker.check(s, variant.observe(state, s), "view")
            tracker.check(d.seat, legal, "legal actions")
        pick = choose(rng, view, legal) if choose else rng.choice(legal)
        try:
            new_events = variant.apply(state, d.seat, pick)
        except IllegalAction as exc:
            raise AssertionError(f"{variant_name}: listed legal action {pick} was rejected: {exc}") from exc
        actions.append((d.seat, pick))
        events.extend(new_events)
        assert zone_cards(state) == expected, f"{variant_name}: cards appeared or vanished after {pick}"
        tracker.update(state, None)
        if check_hidden:
            for e in new_events:
                for s in range(seats):
                    if e.visible_to(s):
                        tracker.check(s, e, f"event {e.kind}")
        steps += 1
    return HandRun(state, steps, events, actions, [])
