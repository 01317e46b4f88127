"""SPRT for A/B tests of two bot versions, as chess engine testers run them (fishtest, fastchess, OpenBench).

- The unit of the test is one duplicate deal: a group of ``k`` games on the same deal, one per seat rotation,
  each scored 1 / 0.5 / 0 for bot A. The group's mean score lies on the grid ``{0, 1/(2k), ..., 1}``, so the
  data are the counts of groups at each of the ``2k + 1`` levels. ``k = 2`` is the pentanomial model fastchess
  uses for paired openings; ``k = 1`` is the trinomial (win / draw / loss) model.
- Hypotheses are Elo differences on the logistic scale, ``s = 1 / (1 + 10^(-elo / 400))``. The log-likelihood
  ratio is the generalised one of fishtest and fastchess (after Michel Van den Bergh): for each hypothesis the
  maximum likelihood distribution over the levels whose mean is ``s0`` (resp. ``s1``), then
  ``LLR = sum n_i ln(p1_i / p0_i)``. Scoring a group by its distribution over levels, rather than game by game,
  credits the variance that duplicate deals remove.
- Wald's bounds: stop for H0 at ``ln(beta / (1 - alpha))``, for H1 at ``ln((1 - beta) / alpha)``.
- ``simulate`` plays a synthetic test with an explicit luck model, for tests and for the docs' tables.

Everything here is pure: no I/O, chance only through the ``numpy`` generator passed in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

import numpy as np
from scipy.optimize import brentq

from tournaments.ratings import ELO_SCALE, expected_score

__all__ = [
    "SprtStatus",
    "SprtParameters",
    "EloEstimate",
    "SprtState",
    "SimulationResult",
    "EMPTY_LEVEL_WEIGHT",
    "llr",
    "elo_estimate",
    "unit_level",
    "simulate",
]

SprtStatus = Literal["continue", "H0", "H1", "cap"]

EMPTY_LEVEL_WEIGHT = 1e-3
"""An empty level counts as this fraction of a unit in the LLR (fishtest and fastchess use the same value).
Without it a level never seen has probability 0, and no distribution on the seen levels may reach the
hypothesis' mean (all wins so far: no mean of 0.5 exists). Its effect on the LLR is of order 1e-3 per level."""

_GRID_TOLERANCE = 1e-9
_Z95 = 1.959963984540054  # the two-sided 95% normal quantile


@dataclass(frozen=True)
class SprtParameters:
    """The two hypotheses (Elo of A over B) and the error rates: ``alpha`` accepts H1 when H0 holds, ``beta``
    accepts H0 when H1 holds.

    :raises ValueError: unless ``elo0 < elo1`` and both error rates are in (0, 1) with a sum below 1.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not (math.isfinite(self.elo0) and math.isfinite(self.elo1)):
            raise ValueError(f"SPRT elo0 and elo1 must be finite, got elo0={self.elo0}, elo1={self.elo1}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"SPRT elo0 must be below elo1, got elo0={self.elo0}, elo1={self.elo1}")
        for name, rate in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < rate < 1.0:
                raise ValueError(f"SPRT {name} must be strictly between 0 and 1, got {name}={rate}")
        if self.alpha + self.beta >= 1.0:
            raise ValueError(f"SPRT alpha + beta must be below 1, got alpha={self.alpha}, beta={self.beta}")

    @property
    def lower_bound(self) -> float:
        """Accept H0 (elo0) once the LLR falls to this."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        """Accept H1 (elo1) once the LLR rises to this."""
        return math.log((1.0 - self.beta) / self.alpha)

    def decide(self, value: float) -> Literal["continue", "H0", "H1"]:
        """The verdict of one LLR value against Wald's bounds."""
        if value <= self.lower_bound:
            return "H0"
        if value >= self.upper_bound:
            return "H1"
        return "continue"


@dataclass(frozen=True)
class EloEstimate:
    """An Elo difference of A over B with its 95% interval."""

    elo: float
    lower: float
    upper: float


def _check_counts(counts: Sequence[float]) -> None:
    if len(counts) < 2:
        raise ValueError(f"counts need at least two score levels, got {len(counts)}")
    for level, count in enumerate(counts):
        if not (math.isfinite(count) and count >= 0):
            raise ValueError(f"counts must be finite and non-negative, got {count} at level {level}")


