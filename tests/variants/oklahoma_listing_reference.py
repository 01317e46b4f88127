"""Fortune's and Arlington's legal-action listing as it was before it was made faster (referee/rules/variants/
oklahoma.py at 3522c48), word for word, as module functions with memories of their own: the oracle that
tests/variants/test_oklahoma_listing.py holds the new listing to (same actions, same order: bots and environments
pick from the list by index with seeded generators). Only the shared meld engine (``find_melds``, ``readings``)
and the apply path's ``verify_exchange`` are imported; everything the listing itself decided is copied here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.rules.cards import JOKER, Card, Rank, Suit, contains_cards
from referee.rules.errors import IllegalAction, InvalidAction
from referee.rules.melds import MeldKind, MeldReading, find_melds, readings
from referee.rules.variants.base import (
    Action,
    Discard,
    DrawStock,
    ExchangeWild,
    Group,
    LayOff,
    Meld,
    PerRules,
    Phase,
    TakeDiscards,
)
from referee.rules.variants.oklahoma import QUEEN_OF_SPADES, OklahomaRules, OklahomaState, verify_exchange

ANY_MELD = "any-meld"
MAX_LISTED = 60
MAX_MELDS_LISTED = 20
MAX_TAKES_LISTED = 3


def _deuce_queen_ok(rules: OklahomaRules, reading: MeldReading) -> bool:
    if not rules.deuce_queen_natural_only:
        return True
    as_queen = any(
        p.is_wild and p.card.rank is Rank.TWO and p.rank is Rank.QUEEN and p.suit is Suit.SPADES for p in reading.cards
    )
    return not as_queen or reading.wilds_used == 1


def group_reads(rules: OklahomaRules, cards: Sequence[Card]) -> bool:
    if not cards or (not rules.deuce_sets and all(c.rank in rules.wilds for c in cards)):
        return False
    kinds = {r.kind for r in readings(cards, rules.meld_rules, rules.wilds) if _deuce_queen_ok(rules, r)}
    return len(kinds) == 1  # none: INVALID_MELD; more: AMBIGUOUS_WILD


def group_extends(rules: OklahomaRules, meld: MeldReading, cards: Sequence[Card]) -> bool:
    if not cards:
        return False
    return any(r.kind == meld.kind and _deuce_queen_ok(rules, r)
               for r in readings(cards, rules.meld_rules, rules.wilds, fixed=meld.cards))


def legal_actions(state: OklahomaState, seat: int) -> list[Action]:
    if state.over or seat != state.turn:
        return []
    if state.phase is Phase.DRAW:
        return ([DrawStock()] if state.stock else []) + _pile_takes(state, seat)
    rules, hand = state.rules, state.hands[seat]
    verdicts = _verdicts_for(rules)
    distinct = sorted(set(hand))
    # what verify_discard refuses of a card in hand: the queen of spades while another card is held (FOR-10)
    queen_kept = rules.queen_of_spades_discard_forbidden and any(c != QUEEN_OF_SPADES for c in hand)
    discards: list[Action] = [Discard(c) for c in distinct if not (queen_kept and c == QUEEN_OF_SPADES)]
    room = max(MAX_MELDS_LISTED, MAX_LISTED - len(discards))
    plays: list[Action] = []
    for group in find_melds(hand, verdicts.meld_rules, verdicts.wilds):
        if len(plays) >= min(room, MAX_MELDS_LISTED):
            break
        if verdicts.reads_as_meld(group) and verdicts.held(hand, group):
            plays.append(Meld((Group(group),)))
    for meld in state.melds:
        if meld.owner != seat:
            continue
        for card in distinct:
            if verdicts.lays_off(meld.reading, card):
                plays.append(LayOff(meld.id, (card,)))
    plays.extend(_exchanges(state, seat))
    return discards + plays[:room]


def _pile_takes(state: OklahomaState, seat: int) -> list[Action]:
    if not state.discards:
        return []
    top, wilds = state.discards[-1], state.wild_ranks
    hand, verdicts = state.hands[seat], _verdicts_for(state.rules)
    # only cards of the top card's rank or suit, and wilds, can meld with it
    near = [c for c in hand if c.rank in wilds or c.rank == top.rank or c.suit == top.suit]
    out: list[Action] = []
    for group in find_melds([*near, top], verdicts.meld_rules, wilds):
        if len(out) >= MAX_TAKES_LISTED:
            break
        if top not in group:
            continue
        rest = list(group)
        rest.remove(top)
        # what verify_take checks of a take listed in the DRAW phase: two cards or more from hand, melding
        if len(rest) >= 2 and contains_cards(hand, rest) and verdicts.reads_as_meld((top, *rest)):
            out.append(TakeDiscards(0, Group(tuple(rest))))
    if state.rules.pile_take == ANY_MELD:
        for meld in state.melds:
            if meld.owner == seat and verdicts.extends(meld.reading, top):
                out.append(TakeDiscards(0, lay_off_on=meld.id))
                break
    return out


def _exchanges(state: OklahomaState, seat: int) -> list[Action]:
    if not state.rules.joker:
        return []
    out: list[Action] = []
    for meld in state.melds:
        for p in meld.cards:
            if not p.card.is_joker:
                continue
            natural = next((c for c in state.hands[seat] if not c.is_joker and c.rank == p.rank
                            and (p.suit is Suit.NONE or c.suit == p.suit)), None)
            action = ExchangeWild(meld.id, natural, JOKER) if natural else None
            if action and _applies(verify_exchange, state, seat, action):
                out.append(action)
    return out


def _may_fit(meld: MeldReading, card: Card, wilds: frozenset[Rank]) -> bool:
    if card.rank in wilds:
        return True
    if meld.kind is not MeldKind.RUN:
        return meld.kind is MeldKind.SET and card.rank == meld.rank
    if card.suit != meld.suit:
        return False
    below, above = meld.cards[0].pos - 1, meld.cards[-1].pos + 1  # a run's cards are placed low to high
    if card.rank is Rank.ACE:
        return below in (1, 14) or above in (1, 14)
    return int(card.rank) in (below, above)


def _applies(verify: Any, state: OklahomaState, seat: int, action: Action) -> bool:
    try:
        verify(state, seat, action)
    except (IllegalAction, InvalidAction):
        return False
    return True


_VERDICTS_LIMIT = 1 << 14


class _Verdicts:
    __slots__ = ("rules", "meld_rules", "wilds", "melds", "lay_offs")

    def __init__(self, rules: OklahomaRules) -> None:
        self.rules = rules
        self.meld_rules = rules.meld_rules
        self.wilds = rules.wilds
        self.melds: dict[tuple[Card, ...], bool] = {}
        self.lay_offs: dict[int, tuple[MeldReading, dict[Card, bool]]] = {}

    def reads_as_meld(self, cards: tuple[Card, ...]) -> bool:
        ok = self.melds.get(cards)
        if ok is None:
            if len(self.melds) > _VERDICTS_LIMIT:
                self.melds.clear()
            ok = self.melds[cards] = group_reads(self.rules, cards)
        return ok

    def held(self, hand: Sequence[Card], group: tuple[Card, ...]) -> bool:
        return not all(c.rank in self.wilds for c in group) or contains_cards(hand, group)

    def lays_off(self, meld: MeldReading, card: Card) -> bool:
        seen = self.lay_offs.get(id(meld))
        if seen is None or seen[0] is not meld:
            if len(self.lay_offs) > _VERDICTS_LIMIT:
                self.lay_offs.clear()
            seen = self.lay_offs[id(meld)] = (meld, {})
        known = seen[1]
        ok = known.get(card)
        if ok is None:
            ok = known[card] = _may_fit(meld, card, self.wilds) and self.extends(meld, card)
        return ok

    def extends(self, meld: MeldReading, card: Card) -> bool:
        return group_extends(self.rules, meld, (card,))


_verdicts_for: PerRules[OklahomaRules, _Verdicts] = PerRules(_Verdicts)  # (the memory, not a rule: base's one now)
