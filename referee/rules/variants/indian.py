"""Indian rummy, 13 cards (IND-1..IND-15).

Two to six players, 13 cards each, from one pack and one printed joker (2 players) or two packs and two printed
jokers (3 to 6) (IND-1). After the deal the next card is the wild joker, placed face up (``face_up``): every card
of its rank is wild for the deal, and a printed joker there makes the aces wild (IND-2); the card after it starts
the open deck (``discards``, only its top card shown) and the rest is the closed deck (``stock``).

A turn is DRAW (``DrawStock``, ``TakeDiscards(count=1)``, or ``Drop``) then PLAY (``Discard``, or ``Declare``
with the 13 cards in groups and the 14th put away face down) (IND-6, IND-7). A valid declaration needs every
group a sequence or a set and at least two sequences, one of them pure (IND-4, IND-5, IND-7); the declarer scores
0 and the others count their cards, the referee finding each one's least-points grouping itself (IND-9). A wrong
declaration costs 80 and puts the declarer out of the deal (IND-8). Drops cost 20 before the first draw and 40
later (IND-10..IND-12). The formats of IND-13 are the option ``format``: one deal, pools to 101 or 201, or N
deals. A finished closed deck is rebuilt from the open deck (IND-14).

Choices where RULES.md is silent: the wild-joker card is the first card after the deal (a fixed position, so
stacked decks deal predictably); a deal stopped by the engine's turn cap is counted as if nobody had declared
(every seat still in counts its least-points grouping, capped at 80; a seat holding 14 cards leaves out the card
that helps it most); a declarer's 13 grouped cards are shown face up (``in_front``), valid or not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from referee.rules.cards import (
    JOKER,
    Card,
    Rank,
    Suit,
    build_deck,
    contains_cards,
    format_cards,
    remove_cards,
    shuffle,
    tally,
)
from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption
from referee.rules.melds import MeldKind, MeldReading, MeldRules, WildOnly, readings
from referee.rules.variants.base import (
    Action,
    Decision,
    Declare,
    Discard,
    DrawStock,
    Drop,
    Evaluation,
    Event,
    GameOutcome,
    GameState,
    Group,
    GroupVerdict,
    HandScore,
    HandState,
    OptionSpec,
    Phase,
    PileView,
    SeatView,
    Table,
    TakeDiscards,
    deal_round_robin,
    parse_options,
    private_event,
    rank_by_totals,
    require,
    seat_order,
    zone_view,
)

__all__ = [
    "IndianRules",
    "IndianState",
    "IndianRummy",
    "VARIANTS",
    "MELD_RULES",
    "HAND_SIZE",
    "FULL_COUNT",
    "Grouping",
    "card_points",
    "wild_ranks_for",
    "judge_group",
    "judge_declaration",
    "least_count",
    "least_count_after_discard",
    "find_declaration",
]

HAND_SIZE = 13
FULL_COUNT = 80  # IND-8 wrong declaration, IND-9 cap
MELD_RULES = MeldRules(
    sets=True,
    runs=True,
    min_set=3,
    max_set=4,  # IND-5: 3 or 4 cards
    set_distinct_suits=True,  # IND-5: all of different suits
    min_run=3,
    ace_low=True,
    ace_high=True,  # IND-4: ace low or high, never around the corner
    wild_only=WildOnly.NATURAL,  # wild-joker cards read as themselves are natural (IND-4)
    wilds_as_natural=True,
)
_HIGH_CARDS = (Rank.ACE, Rank.JACK, Rank.QUEEN, Rank.KING)
_SEQUENCE_KINDS = ("PURE_SEQUENCE", "SEQUENCE")
_DEALS = re.compile(r"^deals-([1-9][0-9]*)$")


# ---------------------------------------------------------------- rules record and options


@dataclass(frozen=True, slots=True)
class IndianRules:
    """The rules of one match: packs by seat count (IND-1), the format's drop values and end (IND-10, IND-13) and
    whether a joker may be taken from the open deck (IND-15)."""

    seats: int
    packs: int
    jokers: int
    format: str = "points"
    pool_limit: int | None = None  # pool-101 / pool-201: a seat reaching it is eliminated
    deals: int = 1  # points: 1; deals-N: N; pools: not used
    first_drop: int = 20
    middle_drop: int = 40
    full_count: int = FULL_COUNT
    take_discarded_joker: bool = True


# ---------------------------------------------------------------- cards, groups and declarations


def wild_ranks_for(wild_card: Card) -> frozenset[Rank]:
    """IND-2: the wild joker's rank and printed jokers are wild; a printed joker as the wild joker makes aces wild."""
    return frozenset({Rank.ACE if wild_card.is_joker else wild_card.rank, Rank.JOKER})


def card_points(card: Card, wilds: frozenset[Rank] | set[Rank] | tuple[Rank, ...]) -> int:
    """IND-3: J, Q, K and A 10 each; number cards their face value; printed and wild jokers 0."""
    if card.is_joker or card.rank in wilds:
        return 0
    return 10 if card.rank in _HIGH_CARDS else int(card.rank)


def _points(cards: Sequence[Card], wilds: frozenset[Rank]) -> int:
    return sum(card_points(c, wilds) for c in cards)


def _why_invalid(cards: Sequence[Card], wilds: frozenset[Rank]) -> str:
    if len(cards) < 3:
        return "TOO_FEW_CARDS"
    naturals = [c for c in cards if c.rank not in wilds]
    ranks = {c.rank for c in naturals}
    if len(ranks) == 1:
        if len(cards) > 4:
            return "SET_TOO_LARGE"
        suits = [c.suit for c in naturals]
        if len(suits) != len(set(suits)):
            return "DUPLICATE_SUIT"
    if len({c.suit for c in naturals}) == 1 and len(ranks) == len(naturals):
        return "NOT_CONSECUTIVE"
    return "NOT_A_SET_OR_SEQUENCE"


