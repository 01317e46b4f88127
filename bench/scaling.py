"""How cost grows: decisions/s as seats are added, and the time of the meld search and the least-points grouping
as the hand grows (Indian 13 cards with two wild ranks, Iceberg's melds and specials, Fortune's unlimited sets).

Hand timings are the median over random hands (the same seeded hands for every run) of one call each, in
microseconds; random hands drawn from the variant's own deck.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from bench.inprocess import best_of, variant_rate
from referee.rules.cards import Card, Rank, Suit, build_deck
from referee.rules.melds import MeldRules, find_melds
from referee.rules.variants import iceberg, indian, oklahoma


def seats_growth(seconds: float, repeat: int) -> dict[str, dict[int, float]]:
    """Decisions/s of random self-play (Indian never dropping, so hands run their length) at 2, 4 and 6 seats."""
    out: dict[str, dict[int, float]] = {}
    for name, drops in (("indian", False), ("fortune", True)):
        out[name] = {n: best_of(variant_rate(name, seats=n, drops=drops), seconds, repeat)[0] for n in (2, 4, 6)}
    return out


def _median_us(fn: Callable[[list[Card]], object], hands: Sequence[list[Card]]) -> float:
    times = []
    for h in hands:
        t0 = time.perf_counter()
        fn(h)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _hands(deck: list[Card], size: int, count: int, seed: str) -> list[list[Card]]:
    rng = random.Random(seed)
    return [rng.sample(deck, size) for _ in range(count)]


def hand_growth(count: int) -> dict[str, dict[int, float]]:
    """Median microseconds per call as the hand grows."""
    out: dict[str, dict[int, float]] = {}
    two_packs = build_deck(2, 2)
    wilds = indian.wild_ranks_for(Card(Rank.SEVEN, Suit.SPADES))  # sevens and printed jokers: two wild ranks
    out["indian_least_count_us"] = {
        n: _median_us(lambda h: indian.least_count(h, wilds), _hands(two_packs, n, count, f"lc{n}")) for n in (7, 10, 13)}
    out["indian_find_declaration_14_us"] = {
        14: _median_us(lambda h: indian.find_declaration(h, wilds), _hands(two_packs, 14, count, "fd"))}
    out["indian_find_melds_us"] = {
        n: _median_us(lambda h: find_melds(h, indian.MELD_RULES, wilds), _hands(two_packs, n, count, f"im{n}"))
        for n in (7, 10, 13, 14)}
    one_pack = build_deck(1, 0)
    out["iceberg_find_melds_us"] = {
        n: _median_us(lambda h: find_melds(h, iceberg.ICEBERG_MELDS), _hands(one_pack, n, count, f"ib{n}"))
        for n in (8, 12, 16, 20)}
    out["iceberg_find_specials_us"] = {
        n: _median_us(iceberg.find_specials, _hands(one_pack, n, count, f"is{n}")) for n in (8, 12, 16, 20)}
    unlimited: MeldRules = replace(oklahoma.FORTUNE, max_set=None).meld_rules  # FOR-3 max_set = unlimited
    deuces = oklahoma.FORTUNE.wilds
    out["fortune_unlimited_find_melds_us"] = {
        n: _median_us(lambda h: find_melds(h, unlimited, deuces), _hands(two_packs, n, count, f"fu{n}"))
        for n in (11, 15, 20, 25)}
    return out


def run(seconds: float, repeat: int, hands: int) -> dict[str, object]:
    return {"seats": seats_growth(seconds, repeat), "hands": hand_growth(hands)}
