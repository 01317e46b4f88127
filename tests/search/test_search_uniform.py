"""Sampled deals are uniform over the consistent deals: chi-square against an exact enumeration, on small cases
built by hand (distinct cards, duplicate cards, a seat that may not hold aces, a shuffled restock's pool)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from scipy.stats import chisquare

from referee.rules.cards import Card, Rank, parse_cards
from referee.search import Knowledge, deal
from referee.search.knowledge import Entry
from referee.search.sampling import Deal

N = 6000


def knowledge(unseen: str, slots: list[Counter[int]], stock: list[Entry], no_ranks: list[frozenset[Rank]] | None = None,
              known: list[str] | None = None, pools: dict[int, str] | None = None,
              pool_unseen: dict[int, int] | None = None) -> Knowledge:
    seats = len(slots)
    own = tuple(parse_cards("KD KC"))
    known_c = [Counter(parse_cards(k)) for k in (known or [""] * seats)]
    sizes = tuple(2 if s == 0 else sum(slots[s].values()) + sum(known_c[s].values()) for s in range(seats))
    return Knowledge(0, sizes, own, known_c, slots, stock, [], {r: Counter(parse_cards(c)) for r, c in (pools or {}).items()},
                     dict(pool_unseen or {}), no_ranks or [frozenset()] * seats, Counter(parse_cards(unseen)))


def outcome(d: Deal) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    return tuple(tuple(sorted(h)) for h in d.hands[1:]), d.stock


def exact(k: Knowledge) -> Counter:
    """Every arrangement of the physical cards into the places, consistent ones counted once each."""
    places: list[tuple[str, int]] = [("hand", s) for s, sl in enumerate(k.slots) for _ in range(sl[0])]
    places += [("stock", i) for i, e in enumerate(k.stock) if not isinstance(e, Card) and e == 0]
    places += [("pool", r) for r, u in sorted(k.pool_unseen.items()) for _ in range(u)]
    cards = sorted(k.unseen.elements())
    out: Counter = Counter()

    def pool_arrangements(extra: dict[int, list[Card]]) -> Iterator[tuple[dict[int, list[Card]], dict[int, Card]]]:
        pools = sorted(k.pools)
        if not pools:
            yield {}, {}
            return
        (r,) = pools  # one pool is enough for these cases
        targets = [("hand", s) for s, sl in enumerate(k.slots) for _ in range(sl[r])]
        targets += [("stock", i) for i, e in enumerate(k.stock) if not isinstance(e, Card) and e == r]
        members = sorted(k.pools[r].elements()) + extra.get(r, [])
        for perm in itertools.permutations(members):
            hands: dict[int, list[Card]] = {}
            stock: dict[int, Card] = {}
            for (where, i), c in zip(targets, perm, strict=True):
                if where == "hand":
                    hands.setdefault(i, []).append(c)
                else:
                    stock[i] = c
            yield hands, stock

    for perm in itertools.permutations(cards):
        hands: dict[int, list[Card]] = {s: list(k.known[s].elements()) for s in range(len(k.slots))}
        stock: dict[int, Card] = {i: e for i, e in enumerate(k.stock) if isinstance(e, Card)}
        extra: dict[int, list[Card]] = {}
        ok = True
        for (where, i), c in zip(places, perm, strict=True):
            if where == "hand":
                ok &= c.rank not in k.no_ranks[i]
                hands[i].append(c)
            elif where == "stock":
                stock[i] = c
            else:
                extra.setdefault(i, []).append(c)
        if not ok:
            continue
        for ph, ps in pool_arrangements(extra):
            if any(c.rank in k.no_ranks[s] for s, cs in ph.items() for c in cs):
                continue
            hs = {s: hands[s] + ph.get(s, []) for s in hands}
            st = {**stock, **ps}
            out[(tuple(tuple(sorted(hs[s])) for s in range(1, len(k.slots))), tuple(st[i] for i in range(len(k.stock))))] += 1
    return out


CASES = {
    "distinct cards": knowledge("AS 2C 3C 4C 5C", [Counter(), Counter({0: 2})], [0, 0, 0]),
    "two packs": knowledge("7H 7H 8H 9S", [Counter(), Counter({0: 2})], [0, 0]),
    "no aces in a hand that began a turn (ICE-2)": knowledge(
        "AS AH 2C 3C 4C", [Counter(), Counter({0: 2})], [0, 0, 0], no_ranks=[frozenset(), frozenset({Rank.ACE})]),
    "three seats, known cards fixed": knowledge("2C 3C 4C 5C", [Counter(), Counter({0: 1}), Counter({0: 1})], [0, 0],
                                                known=["", "QH", "JS"]),
    "a shuffled restock's pool": knowledge("KS QS", [Counter(), Counter({0: 1, 1: 1})], [1, 1],
                                           pools={1: "5D 6D"}, pool_unseen={1: 1}),
}


@pytest.mark.parametrize("name", CASES)
def test_deals_are_uniform_over_the_consistent_deals(name: str) -> None:
    """Frequencies of the sampler's deals match the exact distribution (chi-square, p > 0.001)."""
    k = CASES[name]
    want = exact(k)
    total = sum(want.values())
    rng = random.Random(name)
    got = Counter(outcome(deal(k, rng)) for _ in range(N))
    assert set(got) <= set(want), "the sampler made a deal that is not consistent"
    keys = sorted(want, key=repr)
    observed = [got[key] for key in keys]
    expected = [N * want[key] / total for key in keys]
    assert min(expected) >= 5, "the case is too large for the test's sample size"
    assert chisquare(observed, expected).pvalue > 0.001, (name, observed, expected)