def judge_group(cards: Sequence[Card], wilds: frozenset[Rank]) -> GroupVerdict:
    """One group under IND-4 and IND-5: a pure sequence, a sequence, a set, or invalid with a reason code.

    Where the cards have several readings the one best for a declaration is taken: a pure sequence before an
    impure one, a sequence before a set (a wild-joker card read as itself is natural, IND-4)."""
    cards = tuple(cards)
    found = readings(cards, MELD_RULES, wilds)
    runs = [r for r in found if r.kind is MeldKind.RUN]
    pure = [r for r in runs if r.pure]
    sets = [r for r in found if r.kind is MeldKind.SET]
    pts = _points(cards, wilds)
    best: MeldReading | None
    if pure:
        kind, best = "PURE_SEQUENCE", pure[0]
    elif runs:
        kind, best = "SEQUENCE", min(runs, key=lambda r: r.wilds_used)
    elif sets:
        kind, best = "SET", sets[0]
    else:
        return GroupVerdict(cards, False, "INVALID", False, _why_invalid(cards, wilds), pts,
                            f"{format_cards(cards)} is neither a sequence (IND-4) nor a set (IND-5)")
    return GroupVerdict(cards, True, kind, kind == "PURE_SEQUENCE", "", pts, best.describe())


def judge_declaration(
    groups: Sequence[Sequence[Card]], wilds: frozenset[Rank]
) -> tuple[tuple[GroupVerdict, ...], bool, str]:
    """IND-7: 13 cards, every group valid, at least two sequences, at least one of them pure.

    Returns the verdicts, whether the declaration is valid, and the reason code (``VALID``, ``WRONG_CARD_COUNT``,
    ``INVALID_GROUP``, ``TOO_FEW_SEQUENCES``, ``NO_PURE_SEQUENCE``)."""
    verdicts = tuple(judge_group(g, wilds) for g in groups)
    if sum(len(g) for g in groups) != HAND_SIZE:
        return verdicts, False, "WRONG_CARD_COUNT"
    if not all(v.valid for v in verdicts):
        return verdicts, False, "INVALID_GROUP"
    if sum(v.kind in _SEQUENCE_KINDS for v in verdicts) < 2:
        return verdicts, False, "TOO_FEW_SEQUENCES"
    if not any(v.pure for v in verdicts):
        return verdicts, False, "NO_PURE_SEQUENCE"
    return verdicts, True, "VALID"


_DECLARATION_REASONS = {
    "WRONG_CARD_COUNT": "a declaration arranges exactly 13 cards (IND-7)",
    "INVALID_GROUP": "a group is neither a sequence nor a set (IND-4, IND-5)",
    "TOO_FEW_SEQUENCES": "fewer than two sequences (IND-7)",
    "NO_PURE_SEQUENCE": "no pure sequence (IND-7)",
    "VALID": "two or more sequences, one pure, every card grouped (IND-7)",
}


# ---------------------------------------------------------------- the least-points grouping (IND-9)


@dataclass(frozen=True, slots=True)
class Grouping:
    """A hand arranged for the count: ``groups`` (valid sequences and sets), ``dead`` (cards outside them,
    wild cards included), whether the arrangement has two sequences incl. a pure one, and the count (IND-9)."""

    groups: tuple[tuple[Card, ...], ...]
    dead: tuple[Card, ...]
    qualifies: bool
    points: int
    raw_points: int  # before the 80 cap

    def describe(self) -> str:
        if not self.qualifies:
            capped = f", capped at {FULL_COUNT}" if self.raw_points > FULL_COUNT else ""
            return f"no two sequences incl. a pure one: all cards count {self.raw_points}{capped} (IND-9)"
        shown = " | ".join(format_cards(g) for g in self.groups)
        return f"grouped {shown}; outside: {format_cards(self.dead) or 'none'} = {self.points} (IND-9)"


_Frontier = dict[tuple[int, int], tuple[int, Any]]  # (sequences capped at 2, pure 0/1) -> (dead points, plan)


