"""Greedy bots for Fortune and Arlington (Oklahoma) rummy.

Take the pile when its top card melds and the haul is worth it, meld and lay off everything it can (natural
cards first), take the joker back when it can lay it off again at once, and discard the costliest card that
helps no meld (never the queen of spades while the rules forbid it: the referee does not list that discard).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from referee.rules.cards import JOKER, Card, Rank
from referee.rules.errors import IllegalAction, InvalidAction
from referee.rules.variants.base import (
    Action,
    Discard,
    DrawStock,
    ExchangeWild,
    LayOff,
    Meld,
    Phase,
    SeatView,
    TakeDiscards,
)
from referee.rules.variants.oklahoma import (
    ARLINGTON,
    FORTUNE,
    OklahomaRules,
    extend_group,
    in_hand_value,
    meld_points,
    read_group,
)

__all__ = ["POLICIES", "greedy"]

BIG_HAUL = 8  # cards taken into hand past which the pile is declined when an opponent is about to go out


def _rules(view: SeatView) -> OklahomaRules:
    """The rules record the view's notes describe (the options that change what melds and what a card costs)."""
    notes = dict(view.notes)
    base = FORTUNE if view.variant == "fortune" else ARLINGTON
    return replace(
        base,
        max_set=None if notes.get("max_set") == "unlimited" else 4,
        joker=notes.get("joker") == "on",
        pile_take=notes.get("pile_take", base.pile_take),
    )


def _take_value(rules: OklahomaRules, view: SeatView, take: TakeDiscards) -> int:
    top = view.discard_pile[-1]
    hand_cards = take.meld.cards if take.meld else ()
    try:
        if take.lay_off_on is not None:
            meld = next(m for m in view.melds if m.id == take.lay_off_on)
            return meld_points(rules, extend_group(rules, meld.reading, (top, *hand_cards))) - meld_points(rules, meld.reading)
        return meld_points(rules, read_group(rules, (top, *hand_cards)))
    except (IllegalAction, InvalidAction, StopIteration):
        return 0


def _draw(rules: OklahomaRules, view: SeatView, legal: Sequence[Action]) -> Action:
    takes = [a for a in legal if isinstance(a, TakeDiscards)]
    if not takes:
        return next(a for a in legal if isinstance(a, DrawStock))
    haul = view.discard_size - 1
    closest = min((n for s, n in enumerate(view.hand_sizes) if s != view.seat), default=99)
    if haul > BIG_HAUL and closest <= 3:
        return next((a for a in legal if isinstance(a, DrawStock)), takes[0])
    return max(takes, key=lambda a: _take_value(rules, view, a))


def _wilds_in(cards: Sequence[Card]) -> int:
    return sum(1 for c in cards if c.rank in (Rank.TWO, Rank.JOKER))


def _usefulness(card: Card, hand: Sequence[Card]) -> int:
    """How much a card helps a future meld: a wild always; a pair or a near run in one suit."""
    if card.rank in (Rank.TWO, Rank.JOKER):
        return 10
    others = list(hand)
    others.remove(card)
    same_rank = sum(1 for c in others if c.rank == card.rank)
    near = sum(1 for c in others if c.suit == card.suit and c.rank not in (Rank.TWO, Rank.JOKER)
               and 0 < min(abs(c.rank - card.rank), 13 - abs(c.rank - card.rank)) <= 2)
    return 2 * same_rank + near


def _joker_fits_again(rules: OklahomaRules, view: SeatView) -> bool:
    for meld in view.melds:
        if meld.owner != view.seat or any(p.card.is_joker for p in meld.cards):
            continue
        try:
            extend_group(rules, meld.reading, (JOKER,))
            return True
        except (IllegalAction, InvalidAction):
            continue
    return False


def _play(rules: OklahomaRules, view: SeatView, legal: Sequence[Action]) -> Action:
    melds = [a for a in legal if isinstance(a, Meld)]
    if melds:
        def meld_key(a: Meld) -> tuple[int, int, int]:
            cards = a.groups[0].cards
            return (len(cards) - 2 * _wilds_in(cards), len(cards), -sum(in_hand_value(rules, c) for c in cards))

        return max(melds, key=meld_key)
    lay_offs = [a for a in legal if isinstance(a, LayOff)]
    if lay_offs:
        return max(lay_offs, key=lambda a: (-_wilds_in(a.cards), -sum(in_hand_value(rules, c) for c in a.cards)))
    exchanges = [a for a in legal if isinstance(a, ExchangeWild)]
    if exchanges and _joker_fits_again(rules, view):
        return exchanges[0]
    discards = [a for a in legal if isinstance(a, Discard)]
    hand = list(view.hand)
    return min(discards, key=lambda a: (_usefulness(a.card, hand), in_hand_value(rules, a.card), -a.card.rank))


def greedy(view: SeatView, legal: Sequence[Action], rng: random.Random) -> Action:
    """The greedy move for Fortune or Arlington: one of ``legal``."""
    rules = _rules(view)
    if view.phase is Phase.DRAW:
        return _draw(rules, view, legal)
    return _play(rules, view, legal)


POLICIES = {"fortune": greedy, "arlington": greedy}
