"""Skarney (SKA) and Skarney Singles (SKS): John Scarne's contract rummy with offers instead of a discard pile.

Two packs and four jokers (SKA-1), 2s and jokers wild, at most one wild in a meld (SKA-2). Each hand has a
contract of three (hands 1-3) or four (hands 4-7) sets of 3 or runs of 3 laid in one action (SKA-3); until a
side has laid it, it melds nothing else. A turn: the stock's top card is drawn for the player (SKA-4, skipped
after accepting a stop card, SKA-8), then exchanges of naturals for opponents' wilds (SKA-5), melds and
lay-offs (SKA-6), and an offer of one card to the other seats in turn (SKA-7) that any of them may accept.
The hand ends when a player melds his last card or draws the last stock card (SKA-9). Seven hands (SKA-13).

Skarney is four players in partnerships sitting opposite; Skarney Singles is two to four players alone, who may
take wilds from any opponent's melds and lay off only on their own (SKS-1).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from referee.rules.cards import (
    JOKER,
    SUITS,
    Card,
    Rank,
    Suit,
    build_deck,
    contains_cards,
    holds_all,
    remove_cards,
    tally,
)
from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption
from referee.rules.melds import (
    ACE_HIGH,
    NATURAL_CARDS,
    MeldKind,
    MeldReading,
    MeldRules,
    Placed,
    WildOnly,
    extend_meld,
    extension,
    find_melds,
    read_meld,
)
from referee.rules.variants.base import (
    AcceptOffer,
    Action,
    Decision,
    Declare,
    DeclineOffer,
    Discard,
    DrawStock,
    Drop,
    EndTurn,
    Evaluation,
    Event,
    ExchangeWild,
    GameOutcome,
    GameState,
    Group,
    GroupVerdict,
    HandScore,
    HandState,
    LayOff,
    Meld,
    Offer,
    OptionSpec,
    PerRules,
    Phase,
    PileView,
    SeatView,
    Table,
    TableMeld,
    TakeDiscards,
    deal_round_robin,
    parse_options,
    private_event,
    rank_by_totals,
    relaid,
    require,
    seat_order,
    zone_view,
)

__all__ = [
    "VARIANTS",
    "Skarney",
    "SkarneySingles",
    "SkarneyRules",
    "SkarneyState",
    "HAND_SIZE",
    "HANDS_PER_GAME",
    "SHUTOUT_BONUS",
    "contract_size",
    "hand_bonus",
    "melded_value",
    "in_hand_value",
    "meld_points",
    "find_contracts",
    "STOP_RANKS",
    "SKARNEY_MELDS",
]

HAND_SIZE = 11  # SKA-1
HANDS_PER_GAME = 7  # SKA-13
SHUTOUT_BONUS = 200  # SKA-10
MAX_LAYOFF_PER_MELD = 2  # SKA-6: 1 or 2 cards on each meld per turn
STOP_RANKS = frozenset({Rank.ACE, Rank.TWO, Rank.JOKER})  # SKA-8
_ONLY_NEXT = STOP_RANKS  # SKA-7: aces and wilds are offered only to the next player
_ACTION_CAP = 60
_CONTRACT_SAMPLE = 12
_SEARCH_BUDGET = 4000

SKARNEY_MELDS = MeldRules(
    sets=True,
    runs=True,
    min_set=3,
    max_set=None,  # SKA-2: sets of 3 or more, no upper limit (two packs and wilds)
    min_run=3,
    ace_low=True,
    ace_high=True,  # SKA-2 / COM-3: A-2-3 or Q-K-A, never K-A-2
    max_wilds=1,  # SKA-2: at most one wild in a meld
    wild_only=WildOnly.SPECIAL,  # SKA-2: three or more 2s, or three or more jokers
    min_wild_only=3,
    wilds_as_natural=False,  # a 2 is always a wild card (it counts as the meld's one wild, SKA-2)
)


# ---------------------------------------------------------------- rules record and values


@dataclass(frozen=True, slots=True)
class SkarneyRules:
    """The rules of one Skarney match: partnership or singles, jokers in or out, contract on or off (SKA-14)."""

    variant: str
    seats: int
    partnership: bool
    jokers: bool = True
    contract: bool = True
    meld_rules: MeldRules = SKARNEY_MELDS

    @property
    def wild_ranks(self) -> frozenset[Rank]:
        """2s and, when in play, jokers (SKA-1, SKA-14)."""
        return frozenset({Rank.TWO, Rank.JOKER}) if self.jokers else frozenset({Rank.TWO})


def contract_size(hand_number: int) -> int:
    """How many 3-card groups the contract of ``hand_number`` has: 3 in hands 1-3, 4 from hand 4 (SKA-3)."""
    return 3 if hand_number <= 3 else 4


def hand_bonus(hand_number: int) -> int:
    """The bonus for winning hand ``hand_number``: 100 in hands 1-3, then 200, 300, 400, 500 (SKA-10)."""
    if hand_number <= 3:
        return 100
    return min(hand_number - 2, 5) * 100


def melded_value(card: Card, wild_only: bool) -> int:
    """SKA-12: a melded card's value; ``wild_only`` when it sits in a meld of 2s only or jokers only."""
    if card.rank is Rank.JOKER:
        return 100 if wild_only else 50
    if card.rank is Rank.TWO:
        return 50 if wild_only else 25
    return _natural_value(card.rank)


def in_hand_value(card: Card) -> int:
    """SKA-12: what a card left in hand subtracts (a positive number)."""
    if card.rank is Rank.JOKER:
        return 100
    if card.rank is Rank.TWO:
        return 50
    return _natural_value(card.rank)


def _natural_value(rank: Rank) -> int:
    if rank is Rank.ACE:
        return 15
    if rank >= Rank.TEN:
        return 10
    return 5


def meld_points(kind: MeldKind, cards: Sequence[Card]) -> int:
    """SKA-12: what a meld on the table scores for its side."""
    wild_only = kind is MeldKind.WILD_SET
    return sum(melded_value(c, wild_only) for c in cards)


# ---------------------------------------------------------------- state


@dataclass
class SkarneyState(HandState):
    """A Skarney hand: the shared zones plus whose side has laid its contract, pending stop-card skips, the
    lay-offs made this turn and the offer in progress (the offered card sits in ``face_up``)."""

    rules: SkarneyRules | None = None
    laid: set[int] = field(default_factory=set)  # teams that have laid their contract (SKA-3)
    skip_draw: list[bool] = field(default_factory=list)  # SKA-8: the seat's next draw is skipped
    laid_off: dict[int, int] = field(default_factory=dict)  # meld id -> cards laid off on it this turn (SKA-6)
    offer_from: int | None = None
    offer_queue: list[int] = field(default_factory=list)  # seats still to answer the offer, in order (SKA-7)
    last_draw: bool = False  # the player to act drew the last stock card (SKA-9)
    totals: tuple[int, ...] = ()  # the game totals before this hand

    @property
    def r(self) -> SkarneyRules:
        assert self.rules is not None
        return self.rules