class _Search:
    """Exact search for the grouping that counts least (IND-9), or for one that leaves nothing out (IND-7).

    Non-wild cards are taken in (suit, rank) order; the first one left is either dead, in a set with later cards
    of its rank, or the lowest natural card of a sequence (a high ace its highest). Wild cards are a pool of
    stand-ins (any three wilds also make a sequence of their own, since a pack has at most two printed jokers and
    one wild-joker card read as itself makes the group natural). A pure sequence that needs a wild-joker card as
    itself is chosen up front. Results are memoised on the cards left and the wilds left, as a small frontier
    keyed by (sequences, pure) so the two-sequence condition is met exactly."""

    def __init__(self, cards: Sequence[Card], wilds: frozenset[Rank], allow_dead: bool) -> None:
        self.wilds = wilds
        self.allow_dead = allow_dead
        naturals = [c for c in cards if c.rank not in wilds]
        self.distinct = sorted(set(naturals), key=lambda c: (c.suit, c.rank))
        have = tally(naturals)
        self.counts = tuple(have[c] for c in self.distinct)
        self.pts = tuple(card_points(c, wilds) for c in self.distinct)
        self.at: dict[tuple[Suit, int], int] = {}
        for i, c in enumerate(self.distinct):
            if c.rank is Rank.ACE:
                self.at[(c.suit, 1)] = i
                self.at[(c.suit, 14)] = i
            else:
                self.at[(c.suit, int(c.rank))] = i
        # the same, per suit, indexed by position 0..14 (None: no such card); and the later cards of each rank
        self.by_position = {suit: [self.at.get((suit, q)) for q in range(15)] for suit in {c.suit for c in self.distinct}}
        self.later_same_rank = [tuple(j for j in range(i + 1, len(self.distinct)) if self.distinct[j].rank == c.rank)
                                for i, c in enumerate(self.distinct)]
        self.memo: dict[tuple[tuple[int, ...], int], _Frontier] = {}

    # -- the frontier search over non-wild cards and a count of wilds

    def frontier(self, counts: tuple[int, ...], w: int) -> _Frontier:
        key = (counts, w)
        got = self.memo.get(key)
        if got is not None:
            return got
        i = None
        for k, n in enumerate(counts):
            if n:
                i = k
                break
        out: _Frontier = {}
        if i is None:
            out[(0, 0)] = (0, (("wildseq", 0), None))
            if w >= 3:
                out[(1, 0)] = (0, (("wildseq", 1), None))
            if w >= 6:
                out[(2, 0)] = (0, (("wildseq", 2), None))
            self.memo[key] = out
            return out
        c = self.distinct[i]
        rest = list(counts)
        rest[i] -= 1
        if self.allow_dead:
            _merge(out, self.frontier(tuple(rest), w), 0, 0, self.pts[i], ("dead", (c,)))
        # sets: c with later cards of its rank (other suits), topped up with wilds to 3 or 4
        same = [j for j in self.later_same_rank[i] if rest[j]]
        for others in _subsets(same, 3):
            k = max(0, 2 - len(others))
            if not others or k > w:
                continue  # c with two wilds is as good read as a sequence (below), which also counts for IND-7
            sub = list(rest)
            for j in others:
                sub[j] -= 1
            group = (c, *(self.distinct[j] for j in others))
            _merge(out, self.frontier(tuple(sub), w - k), 0, 0, 0, ("set", group, k))
        # sequences: c lowest (a high ace highest), later naturals of its suit, gaps and padding from wilds
        starts = (1, 14) if c.rank is Rank.ACE else (int(c.rank),)
        for p0 in starts:
            for used, k in self._runs(c.suit, p0, tuple(rest), w):
                sub = list(rest)
                for j in used:
                    sub[j] -= 1
                group = (c, *(self.distinct[j] for j in used))
                _merge(out, self.frontier(tuple(sub), w - k), 1, int(k == 0), 0, ("run", group, k))
        self.memo[key] = out
        return out

    def _runs(self, suit: Suit, p0: int, rest: tuple[int, ...], w: int) -> list[tuple[tuple[int, ...], int]]:
        """Each way to extend a sequence from position ``p0``: the later cards used and the wilds it needs."""
        step = -1 if p0 == 14 else 1
        out: list[tuple[tuple[int, ...], int]] = []
        self._grow(out, self.by_position[suit], p0, step, rest, w, p0, (), 0)
        return out

    def _grow(self, out: list[tuple[tuple[int, ...], int]], at: list[int | None], p0: int, step: int,
              rest: tuple[int, ...], w: int, last: int, used: tuple[int, ...], gaps: int) -> None:
        """``_runs``'s depth-first walk: the run so far ends at ``last``; record it, then each next natural card.
        A method, not a closure that calls itself: such a closure is a reference cycle, garbage only the cyclic
        collector frees (it was most of the referee's garbage)."""
        span = abs(last - p0) + 1
        k = gaps + max(0, 3 - span)
        if k <= w:
            out.append((used, k))
        stop = 1 if step < 0 else 14  # exclusive: a high ace never meets a low one (COM-3)
        q = last + step
        while q != stop:
            more = gaps + abs(q - last) - 1
            if more > w:
                break
            j = at[q]
            if j is not None and rest[j]:
                self._grow(out, at, p0, step, rest, w, q, (*used, j), more)
            q += step

    # -- pure sequences that read a wild-joker card as itself (IND-4), chosen before the search

    def pure_with_wild(
        self, wild_cards: Sequence[Card], counts: tuple[int, ...]
    ) -> Iterator[tuple[Card, tuple[int, ...], tuple[Card, ...]]]:
        for wc in sorted(set(wild_cards)):
            if wc.is_joker:
                continue
            positions = (1, 14) if wc.rank is Rank.ACE else (int(wc.rank),)
            free = {p for (suit, p), j in self.at.items() if suit is wc.suit and counts[j] > 0}
            for q in positions:
                lo = hi = q
                while lo > 1 and lo - 1 in free:
                    lo -= 1
                while hi < 14 and hi + 1 in free:
                    hi += 1
                for a in range(lo, q + 1):
                    for b in range(max(q, a + 2), hi + 1):
                        if a == 1 and b == 14:
                            continue  # never around the corner (COM-3)
                        used = tuple(self.at[(wc.suit, p)] for p in range(a, b + 1) if p != q)
                        yield wc, used, (wc, *(self.distinct[j] for j in used))

    def solve(self, wild_cards: Sequence[Card], counts: tuple[int, ...] | None = None) -> tuple[int, Any] | None:
        """The least dead points with two sequences incl. a pure one, and its plan; None if impossible."""
        counts = self.counts if counts is None else counts
        best: tuple[int, Any] | None = None
        main = self.frontier(counts, len(wild_cards)).get((2, 1))
        if main is not None:
            best = (main[0], (None, main[1]))
        for wc, used, group in self.pure_with_wild(wild_cards, counts):
            if best is not None and best[0] == 0:
                break
            sub = list(counts)
            for j in used:
                sub[j] -= 1
            for (s, _p), (v, plan) in self.frontier(tuple(sub), len(wild_cards) - 1).items():
                if s >= 1 and (best is None or v < best[0]):
                    best = (v, ((wc, group), plan))
        return best


def _merge(out: _Frontier, sub: _Frontier, add_s: int, add_p: int, add_v: int, item: Any) -> None:
    for (s, p), (v, plan) in sub.items():
        key = (min(s + add_s, 2), p | add_p)
        nv = v + add_v
        cur = out.get(key)
        if cur is None or nv < cur[0]:
            out[key] = (nv, (item, plan))


def _subsets(items: Sequence[int], most: int) -> Iterator[tuple[int, ...]]:
    """Subsets of ``items`` (distinct cards of one rank, so distinct suits) of at most ``most`` elements."""
    out: list[tuple[int, ...]] = [()]
    for x in items:
        out += [s + (x,) for s in out if len(s) < most]
    yield from out


