"""Rating fits against known answers: closed forms, recovery of true ratings, error-bar coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2, norm

from tournaments.ratings import Result, expected_score, fit_elo, openskill_ratings, pairwise, rate


def _two(a_wins: int, b_wins: int, draws: int = 0) -> list[Result]:
    win = Result(("a", "b"), ((0,), (1,)))
    loss = Result(("a", "b"), ((1,), (0,)))
    draw = Result(("a", "b"), ((0, 1),))
    return [win] * a_wins + [loss] * b_wins + [draw] * draws


@pytest.mark.parametrize(("wins", "losses", "draws"), [(7, 3, 0), (30, 10, 0), (5, 5, 0), (6, 2, 4), (1, 9, 0)])
def test_two_players_match_the_closed_form(wins: int, losses: int, draws: int) -> None:
    """Score s over n games gives a difference of exactly 400 log10(s / (1 - s)); draws are half wins."""
    n = wins + losses + draws
    s = (wins + 0.5 * draws) / n
    fit = fit_elo(_two(wins, losses, draws))
    diff = fit.rating("a") - fit.rating("b")
    assert diff == pytest.approx(400 * math.log10(s / (1 - s)), abs=1e-6)
    assert fit.rating("a") + fit.rating("b") == pytest.approx(0.0, abs=1e-9)  # default scale: mean 0
    assert fit.prior_draws == 0
    # the standard error of the difference is 1 / sqrt(n p (1 - p)) log-odds units, in Elo
    se = 400 / math.log(10) / math.sqrt(n * s * (1 - s))
    assert fit.errors[0] == pytest.approx(1.959964 * se / 2, rel=1e-6)
    assert fit.los("a", "b") == pytest.approx(0.5 * (1 + math.erf(diff / se / math.sqrt(2))), rel=1e-9)


def test_anchor_holds_one_bot_at_its_rating() -> None:
    """With an anchor the anchor has no error and the other carries the whole difference's error."""
    fit = fit_elo(_two(7, 3), anchor="b", anchor_rating=1500)
    assert fit.rating("b") == pytest.approx(1500)
    assert fit.rating("a") == pytest.approx(1500 + 400 * math.log10(7 / 3))
    assert fit.error("b") == 0
    se = 400 / math.log(10) / math.sqrt(10 * 0.7 * 0.3)
    assert fit.error("a") == pytest.approx(1.959964 * se, rel=1e-6)
    assert "anchor b = 1500" in fit.scale


def _synthetic(true: dict[str, float], games_per_pair: int, rng: np.random.Generator, draw_rate: float = 0.0) -> list[Result]:
    names = list(true)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = expected_score(true[a] - true[b])
            for _ in range(games_per_pair):
                u = rng.random()
                if u < draw_rate:
                    out.append(Result((a, b), ((0, 1),)))
                elif rng.random() < p:
                    out.append(Result((a, b), ((0,), (1,))))
                else:
                    out.append(Result((a, b), ((1,), (0,))))
    return out


TRUE = {"w": -250.0, "x": -50.0, "y": 100.0, "z": 200.0}


def test_synthetic_results_recover_the_true_ratings_within_their_error_bars() -> None:
    """Results drawn from known ratings (mean 0) give fitted ratings near the truth: the whole vector inside
    the fit's 99.9% confidence ellipsoid, and each bot within 1.68x its 95% bar (its own 99.9% bar). The 95%
    bars themselves are checked for coverage in the next test, where chance can be counted."""
    rng = np.random.default_rng(20240601)
    fit = fit_elo(_synthetic(TRUE, 200, rng))
    truth = np.array([TRUE[n] for n in fit.names])
    d = fit.ratings - truth
    assert float(d @ np.linalg.pinv(fit.cov) @ d) <= chi2.ppf(0.999, df=len(TRUE) - 1)
    for name, r in TRUE.items():
        assert abs(fit.rating(name) - r) <= fit.error(name) * norm.ppf(0.9995) / norm.ppf(0.975), name
    assert sorted(fit.names, key=fit.rating) == ["w", "x", "y", "z"]


