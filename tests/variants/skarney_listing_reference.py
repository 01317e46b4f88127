"""The Skarney legal-action listing as it was before the bit-mask rewrite, kept word for word as an oracle.

tests/variants/test_skarney_listing.py checks that ``SkarneyVariant.legal_actions`` still returns exactly what
this returns (the same actions in the same order) on random reachable states: bots and environments choose among
the list by index, so its order is part of what the rules core promises. The functions below are copies of the
old ones (``legal_actions``, ``_exchanges`` and ``_lay_offs`` made module functions taking the variant); this
module keeps its own verdict memories so it shares nothing with the code under test but the rule readers.
"""

# ruff: noqa: E501
from __future__ import annotations

import itertools
from collections.abc import Sequence

from referee.rules.cards import JOKER, SUITS, Card, Rank, Suit, holds_all, tally
from referee.rules.errors import IllegalAction
from referee.rules.melds import ACE_HIGH, NATURAL_CARDS, MeldKind, MeldReading, find_melds
from referee.rules.variants.base import (
    AcceptOffer,
    Action,
    DeclineOffer,
    EndTurn,
    ExchangeWild,
    Group,
    LayOff,
    Meld,
    Offer,
    PerRules,
    Phase,
    TableMeld,
)
from referee.rules.variants.skarney import (
    SkarneyRules,
    SkarneyState,
    _extends,
    _opponent_melds_ok,
    _own_side_meld,
    _read_group,
    _SkarneyBase,
    _wild_count,
    contract_size,
)

MAX_LAYOFF_PER_MELD = 2  # SKA-6: 1 or 2 cards on each meld per turn
_ACTION_CAP = 60
_CONTRACT_SAMPLE = 12
_SEARCH_BUDGET = 4000

def _could_fit_cards(reading: MeldReading, wilds: frozenset[Rank]) -> frozenset[Card]:
    """Every card that may fit on a meld read as ``reading``: a cheap necessary condition (``_extended`` decides),
    the meld read once for all the cards."""
    if reading.kind is MeldKind.WILD_SET:
        rank = reading.cards[0].card.rank
        return frozenset(c for c in _EVERY_CARD if c.rank == rank)
    fits: list[Card] = []
    if _wild_count(reading.raw, wilds) == 0:
        fits.extend(c for c in _EVERY_CARD if c.rank in wilds)  # a wild, on a meld with none yet
    naturals = [c for c in _EVERY_CARD if c.rank not in wilds]
    if reading.kind is MeldKind.SET:
        rank = reading.rank
        return frozenset(fits + [c for c in naturals if c.rank == rank])
    suit, low, high = reading.suit, reading.low, reading.high
    for c in naturals:
        if c.suit != suit:
            continue
        for p in ((1, ACE_HIGH) if c.rank is Rank.ACE else (int(c.rank),)):
            if low - 2 <= p < low or high < p <= high + 2:
                fits.append(c)
                break
    return frozenset(fits)


_EVERY_CARD = (*NATURAL_CARDS, JOKER)
_VERDICTS_LIMIT = 1 << 14  # verdicts remembered per rules record (or per meld) before the memory is cleared


