"""One meld engine for every variant: sets and runs with wilds, read under a variant's ``MeldRules``.

A *reading* says what kind a meld is and what each card stands for. Wild cards may stand for any card, or be
read as their natural selves where the variant allows it (IND-4: a wild-joker card used as itself is natural).
The engine lists every reading of a group of cards; ``read_meld`` picks the one the player meant (the one
they named, else the only kind possible, with wilds placed as high as they go) and ``extend_meld`` reads a
lay-off with the meld's existing cards fixed where they are (COM-2, COM-3).
"""

from __future__ import annotations

import enum
import itertools
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache

from referee.rules.cards import NATURAL_RANKS, SUITS, Card, Rank, Suit
from referee.rules.errors import IllegalAction

__all__ = [
    "MeldKind",
    "WildOnly",
    "MeldRules",
    "Placed",
    "MeldReading",
    "readings",
    "read_meld",
    "extend_meld",
    "extension",
    "find_melds",
    "ACE_HIGH",
]

ACE_HIGH = 14  # the position of a high ace in a run (Q-K-A)


class MeldKind(enum.Enum):
    SET = "SET"
    RUN = "RUN"
    WILD_SET = "WILD_SET"  # a meld of wild cards only, where a variant allows one (SKA-2, ARL-2)
    SPECIAL = "SPECIAL"  # a variant's own pattern (ICE-4), never read by this engine
    JOKERS = "JOKERS"  # a group of non-wild printed jokers (PER-1)


class WildOnly(enum.Enum):
    """What a group made only of wild-rank cards may be."""

    FORBIDDEN = "forbidden"  # never a meld (FOR-2: no melds of deuces only)
    NATURAL = "natural"  # valid when it reads naturally (IND: three wild-joker fives are a set of fives)
    SPECIAL = "special"  # a special wild-only set of one wild rank (SKA-2 2s or jokers, ARL-2 deuces)


@dataclass(frozen=True, slots=True)
class MeldRules:
    """A variant's limits on melds (COM-2: limits on length, duplicate suits and wilds are per variant)."""

    sets: bool = True
    runs: bool = True
    min_set: int = 3
    max_set: int | None = 4
    set_distinct_suits: bool = False
    min_run: int = 3
    ace_low: bool = True
    ace_high: bool = True
    aces_meld: bool = True
    max_wilds: int | None = None
    wild_only: WildOnly = WildOnly.FORBIDDEN
    min_wild_only: int = 3
    wilds_as_natural: bool = True
    # the rules record keys the meld finder's memos, looked up on every decision: hashed once (as Card is)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in fields(self) if f.compare)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, order=True, slots=True)
class Placed:
    """A card in a meld and what it stands for: ``rank`` (and, in a run, ``suit``; ``Suit.NONE`` in a set when a
    wild stands for an unnamed suit). ``pos`` is its run position (1..14, 14 a high ace) or its rank in a set."""

    pos: int
    card: Card
    rank: Rank
    suit: Suit

    def __init__(self, pos: int, card: Card, rank: Rank, suit: Suit) -> None:  # compiled: see variants/base.py
        object.__setattr__(self, "pos", pos)
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "rank", rank)
        object.__setattr__(self, "suit", suit)

    def __hash__(self) -> int:  # compiled, unlike the generated one; ``rank`` follows from ``pos``
        return hash((self.pos, self.card, int(self.suit)))

    @property
    def is_wild(self) -> bool:
        """True when the card stands in for another (a wild used as itself is natural, IND-4)."""
        return self.card.rank != self.rank or (self.suit is not Suit.NONE and self.card.suit != self.suit)


@dataclass(frozen=True, slots=True)
class MeldReading:
    kind: MeldKind
    cards: tuple[Placed, ...]  # runs low to high; sets in a fixed order

    def __init__(self, kind: MeldKind, cards: tuple[Placed, ...]) -> None:  # compiled: see variants/base.py
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "cards", cards)

    @property
    def wilds_used(self) -> int:
        return sum(1 for p in self.cards if p.is_wild)

    @property
    def pure(self) -> bool:
        return self.wilds_used == 0

    @property
    def rank(self) -> Rank:
        return self.cards[0].rank

    @property
    def suit(self) -> Suit:
        return self.cards[0].suit

    @property
    def low(self) -> int:
        return min(p.pos for p in self.cards)

    @property
    def high(self) -> int:
        return max(p.pos for p in self.cards)

    @property
    def raw(self) -> list[Card]:
        return [p.card for p in self.cards]

    def describe(self) -> str:
        inner = " ".join(str(p.card) + (f"={_stands(p)}" if p.is_wild else "") for p in self.cards)
        return f"{self.kind.value.lower()} [{inner}]"