def _solve_theta(weights: Sequence[float], offsets: Sequence[float]) -> float:
    """The root of ``f(t) = sum w_i d_i / (1 + t d_i)`` on the interval where every ``1 + t d_i > 0``.

    ``d_i = a_i - s`` are the levels' offsets from the target mean. ``f`` falls strictly from +inf to -inf
    there, so a Newton step kept inside a shrinking bracket converges from ``t = 0`` (where ``f`` is the
    distance of the empirical mean from the target).
    """
    low = -1.0 / max(offsets)
    high = -1.0 / min(offsets)
    theta = 0.0
    for _ in range(200):
        f = 0.0
        slope = 0.0
        for w, d in zip(weights, offsets, strict=True):
            q = d / (1.0 + theta * d)
            f += w * q
            slope += w * q * q
        if f > 0.0:
            low = theta
        elif f < 0.0:
            high = theta
        else:
            return theta
        step = f / slope
        candidate = theta + step
        if not low < candidate < high:
            candidate = 0.5 * (low + high)
        if abs(candidate - theta) <= 1e-15 * max(1.0, abs(theta)):
            return candidate
        theta = candidate
    return theta


def _log_mle_shift(weights: Sequence[float], levels: Sequence[float], s: float) -> list[float]:
    """``ln(phat_i / p_i)`` for the maximum likelihood distribution ``p`` with mean ``s``.

    Van den Bergh's Lagrange condition gives ``p_i = phat_i / (1 + theta (a_i - s))`` with ``theta`` the
    root of ``sum phat_i (a_i - s) / (1 + theta (a_i - s)) = 0``; the log form keeps tiny cells exact.
    """
    offsets = [a - s for a in levels]
    theta = _solve_theta(weights, offsets)
    return [math.log1p(theta * d) for d in offsets]