class _LayOffVerdicts:
    """What fits on one meld reading, remembered: whether a card may fit (a cheap necessary test) and whether
    cards lay off on it (``_extended``). Both are pure functions of the reading, the rules and the cards."""

    __slots__ = ("rules", "meld_id", "reading", "could", "verdicts", "lists")

    def __init__(self, rules: SkarneyRules, meld_id: int, reading: MeldReading) -> None:
        self.rules = rules
        self.meld_id = meld_id
        self.reading = reading
        # the cards that may fit: a cheap necessary condition (``fits`` is the full test)
        self.could = _could_fit_cards(reading, rules.wild_ranks)
        self.verdicts: dict[tuple[Card, ...], bool] = {}
        self.lists: dict[tuple[tuple[Card, ...], tuple[Card, ...], bool], list[tuple[Card, ...]]] = {}

    def options(self, near: tuple[Card, ...], doubled: tuple[Card, ...], pairs: bool) -> list[tuple[Card, ...]]:
        """The lay-offs on this meld from a hand whose cards that may fit are ``near`` (sorted; those held twice
        or more ``doubled``): each single that fits, then (with room for two, ``pairs``) each pair that fits."""
        key = (near, doubled, pairs)
        found = self.lists.get(key)
        if found is None:
            singles = [c for c in near if self.fits((c,))]
            found = [(c,) for c in singles]
            if pairs:
                seen: set[tuple[Card, ...]] = set()
                for c in singles:
                    for d in near:
                        if d == c and c not in doubled:
                            continue
                        pair = (min(c, d), max(c, d))
                        if pair not in seen:
                            seen.add(pair)
                            if self.fits(pair):
                                found.append(pair)
            if len(self.lists) > _VERDICTS_LIMIT:
                self.lists.clear()
            self.lists[key] = found
        return found

    def fits(self, cards: tuple[Card, ...]) -> bool:
        ok = self.verdicts.get(cards)
        if ok is None:
            ok = self.verdicts[cards] = _extends(self.rules, self.reading, cards)
        return ok


class _Verdicts:
    """Verdicts remembered for one rules record: the kind each group reads as (``_read_group``) and what fits on
    each meld reading. Listing legal actions asks them of the same groups and melds turn after turn; what depends
    on the state (turn, phase, the side's contract, the meld's owner and room, the cards being held) the caller
    checks, as ``_verify`` does."""

    __slots__ = ("rules", "wilds", "kinds", "melds", "readings")

    def __init__(self, rules: SkarneyRules) -> None:
        self.rules = rules
        self.wilds = rules.wild_ranks
        self.kinds: dict[tuple[Card, ...], MeldKind | None] = {}
        # by the reading's identity (a reading is immutable and is held here, so its id names it while
        # remembered), and by what it holds: the same meld recurs from game to game
        self.melds: dict[int, tuple[MeldReading, _LayOffVerdicts]] = {}
        self.readings: dict[tuple[object, ...], _LayOffVerdicts] = {}

    def kind_of(self, cards: tuple[Card, ...]) -> MeldKind | None:
        """The kind ``cards`` read as, as a new meld; None when they are refused."""
        if cards in self.kinds:
            return self.kinds[cards]
        if len(self.kinds) > _VERDICTS_LIMIT:
            self.kinds.clear()
        kind: MeldKind | None
        try:
            kind = _read_group(self.rules, cards, (), "SKA-6").kind
        except IllegalAction:
            kind = None
        self.kinds[cards] = kind
        return kind

    def is_contract(self, groups: tuple[tuple[Card, ...], ...], need: int) -> bool:
        """SKA-3: ``need`` groups of 3 that all read as sets or all as runs."""
        if len(groups) != need or any(len(g) != 3 for g in groups):
            return False
        kinds = {self.kind_of(g) for g in groups}
        return kinds == {MeldKind.SET} or kinds == {MeldKind.RUN}

    def lay_offs_on(self, meld: TableMeld) -> _LayOffVerdicts:
        reading = meld.reading
        seen = self.melds.get(id(reading))
        if seen is not None and seen[0] is reading:
            return seen[1]
        key = (reading.kind, *((p.pos, p.card, p.suit) for p in reading.cards))
        verdicts = self.readings.get(key)
        if verdicts is None:
            if len(self.readings) > _VERDICTS_LIMIT:
                self.readings.clear()
            verdicts = self.readings[key] = _LayOffVerdicts(self.rules, meld.id, reading)
        if len(self.melds) > _VERDICTS_LIMIT:
            self.melds.clear()
        self.melds[id(reading)] = (reading, verdicts)
        return verdicts


_verdicts_for: PerRules[SkarneyRules, _Verdicts] = PerRules(_Verdicts)  # (the memory, not a rule: base's one now)


# ---------------------------------------------------------------- contract search