def _stands(p: Placed) -> str:
    if p.suit is Suit.NONE:
        return str(Card(p.rank, Suit.SPADES))[:-1]
    return str(Card(p.rank, p.suit))


def _is_wild(card: Card, wilds: Collection[Rank]) -> bool:
    return card.rank in wilds


def _rank_at(pos: int) -> Rank:
    return Rank.ACE if pos == ACE_HIGH else Rank(pos)


def _natural_pos(card: Card, window: range) -> int | None:
    if card.rank is Rank.JOKER:
        return None
    if card.rank is Rank.ACE:
        if 1 in window:
            return 1
        if ACE_HIGH in window:
            return ACE_HIGH
        return None
    return int(card.rank) if int(card.rank) in window else None


def _run_readings(
    free: Sequence[Card], fixed: Sequence[Placed], rules: MeldRules, wilds: Collection[Rank]
) -> list[MeldReading]:
    n = len(free) + len(fixed)
    if not rules.runs or n < rules.min_run or n > 13:
        return []
    if fixed:
        if any(p.suit is Suit.NONE for p in fixed):
            return []
        suits = {fixed[0].suit}
    else:
        naturals = [c for c in free if not _is_wild(c, wilds)]
        suits = {c.suit for c in naturals} if naturals else {c.suit for c in free if c.suit is not Suit.NONE}
    out: list[MeldReading] = []
    lo_min = 1 if (rules.ace_low and rules.aces_meld) else 2
    hi_max = ACE_HIGH if (rules.ace_high and rules.aces_meld) else 13
    for suit in suits:
        if suit is Suit.NONE or len(suits) > 1 and not fixed and any(
            not _is_wild(c, wilds) and c.suit != suit for c in free
        ):
            continue
        for low in range(lo_min, hi_max - n + 2):
            window = range(low, low + n)
            if 1 in window and ACE_HIGH in window:
                continue
            reading = _fill_run(free, fixed, suit, window, rules, wilds)
            if reading is not None:
                out.append(reading)
    return out


def _fill_run(
    free: Sequence[Card], fixed: Sequence[Placed], suit: Suit, window: range, rules: MeldRules, wilds: Collection[Rank]
) -> MeldReading | None:
    taken: dict[int, Placed] = {}
    for p in fixed:
        if p.suit != suit or p.pos not in window or p.pos in taken:
            return None
        taken[p.pos] = p
    wild_cards: list[Card] = []
    for c in free:
        if _is_wild(c, wilds):
            wild_cards.append(c)
            continue
        pos = _natural_pos(c, window)
        if c.suit != suit or pos is None or pos in taken:
            return None
        taken[pos] = Placed(pos, c, c.rank, suit)
    stand_ins: list[Card] = []
    for c in sorted(wild_cards, key=lambda c: c.is_joker):
        pos = _natural_pos(c, window) if rules.wilds_as_natural and c.suit == suit else None
        if pos is not None and pos not in taken:
            taken[pos] = Placed(pos, c, c.rank, suit)
        else:
            stand_ins.append(c)
    empty = [p for p in window if p not in taken]
    if len(empty) != len(stand_ins):
        return None
    for pos, c in zip(empty, stand_ins, strict=True):
        taken[pos] = Placed(pos, c, _rank_at(pos), suit)
    reading = MeldReading(MeldKind.RUN, tuple(taken[p] for p in window))
    if rules.max_wilds is not None and reading.wilds_used > rules.max_wilds:
        return None
    if reading.wilds_used == len(window):
        return None
    return reading