def _realise(
    plan: Any, wild_cards: Sequence[Card], wilds: frozenset[Rank], absorb: bool
) -> tuple[list[tuple[Card, ...]], list[Card]]:
    """Concrete groups from a plan: stand-ins given out, wild-only sequences built, spare wilds either left dead
    or (``absorb``, for a declaration) added to a sequence or set where they keep the declaration valid."""
    pure_group, node = plan
    pool = list(wild_cards)
    groups: list[list[Card]] = []
    kinds: list[str] = []
    dead: list[Card] = []
    if pure_group is not None:
        wc, cards = pure_group
        pool.remove(wc)
        groups.append(list(cards))
        kinds.append("pure")
    needs: list[tuple[int, int]] = []
    wild_seqs = 0
    while node is not None:
        item, node = node
        if item[0] == "dead":
            dead.extend(item[1])
        elif item[0] == "wildseq":
            wild_seqs = item[1]
        else:
            groups.append(list(item[1]))
            kinds.append("set" if item[0] == "set" else ("pure" if item[2] == 0 else "seq"))
            needs.append((len(groups) - 1, item[2]))
    # a wild-only sequence must hold a wild-joker card (read as itself), not only printed jokers
    rank_cards = [c for c in pool if not c.is_joker]
    reserved = rank_cards[:wild_seqs]
    for c in reserved:
        pool.remove(c)
    for g, k in needs:
        for _ in range(k):
            groups[g].append(pool.pop())
    for c in reserved:
        groups.append([c, pool.pop(), pool.pop()])
        kinds.append("seq")
    if absorb and pool:
        # with two sequences incl. a pure one there is an impure sequence, or a second pure one to spare
        pures = [g for g, k in enumerate(kinds) if k == "pure"]
        target = next((g for g, k in enumerate(kinds) if k == "seq"), pures[1] if len(pures) > 1 else None)
        if target is not None:
            groups[target].extend(pool)
            pool = []
    dead.extend(pool)
    return [tuple(g) for g in groups], dead


def _grouping(cards: Sequence[Card], wilds: frozenset[Rank], found: tuple[int, Any] | None,
              wild_cards: Sequence[Card]) -> Grouping:
    total = _points(cards, wilds)
    if found is None:
        return Grouping((), tuple(cards), False, min(total, FULL_COUNT), total)
    groups, dead = _realise(found[1], wild_cards, wilds, absorb=False)
    return Grouping(tuple(groups), tuple(dead), True, min(found[0], FULL_COUNT), found[0])


def least_count(cards: Sequence[Card], wilds: frozenset[Rank]) -> Grouping:
    """IND-9: the grouping of ``cards`` that counts least: the cards outside valid sequences and sets when there
    are two sequences incl. a pure one, else every card; capped at 80."""
    wild_cards = [c for c in cards if c.rank in wilds]
    search = _Search(cards, wilds, allow_dead=True)
    return _grouping(cards, wilds, search.solve(wild_cards), wild_cards)


def least_count_after_discard(cards: Sequence[Card], wilds: frozenset[Rank]) -> tuple[Grouping, Card | None]:
    """The least count of a 14-card hand leaving out the one card that helps least (a hand stopped mid-turn)."""
    if len(cards) <= HAND_SIZE:
        return least_count(cards, wilds), None
    search = _Search(cards, wilds, allow_dead=True)
    best: tuple[Grouping, Card | None] | None = None
    for out in sorted(set(cards)):
        kept = list(cards)
        kept.remove(out)
        wild_cards = [c for c in kept if c.rank in wilds]
        counts = _without(search, out)
        g = _grouping(kept, wilds, search.solve(wild_cards, counts), wild_cards)
        if best is None or g.points < best[0].points:
            best = (g, out)
    assert best is not None
    return best


def _without(search: _Search, card: Card) -> tuple[int, ...]:
    counts = list(search.counts)
    if card.rank not in search.wilds:
        counts[search.distinct.index(card)] -= 1
    return tuple(counts)


# Run positions as bits (1..14; an ace is both 1 and 14), for quick tests over a whole hand.
_POSITION_BITS: dict[Rank, int] = {r: (1 << 1 | 1 << 14) if r is Rank.ACE else 1 << int(r) for r in Rank if r is not Rank.JOKER}
_WINDOWS_OF: dict[Rank, tuple[int, ...]] = {  # the three-card windows (as bit masks) a card of each rank can sit in (never around the corner)
    r: tuple(0b111 << lo for p in ((1, 14) if r is Rank.ACE else (int(r),)) for lo in range(p - 2, p + 1)
             if lo >= 1 and lo + 2 <= 14)
    for r in _POSITION_BITS
}


def _suit_masks(cards: Iterable[Card]) -> dict[Suit, int]:
    """Per suit, the run positions its cards (printed jokers aside) hold, as a bit mask."""
    masks: dict[Suit, int] = {}
    for c in cards:
        if c.rank is not Rank.JOKER:
            masks[c.suit] = masks.get(c.suit, 0) | _POSITION_BITS[c.rank]
    return masks


def _has_pure_run(cards: Sequence[Card]) -> bool:
    """Whether some three of ``cards`` make a pure sequence (IND-4): one suit, consecutive, wild-joker cards read
    as themselves; a declaration needs one (IND-7), so without it no search is needed."""
    return any(m & m >> 1 & m >> 2 for m in _suit_masks(cards).values())


def _orphans(cards: Sequence[Card], wilds: frozenset[Rank]) -> list[Card]:
    """Non-wild cards that fit no sequence or set at all, even with every wild in the hand."""
    w = sum(c.rank in wilds for c in cards)
    if w >= 2:
        return []
    have = tally([c for c in cards if c.rank not in wilds])
    masks = _suit_masks(have)
    suits_of_rank = tally([c.rank for c in have])  # the distinct cards of a rank differ in suit
    out = []
    for c in have:
        if suits_of_rank[c.rank] - 1 + w >= 2:
            continue  # a set with the other suits of its rank (and the wild)
        held = masks[c.suit]
        if not any(3 - (held & window).bit_count() <= w for window in _WINDOWS_OF[c.rank]):
            out.extend([c] * have[c])
    return out


# A group of n natural cards and k wilds costs each of its naturals k/n wilds; kept as exact integers in this unit
# (divisible by every n up to 14).
_SHARE_UNIT = 360360
_RUN_SHARES: dict[int, tuple[int, ...]] = {}  # per suit mask: each position's least share over the runs through it


def _run_shares(mask: int) -> tuple[int, ...]:
    """For the run positions in ``mask`` (one suit's naturals), the least wild share of any sequence through each
    one: a sequence spanning L positions holding n of them needs L - n wilds. Remembered: there are 2**14 masks.

    Only sequences from one held position to another need be tried (from ``a`` to ``b``, at least three long, at
    most 13): any other sequence holds the same cards as the one between its outermost held positions, or that one
    stretched to three, and is no shorter (tests/variants/test_indian.py checks every mask against trying every
    sequence)."""
    got = _RUN_SHARES.get(mask)
    if got is not None:
        return got
    best = [2 * _SHARE_UNIT] * 15
    held = [p for p in range(1, 15) if mask >> p & 1]
    for i in range(len(held)):
        a = held[i]
        for j in range(i, len(held)):
            b = held[j]
            span = b - a + 1
            if span > 13:
                break
            n = j - i + 1
            share = ((span if span > 3 else 3) - n) * _SHARE_UNIT // n
            for k in range(i, j + 1):
                if share < best[held[k]]:
                    best[held[k]] = share
    out = tuple(best)
    _RUN_SHARES[mask] = out
    return out