def _opponent_melds_ok(state: SkarneyState, seat: int, owner: int) -> bool:
    """SKA-5 / SKS-1: whose melds ``seat`` may take wilds from (opponents', never own or partner's)."""
    return state.teams[owner] != state.teams[seat]


def _own_side_meld(state: SkarneyState, seat: int, owner: int) -> bool:
    """SKA-6 / SKS-1: the melds ``seat`` may lay off on (own or partner's; in singles only his own)."""
    return state.teams[owner] == state.teams[seat]


def _wild_count(cards: Sequence[Card], wilds: Collection[Rank]) -> int:
    return sum(1 for c in cards if c.rank in wilds)


def _read_group(
    rules: SkarneyRules, cards: Sequence[Card], stands_for: Sequence[tuple[Card, Card]], rule: str
) -> MeldReading:
    """One meld's reading under SKA-2: a set or run with at most one wild, or 3+ 2s or 3+ jokers alone."""
    if len(cards) < 3:
        raise IllegalAction("INVALID_MELD", f"{' '.join(map(str, cards)) or 'nothing'}: a meld has 3 or more cards (SKA-2)")
    wild = _wild_count(cards, rules.wild_ranks)
    if wild < len(cards):
        if wild > 1:
            raise IllegalAction("TOO_MANY_WILDS",
                                f"{' '.join(map(str, cards))} has {wild} wild cards: at most one wild in a meld (SKA-2)")
    elif len({c.rank for c in cards}) > 1:
        raise IllegalAction("MIXED_WILD_MELD",
                            f"{' '.join(map(str, cards))}: a wild-only meld is all 2s or all jokers, never mixed (SKA-2)")
    return read_meld(list(cards), rules.meld_rules, rules.wild_ranks, stands_for, rule=rule)


def _extended(
    rules: SkarneyRules, meld_id: int, reading: MeldReading, cards: Sequence[Card], stands_for: Sequence[tuple[Card, Card]]
) -> MeldReading:
    """Meld ``meld_id``'s ``reading`` with ``cards`` laid off on it (SKA-2, SKA-6): still one wild at most, save in
    a meld of wilds only. Skarney's table melds are of their reading's kind (it sets no ``TableMeld.kind``).

    :raises IllegalAction: ``TOO_MANY_WILDS`` and the meld engine's ``CANNOT_LAY_OFF`` and wild codes."""
    if reading.kind is not MeldKind.WILD_SET and _wild_count([*reading.raw, *cards], rules.wild_ranks) > 1:
        raise IllegalAction("TOO_MANY_WILDS", f"meld {meld_id} would hold more than one wild card (SKA-2)")
    extended = extend_meld(reading, cards, rules.meld_rules, rules.wild_ranks, stands_for, rule="SKA-6")
    if extended.kind is not MeldKind.WILD_SET and _wild_count(extended.raw, rules.wild_ranks) > 1:
        raise IllegalAction("TOO_MANY_WILDS", f"meld {meld_id} would hold more than one wild card (SKA-2)")
    return extended


def _extends(rules: SkarneyRules, reading: MeldReading, cards: Sequence[Card]) -> bool:
    """Whether ``_extended`` (with no wild named) takes ``cards`` on a meld read as ``reading``: the same tests,
    without building a refusal for each lay-off that does not fit while actions are listed."""
    if reading.kind is not MeldKind.WILD_SET and _wild_count([*reading.raw, *cards], rules.wild_ranks) > 1:
        return False
    extended = extension(reading, cards, rules.meld_rules, rules.wild_ranks)
    if extended is None:
        return False
    return extended.kind is MeldKind.WILD_SET or _wild_count(extended.raw, rules.wild_ranks) <= 1


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

    __slots__ = ("rules", "meld_id", "reading", "could", "could_sorted", "stand_ins", "verdicts", "lists")

    def __init__(self, rules: SkarneyRules, meld_id: int, reading: MeldReading) -> None:
        self.rules = rules
        self.meld_id = meld_id
        self.reading = reading
        # the cards that may fit: a cheap necessary condition (``fits`` is the full test)
        self.could = _could_fit_cards(reading, rules.wild_ranks)
        self.could_sorted = tuple(sorted(self.could))  # a hand's cards that may fit are these, in card order
        # the wilds a natural may take the place of (SKA-5): each wild standing in for a natural, what it stands for
        wilds = rules.wild_ranks
        self.stand_ins = tuple([(p.card, p.rank, p.suit) for p in reading.cards
                                if p.card.rank in wilds and p.is_wild and p.rank not in wilds])
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


_verdicts_for: PerRules[SkarneyRules, _Verdicts] = PerRules(_Verdicts)


# ---------------------------------------------------------------- contract search


_RUN_CARD: dict[tuple[int, Suit], Card] = {
    (pos, suit): Card(Rank.ACE if pos == ACE_HIGH else Rank(pos), suit) for pos in range(1, ACE_HIGH + 1) for suit in SUITS
}  # the card at each run position of each suit
_CARD_AT: dict[tuple[Rank, Suit], Card] = {(c.rank, c.suit): c for c in _EVERY_CARD}
_SLOT: dict[Card, int] = {c: i for i, c in enumerate(_EVERY_CARD)}  # the search counts cards in a list, by slot
_WILD_ORDER: tuple[Card, ...] = (JOKER, *(Card(Rank.TWO, s) for s in SUITS))  # the wild types, in the search's order

Candidate = tuple[tuple[Card, ...], tuple[int, ...]]  # a group and the cards it takes: slot, count, slot, count...


def _candidate(group: tuple[Card, ...]) -> Candidate:
    need: list[int] = []
    for c, n in tally(group).items():
        need.append(_SLOT[c])
        need.append(n)
    return group, tuple(need)


def _with_wild(pair: tuple[Card, ...], wild: Card) -> tuple[Card, ...]:
    """``tuple(sorted((*pair, wild)))`` of a sorted pair of naturals and a wild (never equal to either)."""
    if wild < pair[0]:
        return (wild, *pair)
    return (*pair, wild) if wild > pair[1] else (pair[0], wild, pair[1])


