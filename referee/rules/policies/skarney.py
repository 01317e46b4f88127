"""Greedy Skarney and Skarney Singles: lay the contract at once, take wilds from opponents, meld and lay off
everything, accept offers that make melds, and offer the least useful card (SKA-3..SKA-8)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from referee.rules.cards import Card, Rank
from referee.rules.errors import IllegalAction
from referee.rules.melds import ACE_HIGH, MeldKind, extend_meld
from referee.rules.variants.base import (
    AcceptOffer,
    Action,
    DeclineOffer,
    EndTurn,
    ExchangeWild,
    LayOff,
    Meld,
    Offer,
    Phase,
    SeatView,
)
from referee.rules.variants.skarney import SKARNEY_MELDS, in_hand_value, meld_points

__all__ = ["POLICIES", "greedy"]


def _note(view: SeatView, key: str, default: str = "") -> str:
    for k, v in view.notes:
        if k == key:
            return v
    return default


def _positions(card: Card) -> tuple[int, ...]:
    if card.rank is Rank.ACE:
        return (1, ACE_HIGH)
    return (int(card.rank),)


def _usefulness(card: Card, hand: Sequence[Card], wilds: frozenset[Rank]) -> int:
    """How much ``card`` helps the rest of ``hand`` towards sets and runs (wilds always help)."""
    if card.rank in wilds:
        return 100
    rest = list(hand)
    rest.remove(card)
    same = sum(1 for c in rest if c.rank == card.rank)
    near = 0
    for c in rest:
        if c.suit != card.suit or c.rank in wilds or c == card:
            continue
        gap = min(abs(a - b) for a in _positions(c) for b in _positions(card))
        if gap == 1:
            near += 2
        elif gap == 2:
            near += 1
    return 3 * same + near


def _makes_meld(card: Card, hand: Sequence[Card], wilds: frozenset[Rank]) -> bool:
    """Whether ``card`` with two cards of ``hand`` reads as a natural set or run."""
    if card.rank in wilds:
        return True
    naturals = [c for c in hand if c.rank not in wilds]
    if sum(1 for c in naturals if c.rank == card.rank) >= 2:
        return True
    suited = {p for c in naturals if c.suit == card.suit for p in _positions(c)}
    return any(all(p in suited or p in _positions(card) for p in (lo, lo + 1, lo + 2))
               and any(p in _positions(card) for p in (lo, lo + 1, lo + 2))
               for lo in range(1, ACE_HIGH - 1))


def _fits_own_meld(view: SeatView, card: Card, wilds: frozenset[Rank]) -> bool:
    partnership = _note(view, "partnership") == "yes"
    for m in view.melds:
        mine = m.owner == view.seat or (partnership and view.teams[m.owner] == view.teams[view.seat])
        if not mine:
            continue
        try:
            extend_meld(m.reading, [card], SKARNEY_MELDS, wilds)
        except IllegalAction:  # any refusal means "does not fit"
            continue
        if m.meld_kind is MeldKind.WILD_SET or sum(1 for p in m.cards if p.card.rank in wilds) + (card.rank in wilds) <= 1:
            return True
    return False


def _answer_offer(view: SeatView, legal: Sequence[Action]) -> Action:
    card = view.offer if view.offer is not None else (view.face_up[0] if view.face_up else None)
    wilds = frozenset(view.wild_ranks)
    hand = list(view.hand)
    if card is None:
        return DeclineOffer()
    laid = _note(view, "side_laid") == "yes"
    take = _makes_meld(card, hand, wilds) or (laid and _fits_own_meld(view, card, wilds))
    if not take and not laid and len(hand) <= 12:
        # building the contract: a pair or a near run card is worth taking early
        take = _usefulness(card, [*hand, card], wilds) >= 3
    if take and AcceptOffer() in legal:
        return AcceptOffer()
    return DeclineOffer()


def _meld_value(a: Meld, wilds: frozenset[Rank]) -> tuple[int, int, int]:
    cards = [c for g in a.groups for c in g.cards]
    w = sum(1 for c in cards if c.rank in wilds)
    pts = sum(meld_points(MeldKind.SET, g.cards) for g in a.groups)
    return (len(cards), -w, pts)


def greedy(view: SeatView, legal: Sequence[Action], rng: random.Random) -> Action:
    """The greedy move: exchange, lay the contract, meld, lay off, then offer the least useful card."""
    if view.phase is Phase.OFFER:
        return _answer_offer(view, legal)
    wilds = frozenset(view.wild_ranks)
    exchanges = [a for a in legal if isinstance(a, ExchangeWild)]
    if exchanges:
        return exchanges[0]
    melds = [a for a in legal if isinstance(a, Meld)]
    if melds:
        return max(melds, key=lambda a: _meld_value(a, wilds))
    lay_offs = [a for a in legal if isinstance(a, LayOff)]
    if lay_offs:
        return max(lay_offs, key=lambda a: (len(a.cards), sum(in_hand_value(c) for c in a.cards)))
    offers = [a for a in legal if isinstance(a, Offer)]
    if offers:
        hand = list(view.hand)
        counts = Counter(hand)

        def keep_score(a: Offer) -> tuple[int, int, int]:
            c = a.card
            dup = 1 if counts[c] > 1 else 0  # a second copy helps less than the first
            return (_usefulness(c, hand, wilds) - dup, -in_hand_value(c), -int(c.rank))

        return min(offers, key=keep_score)
    for a in legal:
        if isinstance(a, EndTurn):
            return a
    return rng.choice(list(legal))


POLICIES = {"skarney": greedy, "skarney-singles": greedy}
