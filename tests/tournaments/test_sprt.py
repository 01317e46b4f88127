"""SPRT for A/B tests: bounds, the LLR against a generic optimiser and published values, symmetry, simulated
stop points, the gain of duplicate deals, resume, and properties of the LLR."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from tournaments.ratings import expected_score
from tournaments.sprt import SprtParameters, SprtState, elo_estimate, llr, simulate, unit_level


def _elo_of(score: float) -> float:
    return -400.0 * math.log10(1.0 / score - 1.0)


def _levels(n: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, n)


def _max_log_likelihood(counts: Sequence[int], mean: float) -> float:
    """max sum n_i ln p_i over distributions on the levels with this mean, by a generic constrained optimiser."""
    n = np.asarray(counts, dtype=float)
    a = _levels(len(counts))
    phat = n / n.sum()
    result = minimize(
        lambda p: -float(np.dot(phat, np.log(p))),
        x0=np.full(len(counts), 1.0 / len(counts)),
        jac=lambda p: -phat / p,
        method="SLSQP",
        bounds=[(1e-12, 1.0)] * len(counts),
        constraints=[
            {"type": "eq", "fun": lambda p: float(p.sum() - 1.0)},
            {"type": "eq", "fun": lambda p: float(np.dot(a, p) - mean)},
        ],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    assert result.success, result.message
    return float(-result.fun * n.sum())


def test_bounds_for_five_percent_errors_are_plus_minus_ln_19() -> None:
    """alpha = beta = 0.05 puts Wald's bounds at -ln 19 and +ln 19 (about 2.944)."""
    params = SprtParameters(0.0, 5.0)
    assert params.lower_bound == pytest.approx(-math.log(19.0))
    assert params.upper_bound == pytest.approx(math.log(19.0))
    assert params.upper_bound == pytest.approx(2.944, abs=1e-3)


@pytest.mark.parametrize(
    ("elo0", "elo1", "alpha", "beta", "message"),
    [(5, 5, 0.05, 0.05, "elo0 must be below elo1"), (0, 5, 0.0, 0.05, "alpha"), (0, 5, 0.05, 1.0, "beta")],
)
def test_parameters_reject_empty_hypotheses_and_impossible_error_rates(
    elo0: float, elo1: float, alpha: float, beta: float, message: str
) -> None:
    """elo0 must be below elo1 and both error rates strictly between 0 and 1, with a message naming the fault."""
    with pytest.raises(ValueError, match=message):
        SprtParameters(elo0, elo1, alpha, beta)


@pytest.mark.parametrize("seed", range(6))
def test_llr_at_the_empirical_mean_is_minus_n_times_the_divergence_to_h1(seed: int) -> None:
    """When the data's mean is exactly s0 the H0 fit is the data itself, so LLR = -n KL(phat || p1), with p1 found
    by a generic constrained optimiser."""
    rng = np.random.default_rng(seed)
    levels = 3 if seed % 2 else 5
    counts = [int(c) for c in rng.integers(1, 200, size=levels)]
    n = sum(counts)
    phat = np.asarray(counts) / n
    mean = float(np.dot(_levels(levels), phat))
    elo0 = _elo_of(mean)
    elo1 = elo0 + 15.0
    best_h1 = _max_log_likelihood(counts, expected_score(elo1))
    kl = float(np.dot(phat, np.log(phat))) - best_h1 / n
    value = llr(counts, elo0, elo1)
    assert value < 0
    assert value == pytest.approx(-n * kl, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("seed", range(6))
def test_llr_matches_a_generic_constrained_optimiser(seed: int) -> None:
    """The fast solver's LLR equals the difference of the two constrained maxima found by SLSQP."""
    rng = np.random.default_rng(100 + seed)
    levels = (3, 5, 7, 9)[seed % 4]
    counts = [int(c) for c in rng.integers(1, 500, size=levels)]
    elo0, elo1 = sorted(float(e) for e in rng.uniform(-60.0, 60.0, size=2))
    slow = _max_log_likelihood(counts, expected_score(elo1)) - _max_log_likelihood(counts, expected_score(elo0))
    assert llr(counts, elo0, elo1) == pytest.approx(slow, rel=1e-6, abs=1e-6)


# fastchess app/tests/sprt_test.cpp ("logistic trinomial 1, 2", "logistic pentanomial 1, 2"), alpha = beta = 0.05;
# fastchess gives trinomials as (W, L, D) and pentanomials as (LL, LD, WL, DD, WD, WW), WL and DD both scoring 1/2
@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "published"),
    [
        ([21184, 40708, 21404], 0.5, 2.5, -1.57),
        ([57030, 106593, 57433], 0.0, 2.0, -2.59),
        ([223, 9863, 20279 + 1000, 10037, 246], 0.5, 2.5, -3.07),
        ([871, 26175, 55003 + 980, 26678, 821], 0.0, 2.0, -4.98),
    ],
)
def test_llr_reproduces_fastchess_published_values(
    counts: list[int], elo0: float, elo1: float, published: float
) -> None:
    """The LLR of fastchess' own logistic test cases, to the two decimals they publish."""
    assert llr(counts, elo0, elo1) == pytest.approx(published, abs=0.005)