def _wild_shares(cards: Sequence[Card], wilds: frozenset[Rank]) -> dict[Card, int]:
    """Per distinct non-wild card, the least share of wilds of any sequence or set it could be in (IND-4, IND-5).
    Summed over the cards (each copy), a lower bound on the wilds that leave none of them out: every group's wilds
    are its naturals' shares, and each share is at least that card's least."""
    naturals = [c for c in cards if c.rank not in wilds]
    masks = _suit_masks(naturals)
    distinct = set(naturals)
    suits_of_rank: dict[Rank, int] = {}
    for c in distinct:
        suits_of_rank[c.rank] = suits_of_rank.get(c.rank, 0) + 1
    out: dict[Card, int] = {}
    for c in distinct:
        m = min(suits_of_rank[c.rank], 4)  # a set: one card of each suit, wilds to make three
        best = (3 - m) * _SHARE_UNIT // m if m < 3 else 0
        if best:
            shares = _run_shares(masks[c.suit])
            for p in ((1, 14) if c.rank is Rank.ACE else (int(c.rank),)):
                best = min(best, shares[p])
        out[c] = best
    return out


def find_declaration(cards: Sequence[Card], wilds: frozenset[Rank]) -> Declare | None:
    """A valid declaration (IND-7) from a 14-card hand: 13 cards in groups and the 14th put away; None if none."""
    if not _has_pure_run(cards):
        return None
    orphans = _orphans(cards, wilds)
    if len(orphans) > 1:
        return None
    # putting ``out`` away saves its share and, if it is wild, one wild: the 13 kept need at least the rest
    shares = _wild_shares(cards, wilds)
    need = sum(shares.get(c, 0) for c in cards)
    w = sum(c.rank in wilds for c in cards)
    candidates = [c for c in (set(orphans) if orphans else set(cards))
                  if need - shares.get(c, 0) <= (w - (c.rank in wilds)) * _SHARE_UNIT]
    if not candidates:
        return None
    candidates.sort(key=lambda c: (-card_points(c, wilds), c))
    search = _Search(cards, wilds, allow_dead=False)
    for out in candidates:
        kept = list(cards)
        kept.remove(out)
        if not _has_pure_run(kept) or _orphans(kept, wilds):
            continue  # quick tests first: no pure sequence left, or a card nothing can take in (IND-7)
        wild_cards = [c for c in kept if c.rank in wilds]
        found = search.solve(wild_cards, _without(search, out))
        if found is None:
            continue
        groups, spare = _realise(found[1], wild_cards, wilds, absorb=True)
        if spare:
            continue
        if judge_declaration(groups, wilds)[1]:
            return Declare(tuple(Group(g) for g in groups), out)
    return None


# ---------------------------------------------------------------- hand state


@dataclass
class IndianState(HandState):
    """One deal. ``face_up`` holds the wild-joker card; ``in_front`` a declarer's shown groups; ``face_down`` the
    card a declarer put away (known to the declarer). ``penalty`` is set for seats out of the deal (drop, wrong
    declaration)."""

    rules: IndianRules | None = None
    dealt: list[bool] = field(default_factory=list)  # dealt in (not eliminated from a pool)
    has_drawn: list[bool] = field(default_factory=list)  # IND-10: a drop before the first draw is a first drop
    penalty: list[int | None] = field(default_factory=list)
    out_reason: list[str] = field(default_factory=list)
    drawn: Card | None = None  # the card drawn this turn
    declarer: int | None = None  # the seat that declared validly
    declared: tuple[tuple[Card, ...], ...] = ()  # the last declaration's groups
    totals: tuple[int, ...] = ()

    @property
    def top(self) -> Card | None:
        return self.discards[-1] if self.discards else None

    @property
    def in_deal(self) -> list[int]:
        return [s for s in range(self.seats) if self.active[s]]


def _rules(state: HandState) -> IndianRules:
    assert isinstance(state, IndianState) and state.rules is not None
    return state.rules


def _check_turn(state: IndianState, seat: int, phase: Phase, what: str) -> None:
    require(not state.over, "HAND_OVER", f"the deal is over ({state.end_reason}; IND-7)")
    require(seat == state.turn, "NOT_YOUR_TURN", f"seat {state.turn} is to play, not seat {seat} (COM-4)")
    require(state.phase is phase, "WRONG_PHASE",
            f"{what} is a {phase.value} move; seat {seat} is in its {state.phase.value} phase (IND-6)")


def verify_draw_stock(state: IndianState, seat: int) -> None:
    _check_turn(state, seat, Phase.DRAW, "drawing from the closed deck")
    require(bool(state.stock), "STOCK_EMPTY", "the closed deck is empty (IND-14)")


def verify_take(state: IndianState, seat: int, action: TakeDiscards) -> Card:
    _check_turn(state, seat, Phase.DRAW, "taking from the open deck")
    require(action.count == 1, "BAD_TAKE_COUNT", f"take exactly one card from the open deck, not {action.count} (IND-6)")
    require(action.meld is None and action.lay_off_on is None, "NO_MELDING",
            "Indian rummy has no melding on the table: take the card into hand (IND-6)")
    top = state.top
    require(top is not None, "DISCARD_PILE_EMPTY", "the open deck is empty (IND-6)")
    assert top is not None
    require(_rules(state).take_discarded_joker or top.rank not in state.wild_ranks, "JOKER_PICKUP_FORBIDDEN",
            f"{top} is a joker this deal and take_discarded_joker = forbidden (IND-15)")
    return top


def verify_drop(state: IndianState, seat: int) -> int:
    """The drop's points: 20 before one's first draw, 40 later (IND-10; pool-201: 25 and 50)."""
    _check_turn(state, seat, Phase.DRAW, "dropping")
    rules = _rules(state)
    return rules.middle_drop if state.has_drawn[seat] else rules.first_drop


