"""Greedy Iceberg: lay down whatever scores the most now, lay off everything that fits, pass the least useful card.

Iceberg scores a meld the same whether it is laid at once or grown card by card (ICE-3), so taking the biggest
points on offer at each step loses nothing; every card kept costs -10 at the end and more if it was playable
(ICE-6). The card passed face down goes to the right-hand opponent (ICE-9), so it is one that neither builds a
run nor a special meld in our hand.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from referee.rules.cards import Card
from referee.rules.variants.base import Action, Discard, LayOff, Meld, SeatView
from referee.rules.variants.iceberg import layoff_points, meld_points, special_label

__all__ = ["POLICIES", "greedy", "points_of"]

_ODD = {3, 5, 7, 9, 11, 13}
_RED = {2, 3}  # Suit.HEARTS, Suit.DIAMONDS


def _special_values(view: SeatView) -> dict[str, int]:
    for key, value in view.notes:
        if key == "special_values":
            return {k: int(v) for k, v in (item.split("=") for item in value.split(";"))}
    return {}


def points_of(view: SeatView, action: Action) -> int:
    """What a meld or lay-off scores now (ICE-3, ICE-4); 0 for a discard."""
    if isinstance(action, Meld):
        values = _special_values(view)
        total = 0
        for g in action.groups:
            label = special_label(g.cards)
            total += values.get(label, 700) if label else meld_points(len(g.cards))
        return total
    if isinstance(action, LayOff):
        size = next((len(m.cards) for m in view.melds if m.id == action.meld_id), 0)
        return layoff_points(size, len(action.cards))
    return 0


def _usefulness(card: Card, hand: Sequence[Card]) -> int:
    """How much ``card`` helps the rest of ``hand``: run neighbours of its suit and special-meld company."""
    others = list(hand)
    others.remove(card)
    score = 0
    for c in others:
        if c.suit == card.suit:
            gap = abs(int(c.rank) - int(card.rank))
            score += 3 if gap == 1 else 1 if gap == 2 else 0
        elif c.rank == card.rank:
            score += 2
    parity = int(card.rank) in _ODD
    colour = int(card.suit) in _RED
    company = {c.rank for c in others if (int(c.rank) in _ODD) == parity and (int(c.suit) in _RED) == colour}
    company.discard(card.rank)
    if len(company) >= 3:
        score += len(company)
    return score


def greedy(view: SeatView, legal: Sequence[Action], rng: random.Random) -> Action:
    """The best-scoring meld or lay-off if any scores, else pass the least useful card face down."""
    plays = [(points_of(view, a), a) for a in legal if isinstance(a, (Meld, LayOff))]
    if plays:
        pts, best = max(plays, key=lambda t: (t[0], sum(len(g.cards) for g in t[1].groups) if isinstance(t[1], Meld) else 1))
        if pts > 0:
            return best
    discards = [a for a in legal if isinstance(a, Discard)]
    if not discards:
        return legal[0]
    hand = list(view.hand)
    return min(discards, key=lambda a: (_usefulness(a.card, hand), a.card))


POLICIES = {"iceberg": greedy}