def test_error_bars_cover_the_truth_about_95_percent_of_the_time() -> None:
    """Over many small synthetic tournaments, the 95% bars hold the true rating about 95% of the time."""
    rng = np.random.default_rng(7)
    hits = total = 0
    for _ in range(300):
        fit = fit_elo(_synthetic(TRUE, 40, rng))
        if fit.prior_draws:
            continue
        for name, r in TRUE.items():
            hits += abs(fit.rating(name) - r) <= fit.error(name)
            total += 1
    assert total > 1000
    assert 0.92 <= hits / total <= 0.98


def test_multi_seat_results_enter_as_pairwise_outcomes_of_the_ranking() -> None:
    """A 3-bot table ranked a > (b = c) gives a beats b, a beats c, b draws c."""
    pw = pairwise([Result(("b", "a", "c"), ((1,), (0, 2)))])
    i = {n: pw.index(n) for n in "abc"}
    assert pw.score[i["a"], i["b"]] == 1 and pw.score[i["a"], i["c"]] == 1
    assert pw.score[i["b"], i["c"]] == 0.5 and pw.score[i["c"], i["b"]] == 0.5
    assert pw.games.sum() == 6  # three pairs, counted both ways
    assert list(pw.matches) == [1, 1, 1]


def test_partners_count_once_as_one_bot() -> None:
    """A partnership game of bot a (seats 0, 2) against bot b (1, 3) is one pairwise game, not four."""
    pw = pairwise([Result(("a", "b", "a", "b"), ((0, 2), (1, 3)))])
    assert pw.games[pw.index("a"), pw.index("b")] == 1
    assert pw.score[pw.index("a"), pw.index("b")] == 1


def test_a_perfect_score_adds_a_virtual_draw_and_stays_finite() -> None:
    """No maximum likelihood rating exists for a 100% score: one virtual draw per pair keeps it finite."""
    fit = fit_elo(_two(10, 0))
    assert fit.prior_draws == 1.0
    assert fit.rating("a") - fit.rating("b") == pytest.approx(400 * math.log10(10.5 / 0.5), abs=1e-6)


def test_disconnected_groups_cannot_be_rated_together() -> None:
    with pytest.raises(ValueError, match="never met"):
        fit_elo([Result(("a", "b"), ((0,), (1,))), Result(("b", "a"), ((0,), (1,))),
                 Result(("c", "d"), ((0,), (1,))), Result(("d", "c"), ((0,), (1,)))])


def test_bootstrap_error_bars_agree_with_the_hessian_for_independent_games() -> None:
    """Resampling independent two-player games gives about the same error bars as the Fisher information."""
    rng = np.random.default_rng(3)
    results = _synthetic({"a": 0.0, "b": 120.0, "c": 240.0}, 150, rng)
    hess = fit_elo(results)
    boot = fit_elo(results, bootstrap=300, seed=1)
    assert boot.method == "bootstrap (300)"
    assert np.allclose(boot.ratings, hess.ratings)
    for n in "abc":
        assert boot.error(n) == pytest.approx(hess.error(n), rel=0.25)


def test_openskill_ranks_a_consistent_winner_first() -> None:
    """Plackett-Luce over free-for-all tables: the bot that always wins has the highest mu."""
    results = [Result(("a", "b", "c"), ((0,), (1,), (2,)))] * 10 + [Result(("c", "a", "b"), ((1,), (2,), (0,)))] * 10
    os_r = openskill_ratings(results)
    assert os_r["a"][0] > os_r["b"][0] > os_r["c"][0]


def test_rate_builds_the_table_best_first_with_crosstable_and_los() -> None:
    rng = np.random.default_rng(11)
    rt = rate(_synthetic(TRUE, 60, rng, draw_rate=0.1))
    assert [b.name for b in rt.bots] == ["z", "y", "x", "w"]
    assert rt.bots[-1].los_next is None
    assert all(0.5 <= b.los_next <= 1 for b in rt.bots[:-1] if b.los_next is not None)
    assert rt.cross_games[0, 1] == 60 and rt.cross_games[0, 0] == 0
    total = rt.cross_score + rt.cross_score.T
    assert np.allclose(total, rt.cross_games)
    assert sum(b.games for b in rt.bots) == 2 * rt.matches