@pytest.mark.parametrize(
    "counts", [[380, 16800, 36200, 17100, 400], [12000, 33000, 11800], [150, 9800, 20000, 10100, 210]]
)
def test_llr_agrees_with_the_normal_approximation_on_large_samples(counts: list[int]) -> None:
    """On large samples with close hypotheses the LLR is the GSPRT normal approximation
    n (s1 - s0) (2 mean - s0 - s1) / (2 var), var the per-unit variance, within 1%."""
    n = sum(counts)
    a = _levels(len(counts))
    p = np.asarray(counts) / n
    mean = float(np.dot(a, p))
    var = float(np.dot(p, (a - mean) ** 2))
    s0, s1 = expected_score(0.0), expected_score(3.0)
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert abs(approx) > 1.0  # a meaningful value, not two zeros
    assert llr(counts, 0.0, 3.0) == pytest.approx(approx, rel=0.01)


@pytest.mark.parametrize("counts", [[3, 20, 40, 22, 5], [0, 4, 9, 0, 1], [7, 0, 2], [1, 2, 3, 4, 5, 6, 7]])
def test_swapping_the_bots_and_negating_the_elos_keeps_the_llr(counts: list[int]) -> None:
    """Reversed counts (B's view) against negated hypotheses give the same LLR."""
    assert llr(counts[::-1], -20.0, -5.0) == pytest.approx(llr(counts, 20.0, 5.0), rel=1e-9, abs=1e-12)
    assert llr(counts[::-1], -5.0, -20.0) == pytest.approx(llr(counts, 5.0, 20.0), rel=1e-9, abs=1e-12)


def test_no_data_gives_zero_llr_and_an_open_interval() -> None:
    """With no units the LLR is 0 and the Elo interval is unbounded."""
    assert llr([0, 0, 0, 0, 0], 0.0, 20.0) == 0.0
    assert elo_estimate([0, 0, 0]) == elo_estimate([0, 0, 0, 0, 0])
    assert elo_estimate([0, 0, 0]).lower == -math.inf


def test_paired_units_earn_a_narrower_interval_than_their_games_alone() -> None:
    """The same games give a narrower Elo interval as pentanomial pairs whose luck cancels than as trinomial games."""
    pairs = [2, 10, 76, 10, 2]  # mostly a win and a loss: the deal's luck decided each game
    games = [2 * pairs[0] + pairs[1], pairs[1] + pairs[3] + 2 * 6, 2 * pairs[4] + pairs[3]]  # 70 WL, 6 DD
    games[0] += 70
    games[2] += 70
    pair_fit, game_fit = elo_estimate(pairs), elo_estimate(games)
    assert sum(games) == 2 * sum(pairs)
    assert pair_fit.elo == pytest.approx(game_fit.elo)
    assert pair_fit.upper - pair_fit.lower < 0.5 * (game_fit.upper - game_fit.lower)


def test_a_perfect_record_keeps_a_finite_estimate() -> None:
    """All units won: a finite estimate held half a grid step inside, no upper bound."""
    fit = elo_estimate([0, 0, 0, 0, 8])
    assert math.isfinite(fit.elo) and fit.elo > 400
    assert fit.elo == pytest.approx(_elo_of(1 - 0.5 / (8 * 4)))
    assert fit.upper == math.inf


