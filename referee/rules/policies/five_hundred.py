"""Greedy bots for 500 Rum, 500 Partnership Rum and Persian Rummy.

Take from the fanned pile when the bottom card makes a meld and the haul is worth more than the risk of the
cards it brings; meld the best-scoring meld and lay off whatever fits until nothing is left; discard the dead
card that would count most against us.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from functools import cache

from referee.rules.cards import Card, Rank
from referee.rules.errors import IllegalAction
from referee.rules.melds import extend_meld, read_meld
from referee.rules.variants import find
from referee.rules.variants.base import (
    Action,
    Discard,
    DrawStock,
    LayOff,
    Meld,
    Phase,
    SeatView,
    TableMeld,
    TakeDiscards,
)
from referee.rules.variants.five_hundred import FiveHundredRules, in_hand_value, meld_points, melded_value, melds_in

__all__ = ["POLICIES", "greedy"]

TAKE_MARGIN = 3  # a take must beat drawing blind by this many points


@cache
def _rules(variant: str, options: str, seats: int) -> FiveHundredRules:
    opts = dict(kv.split("=", 1) for kv in options.split(";") if kv)
    rules: FiveHundredRules = find(variant).configure(opts, seats)  # the 500 family's variants configure these
    return rules


def rules_of(view: SeatView) -> FiveHundredRules:
    """The rules record of the game the view belongs to (its options travel in the view's notes)."""
    notes = dict(view.notes)
    return _rules(view.variant, notes.get("options", ""), len(view.hand_sizes))


def _fits_table(card: Card, melds: Sequence[TableMeld], rules: FiveHundredRules) -> int:
    """Points ``card`` would score laid off on some table meld, else 0."""
    for m in melds:
        try:
            r = extend_meld(m.reading, (card,), rules.meld_rules, rules.wilds)
        except IllegalAction:
            continue
        added = Counter(r.cards) - Counter(m.cards)
        return sum(melded_value(p, r.kind, rules) for p in added.elements())
    return 0


def meldable(hand: Sequence[Card], melds: Sequence[TableMeld], rules: FiveHundredRules) -> tuple[int, list[Card]]:
    """Points the hand could lay down now (best meld first, then lay-offs), and the cards left over."""
    left = list(hand)
    pts = 0
    while True:
        best = None
        for g in melds_in(left, rules):
            try:
                p = meld_points(read_meld(g, rules.meld_rules, rules.wilds), rules)
            except IllegalAction:
                continue
            if best is None or p > best[0]:
                best = (p, g)
        if best is None:
            break
        pts += best[0]
        for c in best[1]:
            left.remove(c)
    rest = []
    for c in left:
        lay = _fits_table(c, melds, rules)
        if lay:
            pts += lay
        else:
            rest.append(c)
    return pts, rest


def _take_gain(view: SeatView, take: TakeDiscards, rules: FiveHundredRules, now: int) -> float:
    pile = view.discard_pile
    k = take.count or len(pile)
    taken = list(pile[-k:])
    bottom, extra = taken[0], taken[1:]
    hand = list(view.hand) + extra
    if take.meld is not None:
        immediate = meld_points(read_meld([*take.meld.cards, bottom], rules.meld_rules, rules.wilds), rules)
        for c in take.meld.cards:
            hand.remove(c)
    else:
        immediate = _fits_table(bottom, view.melds, rules) or in_hand_value(bottom, rules)
    later, dead = meldable(hand, view.melds, rules)
    dead_extra = Counter(dead) & Counter(extra)
    risk = 0.5 if view.stock_size > 12 else 1.0
    return immediate + later - now - risk * sum(in_hand_value(c, rules) * n for c, n in dead_extra.items())


def _promise(card: Card, others: Sequence[Card]) -> int:
    """How many of ``others`` could join ``card`` in a meld soon (same rank, or same suit within two places)."""
    out = 0
    for c in others:
        if c.rank == card.rank:
            out += 2
        elif c.suit == card.suit and min(abs(a - b) for a in _places(c) for b in _places(card)) <= 2:
            out += 1
    return out


def _places(card: Card) -> tuple[int, ...]:
    return (1, 14) if card.rank is Rank.ACE else (int(card.rank),)


def _discard(view: SeatView, legal: Sequence[Action], rules: FiveHundredRules) -> Action:
    discards = [a for a in legal if isinstance(a, Discard)]
    if not discards:
        return legal[0]
    hand = list(view.hand)

    def order(a: Discard) -> tuple[bool, int, int]:
        # never a wild while anything else can go; then the card with least promise; then the costliest in hand
        wild = a.card.rank in rules.wilds
        promise = _promise(a.card, [c for c in hand if c != a.card])
        return (wild, min(promise, 3), -in_hand_value(a.card, rules))

    return min(discards, key=order)


def greedy(view: SeatView, legal: Sequence[Action], rng: random.Random) -> Action:
    """The greedy policy for the three games (they differ only in their rules record)."""
    rules = rules_of(view)
    if view.phase is Phase.DRAW:
        takes = [a for a in legal if isinstance(a, TakeDiscards)]
        if takes:
            now, _ = meldable(view.hand, view.melds, rules)
            gains = [(_take_gain(view, a, rules, now), a) for a in takes]
            gain, best = max(gains, key=lambda t: t[0])
            no_stock = not any(isinstance(a, DrawStock) for a in legal)
            if gain > TAKE_MARGIN or (no_stock and gain > -10):
                return best
        for a in legal:
            if isinstance(a, DrawStock):
                return a
        return legal[0]
    melds = [a for a in legal if isinstance(a, Meld)]
    if melds:
        return max(melds, key=lambda a: sum(
            meld_points(read_meld(g.cards, rules.meld_rules, rules.wilds, g.stands_for), rules) for g in a.groups))
    layoffs = [a for a in legal if isinstance(a, LayOff)]
    if layoffs:
        return max(layoffs, key=lambda a: sum(in_hand_value(c, rules) for c in a.cards))
    return _discard(view, legal, rules)


POLICIES = {"500-rum": greedy, "500-partnership": greedy, "persian": greedy}