def _set_readings(
    free: Sequence[Card], fixed: Sequence[Placed], rules: MeldRules, wilds: Collection[Rank]
) -> list[MeldReading]:
    n = len(free) + len(fixed)
    if not rules.sets or n < rules.min_set or (rules.max_set is not None and n > rules.max_set):
        return []
    if fixed:
        ranks = {fixed[0].rank}
    else:
        naturals = [c for c in free if not _is_wild(c, wilds)]
        ranks = {c.rank for c in naturals} if naturals else ({c.rank for c in free} if rules.wilds_as_natural else set())
    out = []
    for rank in ranks:
        if rank is Rank.ACE and not rules.aces_meld:
            continue
        if rank is Rank.JOKER and (Rank.JOKER in wilds):
            continue
        placed = list(fixed)
        if any(p.rank != rank for p in placed):
            continue
        ok = True
        stand_ins = []
        for c in free:
            if c.rank == rank:
                placed.append(Placed(int(rank), c, rank, c.suit))
            elif _is_wild(c, wilds):
                stand_ins.append(c)
            else:
                ok = False
                break
        if not ok:
            continue
        if rules.set_distinct_suits:
            natural_suits = [p.suit for p in placed if p.suit is not Suit.NONE]
            if len(natural_suits) != len(set(natural_suits)):
                # a wild of this rank duplicated in suit may still stand in for another suit
                seen: set[Suit] = set()
                keep = []
                for p in placed:
                    if p.suit is not Suit.NONE and p.suit in seen and _is_wild(p.card, wilds) and p not in fixed:
                        stand_ins.append(p.card)
                    else:
                        seen.add(p.suit)
                        keep.append(p)
                placed = keep
                natural_suits = [p.suit for p in placed if p.suit is not Suit.NONE]
                if len(natural_suits) != len(set(natural_suits)):
                    continue
            if n > 4:
                continue
        placed.extend(Placed(int(rank), c, rank, Suit.NONE) for c in stand_ins)
        reading = MeldReading(MeldKind.JOKERS if rank is Rank.JOKER else MeldKind.SET, tuple(sorted(placed)))
        if rules.max_wilds is not None and reading.wilds_used > rules.max_wilds:
            continue
        if reading.wilds_used == n:
            continue
        out.append(reading)
    return out


def _wild_only_reading(
    free: Sequence[Card], fixed: Sequence[Placed], rules: MeldRules, wilds: Collection[Rank]
) -> list[MeldReading]:
    cards = list(free) + [p.card for p in fixed]
    n = len(cards)
    if rules.wild_only is not WildOnly.SPECIAL or n < rules.min_wild_only:
        return []
    if rules.max_set is not None and n > rules.max_set:
        return []
    if fixed and any(not (p.card.rank == p.rank and p.card.rank in wilds) for p in fixed):
        return []
    ranks = {c.rank for c in cards}
    if len(ranks) != 1 or next(iter(ranks)) not in wilds:
        return []
    placed = tuple(sorted(Placed(int(c.rank), c, c.rank, c.suit) for c in cards))
    return [MeldReading(MeldKind.WILD_SET, placed)]


def readings(
    cards: Sequence[Card], rules: MeldRules, wilds: Collection[Rank] = (), fixed: Sequence[Placed] = ()
) -> list[MeldReading]:
    """Every valid reading of ``cards`` (plus ``fixed``, cards already placed in a meld) under ``rules``."""
    return list(_readings(tuple(cards), rules, frozenset(wilds), tuple(fixed)))


@lru_cache(maxsize=1 << 14)
def _readings(
    cards: tuple[Card, ...], rules: MeldRules, wilds: frozenset[Rank], fixed: tuple[Placed, ...]
) -> tuple[MeldReading, ...]:
    """``readings``, memoised: a pure function of its (hashable, immutable) arguments, and the same few-card groups
    are read again and again as legal actions are listed turn after turn."""
    all_cards = list(cards) + [p.card for p in fixed]
    if all_cards and all(_is_wild(c, wilds) for c in all_cards):
        if rules.wild_only is WildOnly.FORBIDDEN:
            return ()
        if rules.wild_only is WildOnly.SPECIAL:
            return tuple(_wild_only_reading(cards, fixed, rules, wilds))
    if fixed and fixed[0].card.rank == fixed[0].rank and all(p.rank == fixed[0].rank for p in fixed) and len(
        {p.pos for p in fixed}
    ) == 1 and len(fixed) > 1:
        found = _set_readings(cards, fixed, rules, wilds)
    elif fixed and len({p.pos for p in fixed}) == len(fixed) and len(fixed) > 1:
        found = _run_readings(cards, fixed, rules, wilds)
    else:
        found = _set_readings(cards, fixed, rules, wilds) + _run_readings(cards, fixed, rules, wilds)
    unique: dict[tuple[MeldKind, tuple[Placed, ...]], MeldReading] = {}
    for r in found:
        unique.setdefault((r.kind, r.cards), r)
    return tuple(unique.values())


def _matches(reading: MeldReading, stands_for: Sequence[tuple[Card, Card]]) -> bool:
    pool = list(reading.cards)
    for wild, target in stands_for:
        for p in pool:
            if p.card == wild and p.rank == target.rank and (p.suit is Suit.NONE or p.suit == target.suit):
                pool.remove(p)
                break
        else:
            return False
    return True


