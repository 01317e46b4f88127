"""The 500 Rum family's legal-action listing as it was before it was made faster, kept word for word (methods
turned into functions) as the oracle of tests/variants/test_five_hundred_listing.py: the new listing must return
the very same actions in the same order (bots and environments choose from it by index with seeded generators).
Do not edit it to match a new listing."""

from __future__ import annotations

from collections.abc import Sequence

from referee.rules.cards import Card, Rank, Suit
from referee.rules.errors import IllegalAction
from referee.rules.melds import MeldKind, MeldReading, MeldRules, Placed, extension, find_melds, read_meld
from referee.rules.variants.base import (
    Action,
    Discard,
    DrawStock,
    EndTurn,
    Group,
    HandState,
    LayOff,
    Meld,
    Phase,
    TableMeld,
    TakeDiscards,
)
from referee.rules.variants.five_hundred import FiveHundredRules, FiveHundredState

MAX_LISTED = 60
MAX_TAKES = 24


def _st(state: HandState) -> tuple[FiveHundredState, FiveHundredRules]:
    assert isinstance(state, FiveHundredState) and state.rules is not None
    return state, state.rules


def in_hand_value(card: Card, rules: FiveHundredRules) -> int:
    """What ``card`` counts against its holder (FH-8: an ace 15; FH-12 joker 15; PER-1 joker 20)."""
    if card.rank is Rank.JOKER:
        return rules.joker_value
    if card.rank is Rank.ACE:
        return 15
    if card.rank >= Rank.TEN:
        return 10
    return 5 if rules.scoring == "simplified" else int(card.rank)


def melded_value(placed: Placed, kind: MeldKind, rules: FiveHundredRules) -> int:
    """What a melded card scores (FH-8): an ace 15 high (Q-K-A) or in a set, 5 (traditional 1) low in A-2-3; a
    joker 15 wild (FH-12) or 20 in a meld of jokers (PER-1); any other card by its own rank."""
    card = placed.card
    if card.rank is Rank.JOKER:
        return rules.joker_value
    if card.rank is Rank.ACE and kind is MeldKind.RUN and placed.pos == 1:
        return 5 if rules.scoring == "simplified" else 1
    return in_hand_value(card, rules)


def meld_points(reading: MeldReading, rules: FiveHundredRules) -> int:
    """Points of a new meld laid down at once; four cards at once count double where PER-2 applies."""
    pts = sum(melded_value(p, reading.kind, rules) for p in reading.cards)
    if rules.double_four and len(reading.cards) == 4:
        pts *= 2
    return pts


def ways_to_meld(bottom: Card, pool: Sequence[Card], rules: FiveHundredRules) -> list[tuple[Card, ...]]:
    """The other cards of each new meld that ``bottom`` can make with cards of ``pool`` (hand plus the cards taken
    above it), unambiguous readings only, best-scoring first (FH-3)."""
    wilds = rules.wilds
    if bottom.rank in wilds:
        near = list(pool)
    else:
        near = [c for c in pool if c.rank == bottom.rank or c.suit == bottom.suit or c.rank in wilds]
        if not any(c.rank in wilds for c in near) and not _could_meld(bottom, near, rules.meld_rules):
            return []  # the common case, decided without the meld finder
    scored: list[tuple[int, tuple[Card, ...]]] = []
    for group in melds_in([*near, bottom], rules):
        if bottom not in group:
            continue
        try:
            reading = read_meld(group, rules.meld_rules, wilds)
        except IllegalAction:
            continue  # ambiguous wilds: a listed action never needs to name stand-ins
        others = list(group)
        others.remove(bottom)
        scored.append((meld_points(reading, rules), tuple(others)))
    scored.sort(key=lambda t: (-t[0], len(t[1])))
    return [others for _, others in scored]


def melds_in(hand: Sequence[Card], rules: FiveHundredRules) -> list[tuple[Card, ...]]:
    """Every group of ``hand`` that melds (``melds.find_melds``), skipping the finder when a quick count shows
    that no set or run of three is possible."""
    wilds = rules.wilds
    if not any(c.rank in wilds for c in hand):
        mr = rules.meld_rules
        ranks = [0] * (int(Rank.KING) + 1)  # cards of each rank, and run positions held in each suit, by number
        runs = [0] * (int(Suit.CLUBS) + 1)
        for c in hand:
            ranks[int(c.rank)] += 1
            runs[int(c.suit)] |= _position_bits(c, mr)
        if not (mr.sets and max(ranks) >= 3) and not (
            mr.runs and any(have & have >> 1 & have >> 2 for have in runs)  # three positions in a row
        ):
            return []
    return find_melds(hand, rules.meld_rules, rules.wilds)


def _position_bits(card: Card, mr: MeldRules) -> int:
    """The run positions ``card`` can take (an ace low 1 and/or high 14), as bits of an int."""
    if card.rank is not Rank.ACE:
        return 1 << int(card.rank)
    return (2 if mr.ace_low else 0) | (1 << 14 if mr.ace_high else 0)


