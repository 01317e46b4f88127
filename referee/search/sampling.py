"""Deals consistent with a seat's knowledge, uniformly (determinization, as in perfect-information Monte Carlo).

Given ``Knowledge``, a consistent deal fixes every known card where it is known to be and puts the unseen ones in
the places left for them: other seats' hands, the stock, face-down cards. With the known cards fixed, a uniform
shuffle of the unseen cards into the places left is exactly uniform over the consistent deals (each arrangement
of the physical cards is one shuffle). Two refinements keep it so:

- places that may not hold some ranks (Iceberg: a seat that has begun a turn holds no ace, ICE-2) take those
  cards last: the restricted cards go to a uniformly chosen set of the places that may hold them, the rest
  are shuffled into the remaining places, which is again uniform over the consistent arrangements;
- a shuffled restock is a pool of its own: its cards (those seen, and the never-seen cards that were in the
  pile, dealt with pool 0 first) are shuffled among the places drawn from it.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from referee.rules.cards import Card, Rank
from referee.search.errors import KnowledgeMismatch, NotSearchable, OutOfTime
from referee.search.knowledge import Knowledge, SeatRecord, know
from referee.search.simulate import SearchState

__all__ = ["Deal", "deal", "sample_states"]

_Place = tuple[str, int]  # ("hand", seat) | ("stock", index) | ("down", index) | ("pool", r)


@dataclass(frozen=True)
class Deal:
    """Where every hidden card is in one sample: hands per seat (the asking seat's own), the stock top first,
    and the face-down cards in table order."""

    hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]
    face_down: tuple[Card, ...]


def _assign(cards: list[Card], banned: Sequence[frozenset[Rank]], rng: random.Random) -> list[Card]:
    """``cards`` in a uniformly random arrangement over ``len(banned)`` places, no card in a place banning its rank."""
    if len(cards) != len(banned):
        raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"{len(cards)} unseen cards for {len(banned)} places")
    bans = {b for b in banned if b}
    if not bans:
        out = list(cards)
        rng.shuffle(out)
        return out
    if len(bans) > 1:
        raise NotSearchable("MIXED_RESTRICTIONS", "places banning different ranks are not supported")
    (ban,) = bans
    restricted = [c for c in cards if c.rank in ban]
    free = [i for i, b in enumerate(banned) if not b]
    if len(restricted) > len(free):
        raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"{len(restricted)} cards fit only {len(free)} places")
    rest = [c for c in cards if c.rank not in ban]
    rng.shuffle(restricted)
    rng.shuffle(rest)
    chosen = set(rng.sample(free, len(restricted)))
    r_iter, o_iter = iter(restricted), iter(rest)
    return [next(r_iter) if i in chosen else next(o_iter) for i in range(len(banned))]


def _ban(k: Knowledge, place: _Place) -> frozenset[Rank]:
    where, i = place
    if where == "hand":
        return k.no_ranks[i]
    if where == "down":
        return k.face_down[i][2]
    return frozenset()


def _pool_places(k: Knowledge, r: int) -> list[_Place]:
    places: list[_Place] = [("hand", s) for s, slot in enumerate(k.slots) for _ in range(slot[r])]
    places += [("stock", i) for i, e in enumerate(k.stock) if not isinstance(e, Card) and e == r]
    places += [("down", j) for j, (e, _, _) in enumerate(k.face_down) if not isinstance(e, Card) and e == r]
    return places


def _pool_ban(k: Knowledge, r: int) -> frozenset[Rank]:
    """A never-seen card of pool ``r`` ends in one of the pool's places: it may not have a rank all of them ban."""
    bans = [_ban(k, p) for p in _pool_places(k, r)]
    return frozenset.intersection(*bans) if bans else frozenset()


def deal(k: Knowledge, rng: random.Random) -> Deal:
    """One deal consistent with ``k``, uniformly among them (see the module)."""
    places: list[_Place] = []
    banned: list[frozenset[Rank]] = []
    for s, slot in enumerate(k.slots):
        places += [("hand", s)] * slot[0]
        banned += [k.no_ranks[s]] * slot[0]
    for i, e in enumerate(k.stock):
        if not isinstance(e, Card) and e == 0:
            places.append(("stock", i))
            banned.append(frozenset())
    for j, (e, _, no) in enumerate(k.face_down):
        if not isinstance(e, Card) and e == 0:
            places.append(("down", j))
            banned.append(no)
    for r, u in sorted(k.pool_unseen.items()):
        places += [("pool", r)] * u
        banned += [_pool_ban(k, r)] * u
    got = _assign(sorted(k.unseen.elements()), banned, rng)
    hands: list[list[Card]] = [[] for _ in k.slots]
    stock: dict[int, Card] = {}
    down: dict[int, Card] = {}
    into_pool: dict[int, list[Card]] = {r: sorted(c.elements()) for r, c in k.pools.items()}
    for (where, i), card in zip(places, got, strict=True):
        if where == "hand":
            hands[i].append(card)
        elif where == "stock":
            stock[i] = card
        elif where == "down":
            down[i] = card
        else:
            into_pool[i].append(card)
    for r, cards in sorted(into_pool.items()):
        targets = _pool_places(k, r)
        bans = [_ban(k, place) for place in targets]
        for (where, i), card in zip(targets, _assign(cards, bans, rng), strict=True):
            if where == "hand":
                hands[i].append(card)
            elif where == "stock":
                stock[i] = card
            else:
                down[i] = card
    out_hands = []
    for s in range(len(k.slots)):
        if s == k.seat:
            out_hands.append(tuple(k.own_hand))
        else:
            out_hands.append(tuple(sorted([*k.known[s].elements(), *hands[s]])))
    out_stock = tuple(e if isinstance(e, Card) else stock[i] for i, e in enumerate(k.stock))
    out_down = tuple(e if isinstance(e, Card) else down[j] for j, (e, _, _) in enumerate(k.face_down))
    return Deal(tuple(out_hands), out_stock, out_down)


def sample_states(record: SeatRecord, n: int, seed: str, knowledge: Knowledge | None = None,
                  deadline: float | None = None) -> Iterator[tuple[SearchState, Deal]]:
    """``n`` full states consistent with what ``record``'s seat knows, each with its deal; the same record and
    seed give the same samples. Chance inside each state (a reshuffled stock) is seeded afresh, not by the
    match's secret seed. :raises OutOfTime: at a sample begun after ``deadline`` (``time.monotonic``)."""
    k = knowledge if knowledge is not None else know(record)
    rng = random.Random(f"rummy-search:{seed}")
    for i in range(n):
        if deadline is not None and time.monotonic() > deadline:
            raise OutOfTime("LIMIT_SEARCH_TIME", f"the call's time ran out after {i} of {n} samples")
        d = deal(k, rng)
        state = copy.deepcopy(record.public)
        state.hands = [list(h) for h in d.hands]
        state.stock = list(d.stock)
        state.face_down = [(c, who) for c, (_, who, _) in zip(d.face_down, k.face_down, strict=True)]
        state.seed = f"rummy-search:{seed}:{i}"
        yield SearchState(record.variant, record.seat, state, record.max_turns), d