def _reassigned(reading: MeldReading, stands_for: Sequence[tuple[Card, Card]]) -> MeldReading | None:
    """``reading`` with its stand-in wilds swapped among their places so that each named wild stands where it is
    named, or None. Stand-ins are interchangeable, but ``readings`` lists only one order of them."""
    cards = list(reading.cards)
    slots = [i for i, p in enumerate(cards) if p.is_wild]
    pool = Counter(cards[i].card for i in slots)  # the stand-in wilds, to be dealt out again
    claimed: dict[int, Card] = {}

    def fits(i: int, target: Card) -> bool:
        return i not in claimed and cards[i].rank == target.rank and cards[i].suit in (Suit.NONE, target.suit)

    for wild, target in stands_for:
        natural = next((i for i in range(len(cards)) if i not in slots and cards[i].card == wild and fits(i, target)), None)
        if natural is not None:  # the named wild already stands there as itself
            claimed[natural] = wild
            continue
        if pool[wild] == 0:
            return None
        spot = next((i for i in slots if cards[i].card == wild and fits(i, target)), None)
        if spot is None:
            spot = next((i for i in slots if fits(i, target)), None)
        if spot is None:
            return None
        claimed[spot] = wild
        pool[wild] -= 1
    rest = list(pool.elements())
    for i in slots:
        if i not in claimed:
            claimed[i] = rest.pop()
    for i in slots:
        cards[i] = Placed(cards[i].pos, claimed[i], cards[i].rank, cards[i].suit)
    return MeldReading(reading.kind, tuple(cards) if reading.kind is MeldKind.RUN else tuple(sorted(cards)))


def _choose(
    found: list[MeldReading],
    stands_for: Sequence[tuple[Card, Card]],
    what: Callable[[], str],
    rule: str,
    accept: Callable[[MeldReading], bool] | None = None,
) -> MeldReading:
    """The reading meant; ``what`` names the cards in a refusal (called only then: listing legal actions reads
    thousands of melds that are never refused)."""
    if stands_for:
        named = [r for r in found if _matches(r, stands_for)]
        if not named:
            swapped = (_reassigned(r, stands_for) for r in found)
            named = [r for r in swapped if r is not None and (accept is None or accept(r))]
        found = named
        if not found:
            raise IllegalAction("WILD_CANNOT_STAND_THERE", f"{what()}: the wilds cannot stand for the named cards ({rule})")
    kinds = {r.kind for r in found}
    if len(kinds) > 1:
        options = "; ".join(r.describe() for r in found[:4])
        raise IllegalAction(
            "AMBIGUOUS_WILD", f"{what()} can be read several ways ({options}): say what each wild stands for ({rule})"
        )
    return max(found, key=lambda r: (r.high, -r.wilds_used))


def read_meld(
    cards: Sequence[Card],
    rules: MeldRules,
    wilds: Collection[Rank] = (),
    stands_for: Sequence[tuple[Card, Card]] = (),
    rule: str = "COM-2",
    accept: Callable[[MeldReading], bool] | None = None,
) -> MeldReading:
    """The reading of a new meld; ``accept`` (optional) drops readings a variant's own rule forbids (ARL-3).

    :raises IllegalAction: ``INVALID_MELD`` when no reading exists, ``AMBIGUOUS_WILD`` when it could be both a
        set and a run and the player did not say which, ``WILD_CANNOT_STAND_THERE`` when a named reading is
        impossible.
    """
    if stands_for or accept is not None:
        return _read_meld(cards, rules, wilds, stands_for, rule, accept)
    key = (tuple(cards), rules, frozenset(wilds), rule)
    known = _read.get(key)
    if known is None:
        if len(_read) > _FOUND_LIMIT:
            _read.clear()
        try:
            known = _read[key] = _read_meld(cards, rules, wilds, (), rule, None)
        except IllegalAction as exc:
            known = _read[key] = (exc.code, exc.message)
    if isinstance(known, MeldReading):
        return known
    raise IllegalAction(known[0], known[1])


# ``read_meld`` of cards with no wild named and no variant filter, by (cards, rules, wilds, rule): the reading meant,
# or the refusal's code and message (raised anew each time). Listing legal actions reads the same groups turn after
# turn, for their points or kind; a reading is immutable, so one may be handed out again.
_read: dict[tuple[tuple[Card, ...], MeldRules, frozenset[Rank], str], MeldReading | tuple[str, str]] = {}


