"""What a seat observes: a fixed-shape tensor, an observation string and an information-state string.

Everything here is built from three things only: the seat's ``SeatView`` (the rules core's COM-6 view), the events
the referee sent that seat this hand (with the cards the search service's tracker therefore knows to be in other
hands), and the steps of a compound move the seat has taken. No function here is given the hand state, so no
observation can hold a card the seat cannot see (tests/envs/test_leaks.py swaps the hidden cards to check).

Card planes have 53 columns (``actions.CARDS``: spades A..K, hearts, diamonds, clubs, joker) holding counts, so
two packs and several jokers fit. Seats are relative: plane k is the seat k places to the observer's left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from operator import is_
from typing import Any

import numpy as np

from rummy_env._core import Card, Event, Phase, SeatView, TableMeld, find, format_cards, tally
from rummy_env.actions import CARD_INDEX, NUM_CARDS, ActionSpace, action_space

__all__ = ["ObservationLayout", "layout", "observation_tensor", "observation_entries", "move_entries", "observation_string", "information_state_string",
           "event_text", "POINT_SCALE", "as_positions", "as_values"]

POINT_SCALE = 500.0  # totals are divided by this (a 500 Rum or Iceberg target is 500 to 5000)
_PHASES = (Phase.DRAW, Phase.PLAY, Phase.DISCARD, Phase.OFFER)  # found by index: an Enum member hashes in Python
_OPENERS = ("MELD", "DECLARE", "TAKE_MELD", "TAKE_LAYOFF", "LAYOFF", "EXCHANGE")


@dataclass(frozen=True)
class ObservationLayout:
    """Named segments of the flat float32 tensor of one variant and seat count: ``segments[name] = (offset,
    shape)``."""

    variant: str
    seats: int
    space: ActionSpace
    segments: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    size: int = 0
    at: dict[str, int] = field(default_factory=dict, repr=False, compare=False)  # each segment's offset

    def slice(self, tensor: np.ndarray, name: str) -> np.ndarray:
        at, shape = self.segments[name]
        return tensor[at:at + int(np.prod(shape))].reshape(shape)


@cache
def layout(variant: str, seats: int) -> ObservationLayout:
    """The tensor layout of ``variant`` at ``seats`` seats (sizes in docs/ENVIRONMENTS.md)."""
    v = find(variant)
    space = action_space(v.name)
    n, s, c = seats, space.max_melds, NUM_CARDS
    parts: list[tuple[str, tuple[int, ...]]] = [
        ("hand", (c,)),  # own hand, counts
        ("known", (n - 1, c)),  # cards known to be in each other seat's hand (taken face up, not seen to leave)
        ("pile", (c,)),  # the discard pile as the variant shows it (all of it, its top card, or nothing)
        ("pile_top", (c,)),
        ("pile_depth", (c,)),  # 1 / (1 + depth from the top) of each card's topmost shown copy
        ("face_up", (c,)),
        ("in_front", (n, c)),  # cards laid in front of each seat (Iceberg's aces)
        ("received", (c,)),  # face-down cards this seat knows (passed to it or by it)
        ("offer", (c,)),  # the card on offer (Skarney)
        ("melds_by_owner", (n, c)),
        ("meld_slots", (s, c)),  # the cards of each table meld, in the view's order (the ids' meld slots)
        ("meld_owner", (s, n)),
        ("meld_used", (s,)),
        ("wild_ranks", (14,)),  # Rank 0 (joker) .. 13
        ("phase", (len(_PHASES),)),
        ("to_act", (n,)),
        ("dealer", (n,)),
        ("active", (n,)),
        ("partner", (n,)),  # same team as the observer
        ("hand_sizes", (n,)),  # / deck size
        ("totals", (n,)),  # / POINT_SCALE
        ("stock_size", (1,)),  # / deck size
        ("discard_size", (1,)),  # / deck size
        ("hand_number", (1,)),  # / 10
        ("move_kind", (len(_OPENERS),)),  # the compound move open, if any
        ("move_cards", (c,)),  # cards picked so far in it
        ("move_wilds", (c,)),  # wilds named so far (WILD ids)
        ("move_as", (c,)),  # what they stand for (AS ids)
        ("move_slot", (s,)),  # the meld slot it names
        ("move_take", (1,)),  # the pile count it takes / deck size
        ("move_groups", (1,)),  # groups closed so far / 10
    ]
    segments: dict[str, tuple[int, tuple[int, ...]]] = {}
    at = 0
    for name, shape in parts:
        segments[name] = (at, shape)
        at += int(np.prod(shape))
    return ObservationLayout(v.name, seats, space, segments, at, {k: o for k, (o, _) in segments.items()})


_COLUMN = [-1] * (max(cd.code for cd in CARD_INDEX) + 1)  # a card's column by its code
for _cd, _col in CARD_INDEX.items():
    _COLUMN[_cd.code] = _col


def observation_tensor(view: SeatView, known: Sequence[Mapping[Card, int]], prefix: Sequence[int],
                       out: np.ndarray | None = None, memo: dict[str, Any] | None = None) -> np.ndarray:
    """The seat's tensor (float32, ``layout(...).size`` values), written into ``out`` when given.

    Built as one list of positions and one of values (``observation_entries``), written by a single numpy
    assignment: numpy's calls cost more than the work at these sizes, so there is one. With a ``memo``, the table's
    melds are a kept tensor of their own, copied, then written over: numpy converts a list's entries one by one
    (about as costly as finding them), a copy is one block."""
    idx, val = observation_entries(view, known, prefix, memo=memo)
    t: np.ndarray
    if memo is not None:
        if out is None:
            t = memo["dense"].copy()
        else:
            t = out
            np.copyto(t, memo["dense"])
    elif out is None:
        t = np.zeros(layout(view.variant, len(view.hand_sizes)).size, dtype=np.float32)
    else:
        t = out
        t.fill(0.0)
    t[as_positions(idx)] = as_values(val)
    return t


def as_positions(idx: list[int]) -> np.ndarray:
    """``idx`` as an index array: ``fromiter`` reads a list of known type and length about 20% faster than numpy's
    own reading of a list in ``t[idx] = val`` (which looks for its shape and type: 6 against 7.5 µs a tensor of
    ~100 entries)."""
    return np.fromiter(idx, np.intp, len(idx))


def as_values(val: list[float]) -> np.ndarray:
    return np.fromiter(val, np.float32, len(val))


def observation_entries(view: SeatView, known: Sequence[Mapping[Card, int]], prefix: Sequence[int], offset: int = 0,
                        memo: dict[str, Any] | None = None) -> tuple[list[int], list[float]]:
    """The tensor's nonzero values as positions (plus ``offset``) and values: the count planes are the flat
    positions of every card shown (its column in its plane and row, once per copy) counted at C speed. A batch
    writes every game's entries, each at its row's offset, with one assignment.

    ``memo``: a dict the caller keeps for one seat of one game (``RummyGame.memo(seat)``). The table's melds are
    most entries once a hand is under way and change at few moves: with a memo they are left out of the lists and
    kept in ``memo["dense"]``, a tensor holding only them, which the caller copies and writes the lists over
    (``_keep_melds``: each meld slot is read again only when the view lists another meld object there; the rules
    core's melds are frozen records, the same objects from view to view until a move changes one).

    Written for speed (a step's largest part): the segments' offsets are locals unpacked from one tuple per
    variant and seat count, a seat's relative places one list per seat count; no name is looked up per card.
    tests/envs/test_tensor_reference.py checks it against the builder it replaced on every variant."""
    n = len(view.hand_sizes)
    o = _OFFSETS.get((view.variant, n))
    if o is None:
        o = _offsets(view.variant, n)
    (o_hand, o_known, o_pile, o_pile_top, o_pile_depth, o_face_up, o_in_front, o_received, o_offer, o_owners,
     o_slots, o_meld_owner, o_meld_used, o_wild, o_phase, o_to_act, o_dealer, o_active, o_partner, o_sizes,
     o_totals, o_stock, o_discard, o_hand_number, o_move_kind, o_move_cards, o_move_wilds, o_move_as, o_move_slot,
     o_move_take, o_move_groups, max_melds, max_pile, size) = o
    deck = float(max_pile)
    me = view.seat
    rel = _RELATIVE[n][me]  # rel[s]: seat s's place from the observer's left (0: the observer)
    c = NUM_CARDS
    col = _COLUMN  # a card's column by its code (a list index, not a hash)

    pos = [o_hand + col[cd.code] for cd in view.hand]
    for s in range(n if n < len(known) else len(known)):
        held = known[s]
        if held and s != me:
            row = o_known + (rel[s] - 1) * c
            for cd, k in held.items():
                if k == 1:
                    pos.append(row + col[cd.code])
                else:
                    pos += [row + col[cd.code]] * k
    pile = view.discard_pile
    cols = [col[cd.code] for cd in pile] if pile else []
    if cols:
        pos += [o_pile + i for i in cols]
    if view.face_up:
        pos += [o_face_up + col[cd.code] for cd in view.face_up]
    for s, cards in enumerate(view.in_front):
        if cards:
            row = o_in_front + rel[s] * c
            pos += [row + col[cd.code] for cd in cards]
    if view.received:
        pos += [o_received + col[cd.code] for cd in view.received]
    melds = view.melds
    meld_idx: list[int] = []
    meld_val: list[float] = []
    if memo is None:
        if melds:
            meld_idx, meld_val = _meld_entries(melds, o_owners, o_slots, o_meld_owner, o_meld_used, rel, n, max_melds)
    else:
        _keep_melds(memo, melds, o_owners, o_slots, o_meld_owner, o_meld_used, rel, n, max_melds, size)

    # then the values set outright (none at a count's position): flags, sizes, the pile's depths, the move
    if len(set(pos)) == len(pos):  # one copy of each (one pack, most states): every count is 1
        idx = [*pos, *meld_idx]  # (the melds' planes are their own: no position of theirs is counted above)
        val = [*_ONES[:len(pos)], *meld_val] if len(pos) <= len(_ONES) else [*[1.0] * len(pos), *meld_val]
    else:
        counted = tally(pos)  # (compiled; ``Counter`` is Python)
        idx = [*counted, *meld_idx]
        val = [*map(float, counted.values()), *meld_val]
    if cols:
        top = len(cols) - 1
        idx.append(o_pile_top + cols[top])
        val.append(1.0)
        depth = {i: top - d for d, i in enumerate(cols)}  # bottom to top: a card's topmost copy is written last
        idx += [o_pile_depth + i for i in depth]
        val += [1.0 / (1 + d) for d in depth.values()]
    if view.offer is not None:
        idx.append(o_offer + col[view.offer.code])
        val.append(1.0)
    for rank in view.wild_ranks:
        idx.append(o_wild + int(rank))
        val.append(1.0)
    idx += (o_phase + _PHASES.index(view.phase), o_to_act + rel[view.turn], o_dealer + rel[view.dealer], o_stock,
            o_discard, o_hand_number)
    val += (1.0, 1.0, 1.0, view.stock_size / deck, view.discard_size / deck, view.hand_number / 10.0)
    teams, active, sizes, totals = view.teams, view.active, view.hand_sizes, view.totals
    team = teams[me]
    for s in range(n):
        r = rel[s]
        idx += (o_active + r, o_partner + r, o_sizes + r)
        val += (1.0 if active[s] else 0.0, 1.0 if teams[s] == team else 0.0, sizes[s] / deck)
    for s in range(n if n < len(totals) else len(totals)):
        idx.append(o_totals + rel[s])
        val.append(totals[s] / POINT_SCALE)
    if prefix:
        _move_entries(view.variant, prefix, idx, val, o_move_kind, o_move_cards, o_move_wilds, o_move_as, o_move_slot,
                      o_move_take, o_move_groups, deck)
    if offset:
        idx = [i + offset for i in idx]
    return idx, val


def move_entries(variant: str, seats: int, prefix: Sequence[int]) -> tuple[list[int], list[float]]:
    """The entries of the compound move open (``prefix``, its steps so far): the only ones that change between the
    steps of one decision, whose view is the same at each (``RummyGame.observation`` writes them over a kept
    tensor)."""
    idx: list[int] = []
    val: list[float] = []
    if prefix:
        o = _OFFSETS.get((variant, seats))
        if o is None:
            o = _offsets(variant, seats)
        o_move_kind, o_move_cards, o_move_wilds, o_move_as, o_move_slot, o_move_take, o_move_groups = o[_MOVE:_MOVE + 7]
        _move_entries(variant, prefix, idx, val, o_move_kind, o_move_cards, o_move_wilds, o_move_as, o_move_slot,
                      o_move_take, o_move_groups, float(o[_MAX_PILE]))
    return idx, val


def _move_entries(variant: str, prefix: Sequence[int], idx: list[int], val: list[float], o_move_kind: int,
                  o_move_cards: int, o_move_wilds: int, o_move_as: int, o_move_slot: int, o_move_take: int,
                  o_move_groups: int, deck: float) -> None:
    """The compound move open: its kind, the cards, wilds and named cards picked so far (counted: two copies of a
    card may be picked), the slot or pile count it names, the groups closed so far."""
    c = NUM_CARDS
    picked = [(o_move_cards, o_move_wilds, o_move_as)[plane] + (p - _PICK_BASE) % c for p in prefix[1:]
              if (plane := _MOVE_PLANE_OF.get(p - _PICK_BASE)) is not None]  # PICK, WILD, AS: three ranges of 53
    if picked:
        counted = tally(picked)
        idx += counted
        val += map(float, counted.values())
    space = action_space(variant)
    kind, k = space.split(prefix[0])
    idx.append(o_move_kind + _OPENERS.index(kind))
    val.append(1.0)
    if kind in ("LAYOFF", "EXCHANGE"):
        idx.append(o_move_slot + k)
        val.append(1.0)
    if kind.startswith("TAKE"):
        idx.append(o_move_take)
        val.append(k / deck)
    groups = 0
    for p in prefix[1:]:
        kind, k = space.split(p)
        if kind == "ON_MELD":
            idx.append(o_move_slot + k)
            val.append(1.0)
        elif kind == "NEXT_GROUP":
            groups += 1
    if groups:
        idx.append(o_move_groups)
        val.append(groups / 10.0)


_SEGMENTS = ("hand", "known", "pile", "pile_top", "pile_depth", "face_up", "in_front", "received", "offer",
             "melds_by_owner", "meld_slots", "meld_owner", "meld_used", "wild_ranks", "phase", "to_act", "dealer",
             "active", "partner", "hand_sizes", "totals", "stock_size", "discard_size", "hand_number", "move_kind",
             "move_cards", "move_wilds", "move_as", "move_slot", "move_take", "move_groups")
_OFFSETS: dict[tuple[str, int], tuple[int, ...]] = {}
_MOVE = _SEGMENTS.index("move_kind")  # the move's seven segments, in ``_offsets``' tuple
_MAX_PILE = len(_SEGMENTS) + 1  # the deck's size, in it
_RELATIVE = [[[(s - me) % n for s in range(n)] for me in range(n)] for n in range(9)]
_ONES = [1.0] * 256
# PICK, WILD and AS are consecutive ranges of NUM_CARDS ids in every variant (``ActionSpace``): an id's plane
_PICK_BASE = action_space("indian").base["PICK"]
_MOVE_PLANE_OF = {k: k // NUM_CARDS for k in range(3 * NUM_CARDS)}


def _offsets(variant: str, n: int) -> tuple[int, ...]:
    """Each segment's offset in ``_SEGMENTS`` order, then the meld slots, the deck's size and the tensor's."""
    lay = layout(variant, n)
    space = lay.space
    got = (*(lay.at[name] for name in _SEGMENTS), space.max_melds, space.max_pile, lay.size)
    _OFFSETS[(variant, n)] = got
    return got


def _meld_positions(m: TableMeld, slot: int, owners: int, slots: int, meld_owner: int, meld_used: int, rel: list[int],
                    n: int, max_melds: int) -> list[int]:
    """One table meld's positions: its cards in its owner's row and in its slot's, then the slot's flags (its
    owner, used); a meld past the last slot counts by owner only."""
    c = NUM_CARDS
    col = _COLUMN
    ids = [col[p.card.code] for p in m.cards]
    o = rel[m.owner]
    row = owners + o * c
    pos = [row + i for i in ids]
    if slot < max_melds:
        row = slots + slot * c
        pos += [row + i for i in ids]
        pos += (meld_owner + slot * n + o, meld_used + slot)
    return pos


def _meld_entries(melds: Sequence[Any], owners: int, slots: int, meld_owner: int, meld_used: int, rel: list[int],
                  n: int, max_melds: int) -> tuple[list[int], list[float]]:
    """The table's melds' entries, counted (two packs put a card twice in an owner's row)."""
    counted = tally(chain.from_iterable(
        _meld_positions(m, slot, owners, slots, meld_owner, meld_used, rel, n, max_melds)
        for slot, m in enumerate(melds)))
    return [*counted], [*map(float, counted.values())]


def _keep_melds(memo: dict[str, Any], melds: Sequence[Any], owners: int, slots: int, meld_owner: int,
                meld_used: int, rel: list[int], n: int, max_melds: int, size: int) -> None:
    """Brings ``memo["dense"]`` (a tensor holding only the table melds' entries) to ``melds``: a slot whose meld
    object is the one kept is not read; a changed one takes its old positions' counts back and adds its new ones,
    and only the positions touched are written."""
    prev = memo.get("melds")
    if prev is not None and len(prev) == len(melds) and all(map(is_, prev, melds)):
        return
    kept: list[tuple[Any, list[int]]] | None = memo.get("slots")
    if kept is None:
        kept = memo["slots"] = []
        memo["counts"] = {}
        memo["dense"] = np.zeros(size, dtype=np.float32)
    counts: dict[int, int] = memo["counts"]
    touched: list[int] = []
    for slot in range(max(len(kept), len(melds))):
        m = melds[slot] if slot < len(melds) else None
        if slot < len(kept):
            old_meld, old = kept[slot]
            if old_meld is m:
                continue
            for p in old:
                counts[p] -= 1
            touched += old
        if m is not None:
            pos = _meld_positions(m, slot, owners, slots, meld_owner, meld_used, rel, n, max_melds)
            for p in pos:
                counts[p] = counts.get(p, 0) + 1
            touched += pos
            if slot < len(kept):
                kept[slot] = (m, pos)
            else:
                kept.append((m, pos))
    del kept[len(melds):]
    memo["melds"] = melds
    if touched:
        memo["dense"][as_positions(touched)] = as_values([float(counts[p]) for p in touched])


def _meld_text(view: SeatView, slot: int) -> str:
    m = view.melds[slot]
    cards = " ".join(str(p.card) + (f"={_placed_as(p)}" if p.is_wild else "") for p in m.cards)
    label = f" {m.label}" if m.label else ""
    return f"#{slot} seat {m.owner} {m.meld_kind.name.lower()}{label}: {cards}"


def _placed_as(p: object) -> str:
    rank = getattr(p, "rank")  # noqa: B009 - Placed's fields, read for the text only
    suit = getattr(p, "suit")  # noqa: B009
    text = {1: "A", 10: "T", 11: "J", 12: "Q", 13: "K"}.get(int(rank), str(int(rank)))
    return text + ({1: "S", 2: "H", 3: "D", 4: "C"}.get(int(suit), "*"))


def observation_string(view: SeatView, known: Sequence[Mapping[Card, int]], prefix: Sequence[int]) -> str:
    """The observation in the referee's card notation, one fact a line (a language model can read it)."""
    n = len(view.hand_sizes)
    space = action_space(view.variant)
    lines = [
        f"{view.variant} seat {view.seat} of {n}, hand {view.hand_number}, dealer seat {view.dealer}",
        f"to act: seat {view.turn}, phase {view.phase.value}",
        f"hand: {format_cards(sorted(view.hand))}",
        f"hand sizes: {' '.join(str(h) for h in view.hand_sizes)}; stock {view.stock_size}; pile {view.discard_size}",
        f"pile shown (bottom to top): {format_cards(view.discard_pile) or '-'}",
        f"totals: {' '.join(str(x) for x in view.totals)}",
    ]
    if view.wild_ranks:
        lines.append(f"wild ranks: {' '.join(r.name.lower() for r in view.wild_ranks)}")
    if len(set(view.teams)) < n:
        lines.append(f"teams: {' '.join(str(x) for x in view.teams)}")
    if not all(view.active):
        lines.append(f"out of the deal: {' '.join(str(s) for s in range(n) if not view.active[s])}")
    for slot in range(len(view.melds)):
        lines.append(f"meld {_meld_text(view, slot)}")
    if view.face_up:
        lines.append(f"face up: {format_cards(view.face_up)}")
    for s, cards in enumerate(view.in_front):
        if cards:
            lines.append(f"in front of seat {s}: {format_cards(cards)}")
    if view.received:
        lines.append(f"face down, known: {format_cards(view.received)}")
    if view.offer is not None:
        lines.append(f"on offer: {view.offer}")
    for s in range(n):
        if s != view.seat and s < len(known) and known[s]:
            held = sorted(c for c, k in known[s].items() for _ in range(k))
            lines.append(f"seat {s} holds (known): {format_cards(held)}")
    for key, value in view.notes:
        lines.append(f"{key}: {value}")
    if prefix:
        lines.append(f"move so far: {', '.join(space.name(p) for p in prefix)}")
    return "\n".join(lines)


def event_text(e: Event) -> str:
    """One event as the seat received it: kind, seat, cards, count and meld (never its free text)."""
    parts = [e.kind.lower()]
    if e.seat is not None:
        parts.append(f"seat {e.seat}")
    if e.cards:
        parts.append(format_cards(e.cards))
    if e.count:
        parts.append(f"x{e.count}")
    if e.meld_id is not None:
        parts.append(f"meld {e.meld_id}")
    if e.points:
        parts.append(f"{e.points} points")
    return " ".join(parts)


def information_state_string(view: SeatView, known: Sequence[Mapping[Card, int]], prefix: Sequence[int],
                             events: Sequence[Event]) -> str:
    """The observation and every event the seat was sent this hand, in order (perfect recall within the hand)."""
    history = "\n".join(event_text(e) for e in events)
    return observation_string(view, known, prefix) + "\nhistory:\n" + history