def verify_discard(state: IndianState, seat: int, action: Discard) -> None:
    _check_turn(state, seat, Phase.PLAY, "discarding")
    require(action.card in state.hands[seat], "CARD_NOT_IN_HAND", f"{action.card} is not in seat {seat}'s hand (IND-6)")


def verify_declare(state: IndianState, seat: int, action: Declare) -> tuple[list[tuple[Card, ...]], Card]:
    """The groups and the card put away; the declaration's validity is judged in ``apply`` (a wrong one is
    legal and costs 80, IND-8). :raises IllegalAction: when the cards are not exactly the seat's 14."""
    _check_turn(state, seat, Phase.PLAY, "declaring")
    groups = [tuple(g.cards) for g in action.groups]
    require(bool(groups) and all(groups), "EMPTY_GROUP", "a declaration lists non-empty groups (IND-7)")
    shown = [c for g in groups for c in g]
    require(len(shown) == HAND_SIZE, "BAD_DECLARATION_SIZE",
            f"a declaration arranges 13 cards in groups and puts the 14th away; {len(shown)} were grouped (IND-7)")
    hand = state.hands[seat]
    require(contains_cards(hand, shown), "CARD_NOT_IN_HAND", f"seat {seat} does not hold {format_cards(shown)} (IND-7)")
    rest = list(hand)
    remove_cards(rest, shown)
    discard = action.discard if action.discard is not None else rest[0]
    require(rest == [discard], "CARD_NOT_IN_HAND",
            f"the card put away must be the 14th card, {rest[0]}, not {discard} (IND-7)")
    return groups, discard


# ---------------------------------------------------------------- the variant


_FORMATS = ("points", "pool-101", "pool-201", "deals-2", "deals-3", "deals-6")