def _read_meld(
    cards: Sequence[Card],
    rules: MeldRules,
    wilds: Collection[Rank],
    stands_for: Sequence[tuple[Card, Card]],
    rule: str,
    accept: Callable[[MeldReading], bool] | None,
) -> MeldReading:
    found = [r for r in readings(cards, rules, wilds) if accept is None or accept(r)]
    if not found:
        raise IllegalAction("INVALID_MELD", f"{' '.join(map(str, cards))} is not a valid set or run ({rule})")
    return _choose(found, stands_for, lambda: " ".join(map(str, cards)), rule, accept)


def extend_meld(
    meld: MeldReading,
    cards: Sequence[Card],
    rules: MeldRules,
    wilds: Collection[Rank] = (),
    stands_for: Sequence[tuple[Card, Card]] = (),
    rule: str = "COM-2",
    accept: Callable[[MeldReading], bool] | None = None,
) -> MeldReading:
    """The reading of ``meld`` with ``cards`` laid off on it; the meld's cards keep what they stand for.
    ``accept`` (optional) drops readings a variant's own rule forbids (ARL-3).

    :raises IllegalAction: ``CANNOT_LAY_OFF`` when the cards do not fit the meld.
    """
    found = [
        r for r in readings(cards, rules, wilds, fixed=meld.cards) if r.kind == meld.kind and (accept is None or accept(r))
    ]
    if not found:
        raise IllegalAction(
            "CANNOT_LAY_OFF", f"{' '.join(map(str, cards))} does not fit on {meld.describe()} ({rule})"
        )
    return _choose(found, stands_for, lambda: f"{meld.describe()} + {' '.join(map(str, cards))}", rule, accept)


def extension(meld: MeldReading, cards: Sequence[Card], rules: MeldRules, wilds: Collection[Rank] = ()) -> MeldReading | None:
    """What ``extend_meld`` answers with no wild named and no variant filter, None where it refuses: for testing
    many lay-offs while listing actions, without building a refusal for each one that does not fit."""
    found = [r for r in readings(cards, rules, wilds, fixed=meld.cards) if r.kind == meld.kind]
    if not found:
        return None
    return max(found, key=_meant)  # one kind only, so ``_choose`` picks this, as ``extend_meld`` does


def _meant(r: MeldReading) -> tuple[int, int]:
    """The reading meant among those of one kind (``_choose``): wilds placed as high as they go, then fewest."""
    return r.high, -r.wilds_used


# The meld finder works on card codes, ``rank * 5 + suit``: small ints that order as the cards do (a printed joker
# is 0, the lowest), so counting, sorting and set look-ups run on ints instead of ``Card`` objects.
_CARD_OF: dict[int, Card] = {int(r) * 5 + int(s): Card(r, s) for r in Rank for s in Suit if (r is Rank.JOKER) == (s is Suit.NONE)}
_CODE_RANGE = range(int(Rank.KING) * 5 + int(Suit.CLUBS) + 1)
_FOUND_LIMIT = 1 << 15  # entries remembered per (rules, wilds) in each memory before it is cleared

_CODE_OF: dict[Card, int] = {card: code for code, card in _CARD_OF.items()}

Codes = tuple[int, ...]
# valid groups by their order key (``_order_key``): an int, so a hand's groups are sorted as ints, several times
# faster than the (-size, codes) tuples they stand for
Found = dict[int, tuple[Card, ...]]


class _FinderMemory:
    """What the finder remembers for one (rules, wilds): whether each candidate group reads as a meld, and the
    valid groups of each part of a hand. A hand's melds split into parts that depend on little of it: the sets of
    one rank (that rank's cards and the wilds), the runs of one suit (which of its naturals are held and the
    wilds) and the wild-only sets (the wilds); the same parts recur from hand to hand and turn to turn."""

    __slots__ = ("valid", "sets", "runs", "wild_only", "wild_bits")

    def __init__(self, wilds: frozenset[Rank] = frozenset()) -> None:
        self.wild_bits = _rank_bits(wilds)
        self.valid: dict[Codes, bool] = {}
        self.sets: dict[tuple[Codes, Codes, int, int], Found] = {}
        self.runs: dict[tuple[int, int, Codes], Found] = {}
        self.wild_only: dict[Codes, Found] = {}

    def bound(self) -> None:
        for memory in (self.valid, self.sets, self.runs, self.wild_only):
            if len(memory) > _FOUND_LIMIT:
                memory.clear()


_memories: dict[tuple[MeldRules, frozenset[Rank]], _FinderMemory] = {}


def _rank_bits(ranks: Collection[Rank]) -> int:
    bits = 0
    for r in ranks:
        bits |= 1 << int(r)
    return bits


