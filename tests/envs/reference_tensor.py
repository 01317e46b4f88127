"""The observation tensor's builder as it was before the compiled-friendly rewrite (envs3, commit 6e16a99), kept
word for word as the oracle of tests/envs/test_tensor_reference.py: the rewrite must give the very same tensor on
every state. Not used by the environments."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import chain
from operator import is_
from typing import Any

import numpy as np

from rummy_env._core import Card, Phase, SeatView
from rummy_env.actions import CARD_INDEX, NUM_CARDS
from rummy_env.observation import POINT_SCALE, layout

_PHASES = (Phase.DRAW, Phase.PLAY, Phase.DISCARD, Phase.OFFER)
_OPENERS = ("MELD", "DECLARE", "TAKE_MELD", "TAKE_LAYOFF", "LAYOFF", "EXCHANGE")
_CARD = CARD_INDEX.__getitem__
_PHASE_AT = {p: i for i, p in enumerate(_PHASES)}


def reference_tensor(view: SeatView, known: Sequence[Mapping[Card, int]], prefix: Sequence[int]) -> np.ndarray:
    """The tensor the old builder gave (no memo: built afresh)."""
    idx, val = observation_entries(view, known, prefix)
    t = np.zeros(layout(view.variant, len(view.hand_sizes)).size, dtype=np.float32)
    t[np.array(idx, dtype=np.intp)] = np.array(val, dtype=np.float32)
    return t


def observation_entries(view: SeatView, known: Sequence[Mapping[Card, int]], prefix: Sequence[int], offset: int = 0,
                        memo: dict[str, Any] | None = None) -> tuple[list[int], list[float]]:
    """The tensor's nonzero values as positions (plus ``offset``) and values: the count planes are the flat
    positions of every card shown (its column in its plane and row, once per copy) counted at C speed. A batch
    writes every game's entries, each at its row's offset, with one assignment.

    ``memo``: a dict the caller keeps for one seat of one game (``RummyGame.memo(seat)``). The table's melds are
    most of the work once a hand is under way and change at few moves; their positions are kept there and used
    again while the view lists the very same meld objects (the rules core's melds are frozen records, kept from
    view to view until a move changes one)."""
    n = len(view.hand_sizes)
    lay = layout(view.variant, n)
    space = lay.space
    deck = float(space.max_pile)
    at = lay.at
    me = view.seat
    c = NUM_CARDS

    pos: list[int] = [at["hand"] + i for i in map(_CARD, view.hand)]
    base = at["known"]
    for s in range(n):
        if s != me and s < len(known) and known[s]:
            row = base + ((s - me) % n - 1) * c
            for card, k in known[s].items():
                pos += [row + _CARD(card)] * k
    pile = view.discard_pile
    base = at["pile"]
    pos += [base + i for i in map(_CARD, pile)]
    base = at["face_up"]
    pos += [base + i for i in map(_CARD, view.face_up)]
    base = at["in_front"]
    for s, cards in enumerate(view.in_front):
        if cards:
            row = base + ((s - me) % n) * c
            pos += [row + i for i in map(_CARD, cards)]
    base = at["received"]
    pos += [base + i for i in map(_CARD, view.received)]
    melds = view.melds
    kept = memo.get("melds") if memo is not None else None
    if kept is not None and len(kept[0]) == len(melds) and all(map(is_, kept[0], melds)):
        meld_idx, meld_val = kept[1], kept[2]
    else:
        meld_idx, meld_val = _meld_entries(melds, at, me, n, space.max_melds, memo)
        if memo is not None:
            memo["melds"] = (melds, meld_idx, meld_val)
    for p in prefix[1:]:  # the cards, wilds and named cards picked so far
        kind, k = space.split(p)
        if kind in _MOVE_PLANES:
            pos.append(at[_MOVE_PLANES[kind]] + k)

    # then the values set outright (none at a count's position): flags, sizes, the pile's depths, the move
    counted = Counter(pos)
    idx = [*counted, *meld_idx]  # (the melds' planes are their own: no position of theirs is counted above)
    val: list[float] = [*counted.values(), *meld_val]
    if pile:
        idx.append(at["pile_top"] + _CARD(pile[-1]))
        val.append(1.0)
        depth: dict[int, int] = {}
        for d, i in enumerate(map(_CARD, reversed(pile))):
            depth.setdefault(i, d)  # the card's topmost copy
        base = at["pile_depth"]
        idx += [base + i for i in depth]
        val += [1.0 / (1 + d) for d in depth.values()]
    if view.offer is not None:
        idx.append(at["offer"] + _CARD(view.offer))
        val.append(1.0)
    base = at["wild_ranks"]
    for rank in view.wild_ranks:
        idx.append(base + int(rank))
        val.append(1.0)
    idx += (at["phase"] + _PHASE_AT[view.phase], at["to_act"] + (view.turn - me) % n,
            at["dealer"] + (view.dealer - me) % n, at["stock_size"], at["discard_size"], at["hand_number"])
    val += (1.0, 1.0, 1.0, view.stock_size / deck, view.discard_size / deck, view.hand_number / 10.0)
    active, partner, sizes, totals = at["active"], at["partner"], at["hand_sizes"], at["totals"]
    team = view.teams[me]
    for s in range(n):
        r = (s - me) % n
        idx += (active + r, partner + r, sizes + r)
        val += (1.0 if view.active[s] else 0.0, 1.0 if view.teams[s] == team else 0.0, view.hand_sizes[s] / deck)
        if s < len(view.totals):
            idx.append(totals + r)
            val.append(view.totals[s] / POINT_SCALE)
    if prefix:
        kind, k = space.split(prefix[0])
        idx.append(at["move_kind"] + _OPENERS.index(kind))
        val.append(1.0)
        if kind in ("LAYOFF", "EXCHANGE"):
            idx.append(at["move_slot"] + k)
            val.append(1.0)
        if kind.startswith("TAKE"):
            idx.append(at["move_take"])
            val.append(k / deck)
        groups = 0
        for p in prefix[1:]:
            kind, k = space.split(p)
            if kind == "ON_MELD":
                idx.append(at["move_slot"] + k)
                val.append(1.0)
            elif kind == "NEXT_GROUP":
                groups += 1
        if groups:
            idx.append(at["move_groups"])
            val.append(groups / 10.0)
    if offset:
        idx = [i + offset for i in idx]
    return idx, val


_MOVE_PLANES = {"PICK": "move_cards", "WILD": "move_wilds", "AS": "move_as"}


def _meld_entries(melds: Sequence[Any], at: Mapping[str, int], me: int, n: int, max_melds: int,
                  memo: dict[str, Any] | None = None) -> tuple[list[int], list[float]]:
    """The table's melds' entries: the counts by owner and by slot, then the flags (slot owners, slots used).

    Each slot's positions are kept in ``memo`` with its meld object: a move changes one meld or adds one, so only
    that slot is read again (a seat's memo misses whenever any meld changed since its last observation)."""
    c = NUM_CARDS
    owners, slots = at["melds_by_owner"], at["meld_slots"]
    meld_owner, meld_used = at["meld_owner"], at["meld_used"]
    kept: list[tuple[Any, list[int], tuple[int, ...]]] = memo.get("slots", []) if memo is not None else []
    now: list[tuple[Any, list[int], tuple[int, ...]]] = []
    for slot, m in enumerate(melds):
        if slot < len(kept) and kept[slot][0] is m:
            now.append(kept[slot])
            continue
        ids = [_CARD(p.card) for p in m.cards]
        o = (m.owner - me) % n
        row = owners + o * c
        pos = [row + i for i in ids]
        flags: tuple[int, ...] = ()
        if slot < max_melds:
            row = slots + slot * c
            pos += [row + i for i in ids]
            flags = (meld_owner + slot * n + o, meld_used + slot)
        now.append((m, pos, flags))
    if memo is not None:
        memo["slots"] = now
    counted = Counter(chain.from_iterable(e[1] for e in now))
    flat = [*chain.from_iterable(e[2] for e in now)]
    return [*counted, *flat], [*map(float, counted.values()), *[1.0] * len(flat)]