_RUN_CARD: dict[tuple[int, Suit], Card] = {
    (pos, suit): Card(Rank.ACE if pos == ACE_HIGH else Rank(pos), suit) for pos in range(1, ACE_HIGH + 1) for suit in SUITS
}  # the card at each run position of each suit


def _three_card_groups(hand: Sequence[Card], wilds: frozenset[Rank], kind: MeldKind) -> list[tuple[Card, ...]]:
    """Every distinct 3-card set (or run) in ``hand`` with at most one wild, purest first (SKA-2, SKA-3)."""
    counts = tally(hand)
    wild_types = sorted({c for c in counts if c.rank in wilds}, key=lambda c: (not c.is_joker, c))
    out: list[tuple[Card, ...]] = []
    if kind is MeldKind.SET:
        by_rank: dict[Rank, list[Card]] = {}
        for c in sorted(hand):
            if c.rank not in wilds:
                by_rank.setdefault(c.rank, []).append(c)
        for pool in by_rank.values():
            if len(pool) >= 3:
                out.extend(sorted(set(itertools.combinations(pool, 3))))
        for pool in by_rank.values():
            if len(pool) >= 2:
                for pair in sorted(set(itertools.combinations(pool, 2))):
                    out.extend(tuple(sorted((*pair, w))) for w in wild_types)
        return out
    pure: list[tuple[Card, ...]] = []
    mixed: list[tuple[Card, ...]] = []
    for suit in SUITS:
        for low in range(1, ACE_HIGH - 1):
            naturals: list[Card] = []
            missing = 0
            for pos in range(low, low + 3):
                want = _RUN_CARD[pos, suit]
                if want.rank not in wilds and counts.get(want, 0) > 0:
                    naturals.append(want)
                else:
                    missing += 1
            if missing == 0:
                pure.append(tuple(naturals))
            elif missing == 1:
                mixed.extend(tuple(naturals) + (w,) for w in wild_types)
    return pure + mixed


def find_contracts(
    hand: Sequence[Card], groups: int, wilds: frozenset[Rank], limit: int = _CONTRACT_SAMPLE
) -> list[tuple[tuple[Card, ...], ...]]:
    """Up to ``limit`` distinct ways to lay a contract of ``groups`` sets of 3 (or runs of 3) from ``hand``
    (SKA-3), purest first. A bounded search: a sample, not every way."""
    found: list[tuple[tuple[Card, ...], ...]] = []
    budget = [_SEARCH_BUDGET]
    slot = {c: i for i, c in enumerate(set(hand))}  # the search counts cards in a list, one slot per distinct card
    left = [0] * len(slot)
    for c in hand:
        left[slot[c]] += 1
    for kind in (MeldKind.SET, MeldKind.RUN):
        cands = _three_card_groups(hand, wilds, kind)  # every card of a candidate is held, so has a slot
        if len(cands) >= groups:
            need = [[(slot[c], n) for c, n in tally(g).items()] for g in cands]
            _search(cands, need, groups, limit, 0, left, [], found, budget)
    return found


def _search(
    cands: list[tuple[Card, ...]],
    need: list[list[tuple[int, int]]],
    groups: int,
    limit: int,
    start: int,
    left: list[int],
    chosen: list[int],
    found: list[tuple[tuple[Card, ...], ...]],
    budget: list[int],
) -> None:
    """Depth-first choice of disjoint candidate groups (indices increasing, so each contract is met once);
    ``left`` counts the cards not yet chosen by slot, and is restored on the way back."""
    if len(chosen) == groups:
        key = tuple(sorted(cands[i] for i in chosen))
        if key not in found:
            found.append(key)
        return
    for i in range(start, len(cands) - (groups - len(chosen)) + 1):
        if len(found) >= limit or budget[0] <= 0:
            return
        budget[0] -= 1
        if all(left[k] >= n for k, n in need[i]):
            for k, n in need[i]:
                left[k] -= n
            _search(cands, need, groups, limit, i + 1, left, [*chosen, i], found, budget)
            for k, n in need[i]:
                left[k] += n

