"""500 Rum (FH), 500 Partnership Rum (FHP) and Persian Rummy (PER).

One engine serves the three games; each is a small class naming its seats and options, and a frozen
``FiveHundredRules`` record carries what differs (packs, jokers, card values, four-at-once doubling, the end of
the game). A turn is DRAW (the stock, or cards from the fanned pile with the bottom one melded at once, FH-3)
then PLAY (melds and lay-offs, FH-4, then a discard, or going out with or without one, FH-7).

Choices where RULES.md is silent (see the module's report):

- FH-3: only the bottom card taken must be melded at once; ``TakeDiscards.meld`` holds the *other* cards of that
  meld (from hand and/or among the cards taken), ``lay_off_on`` lays the bottom card off instead. The rest of
  the cards taken go to hand and may be melded later in the same turn.
- FH-11: when the stock is empty at a draw, the player may take from the pile as usual or ``EndTurn`` (decline
  the pile), which ends the deal; when no take is legal, the deal ends by itself (a forced step). The deal is
  scored as any other (FH-9); nobody went out.
- PER-2: "a four-card meld laid down at once" is read literally: a first lay-down of exactly four cards (a set,
  four jokers or a run of four) counts those four cards double for the player who laid them; cards laid off
  later count single for whoever lays them. A five-card run laid at once is not doubled.
- PER-3 ``target = deals-2``: the game ends after two deals; equal totals share their place.
- FH-10: with several over the target, the highest team total wins; equal highest totals play another deal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from referee.rules.cards import JOKER, Card, Rank, Suit, build_deck, contains_cards, format_cards, remove_cards
from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption
from referee.rules.melds import (
    MeldKind,
    MeldReading,
    MeldRules,
    Placed,
    extend_meld,
    extension,
    find_melds,
    read_meld,
    readings,
)
from referee.rules.variants.base import (
    Action,
    Decision,
    Discard,
    DrawStock,
    EndTurn,
    Evaluation,
    Event,
    GameOutcome,
    GameState,
    Group,
    GroupVerdict,
    HandScore,
    HandState,
    LayOff,
    Meld,
    OptionSpec,
    PerRules,
    Phase,
    PileView,
    SeatView,
    Table,
    TableMeld,
    TakeDiscards,
    deal_round_robin,
    not_held,
    parse_options,
    private_event,
    rank_by_totals,
    relaid,
    require,
    seat_order,
    without_clause,
    zone_view,
)

__all__ = [
    "VARIANTS",
    "FiveHundredRules",
    "FiveHundredState",
    "FiveHundredRum",
    "FiveHundredPartnership",
    "Persian",
    "melded_value",
    "in_hand_value",
    "meld_points",
    "ways_to_meld",
    "melds_in",
]

MAX_LISTED = 60  # legal_actions stays near this size (discards are always all listed)
MAX_TAKES = 24

SCORING = OptionSpec(
    "scoring", ("simplified", "traditional"),
    "card values: simplified (9 to 2 count 5, a low ace 5) or traditional (9 to 2 at face value, a low ace 1)",
    "FH-8",
)
JOKERS = OptionSpec("jokers", ("0", "1", "2"), "wild jokers added to the pack: 15 melded, 15 in hand", "FH-12")
TARGET = OptionSpec(
    "target", ("500", "deals-2"), "the game ends at 500 (the source) or after two deals (the usual published game)",
    "PER-3",
)
ACES = OptionSpec("aces", ("both", "high"), "aces high or low in runs (as 500 Rum), or only high (Q-K-A)", "PER-3")
OUT_BONUS = OptionSpec("out_bonus", ("0", "25"), "bonus for the player who goes out", "PER-3")


# ---------------------------------------------------------------- rules record and card values


@dataclass(frozen=True, slots=True)
class FiveHundredRules:
    """What one game of the family plays with (FH-1, FH-8, FH-12, PER-1..3)."""

    variant: str
    seats: int
    packs: int
    printed_jokers: int
    hand_size: int
    scoring: str  # "simplified" | "traditional" (FH-8)
    jokers_wild: bool  # FH-12; Persian jokers are not wild (PER-1)
    joker_value: int  # 15 (FH-12) or 20 (PER-1), melded and in hand
    double_four: bool  # PER-2
    target: int | None  # FH-10
    deals: int | None  # PER-3 deals = 2
    out_bonus: int  # PER-3
    meld_rules: MeldRules
    options: tuple[tuple[str, str], ...]

    @property
    def wilds(self) -> frozenset[Rank]:
        return _JOKERS_WILD if self.jokers_wild else _NO_WILDS


_JOKERS_WILD = frozenset({Rank.JOKER})  # built once: ``wilds`` is asked for on every card of every listing
_NO_WILDS: frozenset[Rank] = frozenset()


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
    have = 0
    for c in naturals:
        if c.suit == bottom.suit:
            have |= _position_bits(c, mr)
    return _could_meld_bits(sum(1 for c in naturals if c.rank == bottom.rank), have, _position_bits(bottom, mr), mr)


def _could_meld_bits(same_rank: int, have: int, own: int, mr: MeldRules) -> bool:
    """``_could_meld`` on counts: ``same_rank`` cards of the bottom card's rank, ``have`` the run positions held in
    its suit (bits), ``own`` its own positions."""
    if mr.sets and same_rank >= 2:
        return True
    if not mr.runs:
        return False
    have <<= 2  # so that the two positions below position 1 are bits too
    own <<= 2
    for b in range(3, 17):  # b: a position of ``bottom``, shifted by two
        if own >> b & 1 and (have >> (b - 2) & 3 == 3 or have >> (b - 1) & 5 == 5 or have >> (b + 1) & 3 == 3):
            return True  # two below it, one either side, or two above it
    return False


# ---------------------------------------------------------------- state


@dataclass
class FiveHundredState(HandState):
    """A deal of 500 Rum: the shared zones plus the rules, the totals shown to seats, each meld's first lay-down
    (PER-2) and the card drawn this turn (for the default discard)."""

    rules: FiveHundredRules | None = None
    totals: tuple[int, ...] = ()
    first_laid: dict[int, tuple[Placed, ...]] = field(default_factory=dict)
    drawn: Card | None = None


def _st(state: HandState) -> tuple[FiveHundredState, FiveHundredRules]:
    assert isinstance(state, FiveHundredState) and state.rules is not None
    return state, state.rules


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


def _extend(meld: TableMeld, cards: Sequence[Card], rules: FiveHundredRules,
            stands_for: Sequence[tuple[Card, Card]] = (), rule: str = "FH-6") -> MeldReading:
    return extend_meld(meld.reading, cards, rules.meld_rules, rules.wilds, stands_for, rule)


# ---------------------------------------------------------------- what the listing remembers

_CODE: dict[Card, int] = {Card(r, s): int(r) * 5 + int(s) for r in Rank for s in Suit if (r is Rank.JOKER) == (s is Suit.NONE)}
_CODES = int(Rank.KING) * 5 + int(Suit.CLUBS) + 1  # card codes, ``rank * 5 + suit``: 0 (a joker) to 69
_SUIT_SLOTS = int(Suit.CLUBS) + 1
_RANK_SLOTS = int(Rank.KING) + 1


def _by_code() -> list[Card]:
    cards = [JOKER] * _CODES  # codes no card has are never read
    for card, code in _CODE.items():
        cards[code] = card
    return cards


_CARD = _by_code()
_MEMORY_LIMIT = 1 << 15  # entries remembered per rules in each memory before it is cleared
_UNKNOWN: tuple[Card, ...] = ()  # a look-up's miss (a remembered best meld is never empty)


class _ListingMemory:
    """What ``legal_actions`` remembers for one rules record: the best meld a pile's bottom card makes (by
    ``_legal_takes``'s key), the new melds of a hand's melding cards (``_new_melds``), which cards extend each table
    meld's reading (by the reading's identity: readings are immutable and shared by copies of a state), and per
    card code its run-position bits and what it counts in hand."""

    __slots__ = ("best", "melds", "fits", "bits", "values")

    def __init__(self, rules: FiveHundredRules) -> None:
        self.best: dict[int, tuple[Card, ...] | None] = {}
        self.melds: dict[tuple[int, ...], list[tuple[int, Action]]] = {}
        self.fits: dict[int, _MeldFit] = {}
        self.bits = [0] * _CODES
        self.values = [0] * _CODES
        for card, code in _CODE.items():
            self.bits[code] = _position_bits(card, rules.meld_rules)
            self.values[code] = in_hand_value(card, rules)


_memory: PerRules[FiveHundredRules, _ListingMemory] = PerRules(_ListingMemory)


def _block(held: int, own: int) -> int:
    """The positions of ``held`` (bits) joined to those of ``own`` by unbroken stretches of held positions: with
    no wilds, the only runs a card at ``own`` can be part of lie there."""
    block = own
    while True:
        grown = block | (block << 1 | block >> 1) & held
        if grown == block:
            return block
        block = grown


def _new_melds(hand: Sequence[Card], rules: FiveHundredRules, memory: _ListingMemory) -> list[tuple[int, Action]]:
    """Each new meld of ``hand`` (``melds_in``) with its points, best first (ties in the finder's order), those
    whose wilds could be read several ways left out. With no wild in hand, only cards of a rank held three times
    or in a stretch of three run positions can meld: the melds are those of these cards, remembered by them
    (a hand keeps its few melding cards for turns while the rest changes). A hand with a wild is remembered whole."""
    mr = rules.meld_rules
    codes = sorted([_CODE[c] for c in hand])
    key: tuple[int, ...]
    melding: Sequence[Card] = hand
    if rules.jokers_wild and codes and codes[0] == 0:  # a joker sorts first
        key = tuple(codes)
    else:
        held = [0] * _SUIT_SLOTS
        ranks = [0] * _RANK_SLOTS
        bits = memory.bits
        for code in codes:
            held[code % 5] |= bits[code]
            ranks[code // 5] += 1
        runs = [_stretches(have) if mr.runs else 0 for have in held]
        keep = [code for code in codes if mr.sets and ranks[code // 5] >= 3 or bits[code] & runs[code % 5]]
        if not keep:
            return []  # ``melds_in``'s quick count: no set or run of three
        key = tuple(keep)
        melding = [_CARD[code] for code in keep]
    found = memory.melds.get(key)
    if found is None:
        scored: list[tuple[int, Action]] = []
        for group in melds_in(melding, rules):
            try:
                reading = read_meld(group, mr, rules.wilds)
            except IllegalAction:
                continue
            scored.append((meld_points(reading, rules), Meld((Group(group),))))
        scored.sort(key=lambda t: -t[0])
        if len(memory.melds) > _MEMORY_LIMIT:
            memory.melds.clear()
        found = memory.melds[key] = scored
    return list(found)


def _remember(memory: dict[int, tuple[Card, ...] | None], key: int,
              best: tuple[Card, ...] | None) -> tuple[Card, ...] | None:
    if len(memory) > _MEMORY_LIMIT:
        memory.clear()
    memory[key] = best
    return best


def _pool(key: int, own: int, suit: int, base: int) -> list[Card]:
    """The cards a bottom card's no-wild key (``_legal_takes``) stands for: the copies of its rank counted there,
    and a card at each run position of the stretch other than its own (``own``)."""
    pool: list[Card] = []
    for i in range(5):
        pool.extend([_CARD[base + i]] * (key >> (7 + 3 * i) & 7))
    block = key >> 22
    for pos in range(1, 15):
        if block >> pos & 1 and not own >> pos & 1:
            pool.append(_CARD[(1 if pos == 14 else pos) * 5 + suit])
    return pool


def _stretches(have: int) -> int:
    """The positions of ``have`` (bits) in unbroken stretches of three or more."""
    three = have & have >> 1 & have >> 2  # the lowest position of each three in a row
    return three | three << 1 | three << 2


class _MeldFit:
    """Which single cards extend one table meld's reading (``_fits``, then ``extension``), by card code (0: not
    asked yet, 1: it does, 2: it does not): worked out card by card as they are asked about, and kept while the
    reading stays on the table."""

    __slots__ = ("reading", "kind", "key", "verdicts")

    def __init__(self, meld: TableMeld) -> None:
        self.reading = meld.reading
        self.kind = meld.meld_kind
        self.key = _fit_key(meld)
        self.verdicts = [0] * _CODES

    def takes(self, card: Card, code: int, rules: FiveHundredRules) -> bool:
        verdict = self.verdicts[code]
        if verdict == 0:
            ok = _fits(card, self.key, rules) and extension(self.reading, (card,), rules.meld_rules,
                                                            rules.wilds) is not None
            verdict = self.verdicts[code] = 1 if ok else 2
        return verdict == 1


def _fit_of(meld: TableMeld, rules: FiveHundredRules, memory: _ListingMemory) -> _MeldFit:
    """The meld's ``_MeldFit``, remembered by its reading's identity (readings are immutable and shared by copies
    of a state; the entry holds the reading, so its id is not reused while remembered)."""
    reading = meld.reading
    fit = memory.fits.get(id(reading))
    if fit is not None and fit.reading is reading and fit.kind is meld.meld_kind:
        return fit
    if len(memory.fits) > _MEMORY_LIMIT:
        memory.fits.clear()
    fit = memory.fits[id(reading)] = _MeldFit(meld)
    return fit


# ---------------------------------------------------------------- the engine shared by the three games


class _FiveHundredFamily:
    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]]
    title: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    team_play: ClassVar[bool] = False
    lower_is_better: ClassVar[bool] = False
    options: ClassVar[tuple[OptionSpec, ...]]
    forfeit_after_misses: ClassVar[int] = 3

    # ------------------------------------------------------------ set-up

    def configure(self, options: Mapping[str, str], seats: int) -> FiveHundredRules:
        """The rules record for ``options`` and ``seats``. :raises InvalidOption:"""
        if not self.min_seats <= seats <= self.max_seats:
            raise InvalidOption(
                "BAD_SEAT_COUNT", f"{self.name} is for {self.min_seats} to {self.max_seats} players, not {seats} (FH-1)"
            )
        opts = parse_options(self.options, options, self.name)
        return self._rules(opts, seats)

    def _rules(self, opts: dict[str, str], seats: int) -> FiveHundredRules:
        jokers = int(opts["jokers"])
        return FiveHundredRules(
            variant=self.name, seats=seats, packs=1 if seats <= 4 else 2, printed_jokers=jokers,
            hand_size=13 if seats == 2 else 7, scoring=opts["scoring"], jokers_wild=jokers > 0, joker_value=15,
            double_four=False, target=500, deals=None, out_bonus=0, meld_rules=MeldRules(max_set=4),
            options=tuple(sorted(opts.items())),
        )

    def deck(self, rules: FiveHundredRules, seats: int) -> list[Card]:
        """One pack for 2 to 4 players, two for 5 or 6 (FH-1), plus jokers (FH-12, PER-1)."""
        return build_deck(rules.packs, rules.printed_jokers)

    def new_hand(self, rules: FiveHundredRules, table: Table, deck: list[Card], seed: str) -> FiveHundredState:
        """Deal 13 cards each to two players, 7 to more (FH-1); one card starts the fanned pile (FH-2)."""
        deck = list(deck)
        order = seat_order(table.seats, table.dealer, table.active)
        hands = deal_round_robin(deck, order, rules.hand_size, table.seats)
        discards = [deck.pop(0)] if deck else []
        st = FiveHundredState(
            seats=table.seats, dealer=table.dealer, hand_number=table.hand_number, teams=table.teams,
            active=list(table.active), hands=hands, stock=deck, turn=order[0], phase=Phase.DRAW, seed=seed,
            pile_view=PileView.FANNED, discards=discards, in_front=[[] for _ in range(table.seats)],
            wild_ranks=rules.wilds, rules=rules, totals=table.totals,
        )
        self._check_stock(st)
        return st

    # ------------------------------------------------------------ decisions and legal actions

    def decision(self, state: HandState) -> Decision | None:
        st, _ = _st(state)
        if st.over:
            return None
        note = "the stock is empty: take from the pile or end the turn to end the deal (FH-11)" if (
            st.phase is Phase.DRAW and not st.stock) else ""
        return Decision(st.turn, st.phase, note=note)

    def legal_actions(self, state: HandState, seat: int) -> list[Action]:
        """DRAW: the stock (or, when it is empty, ``EndTurn``, FH-11) and one way to take each depth of the pile
        whose bottom card can be melded; PLAY: melds found by the meld finder, single-card lay-offs, every
        distinct discard."""
        st, rules = _st(state)
        if st.over or seat != st.turn:
            return []
        if st.phase is Phase.DRAW:
            out: list[Action] = [DrawStock()] if st.stock else [EndTurn()]
            return out + self._legal_takes(st, seat)
        memory = _memory(rules)
        hand = st.hands[seat]
        distinct = set(hand)  # iterated twice below, in one (hash) order: the lay-offs' ties keep it
        discards: list[Action] = [Discard(c) for c in sorted(distinct)]
        room = max(MAX_LISTED - len(discards), 12)
        melds = _new_melds(hand, rules, memory)
        layoffs: list[Action] = []
        table = [(m.id, _fit_of(m, rules, memory)) for m in st.melds]
        if table:
            values = memory.values
            for card in sorted(distinct, key=lambda c: -values[_CODE[c]]):
                code = _CODE[card]
                for meld_id, fit in table:
                    verdict = fit.verdicts[code]
                    if verdict == 1 or verdict == 0 and fit.takes(card, code, rules):
                        layoffs.append(LayOff(meld_id, (card,)))
        plays = [a for _, a in melds[: room // 2 + max(0, room // 2 - len(layoffs))]]
        plays += layoffs[: room - len(plays)]
        return plays + discards

    def _can_extend(self, meld: TableMeld, cards: Sequence[Card], rules: FiveHundredRules) -> bool:
        """Whether ``_extend`` takes the cards (no wild named), without building a refusal for each that does not."""
        return extension(meld.reading, cards, rules.meld_rules, rules.wilds) is not None

    def _legal_takes(self, st: FiveHundredState, seat: int) -> list[Action]:
        """One way (the best-scoring new meld, else a lay-off) for each depth of the pile (FH-3).

        Depth by depth, the cards that could join the bottom card (hand plus the cards above it) are counted by
        fixed slots: the copies held of each card and, per suit, the run positions held. The best meld for a
        bottom card (``ways_to_meld``'s first) depends only on the copies of its rank, the wilds and the run
        positions of its suit (with no wilds, only the unbroken stretch through it): remembered under that key,
        so new hands hit it. Lay-offs read each table meld's remembered cards that extend it (``_MeldFit``)."""
        rules = _st(st)[1]
        pile = st.discards
        if not pile:
            return []
        memory = _memory(rules)
        hand = st.hands[seat]
        out: list[Action] = []
        table = [(m.id, _fit_of(m, rules, memory)) for m in st.melds]
        copies = [0] * _CODES
        held = [0] * _SUIT_SLOTS
        bits = memory.bits
        for c in hand:
            code = _CODE[c]
            copies[code] += 1
            held[code % 5] |= bits[code]
        wild = rules.jokers_wild
        mr = rules.meld_rules
        best_of = memory.best
        n = len(pile)
        for k in range(1, n + 1):
            bottom = pile[n - k]
            code = _CODE[bottom]
            suit = code % 5
            base = code - suit
            best: tuple[Card, ...] | None = None
            if wild and code == 0:  # a wild bottom card may join anything: no short key
                ways = ways_to_meld(bottom, [*hand, *pile[n - k + 1:]], rules)
                best = ways[0] if ways else None
            elif wild and copies[0]:  # wilds may fill gaps: every position of the suit counts
                key = (copies[0] << 37 | (held[suit] | bits[code]) << 22 | code | copies[base] << 7
                       | copies[base + 1] << 10 | copies[base + 2] << 13 | copies[base + 3] << 16 | copies[base + 4] << 19)
                found = best_of.get(key, _UNKNOWN)
                if found is _UNKNOWN:
                    ways = ways_to_meld(bottom, [*hand, *pile[n - k + 1:]], rules)
                    best = _remember(best_of, key, ways[0] if ways else None)
                else:
                    best = found
            else:
                same = copies[base] + copies[base + 1] + copies[base + 2] + copies[base + 3] + copies[base + 4]
                if _could_meld_bits(same, held[suit], bits[code], mr):  # else ``ways_to_meld`` answers at once
                    # No wilds: a set of its rank needs two more of that rank, and a run lies in the unbroken
                    # stretch through it; what cannot make either is left out of the key (and of the pool).
                    own = bits[code]
                    block = _block(held[suit] | own, own) if mr.runs else own
                    if not _stretches(block) & own:
                        block = own
                    key = code | block << 22
                    if mr.sets and same >= 2:
                        key |= (copies[base] << 7 | copies[base + 1] << 10 | copies[base + 2] << 13
                                | copies[base + 3] << 16 | copies[base + 4] << 19)
                    found = best_of.get(key, _UNKNOWN)
                    if found is _UNKNOWN:
                        ways = ways_to_meld(bottom, _pool(key, own, suit, base), rules)
                        best = _remember(best_of, key, ways[0] if ways else None)
                    else:
                        best = found
            if best is not None:
                out.append(TakeDiscards(k, meld=Group(best)))
            else:
                for meld_id, fit in table:
                    verdict = fit.verdicts[code]
                    if verdict == 1 or verdict == 0 and fit.takes(bottom, code, rules):
                        out.append(TakeDiscards(k, lay_off_on=meld_id))
                        break
            if len(out) >= MAX_TAKES:
                break
            copies[code] += 1  # the bottom card joins the cards above the next depth's bottom
            held[suit] |= bits[code]
        return out

    def default_action(self, state: HandState, seat: int, missed_turns: int) -> Action:
        """Draw from the stock (an empty stock: end the deal, FH-11); then discard the drawn card, else the card
        that counts most in hand."""
        st, rules = _st(state)
        if st.phase is Phase.DRAW:
            return DrawStock() if st.stock else EndTurn()
        hand = st.hands[seat]
        if st.drawn is not None and st.drawn in hand:
            return Discard(st.drawn)
        return Discard(max(hand, key=lambda c: (in_hand_value(c, rules), c)))

    # ------------------------------------------------------------ applying actions

    def apply(self, state: HandState, seat: int, action: Action) -> list[Event]:
        """Apply one action after checking it (FH-3, FH-4, FH-7, FH-11). :raises IllegalAction: :raises InvalidAction:"""
        st, rules = _st(state)
        require(not st.over, "HAND_OVER", "the deal is over (FH-7)")
        require(seat == st.turn, "NOT_YOUR_TURN", f"seat {st.turn} is to act, not seat {seat} (COM-4)")
        if isinstance(action, (DrawStock, TakeDiscards)) or (isinstance(action, EndTurn) and st.phase is Phase.DRAW):
            require(st.phase is Phase.DRAW, "WRONG_PHASE", "you have drawn already this turn: meld, lay off or discard (FH-4)")
            if isinstance(action, DrawStock):
                return self._draw(st, seat)
            if isinstance(action, TakeDiscards):
                return self._take(st, seat, action)
            return self._decline_pile(st, seat)
        if isinstance(action, (Meld, LayOff, Discard, EndTurn)):
            require(st.phase is Phase.PLAY, "WRONG_PHASE", "draw first: the stock or from the pile (FH-3)")
            if isinstance(action, Meld):
                return self._meld(st, seat, action)
            if isinstance(action, LayOff):
                return self._lay_off(st, seat, action)
            if isinstance(action, Discard):
                return self._discard(st, seat, action.card)
            raise IllegalAction("MUST_DISCARD", "a turn ends with a discard, or by going out (FH-4, FH-7)")
        raise IllegalAction("NOT_IN_VARIANT", f"{type(action).__name__} is not a move in {self.name} (FH-3, FH-4)")

    def _draw(self, st: FiveHundredState, seat: int) -> list[Event]:
        require(bool(st.stock), "STOCK_EMPTY",
                "the stock is empty: take from the pile, or end the turn to end the deal (FH-11)")
        card = st.stock.pop(0)
        st.hands[seat].append(card)
        st.drawn = card
        st.phase = Phase.PLAY
        return private_event(Event("DREW_STOCK", seat, (card,), text=f"seat {seat} drew: {card}"), {seat})

    def _decline_pile(self, st: FiveHundredState, seat: int) -> list[Event]:
        require(not st.stock, "MUST_DRAW", "draw from the stock or take from the pile (FH-3)")
        self._end(st, f"stock exhausted: seat {seat} did not take from the pile (FH-11)")
        return [Event("STOCK_EXHAUSTED", seat, text=st.end_reason)]

    def verify_take(self, st: FiveHundredState, seat: int, action: TakeDiscards) -> tuple[int, MeldReading, TableMeld | None]:
        """Check a take (FH-3): the depth, and the reading of the new meld or lay-off made with its bottom card.

        :raises IllegalAction: ``DISCARD_PILE_EMPTY``, ``BAD_TAKE_COUNT``, ``MUST_MELD_BOTTOM_DISCARD``,
            ``CARD_NOT_IN_HAND``, ``NO_SUCH_MELD``, ``AMBIGUOUS_WILD``.
        """
        rules = _st(st)[1]
        pile = st.discards
        if action.count < 0:
            raise InvalidAction("BAD_ACTION", f"cannot take {action.count} cards: take 1 or more from the top, or 0 for the whole pile (FH-3)")
        require(bool(pile), "DISCARD_PILE_EMPTY", "the discard pile is empty (FH-3)")
        k = action.count or len(pile)
        require(k <= len(pile), "BAD_TAKE_COUNT", f"the pile has {len(pile)} cards, not {k} (FH-3)")
        bottom = pile[-k]
        above = pile[len(pile) - k + 1:]
        if action.meld is None and action.lay_off_on is None:
            raise IllegalAction("MUST_MELD_BOTTOM_DISCARD", f"the bottom card taken, {bottom}, must be melded at once: "
                                "give the cards to meld it with, or a meld to lay it off on (FH-3)")
        require(action.meld is None or action.lay_off_on is None, "MUST_MELD_BOTTOM_DISCARD",
                f"the bottom card taken, {bottom}, must be melded at once: give a meld or a meld to lay it off on, "
                "not both (FH-3)")
        if action.meld is not None:
            others = action.meld.cards
            if not contains_cards([*st.hands[seat], *above], others):
                raise IllegalAction("CARD_NOT_IN_HAND",
                                    not_held(others, [*st.hands[seat], *above], "your hand or among the cards taken")
                                    + " (FH-3)")
            try:
                reading = read_meld([*others, bottom], rules.meld_rules, rules.wilds, action.meld.stands_for, "FH-3")
            except IllegalAction as exc:
                if exc.code == "INVALID_MELD":
                    raise IllegalAction("MUST_MELD_BOTTOM_DISCARD", f"the bottom card taken, {bottom}, must be melded "
                                        f"at once: {without_clause(exc.message)} (FH-3, FH-5)") from exc
                raise
            return k, reading, None
        assert action.lay_off_on is not None
        meld = st.meld(action.lay_off_on)
        try:
            reading = _extend(meld, (bottom,), rules, rule="FH-3")
        except IllegalAction as exc:
            raise IllegalAction("MUST_MELD_BOTTOM_DISCARD", f"the bottom card taken, {bottom}, must be melded at "
                                f"once: it does not fit on meld {meld.id} (FH-3, FH-6)") from exc
        return k, reading, meld

    def _take(self, st: FiveHundredState, seat: int, action: TakeDiscards) -> list[Event]:
        k, reading, meld = self.verify_take(st, seat, action)
        taken = st.discards[-k:]
        del st.discards[-k:]
        hand = st.hands[seat]
        hand.extend(taken[1:])
        st.phase = Phase.PLAY
        st.drawn = None
        events = [Event("TOOK_DISCARDS", seat, tuple(taken), count=k,
                        text=f"seat {seat} took {k} from the pile: {format_cards(taken)}; {taken[0]} melded at once")]
        if meld is None:
            assert action.meld is not None
            remove_cards(hand, action.meld.cards)
            events.append(self._add_meld(st, seat, reading))
        else:
            events.append(self._relay(st, seat, meld, reading, (taken[0],)))
        return events + self._after_play(st, seat)

    def _meld(self, st: FiveHundredState, seat: int, action: Meld) -> list[Event]:
        rules = _st(st)[1]
        if not action.groups or any(not g.cards for g in action.groups):
            raise InvalidAction("EMPTY_MELD", "a meld needs at least one group of cards (FH-5)")
        hand = st.hands[seat]
        every = [c for g in action.groups for c in g.cards]
        if not contains_cards(hand, every):
            raise IllegalAction("CARD_NOT_IN_HAND", not_held(every, hand) + " (FH-4)")
        found = [read_meld(g.cards, rules.meld_rules, rules.wilds, g.stands_for, "FH-5") for g in action.groups]
        remove_cards(hand, every)
        events = [self._add_meld(st, seat, r) for r in found]
        return events + self._after_play(st, seat)

    def _lay_off(self, st: FiveHundredState, seat: int, action: LayOff) -> list[Event]:
        rules = _st(st)[1]
        if not action.cards:
            raise InvalidAction("EMPTY_LAY_OFF", "a lay-off needs at least one card (FH-6)")
        hand = st.hands[seat]
        if not contains_cards(hand, action.cards):
            raise IllegalAction("CARD_NOT_IN_HAND", not_held(action.cards, hand) + " (FH-6)")
        meld = st.meld(action.meld_id)
        reading = _extend(meld, action.cards, rules, action.stands_for, "FH-6")
        remove_cards(hand, action.cards)
        return [self._relay(st, seat, meld, reading, action.cards)] + self._after_play(st, seat)

    def _discard(self, st: FiveHundredState, seat: int, card: Card) -> list[Event]:
        hand = st.hands[seat]
        require(card in hand, "CARD_NOT_IN_HAND", f"{card} is not in your hand (FH-4)")
        hand.remove(card)
        st.discards.append(card)
        events = [Event("DISCARDED", seat, (card,), text=f"seat {seat} discarded {card}")]
        if not hand:
            return events + self._go_out(st, seat, "by discarding the last card")
        st.turn = st.next_seat(seat)
        st.turns += 1
        st.phase = Phase.DRAW
        st.drawn = None
        ended = self._check_stock(st)
        return events + ended

    def _add_meld(self, st: FiveHundredState, seat: int, reading: MeldReading) -> Event:
        m = st.add_meld(seat, reading)
        st.first_laid[m.id] = reading.cards
        pts = meld_points(reading, _st(st)[1])
        return Event("MELDED", seat, tuple(reading.raw), meld_id=m.id, points=pts,
                     text=f"seat {seat} melded {reading.describe()} for {pts}")

    def _relay(self, st: FiveHundredState, seat: int, meld: TableMeld, reading: MeldReading,
               cards: Sequence[Card]) -> Event:
        """Put the extended reading on the table, each card still credited to whoever laid it (FH-6)."""
        layers, added = relaid(meld, reading, seat)
        st.relay(meld, reading, layers)
        pts = sum(melded_value(p, reading.kind, _st(st)[1]) for p in added)
        return Event("LAID_OFF", seat, tuple(cards), meld_id=meld.id, points=pts,
                     text=f"seat {seat} laid off {format_cards(cards)} on meld {meld.id} for {pts}")

    def _after_play(self, st: FiveHundredState, seat: int) -> list[Event]:
        if st.hands[seat]:
            return []
        return self._go_out(st, seat, "by melding every card")

    def _go_out(self, st: FiveHundredState, seat: int, how: str) -> list[Event]:
        st.went_out = seat
        self._end(st, f"seat {seat} went out {how} (FH-7)")
        return [Event("WENT_OUT", seat, text=st.end_reason)]

    def _end(self, st: FiveHundredState, reason: str) -> None:
        st.over = True
        st.end_reason = reason

    def _check_stock(self, st: FiveHundredState) -> list[Event]:
        """FH-11: a player who must draw from an empty stock and cannot take from the pile ends the deal."""
        if st.over or st.stock or st.phase is not Phase.DRAW or self._legal_takes(st, st.turn):
            return []
        self._end(st, f"stock exhausted: seat {st.turn} cannot draw or take from the pile (FH-11)")
        return [Event("STOCK_EXHAUSTED", st.turn, text=st.end_reason)]

    # ------------------------------------------------------------ views

    def observe(self, state: HandState, seat: int) -> SeatView:
        """The seat's hand, the table, the whole fanned pile (FH-2), sizes and totals (COM-6)."""
        st, rules = _st(state)
        notes = [("pile", "fanned: take any number from the top; the bottom card taken is melded at once (FH-3)"),
                 ("options", ";".join(f"{k}={v}" for k, v in rules.options))]
        notes.append(("jokers", "wild, 15 (FH-12)" if rules.jokers_wild else
                      ("meld only as jokers, 20 (PER-1)" if rules.printed_jokers else "none")))
        if rules.double_four:
            notes.append(("double", "a four-card meld laid down at once counts double (PER-2)"))
        notes.append(("end", f"target {rules.target}" if rules.target else f"{rules.deals} deals"))
        if not st.stock:
            notes.append(("stock", "empty: take from the pile or end the turn to end the deal (FH-11)"))
        return zone_view(st, seat, self.name, st.totals, notes)

    # ------------------------------------------------------------ scoring and the game

    def score(self, state: HandState) -> HandScore:
        """FH-9: each seat scores the cards it melded or laid off minus the cards left in its hand; PER-2 doubles
        four-card first lay-downs; PER-3 adds the out bonus. A deal stopped by the stock (FH-11) or the turn cap is
        scored the same way, with nobody out."""
        st, rules = _st(state)
        melded = [0] * st.seats
        for m in st.melds:
            for p, who in zip(m.cards, m.laid_by, strict=True):
                melded[who] += melded_value(p, m.meld_kind, rules)
            if rules.double_four and m.laid_at_once == 4:  # PER-2: the first four count again for their layer
                melded[m.owner] += sum(melded_value(p, m.meld_kind, rules) for p in st.first_laid[m.id])
        in_hand = [sum(in_hand_value(c, rules) for c in h) for h in st.hands]
        bonus = [rules.out_bonus if s == st.went_out else 0 for s in range(st.seats)]
        points = tuple(melded[s] - in_hand[s] + bonus[s] for s in range(st.seats))
        details = tuple(
            f"seat {s}: melded {melded[s]}, in hand {in_hand[s]}" + (f", out bonus {bonus[s]}" if bonus[s] else "")
            for s in range(st.seats)
        )
        return HandScore(points, st.went_out, st.end_reason or "deal ended", details)

    def game_outcome(self, rules: FiveHundredRules, game: GameState, max_hands: int) -> GameOutcome | None:
        """FH-10: over when a side reaches the target with the single highest total (a tie for highest: deals go
        on); PER-3 ``deals = 2``: over after two deals."""
        ranking = rank_by_totals(game, self.lower_is_better)
        if rules.deals is not None:
            if game.hands_played >= rules.deals:
                return GameOutcome(ranking, f"{rules.deals} deals played (PER-3 deals = {rules.deals})")
            return None
        assert rules.target is not None
        totals = game.team_totals()
        best = max(totals.values())
        if best < rules.target or list(totals.values()).count(best) > 1:
            return None
        leader = ranking[0]
        who = f"seat {leader[0]}" if len(leader) == 1 else "seats " + ", ".join(map(str, leader))
        return GameOutcome(ranking, f"target reached: {who} on {best} (target {rules.target}, FH-10)")

    def evaluate(self, rules: FiveHundredRules, wild_ranks: frozenset[Rank], groups: Sequence[Sequence[Card]]) -> Evaluation:
        """Each group as a new meld laid down at once: valid or why not, its kind and points (FH-5, FH-8, FH-12,
        PER-1, PER-2); what all the cards would count left in hand; valid as a whole when every group melds."""
        verdicts = []
        wilds = frozenset(wild_ranks) | rules.wilds
        for g in groups:
            cards = tuple(g)
            try:
                reading = read_meld(cards, rules.meld_rules, wilds, rule="FH-5")
            except IllegalAction as exc:
                found = readings(cards, rules.meld_rules, wilds) if exc.code == "AMBIGUOUS_WILD" else []
                kinds = "/".join(sorted({r.kind.value for r in found}))
                verdicts.append(GroupVerdict(cards, bool(found), kinds, False, exc.code,
                                             max((meld_points(r, rules) for r in found), default=0), exc.message))
                continue
            verdicts.append(GroupVerdict(cards, True, reading.kind.value, reading.pure, "",
                                         meld_points(reading, rules), reading.describe()))
        hand_points = sum(in_hand_value(c, rules) for g in groups for c in g)
        melded = sum(v.points for v in verdicts if v.valid)
        bad = [v for v in verdicts if not v.valid]
        return Evaluation(tuple(verdicts), not bad, bad[0].reason if bad else "", hand_points, melded,
                          f"melded {melded}, in hand {hand_points}")


class FiveHundredRum(_FiveHundredFamily):
    """500 Rum for 2 to 6 players (FH-1..FH-12)."""

    name = "500-rum"
    aliases = ("500", "five-hundred", "500rum", "rummy-500")
    title = "500 Rum"
    min_seats = 2
    max_seats = 6
    options = (SCORING, JOKERS)


class FiveHundredPartnership(_FiveHundredFamily):
    """500 Rum for two partnerships of two sitting opposite, one joint score per side (FHP-1)."""

    name = "500-partnership"
    aliases = ("partnership-500",)
    title = "500 Partnership Rum"
    min_seats = 4
    max_seats = 4
    team_play = True
    options = (SCORING, JOKERS)


class Persian(_FiveHundredFamily):
    """Persian Rummy: partnership 500 Rum with four jokers that meld only together, four at once double (PER-1..3)."""

    name = "persian"
    aliases = ("persian-rummy",)
    title = "Persian Rummy"
    min_seats = 4
    max_seats = 4
    team_play = True
    options = (TARGET, ACES, OUT_BONUS)

    def _rules(self, opts: dict[str, str], seats: int) -> FiveHundredRules:
        deals = 2 if opts["target"] == "deals-2" else None
        return FiveHundredRules(
            variant=self.name, seats=seats, packs=1, printed_jokers=4, hand_size=7, scoring="simplified",
            jokers_wild=False, joker_value=20, double_four=True, target=None if deals else 500, deals=deals,
            out_bonus=int(opts["out_bonus"]), meld_rules=MeldRules(max_set=4, ace_low=opts["aces"] == "both"),
            options=tuple(sorted(opts.items())),
        )


VARIANTS = (FiveHundredRum(), FiveHundredPartnership(), Persian())