def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalised log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for the number of units
    seen at each score level, ``counts[i]`` units scoring ``i / (len(counts) - 1)``.

    Empty levels weigh ``EMPTY_LEVEL_WEIGHT`` of a unit; with no units at all the ratio is 0.

    :raises ValueError: with fewer than two levels, a negative or non-finite count, or a non-finite Elo.
    """
    _check_counts(counts)
    if not (math.isfinite(elo0) and math.isfinite(elo1)):
        raise ValueError(f"elo0 and elo1 must be finite, got elo0={elo0}, elo1={elo1}")
    if sum(counts) == 0:
        return 0.0
    regular = [float(c) if c > 0 else EMPTY_LEVEL_WEIGHT for c in counts]
    total = math.fsum(regular)
    weights = [c / total for c in regular]
    top = len(counts) - 1
    levels = [i / top for i in range(len(counts))]
    shift0 = _log_mle_shift(weights, levels, expected_score(elo0))
    shift1 = _log_mle_shift(weights, levels, expected_score(elo1))
    # ln(p1_i / p0_i) = ln(phat_i / p0_i) - ln(phat_i / p1_i)
    return math.fsum(c * (h0 - h1) for c, h0, h1 in zip(regular, shift0, shift1, strict=True))


def _elo_of_score(score: float) -> float:
    return ELO_SCALE * math.log(score / (1.0 - score))


def elo_estimate(counts: Sequence[float]) -> EloEstimate:
    """The Elo difference for the mean score of the units, with a 95% interval from the variance of a unit's
    score (so a paired unit, whose games' luck cancels, earns its narrower interval).

    A score of exactly 0 or 1 is held half a grid step inside (half the least a unit could change the mean),
    so the estimate stays finite; the bound the data cannot set on that side is infinite. No units: 0 and an
    infinite interval.

    :raises ValueError: with fewer than two levels or a negative or non-finite count.
    """
    _check_counts(counts)
    n = math.fsum(counts)
    if n == 0:
        return EloEstimate(0.0, -math.inf, math.inf)
    top = len(counts) - 1
    levels = [i / top for i in range(len(counts))]
    mean = math.fsum(c * a for c, a in zip(counts, levels, strict=True)) / n
    variance = math.fsum(c * (a - mean) ** 2 for c, a in zip(counts, levels, strict=True)) / n
    half_width = _Z95 * math.sqrt(variance / n)
    edge = 0.5 / (n * top)

    def elo_at(score: float) -> float:
        return _elo_of_score(min(max(score, edge), 1.0 - edge))

    lower = -math.inf if mean <= 0.0 else elo_at(mean - half_width)
    upper = math.inf if mean >= 1.0 else elo_at(mean + half_width)
    return EloEstimate(elo_at(mean), lower, upper)


def unit_level(scores: Sequence[float]) -> int:
    """The level of one unit from its games' scores for bot A: twice their sum, so ``k`` games give a level
    in ``0 .. 2k`` and the unit's mean score is ``level / (2k)``.

    :raises ValueError: for no games, or a game score other than 0, 0.5 or 1.
    """
    if not scores:
        raise ValueError("a unit needs at least one game score")
    level = 0
    for score in scores:
        doubled = round(2.0 * score) if math.isfinite(score) else -1
        if not (0 <= doubled <= 2 and abs(2.0 * score - doubled) <= _GRID_TOLERANCE):
            raise ValueError(f"a game score must be 0, 0.5 or 1 for bot A, got {score} in {list(scores)}")
        level += doubled
    return level


@dataclass(frozen=True)
class SprtState:
    """A running SPRT: the counts of units per level, ``2 * rotations + 1`` of them. Adding a unit returns a
    new state, so a state rebuilt from stored unit scores is the state the runner had.

    The status reads the current counts: "H0" or "H1" once a bound is crossed, "cap" once ``cap`` units are in
    without a crossing, else "continue". The runner stops at the first status other than "continue".

    :raises ValueError: for ``rotations < 1``, ``cap < 1`` or counts of the wrong length or sign.
    """

    params: SprtParameters
    rotations: int = 2
    cap: int | None = None
    counts: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.rotations < 1:
            raise ValueError(f"an SPRT unit needs at least one rotation, got rotations={self.rotations}")
        if self.cap is not None and self.cap < 1:
            raise ValueError(f"the SPRT cap must be at least one unit, got cap={self.cap}")
        if not self.counts:
            object.__setattr__(self, "counts", (0,) * self.levels)  # frozen: the one place counts are filled
        if len(self.counts) != self.levels:
            raise ValueError(
                f"{self.rotations} rotations need {self.levels} counts, got {len(self.counts)}: {self.counts}"
            )
        _check_counts(self.counts)

    @classmethod
    def from_unit_scores(
        cls, params: SprtParameters, unit_scores: Iterable[float], rotations: int = 2, cap: int | None = None
    ) -> SprtState:
        """The state after these units' mean scores, in any order (as stored by the runner)."""
        counts = [0] * (2 * rotations + 1)
        state = cls(params, rotations, cap)
        for score in unit_scores:
            counts[state.level_of(score)] += 1
        return cls(params, rotations, cap, tuple(counts))

    @property
    def levels(self) -> int:
        """How many score levels a unit has: ``2 * rotations + 1``."""
        return 2 * self.rotations + 1

    @property
    def units(self) -> int:
        return sum(self.counts)

    @property
    def games(self) -> int:
        return self.units * self.rotations

    def level_of(self, unit_score: float) -> int:
        """The level of a unit's mean score.

        :raises ValueError: if the score is not on the grid ``{0, 1/(2k), ..., 1}``.
        """
        top = self.levels - 1
        level = round(unit_score * top) if math.isfinite(unit_score) else -1
        if not (0 <= level <= top and abs(unit_score * top - level) <= _GRID_TOLERANCE):
            raise ValueError(
                f"a unit of {self.rotations} rotations scores a multiple of 1/{top} in [0, 1], got {unit_score}"
            )
        return level

    def add_level(self, level: int) -> SprtState:
        """The state with one more unit at ``level``."""
        if not 0 <= level < self.levels:
            raise ValueError(f"a unit's level is in 0..{self.levels - 1}, got {level}")
        counts = list(self.counts)
        counts[level] += 1
        return SprtState(self.params, self.rotations, self.cap, tuple(counts))

    def add(self, unit_score: float) -> SprtState:
        """The state with one more unit of this mean score."""
        return self.add_level(self.level_of(unit_score))

    def add_games(self, scores: Sequence[float]) -> SprtState:
        """The state with one more unit given by its games' scores, one per rotation."""
        if len(scores) != self.rotations:
            raise ValueError(f"a unit has one game per rotation ({self.rotations}), got {len(scores)} scores")
        return self.add_level(unit_level(scores))

    @cached_property
    def llr(self) -> float:
        return llr(self.counts, self.params.elo0, self.params.elo1)

    @property
    def status(self) -> SprtStatus:
        verdict = self.params.decide(self.llr)
        if verdict == "continue" and self.cap is not None and self.units >= self.cap:
            return "cap"
        return verdict

    @property
    def elo(self) -> EloEstimate:
        return elo_estimate(self.counts)


class SimulationResult(NamedTuple):
    """Where a simulated SPRT stopped and after how many units."""

    status: SprtStatus
    units: int


_HERMITE_NODES, _HERMITE_WEIGHTS = np.polynomial.hermite_e.hermegauss(64)


def _mean_score(advantage: float, luck: float) -> float:
    """The expected score over deals of a bot ``advantage`` Elo better on an even deal, luck ~ N(0, luck^2)."""
    x = advantage + luck * _HERMITE_NODES
    scores = 1.0 / (1.0 + 10.0 ** (-x / 400.0))
    return float(np.dot(_HERMITE_WEIGHTS, scores) / math.sqrt(2.0 * math.pi))


def _even_deal_advantage(elo: float, luck: float) -> float:
    """The even-deal advantage whose mean score over deals is ``expected_score(elo)``: luck flattens the
    logistic, so the advantage on an even deal must be larger than the Elo measured over many deals."""
    if luck == 0.0:
        return elo
    target = expected_score(elo)
    span = 400.0 + 10.0 * luck + abs(elo)
    while not _mean_score(-span, luck) < target < _mean_score(span, luck):
        span *= 2.0
    return float(brentq(lambda x: _mean_score(x, luck) - target, -span, span, xtol=1e-9))


def _play_units(
    advantage: float, draw_ratio: float, luck: float, rotations: int, paired: bool, rng: np.random.Generator, n: int
) -> np.ndarray:
    """Levels of ``n`` units of ``rotations`` games each (see ``simulate`` for the model)."""
    if paired:
        # one deal per unit: zero-sum seat luck, each seat's share ~ N(0, luck^2); A takes every seat once
        raw = rng.normal(0.0, luck * math.sqrt(rotations / (rotations - 1)), size=(n, rotations))
        seat_luck = raw - raw.mean(axis=1, keepdims=True)
    else:
        seat_luck = rng.normal(0.0, luck, size=(n, rotations))  # a fresh deal for every game
    expected = 1.0 / (1.0 + 10.0 ** (-(advantage + seat_luck) / 400.0))
    p_draw = draw_ratio * 2.0 * np.minimum(expected, 1.0 - expected)
    p_win = expected - 0.5 * p_draw
    u = rng.random(size=(n, rotations))
    doubled = np.where(u < p_win, 2, np.where(u < p_win + p_draw, 1, 0))
    levels: np.ndarray = doubled.sum(axis=1)
    return levels


def simulate(
    params: SprtParameters,
    *,
    elo: float,
    draw_ratio: float,
    rotations: int = 2,
    paired: bool = True,
    rng: np.random.Generator,
    cap: int = 20_000,
    luck: float = 300.0,
) -> SimulationResult:
    """Run one synthetic SPRT of bot A, ``elo`` better than B, until it stops or reaches ``cap`` units.

    The model. Every seat of a deal has a luck ``L`` in Elo (how good its hand is), ``L ~ N(0, luck^2)``. In a
    game A's edge is ``x = a + L_A`` for A's seat, where the even-deal advantage ``a`` is set so the expected
    score over deals is exactly ``expected_score(elo)``; the game is a draw with probability
    ``draw_ratio * 2 min(e, 1 - e)`` (``e = expected_score(x)``: ``draw_ratio`` on a balanced game, none on a
    foregone one), else a win for A with the rest of ``e``. A multi-seat game is A against the field.

    - ``paired``: a unit is one deal played ``rotations`` times with A on each seat in turn. The seats' luck
      sums to zero, so over the unit A's luck cancels, as in the runner's duplicate deals.
    - not ``paired``: every game is dealt afresh, so the luck of a unit's games is independent.

    Each game's outcome has the same distribution either way; only the correlation within a unit differs.

    :raises ValueError: for ``rotations < 2``, a draw ratio outside [0, 1] or negative luck.
    """
    if rotations < 2:
        raise ValueError(f"a simulated unit needs at least two rotations to pair, got rotations={rotations}")
    if not 0.0 <= draw_ratio <= 1.0:
        raise ValueError(f"draw_ratio must be in [0, 1], got {draw_ratio}")
    if not luck >= 0.0:
        raise ValueError(f"luck must be a non-negative Elo spread, got {luck}")
    advantage = _even_deal_advantage(elo, luck)
    state = SprtState(params, rotations, cap)
    while True:
        batch = _play_units(advantage, draw_ratio, luck, rotations, paired, rng, min(256, cap - state.units))
        for level in batch:
            state = state.add_level(int(level))
            if state.status != "continue":
                return SimulationResult(state.status, state.units)
