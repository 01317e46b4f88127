"""Who plays next: a table of connected bots, and why. Pure: no I/O, no clock; the service gives it the field.

The rule picks the game that most narrows the leaderboard where it is least sure (an information rule, with
Halite III's rating window for the extra seats of a bigger table):

1. **The least sure pair.** The bots that may play now (connected, not paused, under their caps) are ordered by
   Elo; a bot not yet rated stands at the field's mean with an error bar of ``UNRATED_ERR_FOR_WEIGHT``. Each pair
   of neighbours in that order is weighted by the chance that it is in the wrong order (their 95% error bars taken
   as independent normals: 1/2 for an unrated bot or equal ratings, near 0 once they are apart), and one pair is
   drawn by weight; one of the two, at random, is the seed. A new bot, or one whose error bars are wide, is in
   doubtful pairs and so plays more; a bot whose place is settled plays seldom, never never.
2. **Exploration.** With probability ``exploration`` the seed's opponent is any bot instead, so every bot keeps
   meeting every part of the field (the fit stays connected; a rating gone stale is caught).
3. **More seats.** For 3-6 seat variants, the other seats are drawn without repeats with weight
   ``exp(-d^2 / 2W^2)`` (``d``: Elo distance from the seed, ``W = max(MIN_WINDOW, seed's error bar)``), or with
   probability ``exploration`` from the whole field: full tables of bots near the seed.

4. **SPRTs of new versions** are scheduled beside these (:func:`pick_sprt_table`): a table of the new version and
   the previous one (and, for 3-6 seats, other bots drawn at random to fill it), its reason starting ``sprt:``.

Why this rule: a leaderboard is right when each bot is separated from its neighbours, and a game informs most where
the outcome is a coin toss (Fisher information p(1-p) ~ 1/4 for equal bots, ~0.08 at a 400 Elo gap), which a
uniform round-robin spends mostly on foregone pairings. It is as cheap as a sort (a round with 1,000 bots is a few
milliseconds), and every eligible bot keeps a positive chance. Measured by :mod:`tournaments.ladder.simulate`:
every adjacent pair separated at 95% in well under half the games a round-robin needs on a field of 8.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Candidate", "Table", "pick_table", "pick_sprt_table", "MIN_WINDOW", "UNRATED_ERR_FOR_WEIGHT"]

MIN_WINDOW = 100.0  # Elo: the narrowest rating window
UNRATED_ERR_FOR_WEIGHT = 800.0  # a bot with no rating weighs as if its error bar were this wide
MIN_ERR_FOR_WEIGHT = 10.0  # and a settled one as if at least this (it is still seeded now and then)


@dataclass(frozen=True)
class Candidate:
    """A bot that may play now: its id and label, its rating (Elo, 95% half-width; inf: unrated), its games."""

    id: int
    label: str
    elo: float
    err: float
    games: int


@dataclass(frozen=True)
class Table:
    """The bots of one deal, seed first, and why they were picked (stored with the deal)."""

    bots: tuple[int, ...]
    why: str
    sprt: int | None = None  # an SPRT deal: the candidate whose test it is played for


def _err(c: Candidate) -> float:
    return UNRATED_ERR_FOR_WEIGHT if not math.isfinite(c.err) else max(MIN_ERR_FOR_WEIGHT, min(c.err, UNRATED_ERR_FOR_WEIGHT))


def _elo(c: Candidate, mean: float) -> float:
    return c.elo if math.isfinite(c.err) else mean


def pick_table(field: Sequence[Candidate], size: int, rng: random.Random, exploration: float = 0.15) -> Table | None:
    """One table of ``size`` distinct bots from ``field``, or None when fewer than ``size`` may play."""
    if size < 2 or len(field) < size:
        return None
    mean = _field_mean(field)
    ranked = sorted(field, key=lambda c: (_elo(c, mean), c.id))
    pairs = list(zip(ranked, ranked[1:], strict=False))
    doubt = [_misorder(lo, hi, mean) + 1e-3 for lo, hi in pairs]
    k = rng.choices(range(len(pairs)), weights=doubt)[0]
    lo, hi = pairs[k]
    seed, first = (lo, hi) if rng.random() < 0.5 else (hi, lo)
    reasons = [f"seed {seed.label} ({_shown_err(seed)}, {seed.games} games) with its neighbour in the order"]
    chosen = [seed]
    rest = [c for c in field if c.id != seed.id]
    if rng.random() < exploration:
        first = rng.choice(rest)
        reasons.append(f"{first.label} (exploration: any bot)")
    else:
        reasons.append(f"{first.label} ({_shown_err(first)}; P(order wrong) {doubt[k]:.2f}, the least sure pair drawn "
                       f"from {len(pairs)})")
    chosen.append(first)
    rest = [c for c in rest if c.id != first.id]
    window = max(MIN_WINDOW, _err(seed))
    seed_elo = _elo(seed, mean)
    while len(chosen) < size:  # more seats: near the seed in rating, within a window as wide as its error bar
        if rng.random() < exploration:
            pick = rng.choice(rest)
            reasons.append(f"{pick.label} (exploration: any bot)")
        else:
            w = [math.exp(-((_elo(c, mean) - seed_elo) ** 2) / (2 * window * window)) + 1e-12 for c in rest]
            pick = rng.choices(rest, weights=w)[0]
            reasons.append(f"{pick.label} ({_elo(pick, mean) - seed_elo:+.0f} Elo from the seed, window {window:.0f})")
        chosen.append(pick)
        rest = [c for c in rest if c.id != pick.id]
    return Table(tuple(c.id for c in chosen), "; ".join(reasons))


def pick_sprt_table(field: Sequence[Candidate], tests: Sequence[tuple[int, int]], size: int, rng: random.Random
                    ) -> Table | None:
    """A table for one of the running SPRTs ``(candidate, baseline)`` whose two bots may both play now (drawn at
    random among those), the other seats of a bigger table filled at random from the rest of the field (their places
    do not count in the test); None when no test can be played now."""
    ids = {c.id: c for c in field}
    ready = [(a, b) for a, b in tests if a in ids and b in ids and a != b]
    if size < 2 or not ready or len(field) < size:
        return None
    cand, base = rng.choice(ready)
    rest = [c for c in field if c.id not in (cand, base)]
    fill = rng.sample(rest, size - 2)
    why = f"sprt: {ids[cand].label} (new version) against {ids[base].label} (the previous one)"
    if fill:
        why += f"; filled by {', '.join(c.label for c in fill)} (at random: their places do not count in the test)"
    return Table((cand, base, *(c.id for c in fill)), why, sprt=cand)


def _misorder(lo: Candidate, hi: Candidate, mean: float) -> float:
    """The chance that two neighbours in the rating order are in the wrong order (their errors taken as
    independent normals): 1/2 for equal ratings or an unrated bot, small once they are separated."""
    sd = math.hypot(_err(lo), _err(hi)) / 1.96
    z = (_elo(hi, mean) - _elo(lo, mean)) / sd
    return 0.5 * math.erfc(z / math.sqrt(2))


def _field_mean(field: Sequence[Candidate]) -> float:
    rated = [c.elo for c in field if math.isfinite(c.err)]
    return sum(rated) / len(rated) if rated else 0.0


def _shown_err(c: Candidate) -> str:
    return f"{c.elo:.0f} ± {c.err:.0f}" if math.isfinite(c.err) else "unrated"
