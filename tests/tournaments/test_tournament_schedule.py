"""Schedules: counts, seat rotations, duplicate deal seeds, partnership rotation, stable keys."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict

import pytest

from tournaments.schedule import deal_seed, gauntlet, ladder, round_robin, seatings, spread_order

BOTS = ["alpha", "bravo", "charlie", "delta", "echo"]


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("deals", [1, 3])
def test_round_robin_plays_every_table_of_k_on_every_deal_in_every_rotation(seats: int, deals: int) -> None:
    """C(n, k) tables x k rotations x deals games, and each table is every combination of k bots once."""
    games = round_robin(BOTS, seats, deals, seed="s")
    assert len(games) == math.comb(len(BOTS), seats) * seats * deals
    tables = {g.table for g in games}
    assert tables == {tuple(sorted(c)) for c in itertools.combinations(BOTS, seats)}
    assert all(len(set(g.seats)) == seats for g in games)


def test_each_deal_puts_every_bot_of_a_table_in_every_seat_once() -> None:
    """The duplicate rotations of one deal of one table seat each bot once in each seat."""
    games = round_robin(BOTS, 3, 2, seed="s")
    by_deal: dict[tuple[tuple[str, ...], int], list[tuple[str, ...]]] = defaultdict(list)
    for g in games:
        by_deal[(g.table, g.deal)].append(g.seats)
    for (table, _), seatings_ in by_deal.items():
        assert len(seatings_) == 3
        for seat in range(3):
            assert sorted(s[seat] for s in seatings_) == sorted(table)


def test_a_deal_has_one_seed_for_all_its_rotations_and_tables() -> None:
    """Deal d uses the same shuffle seed at every table and in every rotation; different deals differ."""
    games = round_robin(BOTS, 2, 4, seed="spring")
    seeds: dict[int, set[str]] = defaultdict(set)
    for g in games:
        seeds[g.deal].add(g.seed)
    assert all(len(s) == 1 for s in seeds.values())
    assert len({next(iter(s)) for s in seeds.values()}) == 4
    assert seeds[2] == {deal_seed("spring", 2)}


def test_keys_are_unique_and_do_not_depend_on_the_bots_order() -> None:
    """A game's key (table, deal, rotation) is unique and the same whatever order the config lists bots in."""
    a = round_robin(BOTS, 3, 2)
    b = round_robin(list(reversed(BOTS)), 3, 2)
    assert len({g.key for g in a}) == len(a)
    assert {(g.key, g.seats) for g in a} == {(g.key, g.seats) for g in b}


def test_games_come_deal_major_so_a_partial_run_is_balanced() -> None:
    """All tables of deal 0 come before any of deal 1."""
    games = round_robin(BOTS, 2, 3)
    deals = [g.deal for g in games]
    assert deals == sorted(deals)


def test_partnership_tables_seat_one_bot_per_side_then_swap_sides() -> None:
    """Team play: bot A on seats 0,2 vs bot B on 1,3, then B on 0,2 vs A on 1,3, on the same deal."""
    assert seatings(("a", "b"), 4, team_play=True) == [("a", "b", "a", "b"), ("b", "a", "b", "a")]
    games = round_robin(["a", "b", "c"], 4, 2, team_play=True)
    assert len(games) == 3 * 2 * 2  # pairs x sides x deals
    for g in games:
        assert g.seats[0] == g.seats[2] and g.seats[1] == g.seats[3] and g.seats[0] != g.seats[1]
    per_deal = defaultdict(list)
    for g in games:
        per_deal[(g.table, g.deal)].append(g.seats)
    for (table, _), ss in per_deal.items():
        assert {s[0] for s in ss} == set(table)  # each bot sits on seats 0,2 once per deal
        assert len({g.seed for g in games if g.table == table and g.deal == _}) == 1


def test_gauntlet_candidates_play_only_the_others() -> None:
    """Candidates never meet each other; each meets every table of k-1 others."""
    games = gauntlet(["alpha", "bravo"], ["charlie", "delta", "echo"], 3, 2)
    assert len(games) == 2 * math.comb(3, 2) * 3 * 2
    for g in games:
        assert len({"alpha", "bravo"} & set(g.seats)) == 1
    two_seat = gauntlet(["alpha"], ["bravo", "charlie"], 2, 5)
    assert Counter(g.table for g in two_seat) == {("alpha", "bravo"): 10, ("alpha", "charlie"): 10}


def test_gauntlet_rejects_a_bot_on_both_sides() -> None:
    with pytest.raises(ValueError, match="both"):
        gauntlet(["alpha"], ["alpha", "bravo"], 2, 1)


def test_ladder_gives_each_new_bot_the_games_target_in_whole_duplicate_deals() -> None:
    """Each new bot plays ceil(target / rotations) deals x rotations games, against the pool only."""
    pool = ["p1", "p2", "p3", "p4", "p5"]  # best first
    games = ladder(["new1", "new2"], pool, 2, games=7)
    per_bot = Counter(b for g in games for b in set(g.seats) if b.startswith("new"))
    assert per_bot == {"new1": 8, "new2": 8}  # 7 rounded up to 4 deals of 2 rotations
    for g in games:
        assert sum(b.startswith("new") for b in g.seats) == 1
    # both new bots meet the same opponents on the same deals, so they compare directly
    opp = defaultdict(set)
    for g in games:
        nb = next(b for b in g.seats if b.startswith("new"))
        opp[nb].add((g.deal, next(b for b in g.seats if b in pool)))
    assert opp["new1"] == opp["new2"]


def test_ladder_spreads_a_short_ladder_over_the_rating_range() -> None:
    """With fewer deals than pool bots, the opponents span the pool (best, middle, worst), not its top."""
    pool = [f"p{i}" for i in range(8)]
    games = ladder(["new"], pool, 2, games=6)  # 3 deals
    met = {b for g in games for b in g.seats if b != "new"}
    assert met == {"p0", "p4", "p2"}
    assert spread_order(8) == [0, 4, 2, 6, 1, 5, 3, 7]
    assert sorted(spread_order(7)) == list(range(7))


def test_ladder_with_three_seat_tables() -> None:
    games = ladder(["new"], ["p1", "p2", "p3"], 3, games=9)
    assert len(games) == 9
    assert all("new" in g.seats and len(set(g.seats)) == 3 for g in games)
