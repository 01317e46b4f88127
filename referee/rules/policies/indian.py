"""A greedy Indian rummy bot (13 cards): keep melds and near-melds, take the open card when it builds one,
discard the highest-points dead card, declare as soon as the referee lists a valid declaration.

It reads only its ``SeatView``: ``hand``, ``wild_ranks`` (the wild joker's rank and printed jokers) and the open
deck's top (``discard_pile``). Sequences weigh more than sets, since a declaration needs two (one pure).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Sequence

from referee.rules.cards import Card, Rank
from referee.rules.variants.base import Action, Declare, Discard, DrawStock, SeatView, TakeDiscards

__all__ = ["greedy", "keep_values", "POLICIES"]

_HIGH = (Rank.ACE, Rank.JACK, Rank.QUEEN, Rank.KING)
_IN_RUN = 100  # a card of a pure sequence already made
_IN_SET = 60  # a card of a set already made
_WILD = 1000  # a joker is never thrown


def _points(card: Card, wilds: Collection[Rank]) -> int:
    if card.rank in wilds:
        return 0
    return 10 if card.rank in _HIGH else int(card.rank)


def _positions(card: Card) -> tuple[int, ...]:
    return (1, 14) if card.rank is Rank.ACE else (int(card.rank),)


def keep_values(hand: Sequence[Card], wilds: Collection[Rank]) -> dict[Card, float]:
    """How much each card of ``hand`` is worth keeping: wilds most, then cards of made pure sequences, then of
    made sets, then cards with neighbours (same suit one or two apart, same rank in another suit)."""
    naturals = [c for c in hand if c.rank not in wilds]
    have = Counter(naturals)
    by_suit: dict[object, set[int]] = {}
    for c in have:
        by_suit.setdefault(c.suit, set()).update(_positions(c))
    value: dict[Card, float] = {c: float(_WILD) for c in hand if c.rank in wilds}
    in_run: set[Card] = set()
    for suit, pos in by_suit.items():
        for p in pos:
            # a card is in a made sequence when it has two neighbours in a row (either side) in its suit
            if {p - 1, p + 1} <= pos or {p + 1, p + 2} <= pos or {p - 2, p - 1} <= pos:
                rank = Rank.ACE if p in (1, 14) else Rank(p)
                in_run.add(Card(rank, suit))  # type: ignore[arg-type]
    rest = [c for c in have if c not in in_run]
    by_rank: dict[Rank, set[object]] = {}
    for c in rest:
        by_rank.setdefault(c.rank, set()).add(c.suit)
    for c in have:
        if c in in_run:
            value[c] = _IN_RUN
            continue
        suits = by_rank.get(c.rank, set())
        if len(suits) >= 3:
            value[c] = _IN_SET
            continue
        pos = by_suit[c.suit]
        near = 0.0
        for p in _positions(c):
            near += 3.0 * ((p - 1 in pos) + (p + 1 in pos)) + 2.0 * ((p - 2 in pos) + (p + 2 in pos))
        near += 2.5 * (len(suits) - 1)
        near += 0.5 * (have[c] - 1)  # a duplicate (two packs) can go in two groups
        value[c] = near - _points(c, wilds) / 20.0  # high dead cards go first
    return value


def _worst(hand: Sequence[Card], wilds: Collection[Rank]) -> tuple[Card, float]:
    values = keep_values(hand, wilds)
    card = min(hand, key=lambda c: (values[c], -_points(c, wilds), c))
    return card, values[card]


def greedy(view: SeatView, legal: Sequence[Action], rng: random.Random) -> Action:
    """Declare when listed; in DRAW take the open card if it joins a meld or near-meld it would keep, else the
    closed deck; in PLAY discard the card least worth keeping. Never drops."""
    wilds = frozenset(view.wild_ranks)
    for action in legal:
        if isinstance(action, Declare):
            return action
    take = next((a for a in legal if isinstance(a, TakeDiscards)), None)
    draw = next((a for a in legal if isinstance(a, DrawStock)), None)
    if take is not None or draw is not None:
        if take is not None and view.discard_pile:
            top = view.discard_pile[-1]
            if top.rank in wilds:
                return take
            after = [*view.hand, top]
            values = keep_values(after, wilds)
            worst, _ = _worst(after, wilds)
            if worst != top and values[top] >= 2.5:
                return take
        if draw is not None:
            return draw
        return take  # type: ignore[return-value]
    discards = [a for a in legal if isinstance(a, Discard)]
    if discards:
        worst, _ = _worst(view.hand, wilds)
        choice = next((a for a in discards if a.card == worst), None)
        return choice if choice is not None else discards[0]
    return legal[0]


POLICIES = {"indian": greedy}