# ---------------------------------------------------------------- the listing (methods made functions)


def legal_actions(self: _SkarneyBase, state: SkarneyState, seat: int) -> list[Action]:
    """In OFFER: accept or decline. In PLAY: a sample of contract layings (or, once laid, new melds and
    lay-offs), every exchange, each distinct offer and the end of turn where allowed; capped at 60."""
    d = self.decision(state)
    if d is None or d.seat != seat:
        return []
    if d.phase is Phase.OFFER:
        return [AcceptOffer(), DeclineOffer()]
    rules = state.r
    hand = state.hands[seat]
    enders: list[Action] = []
    if state.last_draw or len(hand) == 1:
        enders.append(EndTurn())
    else:
        enders.extend(Offer(c) for c in sorted(set(hand)))
    exchanges = _exchanges(self, state, seat)
    verdicts = _verdicts_for(rules)
    # the plays that apply (what ``_verify`` checks of the state holds for each one listed: the seat is to
    # play, its side has or has not laid, the meld is its side's with room for the cards, the cards are held)
    plays: list[Action] = []
    held = tally(hand)
    if self._side_laid(state, seat):
        for g in find_melds(hand, rules.meld_rules, verdicts.wilds)[:25]:
            if verdicts.kind_of(g) is not None and (not all(c.rank in verdicts.wilds for c in g) or holds_all(held, g)):
                plays.append(Meld((Group(g),)))  # a wild-only group may count a wild more often than held
        plays.extend(_lay_offs(self, state, seat, verdicts, held))
    else:
        k = contract_size(state.hand_number)
        for c in find_contracts(hand, k, verdicts.wilds):
            if verdicts.is_contract(c, k) and holds_all(held, [card for g in c for card in g]):
                plays.append(Meld(tuple(Group(g) for g in c)))
    ex = [a for a in exchanges[:10] if _applies(self, state, seat, a)]
    room = max(0, _ACTION_CAP - len(enders) - len(ex))
    return ex + plays[:room] + enders

def _applies(self: _SkarneyBase, state: SkarneyState, seat: int, action: Action) -> bool:
    try:
        self._verify(state, seat, action)
    except IllegalAction:
        return False
    return True

def _exchanges(self: _SkarneyBase, state: SkarneyState, seat: int) -> list[Action]:
    ordered = sorted(set(state.hands[seat]))
    out: list[Action] = []
    for m in state.melds:
        if m.owner == seat or not _opponent_melds_ok(state, seat, m.owner) or m.meld_kind is MeldKind.WILD_SET:
            continue
        for p in m.cards:
            if p.card.rank not in state.wild_ranks or not p.is_wild:
                continue
            for c in ordered:
                if c.rank == p.rank and c.rank not in state.wild_ranks and (p.suit is Suit.NONE or c.suit == p.suit):
                    a = ExchangeWild(m.id, c, p.card)
                    if a not in out:
                        out.append(a)
    return out

def _lay_offs(self: _SkarneyBase, state: SkarneyState, seat: int, verdicts: _Verdicts, counts: dict[Card, int]) -> list[Action]:
    """Every lay-off of one card, then of two, on the side's melds with room left this turn (SKA-6);
    ``counts``: the hand's (``tally``)."""
    distinct = sorted(counts)
    out: list[Action] = []
    for m in state.melds:
        if not _own_side_meld(state, seat, m.owner) or (not state.r.partnership and m.owner != seat):
            continue
        left = MAX_LAYOFF_PER_MELD - state.laid_off.get(m.id, 0)
        if left <= 0:
            continue
        fits = verdicts.lay_offs_on(m)
        near = tuple(c for c in distinct if c in fits.could)
        if near:
            doubled = tuple(c for c in near if counts[c] >= 2)
            out.extend(LayOff(m.id, cards) for cards in fits.options(near, doubled, left >= 2))
    return out
