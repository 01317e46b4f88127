"""The matchmaker against a uniform round-robin on a field of known strengths, with no referee: each game's result
is drawn from the Bradley-Terry (Plackett-Luce for more seats) model of the true Elo ratings, and the ladder's own
rater (:mod:`.rating`) refits after every deal. A run ends when every pair of bots adjacent in true strength is
separated at 95% (the fit's likelihood of superiority of the stronger over the weaker is at least 0.95) and reports
how many games that took.

    python -m tournaments.ladder.simulate            # the figure in the README: 8 bots 100 Elo apart
"""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Sequence

from tournaments.ladder.matchmaker import Candidate, pick_table
from tournaments.ladder.rating import Rater

__all__ = ["play_result", "games_to_separate", "compare"]


def play_result(elos: Sequence[float], rng: random.Random) -> tuple[tuple[int, ...], ...]:
    """A ranking of the seats (one seat per group), drawn from the Plackett-Luce model of ``elos``."""
    left = list(range(len(elos)))
    order = []
    while left:
        w = [10 ** (elos[i] / 400) for i in left]
        i = rng.choices(left, weights=w)[0]
        order.append(i)
        left.remove(i)
    return tuple((i,) for i in order)


def _separated(rater: Rater, strengths: Sequence[float], level: float) -> bool:
    by_strength = sorted(range(len(strengths)), key=lambda i: strengths[i])
    return all(rater.los(hi, lo) >= level for lo, hi in itertools.pairwise(by_strength))


def games_to_separate(strengths: Sequence[float], policy: str, seed: int, size: int = 2, max_games: int = 20000,
                      level: float = 0.95, exploration: float = 0.15) -> int:
    """Games played until every adjacent pair is separated at ``level`` (``max_games`` if never)."""
    rng = random.Random(seed)
    rater = Rater()
    n = len(strengths)
    tables = list(itertools.combinations(range(n), size))
    cycle: list[tuple[int, ...]] = []
    played = 0
    ratings = rater.fit()
    while played < max_games:
        if policy == "round-robin":
            if not cycle:
                cycle = tables[:]
                rng.shuffle(cycle)
            table = cycle.pop()
        else:
            field = [Candidate(i, f"b{i}", ratings[i].elo if i in ratings else 0.0,
                               ratings[i].err if i in ratings else float("inf"), ratings[i].games if i in ratings else 0)
                     for i in range(n)]
            picked = pick_table(field, size, rng, exploration)
            assert picked is not None
            table = picked.bots
        for r in range(size):  # a duplicate deal: one game per seat rotation
            seats = tuple(table[(s + r) % size] for s in range(size))
            rater.add(seats, play_result([strengths[b] for b in seats], rng))
            played += 1
        ratings = rater.fit()
        if _separated(rater, strengths, level):
            return played
    return max_games


def compare(strengths: Sequence[float], seeds: Sequence[int], size: int = 2, max_games: int = 20000
            ) -> tuple[float, float]:
    """Median games to separate every adjacent pair: (matchmaker, round-robin)."""
    mm = [games_to_separate(strengths, "matchmaker", s, size, max_games) for s in seeds]
    rr = [games_to_separate(strengths, "round-robin", s, size, max_games) for s in seeds]
    return statistics.median(mm), statistics.median(rr)


if __name__ == "__main__":
    for n, gap, size in ((8, 100.0, 2), (6, 100.0, 2), (6, 150.0, 3)):
        field = [gap * i for i in range(n)]
        mm, rr = compare(field, range(12), size)
        print(f"{n} bots {gap:g} Elo apart, {size}-seat tables: matchmaker {mm:.0f} games, round-robin {rr:.0f} "
              f"(ratio {mm / rr:.2f}; medians over 12 seeds)")