class _RankSets:
    """One rank's 3-card sets for one pattern of copies held: the distinct triples of its cards, then each distinct
    pair with each wild type of ``_WILD_ORDER`` (``pairs[i][w]``), in the search's order, made once."""

    __slots__ = ("triples", "pairs")

    def __init__(self, pool: list[Card]) -> None:
        self.triples = [_candidate(t) for t in sorted(set(itertools.combinations(pool, 3)))]
        self.pairs = [tuple([_candidate(_with_wild(p, w)) for w in _WILD_ORDER])
                      for p in sorted(set(itertools.combinations(pool, 2)))]


_rank_sets: dict[tuple[Rank, tuple[int, ...]], _RankSets] = {}  # at most 13 ranks x 3^5 patterns of copies


def _run_table() -> list[list[tuple[Candidate | None, tuple[Candidate, ...]]]]:
    """By suit and lowest position (``4 * (low - 1) + suit - 1``), by which of the window's three positions are held
    (bit 0: ``low``): the pure run when all three are, the run with each wild type of ``_WILD_ORDER`` when two are."""
    table: list[list[tuple[Candidate | None, tuple[Candidate, ...]]]] = []
    for low in range(1, ACE_HIGH - 1):
        for suit in SUITS:
            row: list[tuple[Candidate | None, tuple[Candidate, ...]]] = []
            for held in range(8):
                naturals = tuple([_RUN_CARD[low + i, suit] for i in range(3) if held >> i & 1])
                pure = _candidate(naturals) if len(naturals) == 3 else None
                mixed = tuple([_candidate((*naturals, w)) for w in _WILD_ORDER]) if len(naturals) == 2 else ()
                row.append((pure, mixed))
            table.append(row)
    return table


_RUNS = _run_table()


def _three_card_groups(counts: dict[Card, int], wilds: frozenset[Rank], kind: MeldKind) -> list[Candidate]:
    """Every distinct 3-card set (or run) in a hand counted as ``counts`` with at most one wild, purest first
    (SKA-2, SKA-3): each rank's triples then its pairs with a wild; each suit's pure runs, then those with a wild.
    The groups come from tables made once (by rank and copies held, by run window and positions held), so a hand
    of 50 cards costs a few look-ups per rank and window."""
    held_wilds = sorted({c for c in counts if c.rank in wilds}, key=lambda c: (not c.is_joker, c))
    wild_types = [_WILD_ORDER.index(w) for w in held_wilds if w in _WILD_ORDER]
    if len(wild_types) < len(held_wilds):  # wilds other than 2s and jokers (a caller's own wild ranks)
        return _three_card_groups_of_any(counts, wilds, kind, held_wilds)
    out: list[Candidate] = []
    if kind is MeldKind.SET:
        by_rank: dict[Rank, list[int]] = {}  # copies held of each suit, for each natural rank held
        for c, n in counts.items():
            if c.rank not in wilds:
                copies = by_rank.get(c.rank)
                if copies is None:
                    copies = by_rank[c.rank] = [0] * (len(SUITS) + 1)
                copies[int(c.suit)] = n
        ranks: list[_RankSets] = []
        for rank in sorted(by_rank):
            key = (rank, tuple(by_rank[rank]))
            sets = _rank_sets.get(key)
            if sets is None:
                sets = _rank_sets[key] = _RankSets(_pool(rank, key[1]))
            ranks.append(sets)
            out.extend(sets.triples)
        for sets in ranks:
            for with_wild in sets.pairs:
                for w in wild_types:
                    out.append(with_wild[w])
        return out
    held = [0] * (len(SUITS) + 1)  # by suit: bit ``pos`` for each natural card held (an ace at 1 and 14)
    for c in counts:
        if c.rank not in wilds and not c.is_joker:
            held[int(c.suit)] |= (1 << 1 | 1 << ACE_HIGH) if c.rank is Rank.ACE else 1 << int(c.rank)
    mixed: list[Candidate] = []
    for s in range(len(SUITS)):
        bits = held[s + 1]
        for low in range(1, ACE_HIGH - 1):
            pure, with_wild = _RUNS[4 * (low - 1) + s][bits >> low & 7]
            if pure is not None:
                out.append(pure)
            elif with_wild:
                for w in wild_types:
                    mixed.append(with_wild[w])
    return out + mixed


def _three_card_groups_of_any(
    counts: dict[Card, int], wilds: frozenset[Rank], kind: MeldKind, wild_types: list[Card]
) -> list[Candidate]:
    """``_three_card_groups`` for any wild ranks, made card by card."""
    out: list[Candidate] = []
    if kind is MeldKind.SET:
        pools = [_pool(r, tuple([counts.get(_CARD_AT[r, s], 0) if (r, s) in _CARD_AT else 0 for s in Suit]))
                 for r in sorted({c.rank for c in counts if c.rank not in wilds})]
        for pool in pools:
            out.extend(_candidate(t) for t in sorted(set(itertools.combinations(pool, 3))))
        for pool in pools:
            for p in sorted(set(itertools.combinations(pool, 2))):
                out.extend(_candidate(_with_wild(p, w)) for w in wild_types)
        return out
    mixed: list[Candidate] = []
    for suit in SUITS:
        for low in range(1, ACE_HIGH - 1):
            naturals = [_RUN_CARD[pos, suit] for pos in range(low, low + 3)
                        if _RUN_CARD[pos, suit].rank not in wilds and _RUN_CARD[pos, suit] in counts]
            if len(naturals) == 3:
                out.append(_candidate(tuple(naturals)))
            elif len(naturals) == 2:
                mixed.extend(_candidate((*naturals, w)) for w in wild_types)
    return out + mixed


def _pool(rank: Rank, copies: tuple[int, ...]) -> list[Card]:
    """One rank's cards held, sorted, a card per copy (``copies`` by suit number)."""
    return [_CARD_AT[rank, s] for s in Suit for _ in range(copies[int(s)]) if (rank, s) in _CARD_AT]


def find_contracts(
    hand: Sequence[Card], groups: int, wilds: frozenset[Rank], limit: int = _CONTRACT_SAMPLE
) -> list[tuple[tuple[Card, ...], ...]]:
    """Up to ``limit`` distinct ways to lay a contract of ``groups`` sets of 3 (or runs of 3) from ``hand``
    (SKA-3), purest first. A bounded search: a sample, not every way."""
    return _find_contracts(tally(hand), groups, wilds, limit)