def test_unit_level_counts_half_points_and_rejects_off_grid_scores() -> None:
    """A unit's level is twice its games' total; a score that is not 0, 0.5 or 1 is refused."""
    assert unit_level([1.0, 0.5]) == 3
    assert unit_level([0.0, 0.0, 0.5]) == 1
    assert unit_level([1.0, 1.0, 1.0, 1.0]) == 8
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        unit_level([1.0, 0.3])
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        unit_level([1.5])
    with pytest.raises(ValueError, match="multiple of 1/4"):
        SprtState(SprtParameters(0, 20)).add(0.3)


def test_a_stronger_bot_passes_and_an_equal_one_fails() -> None:
    """Over ten seeds, +50 Elo against [0, 20] accepts H1 and an equal bot accepts H0 (or hits the cap), 9+ times."""
    params = SprtParameters(0.0, 20.0)
    stronger = [simulate(params, elo=50.0, draw_ratio=0.1, rng=np.random.default_rng(s), cap=3000) for s in range(10)]
    equal = [simulate(params, elo=0.0, draw_ratio=0.1, rng=np.random.default_rng(s), cap=3000) for s in range(10)]
    assert sum(r.status == "H1" for r in stronger) >= 9
    assert sum(r.status in ("H0", "cap") for r in equal) >= 9


def test_duplicate_deals_decide_with_fewer_games_than_fresh_deals() -> None:
    """On the same +50 Elo, 50 runs on duplicate deals stop after clearly fewer games than 50 on fresh deals."""
    params = SprtParameters(0.0, 20.0)

    def mean_games(paired: bool) -> float:
        runs = [
            simulate(params, elo=50.0, draw_ratio=0.1, paired=paired, rng=np.random.default_rng(s), cap=5000)
            for s in range(50)
        ]
        assert all(r.status != "cap" for r in runs)
        return float(np.mean([2 * r.units for r in runs]))

    paired, independent = mean_games(True), mean_games(False)
    assert paired < 0.8 * independent  # about 280 against 450 games


def test_a_state_rebuilt_from_stored_unit_scores_is_the_same_state() -> None:
    """Resuming from the stored unit scores gives the same counts, LLR and status as the running state."""
    params = SprtParameters(0.0, 20.0)
    rng = np.random.default_rng(7)
    scores = [float(s) for s in rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], p=[0.05, 0.2, 0.45, 0.22, 0.08], size=300)]
    running = SprtState(params, cap=1000)
    for score in scores:
        running = running.add(score)
    rebuilt = SprtState.from_unit_scores(params, scores, cap=1000)
    assert rebuilt.counts == running.counts
    assert rebuilt.llr == running.llr
    assert rebuilt.status == running.status
    assert rebuilt == running


def test_status_reports_the_cap_only_without_a_crossing() -> None:
    """A state at its cap reads "cap" while the LLR is between the bounds, and the verdict once it has crossed."""
    params = SprtParameters(0.0, 20.0)
    assert SprtState(params, cap=3, counts=(0, 1, 1, 1, 0)).status == "cap"
    assert SprtState(params, cap=3, counts=(0, 0, 1, 1, 0)).status == "continue"
    assert SprtState(params, cap=100, counts=(0, 0, 0, 0, 100)).status == "H1"
    assert SprtState(params, cap=100, counts=(0, 0, 100, 0, 0)).status == "H0"
    assert SprtState(params, rotations=3).add_games([1.0, 0.5, 0.0]).counts == (0, 0, 0, 1, 0, 0, 0)


_counts = st.lists(st.integers(min_value=0, max_value=10**6), min_size=2, max_size=9)
_hypotheses = st.tuples(st.floats(-400, 400), st.floats(0.5, 200)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=150, deadline=None)
@given(counts=_counts, hypotheses=_hypotheses)
def test_llr_is_finite_and_a_top_unit_never_lowers_it(counts: list[int], hypotheses: tuple[float, float]) -> None:
    """For any non-negative counts the LLR is finite, and one more unit at the top level does not lower it."""
    elo0, elo1 = hypotheses
    before = llr(counts, elo0, elo1)
    after = llr([*counts[:-1], counts[-1] + 1], elo0, elo1)
    assert math.isfinite(before) and math.isfinite(after)
    assert after >= before - 1e-9 * (1.0 + abs(before))