class IndianRummy:
    """Indian rummy, 13 cards (IND-1..IND-15)."""

    name: ClassVar[str] = "indian"
    aliases: ClassVar[tuple[str, ...]] = ("indian-rummy", "13-card", "13-card-rummy", "indian-13")
    title: ClassVar[str] = "Indian Rummy (13 cards)"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 6
    team_play: ClassVar[bool] = False
    lower_is_better: ClassVar[bool] = True
    forfeit_after_misses: ClassVar[int] = 0  # IND-11: three misses are a middle drop, not a forfeit
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("format", _FORMATS,
                   "points: one deal; pool-101/pool-201: a seat reaching 101/201 is eliminated, the last one left "
                   "wins; deals-N (any N): N deals, lowest total wins", "IND-13"),
        OptionSpec("take_discarded_joker", ("allowed", "forbidden"),
                   "whether a joker (printed or wild) on the open deck may be taken", "IND-15"),
    )

    # -- setup

    def configure(self, options: Mapping[str, str], seats: int) -> IndianRules:
        """:raises InvalidOption: an unknown option or value, or a seat count outside 2..6 (IND-1)."""
        if not self.min_seats <= seats <= self.max_seats:
            raise InvalidOption("BAD_SEAT_COUNT", f"Indian rummy is for 2 to 6 players, not {seats} (IND-1)")
        given = dict(options)
        fmt = str(given.pop("format", "points")).strip().lower()
        opts = parse_options(self.options, given, self.name)
        deals = _DEALS.match(fmt)
        if fmt not in _FORMATS and deals is None:
            raise InvalidOption("BAD_OPTION_VALUE",
                                f"indian option format = {fmt!r} is not points, pool-101, pool-201 or deals-N (IND-13)")
        packs, jokers = _packs(seats)
        base = IndianRules(seats, packs, jokers, fmt, take_discarded_joker=opts["take_discarded_joker"] == "allowed")
        if fmt == "pool-101":
            return replace(base, pool_limit=101, deals=0)
        if fmt == "pool-201":  # the pool-format note of RULES.md: drops 25 and 50
            return replace(base, pool_limit=201, deals=0, first_drop=25, middle_drop=50)
        if deals is not None:
            return replace(base, deals=int(deals.group(1)))
        return base

    def deck(self, rules: IndianRules, seats: int) -> list[Card]:
        """IND-1: one pack and one printed joker for 2 players; two packs and two printed jokers for 3 to 6."""
        return build_deck(*_packs(seats))

    def new_hand(self, rules: IndianRules, table: Table, deck: list[Card], seed: str) -> IndianState:
        """Deal 13 each from the dealer's left (IND-1, COM-4); the next card is the wild joker (IND-2), the one
        after it starts the open deck, the rest is the closed deck (index 0 its top)."""
        cards = list(deck)
        active = list(table.active)
        order = seat_order(table.seats, table.dealer, active)
        if len(cards) < HAND_SIZE * len(order) + 2:
            raise InvalidOption("SHORT_DECK", f"a deck of {len(cards)} cards cannot deal {len(order)} hands (IND-1)")
        hands = deal_round_robin(cards, order, HAND_SIZE, table.seats)
        wild = cards.pop(0)
        opening = cards.pop(0)
        return IndianState(
            seats=table.seats, dealer=table.dealer, hand_number=table.hand_number, teams=table.teams,
            active=active, hands=hands, stock=cards, turn=order[0], phase=Phase.DRAW, seed=seed,
            pile_view=PileView.TOP, discards=[opening], face_up=[wild], in_front=[[] for _ in range(table.seats)],
            wild_ranks=wild_ranks_for(wild), rules=rules, dealt=list(active), has_drawn=[False] * table.seats,
            penalty=[None] * table.seats, out_reason=[""] * table.seats, totals=tuple(table.totals),
        )

    # -- the turn

    def decision(self, state: HandState) -> Decision | None:
        if state.over:
            return None
        return Decision(state.turn, state.phase)

    def legal_actions(self, state: HandState, seat: int) -> list[Action]:
        """DRAW: the closed deck, the open deck's top (unless IND-15 forbids it) and the drop; PLAY: each distinct
        discard, and a valid declaration when the 14 cards make one."""
        assert isinstance(state, IndianState)
        if state.over or seat != state.turn:
            return []
        if state.phase is Phase.DRAW:
            out: list[Action] = [DrawStock()] if state.stock else []
            top = state.top
            if top is not None and (_rules(state).take_discarded_joker or top.rank not in state.wild_ranks):
                out.append(TakeDiscards(1))
            out.append(Drop())
            return out
        hand = state.hands[seat]
        actions: list[Action] = [Discard(c) for c in sorted(set(hand))]
        declare = find_declaration(hand, state.wild_ranks)
        if declare is not None:
            actions.append(declare)
        return actions

    def apply(self, state: HandState, seat: int, action: Action) -> list[Event]:
        """:raises IllegalAction: (state unchanged) for a move out of turn or phase, or against IND-6..IND-15."""
        assert isinstance(state, IndianState)
        match action:
            case DrawStock():
                verify_draw_stock(state, seat)
                card = state.stock.pop(0)
                return self._took(state, seat, card, private_event(
                    Event("DREW_STOCK", seat, (card,), text=f"seat {seat} drew from the closed deck: {card}"),
                    {seat}))
            case TakeDiscards():
                card = verify_take(state, seat, action)
                state.discards.pop()
                return self._took(state, seat, card, [
                    Event("TOOK_DISCARDS", seat, (card,), count=1, text=f"seat {seat} took {card} from the open deck")])
            case Drop():
                points = verify_drop(state, seat)
                kind = "middle" if state.has_drawn[seat] else "first"
                self._out(state, seat, points, f"{kind} drop (IND-10)")
                events = [Event("DROPPED", seat, points=points, text=f"seat {seat} dropped: {kind} drop, {points} (IND-10)")]
                return events + self._next(state)
            case Discard(card):
                verify_discard(state, seat, action)
                state.hands[seat].remove(card)
                state.discards.append(card)
                return [Event("DISCARDED", seat, (card,), text=f"seat {seat} discarded {card}")] + self._next(state)
            case Declare():
                groups, put_away = verify_declare(state, seat, action)
                return self._declare(state, seat, groups, put_away)
        raise IllegalAction("NOT_IN_VARIANT",
                            f"{type(action).__name__} is not a move of Indian rummy: draw, drop, discard or declare (IND-6)")

    @staticmethod
    def _took(state: IndianState, seat: int, card: Card, events: list[Event]) -> list[Event]:
        state.hands[seat].append(card)
        state.drawn = card
        state.has_drawn[seat] = True
        state.phase = Phase.PLAY
        return events

    @staticmethod
    def _out(state: IndianState, seat: int, points: int, reason: str) -> None:
        state.active[seat] = False
        state.penalty[seat] = points
        state.out_reason[seat] = reason

    def _declare(self, state: IndianState, seat: int, groups: list[tuple[Card, ...]], put_away: Card) -> list[Event]:
        verdicts, valid, reason = judge_declaration(groups, state.wild_ranks)
        hand = state.hands[seat]
        shown = [c for g in groups for c in g]
        remove_cards(hand, shown)
        hand.remove(put_away)
        state.in_front[seat].extend(shown)
        state.face_down.append((put_away, frozenset({seat})))
        state.declared = tuple(groups)
        arranged = " | ".join(v.description if v.valid else f"{format_cards(v.cards)} ({v.reason})" for v in verdicts)
        if valid:
            text = f"seat {seat} declared validly: {arranged} (IND-7)"
            full = Event("DECLARED", seat, (*shown, put_away), points=0, text=f"{text}; put away: {put_away}")
            events = private_event(full, {seat}, Event("DECLARED", seat, tuple(shown), points=0, text=text))
            state.over = True
            state.went_out = state.declarer = seat
            state.end_reason = f"seat {seat} declared (IND-7)"
            return events
        points = _rules(state).full_count
        self._out(state, seat, points, f"wrong declaration: {_DECLARATION_REASONS[reason]} (IND-8)")
        text = f"seat {seat} declared wrongly ({reason}): {arranged}; {points} (IND-8)"
        full = Event("DECLARED", seat, (*shown, put_away), points=points, text=f"{text}; put away: {put_away}")
        events = private_event(full, {seat}, Event("DECLARED", seat, tuple(shown), points=points, text=text))
        return events + self._next(state)

    @staticmethod
    def _next(state: IndianState) -> list[Event]:
        """Pass the turn clockwise (COM-4); a deal with one seat left is won by it (IND-8, IND-10); an empty closed
        deck is rebuilt from the open deck but its top (IND-14)."""
        state.drawn = None
        left = state.in_deal
        if len(left) == 1:
            state.over = True
            state.went_out = left[0]
            state.end_reason = f"seat {left[0]} is the last seat in the deal (IND-8, IND-10)"
            return [Event("LAST_IN_DEAL", left[0], text=f"every other seat is out: seat {left[0]} wins the deal")]
        state.turn = state.next_seat(state.turn)
        state.phase = Phase.DRAW
        state.turns += 1
        if state.stock:
            return []
        if len(state.discards) < 2:
            state.over = True
            state.end_reason = "the closed deck is exhausted and the open deck cannot rebuild it (IND-14)"
            return [Event("DECK_EXHAUSTED", text=state.end_reason)]
        top = state.discards.pop()
        pile = state.discards
        shuffle(state.rng("restock"), pile)
        state.stock, state.discards = pile, [top]
        state.restocks += 1
        return [Event("RESTOCKED", count=len(state.stock),
                      text=f"the open deck but its top card, {len(state.stock)} cards, shuffled into a new closed deck (IND-14)")]

    def default_action(self, state: HandState, seat: int, missed_turns: int) -> Action:
        """A missed deadline: draw from the closed deck and discard the drawn card; the third miss in a row is a
        middle drop (IND-11); a seat that left drops at its next draw (IND-12: 20 before its first draw, else 40)."""
        assert isinstance(state, IndianState)
        if state.phase is Phase.DRAW:
            if missed_turns >= 3 or not state.stock:
                return Drop()
            return DrawStock()
        hand = state.hands[seat]
        if state.drawn is not None and state.drawn in hand:
            return Discard(state.drawn)
        return Discard(max(hand, key=lambda c: (card_points(c, state.wild_ranks), c)))

    # -- what a seat sees

    def observe(self, state: HandState, seat: int) -> SeatView:
        """COM-6: own hand, the wild joker, the open deck's top, declared groups, sizes; nothing hidden."""
        assert isinstance(state, IndianState)
        rules = _rules(state)
        notes = [
            ("wild_joker", str(state.face_up[0]) if state.face_up else ""),
            ("format", rules.format),
            ("first_drop", str(rules.first_drop)),
            ("middle_drop", str(rules.middle_drop)),
            ("full_count", str(rules.full_count)),
            ("take_discarded_joker", "allowed" if rules.take_discarded_joker else "forbidden"),
            ("drop_now", str(rules.middle_drop if state.has_drawn[seat] else rules.first_drop)),
        ]
        notes += [(f"out:{s}", f"{state.out_reason[s]}: {state.penalty[s]}") for s in range(state.seats)
                  if state.penalty[s] is not None]
        return zone_view(state, seat, self.name, state.totals, notes)

    # -- scoring

    def score(self, state: HandState) -> HandScore:
        """IND-7..IND-12: the declarer (or the last seat left) 0; seats out of the deal their drop or 80; every
        other seat its least-points count (IND-9). A deal stopped without a declaration (turn cap, or a closed deck
        that cannot be rebuilt) is counted as if nobody had declared: every seat still in counts, nobody wins."""
        assert isinstance(state, IndianState)
        wilds = state.wild_ranks
        points = [0] * state.seats
        details = [""] * state.seats
        for s in range(state.seats):
            if not state.dealt[s]:
                details[s] = "not dealt in (eliminated from the pool)"
            elif state.penalty[s] is not None:
                points[s] = state.penalty[s] or 0
                details[s] = f"{state.out_reason[s]}: {points[s]}"
            elif s == state.went_out:
                how = "valid declaration (IND-7)" if s == state.declarer else "last seat in the deal (IND-8, IND-10)"
                details[s] = f"{how}: 0"
            else:
                grouping, left_out = least_count_after_discard(state.hands[s], wilds)
                points[s] = grouping.points
                extra = f" (leaving out {left_out})" if left_out is not None else ""
                details[s] = f"count{extra}: {grouping.describe()}"
        winner = state.went_out
        if winner is not None:
            collected = sum(points)
            reason = f"{state.end_reason}; seat {winner} collects {collected} points (IND-13)"
        else:
            reason = f"{state.end_reason or 'stopped'}: counted as if nobody had declared (IND-9)"
        return HandScore(tuple(points), winner, reason, tuple(details))

    def game_outcome(self, rules: IndianRules, game: GameState, max_hands: int) -> GameOutcome | None:
        """IND-13: points after one deal; deals-N after N deals; pools when at most one seat is left, a seat
        reaching the limit being eliminated (ranked after the survivors, the later eliminated the better)."""
        if rules.pool_limit is None:
            if game.hands_played < rules.deals:
                return None
            what = "one deal" if rules.format == "points" else f"{rules.deals} deals"
            return GameOutcome(rank_by_totals(game, True), f"{rules.format}: {what} played, lowest total wins (IND-13)")
        limit = rules.pool_limit
        if not game.eliminated:
            game.eliminated = [False] * game.seats
        out_at = _elimination_hands(game, limit)
        for s in out_at:
            game.eliminated[s] = True
        left = [s for s in range(game.seats) if not game.eliminated[s]]
        if len(left) > 1:
            return None
        ranking: list[tuple[int, ...]] = []
        if left:
            ranking.append(tuple(left))
        keyed: dict[tuple[int, int], list[int]] = {}
        for s, hand in out_at.items():
            keyed.setdefault((-hand, game.totals[s]), []).append(s)
        ranking += [tuple(keyed[k]) for k in sorted(keyed)]
        who = f"seat {left[0]} is the last one left" if left else "every seat reached the limit in the same deal"
        return GameOutcome(tuple(ranking), f"{rules.format}: {who} below {limit} (IND-13)")

    # -- the rules check for bot authors

    def evaluate(self, rules: IndianRules, wild_ranks: frozenset[Rank], groups: Sequence[Sequence[Card]]) -> Evaluation:
        """Each group's verdict (IND-4, IND-5), the groups as a declaration (IND-7, reason code), and the count:
        ``hand_points`` the least-points grouping of all the cards, ``melded_points`` the count of the grouping as
        given (IND-9, both capped at 80). ``wild_ranks`` of only ``JOKER`` means the wild joker is a printed joker:
        aces are wild (IND-2); printed jokers are always wild."""
        wilds = frozenset(wild_ranks) | {Rank.JOKER}
        if frozenset(wild_ranks) == {Rank.JOKER}:
            wilds = wild_ranks_for(JOKER)
        cards = [c for g in groups for c in g]
        if len(cards) > HAND_SIZE + 1:  # the least count searches groupings: a bound keeps it quick
            raise InvalidAction("HAND_TOO_LARGE", f"IND-1: a hand holds {HAND_SIZE} cards, {HAND_SIZE + 1} with the "
                                f"card drawn; {len(cards)} given")
        verdicts, valid, reason = judge_declaration(groups, wilds)
        best = least_count(cards, wilds)
        seqs = [v for v in verdicts if v.valid and v.kind in _SEQUENCE_KINDS]
        qualifies = len(seqs) >= 2 and any(v.pure for v in seqs)
        as_given = sum(v.points for v in verdicts if not v.valid) if qualifies else _points(cards, wilds)
        detail = f"{_DECLARATION_REASONS[reason]}; least count: {best.describe()}"
        return Evaluation(verdicts, valid, reason, best.points, min(as_given, FULL_COUNT), detail)


def _packs(seats: int) -> tuple[int, int]:
    """IND-1: (packs, printed jokers) for a seat count."""
    return (1, 1) if seats == 2 else (2, 2)


def _elimination_hands(game: GameState, limit: int) -> dict[int, int]:
    """Seat -> the deal (1-based) after which its running total first reached ``limit`` (IND-13 pools)."""
    running = [0] * game.seats
    out: dict[int, int] = {}
    for n, hs in enumerate(game.history, start=1):
        for s, p in enumerate(hs.points):
            running[s] += p
            if s not in out and running[s] >= limit:
                out[s] = n
    for s in range(game.seats):  # totals are the authority if the history is short
        if s not in out and game.totals[s] >= limit:
            out[s] = max(len(game.history), 1)
    return out


VARIANTS = (IndianRummy(),)