def _find_contracts(
    counts: dict[Card, int], groups: int, wilds: frozenset[Rank], limit: int
) -> list[tuple[tuple[Card, ...], ...]]:
    """``find_contracts`` of a hand counted as ``counts``: candidates by remembered parts, cards counted by slot."""
    found: list[tuple[tuple[Card, ...], ...]] = []
    left = [0] * len(_SLOT)
    for c, n in counts.items():
        left[_SLOT[c]] = n
    budget = _SEARCH_BUDGET
    for kind in (MeldKind.SET, MeldKind.RUN):
        found_kind = _three_card_groups(counts, wilds, kind)  # every card of a candidate is held, so has a slot
        cands = [g for g, _ in found_kind]
        need = [n for _, n in found_kind]
        if len(cands) >= groups:
            budget = _search(cands, need, groups, limit, 0, left, [], found, budget)
    return found


def _search(
    cands: list[tuple[Card, ...]],
    need: list[tuple[int, ...]],
    groups: int,
    limit: int,
    start: int,
    left: list[int],
    chosen: list[int],
    found: list[tuple[tuple[Card, ...], ...]],
    budget: int,
) -> int:
    """Depth-first choice of disjoint candidate groups (indices increasing, so each contract is met once);
    ``left`` counts the cards not yet chosen by slot, and is restored on the way back. Each candidate looked at
    spends one unit of ``budget``; returns what is left of it."""
    if len(chosen) == groups:
        key = tuple(sorted([cands[i] for i in chosen]))
        if key not in found:
            found.append(key)
        return budget
    for i in range(start, len(cands) - (groups - len(chosen)) + 1):
        if len(found) >= limit or budget <= 0:
            return budget
        budget -= 1
        cards = need[i]
        fits = True
        for j in range(0, len(cards), 2):
            if left[cards[j]] < cards[j + 1]:
                fits = False
                break
        if fits:
            for j in range(0, len(cards), 2):
                left[cards[j]] -= cards[j + 1]
            chosen.append(i)
            budget = _search(cands, need, groups, limit, i + 1, left, chosen, found, budget)
            chosen.pop()
            for j in range(0, len(cards), 2):
                left[cards[j]] += cards[j + 1]
    return budget


# ---------------------------------------------------------------- the variant