def _valid(g: Codes, rules: MeldRules, wild_bits: int) -> bool:
    """Whether the cards of codes ``g`` read as a new meld: ``bool(_readings(cards, rules, wilds, ()))`` without
    building a reading. The same tests in the same order as ``_readings`` (tests/test_meld_validity.py holds the two
    to the same answer on every kind of group), on the codes' ranks and suits as bits."""
    n = len(g)
    if n == 0:
        return bool(_readings((), rules, frozenset(r for r in Rank if wild_bits >> int(r) & 1), ()))
    nat_ranks = 0  # bits of the natural (non-wild) cards' ranks, and of their suits
    nat_suits = 0
    naturals = 0
    wild_ranks = 0
    for c in g:
        r = c // 5
        if wild_bits >> r & 1:
            wild_ranks |= 1 << r
        else:
            naturals += 1
            nat_ranks |= 1 << r
            nat_suits |= 1 << (c % 5)
    if naturals == 0:
        if rules.wild_only is WildOnly.FORBIDDEN:
            return False
        if rules.wild_only is WildOnly.SPECIAL:  # ``_wild_only_reading``
            return n >= rules.min_wild_only and (rules.max_set is None or n <= rules.max_set) and (
                wild_ranks & (wild_ranks - 1) == 0)
    return _valid_set(g, rules, wild_bits, naturals, nat_ranks) or _valid_run(g, rules, wild_bits, naturals, nat_suits)


