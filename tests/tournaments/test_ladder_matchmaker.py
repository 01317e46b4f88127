"""The matchmaker: only the field it is given, full tables of distinct bots, each with a reason; and, on a field
of known strengths with results drawn from the Bradley-Terry model, every adjacent pair separated at 95% in at
most half the games a uniform round-robin needs."""

from __future__ import annotations

import random
import statistics

from tournaments.ladder.matchmaker import Candidate, pick_table
from tournaments.ladder.rating import Rater
from tournaments.ladder.simulate import games_to_separate

INF = float("inf")


def test_tables_are_full_distinct_and_say_why() -> None:
    field = [Candidate(i, f"b{i}@1", 100.0 * i, 50.0, 40) for i in range(6)]
    rng = random.Random(1)
    for size in (2, 3, 4, 5, 6):
        t = pick_table(field, size, rng)
        assert t is not None and len(t.bots) == len(set(t.bots)) == size
        assert t.why.startswith("seed ") and all(f"b{b}@1" in t.why for b in t.bots)
    assert pick_table(field[:2], 3, rng) is None  # never a short table


def test_new_and_loose_bots_play_more_and_opponents_are_near() -> None:
    field = [Candidate(i, f"b{i}", 100.0 * i, 40.0, 200) for i in range(8)] + [Candidate(99, "new", 0.0, INF, 0)]
    rng = random.Random(7)
    tables = [pick_table(field, 2, rng, exploration=0.1) for _ in range(2000)]
    counts = {c.id: sum(c.id in t.bots for t in tables if t) for c in field}
    assert counts[99] > 3 * statistics.median(counts[i] for i in range(8))
    settled = [pick_table(field[:8], 2, rng, exploration=0.1) for _ in range(1000)]
    near = sum(abs(t.bots[0] - t.bots[1]) == 1 for t in settled if t)
    assert near > 0.8 * len(settled)  # neighbours in rating, with some exploration


def test_warm_started_refit_equals_a_cold_fit() -> None:
    rng = random.Random(3)
    warm, cold = Rater(), Rater()
    for k in range(300):
        a, b = rng.sample(range(5), 2)
        ranking = ((0,), (1,)) if rng.random() < 0.5 + 0.1 * (a - b) else ((1,), (0,))
        warm.add((a, b), ranking)
        cold.add((a, b), ranking)
        if k % 20 == 19:
            warm.fit()
    w, c = warm.fit(), cold.fit()
    assert all(abs(w[i].elo - c[i].elo) < 1e-6 and abs(w[i].err - c[i].err) < 1e-6 for i in range(5))


def test_matchmaker_separates_adjacent_pairs_in_half_the_games_of_a_round_robin() -> None:
    field = [100.0 * i for i in range(8)]
    seeds = range(5)
    mm = statistics.median(games_to_separate(field, "matchmaker", s, max_games=6000) for s in seeds)
    rr = statistics.median(games_to_separate(field, "round-robin", s, max_games=6000) for s in seeds)
    assert rr < 6000  # the round-robin gets there too
    assert mm <= 0.5 * rr, (mm, rr)