class _SkarneyBase:
    """What Skarney and Skarney Singles share; the two differ only in seats and partnerships (SKS-1)."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]]
    title: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    team_play: ClassVar[bool]
    lower_is_better: ClassVar[bool] = False
    forfeit_after_misses: ClassVar[int] = 3
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("jokers", ("on", "off"), "on: 108 cards with four wild jokers; off: 104 cards, only 2s wild", "SKA-14"),
        OptionSpec("contract", ("on", "off"), "on: each hand's contract first; off: meld anything any time", "SKA-14"),
    )

    # ------------------------------------------------------------ set-up

    def configure(self, options: Mapping[str, str], seats: int) -> SkarneyRules:
        """Read the options (SKA-14). :raises InvalidOption: on an unknown option or a wrong seat count."""
        opts = parse_options(self.options, options, self.name)
        if not self.min_seats <= seats <= self.max_seats:
            raise InvalidOption(
                "BAD_SEAT_COUNT",
                f"{self.title} is for {self._seat_text()}, not {seats} (SKA-1)",
            )
        return SkarneyRules(self.name, seats, self.team_play, opts["jokers"] == "on", opts["contract"] == "on")

    def _seat_text(self) -> str:
        if self.min_seats == self.max_seats:
            return f"{self.min_seats} players"
        return f"{self.min_seats} to {self.max_seats} players"

    def deck(self, rules: SkarneyRules, seats: int) -> list[Card]:
        """Two packs plus four jokers (108), or 104 cards without jokers (SKA-1, SKA-14)."""
        return build_deck(packs=2, jokers=4 if rules.jokers else 0)

    def new_hand(self, rules: SkarneyRules, table: Table, deck: list[Card], seed: str) -> SkarneyState:
        """Deal 11 cards each from the dealer's left; the rest is the stock, with no discard pile (SKA-1). The
        first player's draw is made for him at once (SKA-4)."""
        cards = list(deck)
        order = seat_order(table.seats, table.dealer, table.active)
        if len(cards) < HAND_SIZE * len(order):
            raise InvalidAction("SHORT_DECK", f"{len(cards)} cards cannot deal {HAND_SIZE} to {len(order)} seats (SKA-1)")
        hands = deal_round_robin(cards, order, HAND_SIZE, table.seats)
        state = SkarneyState(
            seats=table.seats,
            dealer=table.dealer,
            hand_number=table.hand_number,
            teams=tuple(table.teams),
            active=list(table.active),
            hands=hands,
            stock=cards,
            turn=order[0],
            phase=Phase.PLAY,
            seed=seed,
            pile_view=PileView.NONE,
            in_front=[[] for _ in range(table.seats)],
            wild_ranks=rules.wild_ranks,
            rules=rules,
            skip_draw=[False] * table.seats,
            totals=tuple(table.totals),
        )
        self._start_turn(state)
        return state

    # ------------------------------------------------------------ whose decision

    def decision(self, state: SkarneyState) -> Decision | None:
        """The seat to answer the offer (OFFER), else the player in turn (PLAY); None once the hand is over."""
        if state.over:
            return None
        if state.phase is Phase.OFFER:
            card = state.face_up[0] if state.face_up else None
            return Decision(state.offer_queue[0], Phase.OFFER, offer=card, note=f"seat {state.offer_from} offers {card}")
        note = "last stock card drawn: meld what you can, then end the hand (SKA-9)" if state.last_draw else ""
        return Decision(state.turn, Phase.PLAY, note=note)

    # ------------------------------------------------------------ verification (one code path)

    def _verify(self, state: SkarneyState, seat: int, action: Action) -> object:
        """Check ``action`` for ``seat`` and return what ``apply`` needs. :raises IllegalAction:"""
        # ``if not ...: raise`` rather than ``require`` on the paths legal-action listing runs thousands of times:
        # a message is worth formatting only when the check fails
        d = self.decision(state)
        require(d is not None, "HAND_OVER", "the hand is over (SKA-9)")
        assert d is not None
        if d.seat != seat:
            raise IllegalAction("NOT_YOUR_TURN", f"seat {d.seat} is to act, not seat {seat} (COM-4)")
        if isinstance(action, (AcceptOffer, DeclineOffer)):
            require(d.phase is Phase.OFFER, "WRONG_PHASE", "there is no card on offer to answer (SKA-7)")
            return None
        if d.phase is not Phase.PLAY:
            raise IllegalAction("WRONG_PHASE", f"seat {seat} must accept or decline the card on offer (SKA-7)")
        if isinstance(action, Meld):
            return self._verify_meld(state, seat, action)
        if isinstance(action, LayOff):
            return self._verify_lay_off(state, seat, action)
        if isinstance(action, ExchangeWild):
            return self._verify_exchange(state, seat, action)
        if isinstance(action, Offer):
            hand = state.hands[seat]
            require(not state.last_draw, "NO_OFFER_AFTER_LAST_CARD",
                    "the player who drew the last stock card offers nothing: end the turn (SKA-9)")
            require(len(hand) > 1, "ONE_CARD", "holding one card, say \"one card\" and offer nothing: end the turn (SKA-7)")
            if action.card not in hand:
                raise IllegalAction("CARD_NOT_IN_HAND", f"{action.card} is not in seat {seat}'s hand (SKA-7)")
            return None
        if isinstance(action, EndTurn):
            if not (state.last_draw or len(state.hands[seat]) == 1):
                raise IllegalAction("MUST_OFFER", f"holding {len(state.hands[seat])} cards, offer one card before the turn ends (SKA-7)")
            return None
        if isinstance(action, DrawStock):
            raise IllegalAction("DRAW_IS_AUTOMATIC", "the top stock card is drawn for you at the start of your turn (SKA-4)")
        if isinstance(action, (TakeDiscards, Discard)):
            raise IllegalAction("NOT_IN_VARIANT", "Skarney has no discard pile: offer a card instead (SKA-1, SKA-7)")
        if isinstance(action, (Declare, Drop)):
            raise IllegalAction("NOT_IN_VARIANT", f"{type(action).__name__} is not a Skarney action (SKA-4..SKA-7)")
        raise InvalidAction("BAD_ACTION", f"not an action: {action!r}")

    def _side_laid(self, state: SkarneyState, seat: int) -> bool:
        return not state.r.contract or state.teams[seat] in state.laid

    def _verify_meld(self, state: SkarneyState, seat: int, action: Meld) -> list[MeldReading]:
        rules = state.r
        if not action.groups:
            raise InvalidAction("EMPTY_MELD", "a meld action lays at least one meld (SKA-6)")
        every = [c for g in action.groups for c in g.cards]
        if not contains_cards(state.hands[seat], every):
            raise IllegalAction("CARD_NOT_IN_HAND", f"seat {seat} does not hold {' '.join(map(str, every))} (SKA-6)")
        if self._side_laid(state, seat):
            return [_read_group(rules, g.cards, g.stands_for, "SKA-6") for g in action.groups]
        need = contract_size(state.hand_number)
        what = f"the contract of hand {state.hand_number} is {need} sets of 3 or {need} runs of 3, laid at once"
        require(len(action.groups) == need and all(len(g.cards) == 3 for g in action.groups), "CONTRACT_NOT_MET",
                f"until the side has laid its contract it melds nothing else: {what} (SKA-3)")
        found = [_read_group(rules, g.cards, g.stands_for, "SKA-3") for g in action.groups]
        kinds = {r.kind for r in found}
        require(kinds == {MeldKind.SET} or kinds == {MeldKind.RUN}, "CONTRACT_NOT_MET",
                f"{what}: all sets or all runs, not wild-only melds or a mix (SKA-3)")
        return found

    def _verify_lay_off(self, state: SkarneyState, seat: int, action: LayOff) -> MeldReading:
        rules = state.r
        if not self._side_laid(state, seat):
            raise IllegalAction("CONTRACT_NOT_MET",
                                f"seat {seat}'s side has not laid its contract of hand {state.hand_number}: no lay-offs before it (SKA-3)")
        meld = state.meld(action.meld_id)
        if rules.partnership:
            if not _own_side_meld(state, seat, meld.owner):
                raise IllegalAction("NOT_YOUR_MELD",
                                    f"meld {meld.id} is an opponent's: lay off only on your own or your partner's melds (SKA-6)")
        elif meld.owner != seat:
            raise IllegalAction("NOT_YOUR_MELD",
                                f"meld {meld.id} is seat {meld.owner}'s: in Skarney Singles you lay off only on your own melds (SKS-1)")
        n = len(action.cards)
        done = state.laid_off.get(meld.id, 0)
        if not (1 <= n <= MAX_LAYOFF_PER_MELD and done + n <= MAX_LAYOFF_PER_MELD):
            limit = f"lay off 1 or 2 cards on each meld in a turn; meld {meld.id} has had {done} this turn (SKA-6)"
            raise InvalidAction("EMPTY_LAY_OFF", limit) if n == 0 else IllegalAction("LAY_OFF_LIMIT", limit)
        if not contains_cards(state.hands[seat], action.cards):
            raise IllegalAction("CARD_NOT_IN_HAND", f"seat {seat} does not hold {' '.join(map(str, action.cards))} (SKA-6)")
        return _extended(rules, meld.id, meld.reading, action.cards, action.stands_for)

    def _verify_exchange(self, state: SkarneyState, seat: int, action: ExchangeWild) -> MeldReading:
        rules = state.r
        wilds = rules.wild_ranks
        meld = state.meld(action.meld_id)
        if rules.partnership:
            require(_opponent_melds_ok(state, seat, meld.owner), "OWN_SIDE_MELD",
                    f"meld {meld.id} is your side's: take wilds only from your opponents' melds (SKA-5)")
        else:
            if meld.owner == seat:
                raise IllegalAction("OWN_SIDE_MELD", f"meld {meld.id} is your own: take wilds only from opponents' melds (SKS-1)")
        require(meld.meld_kind is not MeldKind.WILD_SET, "WILD_ONLY_MELD",
                f"meld {meld.id} is made of wilds only: its cards cannot be taken (SKA-5)")
        if action.wild.rank not in wilds:
            raise IllegalAction("NOT_A_WILD", f"{action.wild} is not a wild card (SKA-1, SKA-5)")
        if action.natural.rank in wilds:
            raise IllegalAction("NOT_NATURAL", f"{action.natural} is wild: exchange a natural card (SKA-5)")
        if action.natural not in state.hands[seat]:
            raise IllegalAction("CARD_NOT_IN_HAND", f"{action.natural} is not in seat {seat}'s hand (SKA-5)")
        for i, p in enumerate(meld.cards):
            if p.card != action.wild or not p.is_wild:
                continue
            if p.rank != action.natural.rank or (p.suit is not Suit.NONE and p.suit != action.natural.suit):
                continue
            new = Placed(p.pos, action.natural, p.rank, p.suit if p.suit is not Suit.NONE else action.natural.suit)
            cards = list(meld.cards)
            cards[i] = new
            placed = tuple(sorted(cards)) if meld.reading.kind is MeldKind.SET else tuple(cards)
            return MeldReading(meld.reading.kind, placed)
        raise IllegalAction("WILD_NOT_THERE",
                            f"meld {meld.id} has no {action.wild} standing for {action.natural} as a wild (SKA-5)")

    # ------------------------------------------------------------ apply

    def apply(self, state: SkarneyState, seat: int, action: Action) -> list[Event]:
        """Apply one action after checking it (the state is untouched when it is refused).

        :raises IllegalAction: ``NOT_YOUR_TURN``, ``WRONG_PHASE``, ``CONTRACT_NOT_MET``, ``TOO_MANY_WILDS``,
            ``NOT_YOUR_MELD``, ``OWN_SIDE_MELD``, ``LAY_OFF_LIMIT``, ``MUST_OFFER``, ``ONE_CARD``, ...
        """
        plan = self._verify(state, seat, action)
        if isinstance(action, Meld):
            assert isinstance(plan, list)
            return self._do_meld(state, seat, plan)
        if isinstance(action, LayOff):
            assert isinstance(plan, MeldReading)
            meld = state.meld(action.meld_id)
            remove_cards(state.hands[seat], action.cards)
            state.relay(meld, plan, relaid(meld, plan, seat)[0])
            state.laid_off[meld.id] = state.laid_off.get(meld.id, 0) + len(action.cards)
            events = [Event("LAID_OFF", seat, tuple(action.cards), meld_id=meld.id,
                            text=f"seat {seat} laid off {' '.join(map(str, action.cards))} on meld {meld.id}: {plan.describe()}")]
            return events + self._check_out(state, seat)
        if isinstance(action, ExchangeWild):
            assert isinstance(plan, MeldReading)
            meld = state.meld(action.meld_id)
            remove_cards(state.hands[seat], [action.natural])
            state.hands[seat].append(action.wild)
            state.relay(meld, plan, relaid(meld, plan, seat)[0])
            return [Event("EXCHANGED_WILD", seat, (action.natural, action.wild), meld_id=meld.id,
                          text=f"seat {seat} put {action.natural} in meld {meld.id} and took {action.wild} (SKA-5)")]
        if isinstance(action, Offer):
            remove_cards(state.hands[seat], [action.card])
            state.face_up.append(action.card)
            state.offer_from = seat
            state.offer_queue = self._offer_order(state, seat, action.card)
            state.phase = Phase.OFFER
            only = " (to the next player only)" if action.card.rank in _ONLY_NEXT else ""
            return [Event("OFFERED", seat, (action.card,), text=f"seat {seat} offers {action.card}{only} (SKA-7)")]
        if isinstance(action, EndTurn):
            if state.last_draw:
                state.over = True
                state.end_reason = "the last stock card was drawn and nobody went out (SKA-9)"
                return [Event("HAND_STOPPED", seat, text=f"seat {seat} drew the last stock card: play stops (SKA-9)")]
            return [Event("ONE_CARD", seat, text=f"seat {seat}: one card (SKA-7)")] + self._pass_turn(state, seat)
        if isinstance(action, AcceptOffer):
            card = state.face_up.pop()
            offerer = state.offer_from
            assert offerer is not None
            state.hands[seat].append(card)
            stop = card.rank in STOP_RANKS
            if stop:
                state.skip_draw[seat] = True
            state.offer_queue = []
            state.offer_from = None
            text = f"seat {seat} accepts {card} from seat {offerer}" + (" (a stop card: no draw next turn, SKA-8)" if stop else "")
            return [Event("ACCEPTED", seat, (card,), text=text)] + self._pass_turn(state, offerer)
        if isinstance(action, DeclineOffer):
            state.offer_queue.pop(0)
            events = [Event("DECLINED", seat, text=f"seat {seat} declines the offer")]
            if state.offer_queue:
                return events
            card = state.face_up.pop()
            offerer = state.offer_from
            assert offerer is not None
            state.hands[offerer].append(card)
            state.offer_from = None
            events.append(Event("OFFER_KEPT", offerer, (card,), text=f"nobody accepts: seat {offerer} keeps {card} (SKA-7)"))
            return events + self._pass_turn(state, offerer)
        raise InvalidAction("BAD_ACTION", f"not an action: {action!r}")  # pragma: no cover (verify raised)

    def _do_meld(self, state: SkarneyState, seat: int, found: list[MeldReading]) -> list[Event]:
        team = state.teams[seat]
        contract = state.r.contract and team not in state.laid
        events: list[Event] = []
        for reading in found:
            remove_cards(state.hands[seat], reading.raw)
            m = state.add_meld(seat, reading)
            events.append(Event("MELDED", seat, tuple(reading.raw), meld_id=m.id,
                                text=f"seat {seat} melds {reading.describe()} as meld {m.id}"))
        state.laid.add(team)  # with contract=off a side's first meld stands for its contract (SHUTOUT, SKA-10)
        if contract:
            events.append(Event("CONTRACT_LAID", seat, count=len(found),
                                text=f"seat {seat} lays the contract of hand {state.hand_number} for the side (SKA-3)"))
        return events + self._check_out(state, seat)

    def _check_out(self, state: SkarneyState, seat: int) -> list[Event]:
        if state.hands[seat]:
            return []
        state.over = True
        state.went_out = seat
        state.end_reason = f"seat {seat} went out by melding the last card (SKA-9)"
        return [Event("WENT_OUT", seat, text=f"seat {seat} goes out (SKA-9)")]

    def _offer_order(self, state: SkarneyState, seat: int, card: Card) -> list[int]:
        """SKA-7: the left-hand opponent first, then round clockwise; aces and wilds to the next player only."""
        order: list[int] = []
        s = seat
        for _ in range(state.seats - 1):
            s = state.next_seat(s)
            if s == seat:
                break
            order.append(s)
        if card.rank in _ONLY_NEXT or card.rank in state.wild_ranks:
            return order[:1]
        return order

    def _pass_turn(self, state: SkarneyState, seat: int) -> list[Event]:
        state.phase = Phase.PLAY
        state.laid_off = {}
        state.turn = state.next_seat(seat)
        state.turns += 1
        return self._start_turn(state)

    def _start_turn(self, state: SkarneyState) -> list[Event]:
        """The forced start of a turn: draw the top stock card (SKA-4), unless a stop card was accepted (SKA-8)."""
        seat = state.turn
        if state.skip_draw[seat]:
            state.skip_draw[seat] = False
            return [Event("SKIPPED_DRAW", seat, text=f"seat {seat} accepted a stop card and does not draw (SKA-8)")]
        if not state.stock:
            state.over = True
            state.end_reason = "the stock is exhausted (SKA-9)"
            return [Event("HAND_STOPPED", seat, text="no stock card to draw: play stops (SKA-9)")]
        card = state.stock.pop(0)
        state.hands[seat].append(card)
        events = private_event(Event("DREW_STOCK", seat, (card,), count=len(state.stock),
                                       text=f"seat {seat} drew: {card}"), {seat})  # the others' twin ends at ':'
        if not state.stock:
            state.last_draw = True
            events.append(Event("LAST_CARD", seat, text=f"seat {seat} drew the last stock card (SKA-9)"))
        return events

    # ------------------------------------------------------------ lists for bots

    def legal_actions(self, state: SkarneyState, seat: int) -> list[Action]:
        """In OFFER: accept or decline. In PLAY: a sample of contract layings (or, once laid, new melds and
        lay-offs), every exchange, each distinct offer and the end of turn where allowed; capped at 60.

        The cap keeps the first plays only, so no more are looked for than fit under it (hands of 50 cards leave
        room for a few); the hand is counted and sorted once for the offers, exchanges and lay-offs.
        tests/variants/test_skarney_listing.py holds this to the listing before that work, action for action."""
        d = self.decision(state)
        if d is None or d.seat != seat:
            return []
        if d.phase is Phase.OFFER:
            return [AcceptOffer(), DeclineOffer()]
        rules = state.r
        hand = state.hands[seat]
        held = tally(hand)
        enders: list[Action] = []
        if state.last_draw or len(hand) == 1:
            enders.append(EndTurn())
        else:
            enders.extend([Offer(c) for c in sorted(held)])
        verdicts = _verdicts_for(rules)
        ex = self._exchanges(state, seat, verdicts, held)[:10]  # each one applies: the filters are ``_verify``'s
        room = max(0, _ACTION_CAP - len(enders) - len(ex))
        # the plays that apply (what ``_verify`` checks of the state holds for each one listed: the seat is to
        # play, its side has or has not laid, the meld is its side's with room for the cards, the cards are held)
        plays: list[Action] = []
        if room > 0:
            if self._side_laid(state, seat):
                for g in find_melds(hand, rules.meld_rules, verdicts.wilds)[:25]:
                    if verdicts.kind_of(g) is not None and (not all(c.rank in verdicts.wilds for c in g) or holds_all(held, g)):
                        plays.append(Meld((Group(g),)))  # a wild-only group may count a wild more often than held
                if len(plays) < room:
                    plays.extend(self._lay_offs(state, seat, verdicts, held, room - len(plays)))
            else:
                k = contract_size(state.hand_number)
                for c in _find_contracts(held, k, verdicts.wilds, _CONTRACT_SAMPLE):  # only cards held, each once
                    if verdicts.is_contract(c, k):
                        plays.append(Meld(tuple([Group(g) for g in c])))
        return ex + plays[:room] + enders

    def _exchanges(self, state: SkarneyState, seat: int, verdicts: _Verdicts, held: dict[Card, int]) -> list[Action]:
        """Each natural held that may replace a wild in an opponent's meld (SKA-5), meld by meld, as
        ``_verify_exchange`` allows them; ``held``: the hand counted (``tally``)."""
        out: list[Action] = []
        for m in state.melds:
            if m.owner == seat or not _opponent_melds_ok(state, seat, m.owner) or m.meld_kind is MeldKind.WILD_SET:
                continue
            for wild, rank, stands_suit in verdicts.lay_offs_on(m).stand_ins:
                for suit in (Suit if stands_suit is Suit.NONE else (stands_suit,)):  # the naturals, in card order
                    c = _CARD_AT.get((rank, suit))
                    if c is not None and c in held:
                        a = ExchangeWild(m.id, c, wild)
                        if a not in out:
                            out.append(a)
        return out

    def _lay_offs(
        self, state: SkarneyState, seat: int, verdicts: _Verdicts, counts: dict[Card, int], want: int
    ) -> list[Action]:
        """Every lay-off of one card, then of two, on the side's melds with room left this turn (SKA-6), meld by
        meld until ``want`` are found; ``counts``: the hand's (``tally``)."""
        out: list[Action] = []
        for m in state.melds:
            if not _own_side_meld(state, seat, m.owner) or (not state.r.partnership and m.owner != seat):
                continue
            left = MAX_LAYOFF_PER_MELD - state.laid_off.get(m.id, 0)
            if left <= 0:
                continue
            fits = verdicts.lay_offs_on(m)
            near = tuple([c for c in fits.could_sorted if c in counts])
            if near:
                doubled = tuple([c for c in near if counts[c] >= 2])
                out.extend([LayOff(m.id, cards) for cards in fits.options(near, doubled, left >= 2)])
                if len(out) >= want:
                    break
        return out

    def default_action(self, state: SkarneyState, seat: int, missed_turns: int) -> Action:
        """A missed deadline: decline an offer; in play offer the highest card (a natural if any), or end the
        turn when nothing may be offered."""
        d = self.decision(state)
        if d is not None and d.phase is Phase.OFFER:
            return DeclineOffer()
        hand = state.hands[seat]
        if state.last_draw or len(hand) <= 1:
            return EndTurn()
        naturals = [c for c in hand if c.rank not in state.wild_ranks] or list(hand)
        return Offer(max(naturals, key=lambda c: (in_hand_value(c), c)))

    # ------------------------------------------------------------ views

    def observe(self, state: SkarneyState, seat: int) -> SeatView:
        """Own hand, every meld, the card on offer, hand and stock sizes, and the contract facts (COM-6)."""
        rules = state.r
        k = contract_size(state.hand_number)
        laid_seats = [s for s in range(state.seats) if state.teams[s] in state.laid]
        notes: list[tuple[str, str]] = [
            ("contract", f"{k} sets of 3 or {k} runs of 3 ({3 * k} cards)" if rules.contract else "off"),
            ("contract_groups", str(k)),
            ("side_laid", "yes" if self._side_laid(state, seat) else "no"),
            ("laid_seats", ",".join(map(str, laid_seats))),
            ("hand_bonus", str(hand_bonus(state.hand_number))),
            ("partnership", "yes" if rules.partnership else "no"),
            ("jokers", "on" if rules.jokers else "off"),
        ]
        if state.offer_from is not None:
            notes.append(("offer_from", str(state.offer_from)))
        if state.last_draw:
            notes.append(("last_card_drawn", str(state.turn)))
        skips = [s for s in range(state.seats) if state.skip_draw[s]]
        if skips:
            notes.append(("skip_draw", ",".join(map(str, skips))))
        if state.laid_off:
            notes.append(("laid_off", ",".join(f"{k_}:{v}" for k_, v in sorted(state.laid_off.items()))))
        d = self.decision(state)
        offer = state.face_up[0] if state.phase is Phase.OFFER and state.face_up else None
        return zone_view(state, seat, rules.variant, state.totals, notes, d.phase if d is not None else None, offer)

    # ------------------------------------------------------------ scoring

    def score(self, state: SkarneyState) -> HandScore:
        """SKA-10..12: melds score for their owners, cards in hand subtract for every side that did not go out
        (every side when nobody did); the side that went out, or else the side with the most points, takes the
        hand bonus (plus 200 for a shutout); sides level at the top: the hand does not count."""
        n = state.seats
        teams = state.teams
        melded = [0] * n
        for m in state.melds:
            melded[m.owner] += meld_points(m.meld_kind, m.reading.raw)
        out = state.went_out
        out_team = teams[out] if out is not None else None
        penalty = [0 if out_team is not None and teams[s] == out_team else sum(map(in_hand_value, state.hands[s]))
                   for s in range(n)]
        points = [melded[s] - penalty[s] for s in range(n)]
        details = [f"seat {s}: melded {melded[s]}, in hand -{penalty[s]}" for s in range(n)]
        bonus = hand_bonus(state.hand_number)
        if out is not None:
            points[out] += bonus
            opponents = {teams[s] for s in range(n) if teams[s] != out_team}
            shutout = not (opponents & state.laid)
            reason = f"seat {out} went out: hand bonus {bonus} (SKA-10)"
            details.append(f"seat {out}: hand bonus {bonus}")
            if shutout:
                points[out] += SHUTOUT_BONUS
                reason += f" and shutout {SHUTOUT_BONUS}"
                details.append(f"seat {out}: shutout bonus {SHUTOUT_BONUS} (SKA-10)")
            return HandScore(tuple(points), out, reason, tuple(details))
        why = state.end_reason or "nobody went out"
        side: dict[int, int] = {}
        for s in range(n):
            side[teams[s]] = side.get(teams[s], 0) + points[s]
        best = max(side.values())
        top = [t for t, v in side.items() if v == best]
        if len(top) > 1:
            return HandScore(tuple([0] * n), None, f"{why}; sides level at {best}: the hand does not count (SKA-11)",
                             tuple(details))
        winners = [s for s in range(n) if teams[s] == top[0]]
        seat = max(winners, key=lambda s: (points[s], -s))
        points[seat] += bonus
        details.append(f"seat {seat}: hand bonus {bonus} for the side with most points")
        return HandScore(tuple(points), seat,
                         f"{why}; seat {seat}'s side has the most points ({best}) and the hand bonus {bonus} (SKA-11)",
                         tuple(details))

    def game_outcome(self, rules: SkarneyRules, game: GameState, max_hands: int) -> GameOutcome | None:
        """After seven hands the highest total wins (SKA-13); partners rank by their side's total."""
        if game.hands_played >= HANDS_PER_GAME:
            return GameOutcome(rank_by_totals(game, False), "seven hands played (SKA-13)")
        return None

    # ------------------------------------------------------------ rules check for bot authors

    def evaluate(
        self,
        rules: SkarneyRules,
        wild_ranks: frozenset[Rank],
        groups: Sequence[Sequence[Card]],
        hand_number: int | None = None,
    ) -> Evaluation:
        """Each group's verdict under SKA-2 with its points melded (SKA-12); the groups as the contract of
        ``hand_number`` (default: hands 1-3 for three groups, 4-7 for four) (SKA-3); the in-hand count."""
        wilds = rules.wild_ranks  # fixed by the rules (SKA-1, SKA-14); ``wild_ranks`` is for the common signature
        verdicts: list[GroupVerdict] = []
        kinds: list[MeldKind | None] = []
        for g in groups:
            cards = tuple(g)
            try:
                if not rules.jokers:
                    require(JOKER not in cards, "NO_JOKERS", "jokers are out of play (SKA-14 jokers=off)")
                reading = _read_group(rules, cards, (), "SKA-2")
            except IllegalAction as exc:
                verdicts.append(GroupVerdict(cards, False, "", False, exc.code, 0, exc.message))
                kinds.append(None)
                continue
            wild_only = reading.kind is MeldKind.WILD_SET
            pure = wild_only or _wild_count(cards, wilds) == 0
            verdicts.append(GroupVerdict(cards, True, reading.kind.value, pure, "", meld_points(reading.kind, cards),
                                         reading.describe()))
            kinds.append(reading.kind)
        every = [c for g in groups for c in g]
        in_hand = -sum(in_hand_value(c) for c in every)
        melded = sum(v.points for v in verdicts if v.valid)
        k = contract_size(hand_number) if hand_number is not None else (len(groups) if len(groups) in (3, 4) else 0)
        hands = "hands 1-3" if k == 3 else "hands 4-7"
        if not rules.contract:
            ok, reason, detail = all(v.valid for v in verdicts), "", "contract=off: any valid melds may be laid (SKA-14)"
            if not ok:
                reason = "INVALID_MELD"
        elif k == 0:
            ok, reason, detail = False, "CONTRACT_NOT_MET", "a contract is 3 groups (hands 1-3) or 4 groups (hands 4-7) (SKA-3)"
        elif len(groups) != k or any(len(g) != 3 for g in groups):
            ok, reason, detail = False, "CONTRACT_NOT_MET", f"the contract of {hands} is exactly {k} groups of 3 cards (SKA-3)"
        elif not all(v.valid for v in verdicts):
            ok, reason, detail = False, "INVALID_MELD", "every group of the contract must be a valid meld (SKA-2)"
        elif set(kinds) not in ({MeldKind.SET}, {MeldKind.RUN}):
            ok, reason, detail = False, "CONTRACT_NOT_MET", f"the contract of {hands} is {k} sets or {k} runs, not a mix (SKA-3)"
        else:
            ok, reason, detail = True, "", f"a valid contract for {hands} (SKA-3)"
        return Evaluation(tuple(verdicts), ok, reason, in_hand, melded, detail)


class Skarney(_SkarneyBase):
    """Skarney: four players in two partnerships sitting opposite (SKA-1)."""

    name: ClassVar[str] = "skarney"
    aliases: ClassVar[tuple[str, ...]] = ("skarney-partnership",)
    title: ClassVar[str] = "Skarney"
    min_seats: ClassVar[int] = 4
    max_seats: ClassVar[int] = 4
    team_play: ClassVar[bool] = True


class SkarneySingles(_SkarneyBase):
    """Skarney Singles: two to four players alone (SKA-1, SKS-1)."""

    name: ClassVar[str] = "skarney-singles"
    aliases: ClassVar[tuple[str, ...]] = ("skarneysingles", "skarney-single")
    title: ClassVar[str] = "Skarney Singles"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 4
    team_play: ClassVar[bool] = False


VARIANTS = (Skarney(), SkarneySingles())