def _valid_set(g: Codes, rules: MeldRules, wild_bits: int, naturals: int, nat_ranks: int) -> bool:
    """``_set_readings`` is not empty."""
    n = len(g)
    max_set = rules.max_set
    if not rules.sets or n < rules.min_set or (max_set is not None and n > max_set):
        return False
    if naturals:
        if nat_ranks & (nat_ranks - 1):
            return False  # naturals of two ranks: no rank takes them all
        rank = nat_ranks.bit_length() - 1
        if rank == 1 and not rules.aces_meld:
            return False
        if rules.set_distinct_suits:
            seen = 0
            for c in g:
                s = c % 5
                if not wild_bits >> (c // 5) & 1 and s != 0:
                    if seen >> s & 1:
                        return False  # a natural suit twice: only a wild twin could move to stand in
                    seen |= 1 << s
            if n > 4:
                return False
        stand_ins = n - naturals
        return (rules.max_wilds is None or stand_ins <= rules.max_wilds) and stand_ins != n
    if not rules.wilds_as_natural:
        return False
    tried = 0
    for c in g:  # every card a wild: each of their ranks read naturally in turn
        rank = c // 5
        if tried >> rank & 1:
            continue
        tried |= 1 << rank
        if rank == 1 and not rules.aces_meld:
            continue
        if rank == 0 and wild_bits & 1:
            continue
        if rules.set_distinct_suits and n > 4:
            continue
        stand_ins = 0  # the cards of other ranks (a twin of the rank moved to stand in is read as itself)
        for d in g:
            if d // 5 != rank:
                stand_ins += 1
        if (rules.max_wilds is None or stand_ins <= rules.max_wilds) and stand_ins != n:
            return True
    return False


def _valid_run(g: Codes, rules: MeldRules, wild_bits: int, naturals: int, nat_suits: int) -> bool:
    """``_run_readings`` is not empty."""
    n = len(g)
    if not rules.runs or n < rules.min_run or n > 13:
        return False
    if naturals:
        if nat_suits & (nat_suits - 1) or nat_suits & 1:
            return False  # two suits, or a natural printed joker
        suits = nat_suits
    else:
        suits = 0
        for c in g:
            suits |= 1 << (c % 5)
        suits &= ~1
    lo_min = 1 if (rules.ace_low and rules.aces_meld) else 2
    hi_max = ACE_HIGH if (rules.ace_high and rules.aces_meld) else 13
    for suit in range(1, 5):
        if not suits >> suit & 1:
            continue
        for low in range(lo_min, hi_max - n + 2):
            high = low + n - 1
            if low == 1 and high >= ACE_HIGH:
                continue
            if _fills(g, rules, wild_bits, suit, low, high):
                return True
    return False


def _fills(g: Codes, rules: MeldRules, wild_bits: int, suit: int, low: int, high: int) -> bool:
    """``_fill_run`` of window ``low..high`` in ``suit`` is not None."""
    taken = 0
    for c in g:
        r = c // 5
        if wild_bits >> r & 1:
            continue
        pos = _pos_in(r, low, high)
        if c % 5 != suit or pos == 0 or taken >> pos & 1:
            return False
        taken |= 1 << pos
    stand_ins: list[int] = []
    for jokers in (False, True):  # the wilds, printed jokers last (``_fill_run`` sorts them so)
        for c in g:
            r = c // 5
            if not wild_bits >> r & 1 or (r == 0) != jokers:
                continue
            pos = _pos_in(r, low, high) if rules.wilds_as_natural and c % 5 == suit else 0
            if pos and not taken >> pos & 1:
                taken |= 1 << pos
            else:
                stand_ins.append(c)
    used = 0
    i = 0
    for pos in range(low, high + 1):  # the stand-ins fill the gaps in order, low to high
        if taken >> pos & 1:
            continue
        c = stand_ins[i]
        i += 1
        if c // 5 != (1 if pos == ACE_HIGH else pos) or c % 5 != suit:
            used += 1
    if rules.max_wilds is not None and used > rules.max_wilds:
        return False
    return used != len(g)


def _pos_in(rank: int, low: int, high: int) -> int:
    """``_natural_pos`` of a card of ``rank`` in the window ``low..high``, 0 for none."""
    if rank == 0:
        return 0
    if rank == 1:
        if low <= 1 <= high:
            return 1
        return ACE_HIGH if low <= ACE_HIGH <= high else 0
    return rank if low <= rank <= high else 0


def _code(card: Card) -> int:
    return int(card.rank) * 5 + int(card.suit)


def _order_key(g: Codes) -> int:
    """A leading 1 bit, then each code in 7 bits: a longer group has the greater key, and groups of one size order
    as their codes do (``_in_finder_order`` turns this into the finder's order, longest first)."""
    key = 1
    for c in g:
        key = key << 7 | c
    return key


def _in_finder_order(found: Found) -> list[tuple[Card, ...]]:
    """The groups longest first, those of one size by their sorted codes: the order of the (-size, codes) keys."""
    keys = sorted(found)
    out: list[tuple[Card, ...]] = []
    end = len(keys)
    while end > 0:  # the sorted keys run shortest first: take each size's run, from the longest size down
        start = end - 1
        bits = keys[start].bit_length()
        while start > 0 and keys[start - 1].bit_length() == bits:
            start -= 1
        for i in range(start, end):
            out.append(found[keys[i]])
        end = start
    return out


def _keep_if_valid(group: list[int], rules: MeldRules, wilds: frozenset[Rank], memory: _FinderMemory, out: Found) -> None:
    """Add ``group`` to ``out`` when it reads as a meld (each distinct group is read once per rules and wilds)."""
    g = tuple(sorted(group))
    key = _order_key(g)
    if key in out:
        return
    ok = memory.valid.get(g)
    if ok is None:
        ok = memory.valid[g] = _valid(g, rules, memory.wild_bits)
    if ok:
        out[key] = tuple(_CARD_OF[c] for c in g)


def _set_groups(
    rank_codes: Codes, wild_codes: Codes, nw: int, top: int, rules: MeldRules, wilds: frozenset[Rank], memory: _FinderMemory
) -> Found:
    """The valid sets of one rank: each multiset of its cards (``rank_codes``, a code per copy) topped up with 0..
    ``nw`` wilds, never past ``top`` cards."""
    kinds = sorted(set(rank_codes))
    counts = {c: rank_codes.count(c) for c in kinds}
    for w in wild_codes:
        counts.setdefault(w, wild_codes.count(w))
    out: Found = {}
    most = min(len(rank_codes), top)
    for taken in itertools.product(*(range(counts[c] + 1) for c in kinds)):
        size = sum(taken)
        if not 1 <= size <= most or size + nw < rules.min_set:
            continue
        combo = [c for c, n in zip(kinds, taken, strict=True) for _ in range(n)]
        used = dict(zip(kinds, taken, strict=True))
        extra = [w for w in wild_codes if counts[w] > used.get(w, 0)]
        for k in range(max(0, rules.min_set - size), min(nw, top - size) + 1):
            _keep_if_valid(combo + extra[:k], rules, wilds, memory, out)
    return out


def _run_groups(suit: int, held: int, stand_ins: Codes, rules: MeldRules, wilds: frozenset[Rank], memory: _FinderMemory) -> Found:
    """The valid runs of one suit: each window whose gaps the ``stand_ins`` (the first wilds) can fill; ``held``
    has bit ``pos`` set for each run position whose natural card is held."""
    out: Found = {}
    nw = len(stand_ins)
    lo_min = 1 if (rules.ace_low and rules.aces_meld) else 2
    hi_max = ACE_HIGH if (rules.ace_high and rules.aces_meld) else 13
    for low in range(lo_min, hi_max + 1):
        group: list[int] = []
        missing = 0
        for high in range(low, hi_max + 1):  # the window low..high grows one card at a time
            if held >> high & 1:
                group.append((1 if high == ACE_HIGH else high) * 5 + suit)  # ``_RUN_CODE``
            else:
                missing += 1
            if high < low + rules.min_run - 1 or (low == 1 and high == ACE_HIGH):
                continue
            if missing > nw:
                break
            _keep_if_valid(group + list(stand_ins[:missing]), rules, wilds, memory, out)
    return out


def _wild_only_groups(wild_codes: Codes, rules: MeldRules, wilds: frozenset[Rank], memory: _FinderMemory) -> Found:
    out: Found = {}
    for rank in set(c // 5 for c in wild_codes):
        same = [c for c in wild_codes if c // 5 == rank]
        for size in range(rules.min_wild_only, len(same) + 1):
            _keep_if_valid(same[:size], rules, wilds, memory, out)
    return out


def find_melds(
    hand: Sequence[Card], rules: MeldRules, wilds: Collection[Rank] = (), max_wilds: int | None = None
) -> list[tuple[Card, ...]]:
    """Every distinct group of cards from ``hand`` that reads as a valid new meld (sets and runs, with at most
    ``max_wilds`` stand-ins, default the rules' limit). Used for legal-action lists, bots and best groupings.

    The candidates: each multiset of one rank's cards topped up with 0.. wilds (printed jokers first), each run
    window of a suit with its gaps filled by wilds, and (where allowed) wild-only sets; each distinct candidate is
    judged once (``_valid``, the verdict of ``readings`` without building one) and kept if it reads as a meld. Each
    part's valid groups are remembered per rules and wilds (``_FinderMemory``), so a hand costs a few look-ups and
    one sort of int keys."""
    limit = rules.max_wilds if max_wilds is None else max_wilds
    wild_set = frozenset(wilds)
    memory = _memories.get((rules, wild_set))
    if memory is None:
        memory = _memories[rules, wild_set] = _FinderMemory(wild_set)
    memory.bound()
    wild_bits = memory.wild_bits
    codes = sorted([_CODE_OF[card] for card in hand])
    wild_codes = tuple([c for c in codes if wild_bits >> (c // 5) & 1])  # printed jokers first
    nw = len(wild_codes) if limit is None else min(limit, len(wild_codes))
    found: Found = {}
    if rules.sets:
        top = rules.max_set if rules.max_set is not None else len(hand)
        by_rank: dict[int, list[int]] = {}
        for c in codes:
            by_rank.setdefault(c // 5, []).append(c)
        for rank_codes in by_rank.values():
            if len(rank_codes) + nw < rules.min_set:
                continue  # too few to make a set even with every wild
            # no set of these is longer than its cards and wilds: a cap past that (no cap is the hand's length)
            # lists the same sets, and kept in the key would make every hand size a new one
            set_key = (tuple(rank_codes), wild_codes, nw, min(top, len(rank_codes) + nw))
            part = memory.sets.get(set_key)
            if part is None:
                part = memory.sets[set_key] = _set_groups(set_key[0], wild_codes, nw, set_key[3], rules, wild_set, memory)
            found.update(part)
    if rules.runs:
        held = [0] * (len(SUITS) + 1)  # by suit: bit ``pos`` for each natural card held (an ace at 1 and 14)
        ranks_held = [0] * (len(SUITS) + 1)  # by suit: how many distinct natural ranks are held
        for c in codes:
            rank = c // 5
            suit = c % 5
            if not wild_bits >> rank & 1 and not held[suit] >> rank & 1:
                held[suit] |= (1 << 1 | 1 << ACE_HIGH) if rank == int(Rank.ACE) else 1 << rank
                ranks_held[suit] += 1
        stand_ins = wild_codes[:nw]
        for suit in range(1, len(SUITS) + 1):
            if ranks_held[suit] + nw < rules.min_run:
                continue  # too few to make a run even with every wild
            run_key = (suit, held[suit], stand_ins)
            part = memory.runs.get(run_key)
            if part is None:
                part = memory.runs[run_key] = _run_groups(suit, held[suit], stand_ins, rules, wild_set, memory)
            found.update(part)
    if rules.wild_only is WildOnly.SPECIAL:
        part = memory.wild_only.get(wild_codes)
        if part is None:
            part = memory.wild_only[wild_codes] = _wild_only_groups(wild_codes, rules, wild_set, memory)
        found.update(part)
    return _in_finder_order(found)


NATURAL_CARDS: tuple[Card, ...] = tuple(Card(r, s) for s in SUITS for r in NATURAL_RANKS)