def _could_meld(bottom: Card, naturals: Sequence[Card], mr: MeldRules) -> bool:
    """Whether ``bottom`` has two partners for a set or a run of three among ``naturals`` (no wilds)."""
    if mr.sets and sum(1 for c in naturals if c.rank == bottom.rank) >= 2:
        return True
    if not mr.runs:
        return False
    have = 0
    for c in naturals:
        if c.suit == bottom.suit:
            have |= _position_bits(c, mr)
    have <<= 2  # so that the two positions below position 1 are bits too
    own = _position_bits(bottom, mr) << 2
    for b in range(3, 17):  # b: a position of ``bottom``, shifted by two
        if own >> b & 1 and (have >> (b - 2) & 3 == 3 or have >> (b - 1) & 5 == 5 or have >> (b + 1) & 3 == 3):
            return True  # two below it, one either side, or two above it
    return False



_FitKey = tuple[bool, bool, Rank, Suit, int]  # a meld of jokers, a set (or jokers), its rank, its suit, a run's ends


def _fit_key(meld: TableMeld) -> _FitKey:
    """What ``_fits`` asks of a meld, read once per listing rather than once per card: a run's next positions
    down and up as bits."""
    r = meld.reading
    jokers = meld.meld_kind is MeldKind.JOKERS
    if jokers or meld.meld_kind is MeldKind.SET:
        return jokers, True, r.rank, r.suit, 0
    return False, False, r.rank, r.suit, 1 << (r.low - 1) | 1 << (r.high + 1)


def _fits(card: Card, key: _FitKey, rules: FiveHundredRules) -> bool:
    """A cheap test before ``extend_meld``: could one card possibly go on this meld (its ``_fit_key``)?"""
    jokers, set_like, rank, suit, ends = key
    if card.rank in rules.wilds:
        return not jokers
    if set_like:
        return card.rank == rank
    return card.suit == suit and bool(_position_bits(card, rules.meld_rules) & ends)


def legal_actions(state: HandState, seat: int) -> list[Action]:
    """DRAW: the stock (or, when it is empty, ``EndTurn``, FH-11) and one way to take each depth of the pile
    whose bottom card can be melded; PLAY: melds found by the meld finder, single-card lay-offs, every
    distinct discard."""
    st, rules = _st(state)
    if st.over or seat != st.turn:
        return []
    if st.phase is Phase.DRAW:
        out: list[Action] = [DrawStock()] if st.stock else [EndTurn()]
        return out + _legal_takes(st, seat)
    hand = st.hands[seat]
    discards: list[Action] = [Discard(c) for c in sorted(set(hand))]
    room = max(MAX_LISTED - len(discards), 12)
    melds: list[tuple[int, Action]] = []
    for group in melds_in(hand, rules):
        try:
            reading = read_meld(group, rules.meld_rules, rules.wilds)
        except IllegalAction:
            continue
        melds.append((meld_points(reading, rules), Meld((Group(group),))))
    melds.sort(key=lambda t: -t[0])
    layoffs: list[Action] = []
    keyed = [(m, _fit_key(m)) for m in st.melds]
    for card in sorted(set(hand), key=lambda c: -in_hand_value(c, rules)):
        for m, key in keyed:
            if _fits(card, key, rules) and _can_extend(m, (card,), rules):
                layoffs.append(LayOff(m.id, (card,)))
    plays = [a for _, a in melds[: room // 2 + max(0, room // 2 - len(layoffs))]]
    plays += layoffs[: room - len(plays)]
    return plays + discards


def _can_extend(meld: TableMeld, cards: Sequence[Card], rules: FiveHundredRules) -> bool:
    """Whether ``_extend`` takes the cards (no wild named), without building a refusal for each that does not."""
    return extension(meld.reading, cards, rules.meld_rules, rules.wilds) is not None


def _legal_takes(st: FiveHundredState, seat: int) -> list[Action]:
    """One way (the best-scoring new meld, else a lay-off) for each depth of the pile (FH-3)."""
    rules = _st(st)[1]
    hand = st.hands[seat]
    out: list[Action] = []
    pile = st.discards
    keyed = [(m, _fit_key(m)) for m in st.melds]
    for k in range(1, len(pile) + 1):
        bottom = pile[-k]
        above = pile[len(pile) - k + 1:]
        ways = ways_to_meld(bottom, [*hand, *above], rules)
        if ways:
            out.append(TakeDiscards(k, meld=Group(ways[0])))
        else:
            for m, key in keyed:
                if _fits(bottom, key, rules) and _can_extend(m, (bottom,), rules):
                    out.append(TakeDiscards(k, lay_off_on=m.id))
                    break
        if len(out) >= MAX_TAKES:
            break
    return out
