"""Ratings from match results: Elo by maximum likelihood (Bradley-Terry, as Ordo and BayesElo fit it) with
95% error bars and likelihood of superiority, OpenSkill (Plackett-Luce) as a second view, and a crosstable.

- A match of k distinct bots enters as k(k-1)/2 pairwise outcomes of its final ranking: the better placed bot
  wins, bots placed together draw. A bot's place is its best seat's place (partners share one). Draws count as
  half a win each way.
- The fit maximises ``sum W_ij log P(i beats j)`` with ``P = 1 / (1 + 10^((r_j - r_i) / 400))`` over all
  ordered pairs (``W_ij``: i's score against j). Two bots, score ``s`` over ``n`` games: the difference is
  exactly ``400 log10(s / (1 - s))``.
- Error bars: 1.96 standard errors from the observed Fisher information (the Hessian of the negative log
  likelihood at the optimum), or from a bootstrap that resamples whole duplicate deals (``bootstrap=N``), which
  also accounts for the pairwise outcomes of one multi-seat match not being independent.
- A maximum likelihood rating does not exist when some bot (or group of bots) never scored against the others
  (a 100% or 0% record). Then, and only then, one virtual draw is added to every pair of bots that met (as
  BayesElo's prior); the fit says so in ``prior_draws``.
- The scale: by default the mean rating is ``average`` (0, as BayesElo); with ``anchor`` that bot is held at
  ``anchor_rating`` (e.g. 1500) and the others' error bars are relative to it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Result",
    "Pairwise",
    "EloFit",
    "BotRating",
    "RatingTable",
    "ELO_SCALE",
    "pairwise",
    "fit_elo",
    "expected_score",
    "openskill_ratings",
    "rate",
]

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per natural-log unit of odds
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Result:
    """One finished match: the bot on each seat and the ranking of seats (groups of tied seats, best first).
    ``group`` names a duplicate deal (table and deal) for the bootstrap to resample as one unit."""

    seats: tuple[str, ...]
    ranking: tuple[tuple[int, ...], ...]
    forfeited: tuple[int, ...] = ()
    group: str = ""

    def places(self) -> dict[str, int]:
        """Each bot's place (0 = best); a bot on several seats takes its best seat's place."""
        place_of_seat = {s: i for i, grp in enumerate(self.ranking) for s in grp}
        last = len(self.ranking)
        out: dict[str, int] = {}
        for seat, bot in enumerate(self.seats):
            p = place_of_seat.get(seat, last)
            out[bot] = min(out.get(bot, p), p)
        return out


@dataclass
class Pairwise:
    """Pairwise totals: ``score[i, j]`` what bot i scored against j, ``games[i, j]`` how often they met."""

    names: list[str]
    score: np.ndarray
    games: np.ndarray
    matches: np.ndarray  # matches played per bot
    forfeits: np.ndarray  # seats forfeited per bot

    def index(self, name: str) -> int:
        return self.names.index(name)


def pairwise(results: Iterable[Result], names: Sequence[str] | None = None) -> Pairwise:
    """Totals of the pairwise outcomes of every result."""
    results = list(results)
    order: list[str] = list(names) if names is not None else []
    seen = set(order)
    for r in results:
        for b in r.seats:
            if b not in seen:
                seen.add(b)
                order.append(b)
    idx = {b: i for i, b in enumerate(order)}
    n = len(order)
    score = np.zeros((n, n))
    games = np.zeros((n, n))
    matches = np.zeros(n, dtype=int)
    forfeits = np.zeros(n, dtype=int)
    for r in results:
        places = r.places()
        bots = list(places)
        for b in bots:
            matches[idx[b]] += 1
        for s in r.forfeited:
            if 0 <= s < len(r.seats):
                forfeits[idx[r.seats[s]]] += 1
        for a_pos in range(len(bots)):
            for b_pos in range(a_pos + 1, len(bots)):
                ia, ib = idx[bots[a_pos]], idx[bots[b_pos]]
                pa, pb = places[bots[a_pos]], places[bots[b_pos]]
                sa = 1.0 if pa < pb else 0.0 if pa > pb else 0.5
                score[ia, ib] += sa
                score[ib, ia] += 1.0 - sa
                games[ia, ib] += 1
                games[ib, ia] += 1
    return Pairwise(order, score, games, matches, forfeits)


def expected_score(diff: float) -> float:
    """P(win) plus half P(draw) for a rating advantage of ``diff`` Elo."""
    return float(1.0 / (1.0 + 10.0 ** (-diff / 400.0)))


@dataclass
class EloFit:
    names: list[str]
    ratings: np.ndarray  # Elo, on the chosen scale
    cov: np.ndarray  # covariance of the ratings (Elo^2), under the chosen scale's constraint
    errors: np.ndarray  # 95% half-widths
    prior_draws: float  # virtual draws added per pair that met (0: a pure maximum likelihood fit)
    scale: str  # e.g. "mean 0" or "anchor greedy = 1500"
    method: str  # "hessian" or "bootstrap (N)"
    log_likelihood: float

    def rating(self, name: str) -> float:
        return float(self.ratings[self.names.index(name)])

    def error(self, name: str) -> float:
        return float(self.errors[self.names.index(name)])

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority: the probability that a is truly stronger than b (normal approximation
        with the fit's covariance)."""
        i, j = self.names.index(a), self.names.index(b)
        var = self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j]
        diff = self.ratings[i] - self.ratings[j]
        if var <= 0:
            return 0.5 if diff == 0 else float(diff > 0)
        return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))  # the normal CDF


def _reaches_all(adj: np.ndarray) -> bool:
    """Every node reachable from node 0 along ``adj[i, j]`` edges."""
    seen = {0}
    todo = [0]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(adj[i]):
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    return len(seen) == int(adj.shape[0])


def _strongly_connected(score: np.ndarray) -> bool:
    """Every bot scored, directly or through others, against every other (i -> j when i scored against j):
    the condition for the maximum likelihood ratings to exist (Zermelo, Ford)."""
    if score.shape[0] <= 1:
        return True
    adj = score > 0
    return _reaches_all(adj) and _reaches_all(adj.T)


def _connected(games: np.ndarray) -> bool:
    return games.shape[0] <= 1 or _reaches_all(games > 0)


def _expit(x: np.ndarray) -> np.ndarray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * x)))  # the logistic function, without overflow


def _mle(score: np.ndarray, games: np.ndarray, tol: float = 1e-10, max_iter: int = 200,
         x0: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Newton's method on the natural-log-odds strengths x (x[0] held where it starts). Returns x (mean 0), the
    Hessian of the negative log likelihood at x, and the log likelihood. ``x0``: where to start (a previous fit's
    strengths: a refit after a few more games then takes a step or two)."""
    n = score.shape[0]
    # only the pairs that met count: on a ladder of 1,000 bots that is a few thousand of the million entries
    si, sj = np.nonzero(score)
    s_nz = score[si, sj]
    gi, gj = np.nonzero(games)
    g_nz = games[gi, gj]
    sg_nz = score[gi, gj]

    def nll(x: np.ndarray) -> float:
        # log sigma(d) = -logaddexp(0, -d); only pairs with score count
        return float(np.sum(s_nz * np.logaddexp(0.0, -(x[si] - x[sj]))))

    def grad_hess(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = _expit(x[gi] - x[gj])
        g = -np.bincount(gi, weights=sg_nz - g_nz * p, minlength=n)
        w = g_nz * p * (1.0 - p)
        h = np.zeros((n, n))
        h[gi, gj] = -w
        h[np.arange(n), np.arange(n)] += np.bincount(gi, weights=w, minlength=n)
        return g, h

    x = np.zeros(n) if x0 is None else np.array(x0, dtype=float)
    f = nll(x)
    for _ in range(max_iter):
        g, h = grad_hess(x)
        # hold x[0] fixed: solve on the rest
        step = np.zeros(n)
        step[1:] = np.linalg.solve(h[1:, 1:], g[1:])
        t = 1.0
        while True:
            x_new = x - t * step
            f_new = nll(x_new)
            if f_new <= f + 1e-12 or t < 1e-8:
                break
            t /= 2
        x, f = x_new, f_new
        if np.max(np.abs(t * step)) < tol:
            break
    x = x - x.mean()
    _, h = grad_hess(x)
    return x, h, -f


def fit_elo(
    results: Iterable[Result] | Pairwise,
    anchor: str | None = None,
    anchor_rating: float = 1500.0,
    average: float = 0.0,
    bootstrap: int = 0,
    seed: int = 0,
    names: Sequence[str] | None = None,
    init: Mapping[str, float] | None = None,
) -> EloFit:
    """Fit Elo ratings to ``results`` (or precomputed pairwise totals). ``init``: ratings to start from (Elo on any
    scale, e.g. the last fit's: a warm start; bots without one start at the others' mean). :raises ValueError: when
    the bots split into groups that never met (no common scale exists)."""
    res_list: list[Result] | None = None
    if isinstance(results, Pairwise):
        pw = results
    else:
        res_list = list(results)
        pw = pairwise(res_list, names)
    n = len(pw.names)
    if n == 0:
        raise ValueError("no results to rate")
    if anchor is not None and anchor not in pw.names:
        raise ValueError(f"anchor {anchor!r} has no results; rated bots: {', '.join(pw.names)}")
    if n == 1:
        r = np.array([anchor_rating if anchor else average])
        return EloFit(pw.names, r, np.zeros((1, 1)), np.zeros(1), 0.0, _scale_text(anchor, anchor_rating, average), "hessian", 0.0)
    if not _connected(pw.games):
        raise ValueError("the results split into groups of bots that never met: ratings across them are undefined")

    prior = 0.0 if _strongly_connected(pw.score) else 1.0
    score, games = _with_prior(pw.score, pw.games, prior)
    x0 = None
    if init:
        known = [init[b] for b in pw.names if b in init]
        mean = sum(known) / len(known) if known else 0.0
        x0 = np.array([init.get(b, mean) for b in pw.names]) / ELO_SCALE
    x, h, loglik = _mle(score, games, x0=x0)
    ratings = x * ELO_SCALE
    cov = _covariance(h, anchor_index=pw.names.index(anchor) if anchor else None) * ELO_SCALE**2
    ratings = _rescale(ratings, pw.names, anchor, anchor_rating, average)
    method = "hessian"
    if bootstrap and res_list:
        cov = _bootstrap_cov(res_list, pw.names, prior, bootstrap, seed, anchor, anchor_rating, average)
        method = f"bootstrap ({bootstrap})"
    errors = Z95 * np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return EloFit(pw.names, ratings, cov, errors, prior, _scale_text(anchor, anchor_rating, average), method, loglik)


def _with_prior(score: np.ndarray, games: np.ndarray, prior: float) -> tuple[np.ndarray, np.ndarray]:
    if not prior:
        return score, games
    met = games > 0
    return score + met * (prior / 2.0), games + met * prior


def _covariance(h: np.ndarray, anchor_index: int | None) -> np.ndarray:
    """Inverse Fisher information under the scale's constraint: the mean fixed (Moore-Penrose inverse of
    the Hessian, whose null space is the common shift) or the anchor fixed (invert the rest)."""
    n = h.shape[0]
    if anchor_index is None:
        # The Hessian of a connected field is positive semidefinite with exactly the common shift (the ones vector)
        # as null space, so pinv(h) = inv(h + J/n) - J/n (J: all ones): one Cholesky inverse, several times faster
        # than the eigendecomposition pinv takes (a 1,000-bot ladder refits in a second). Not positive definite
        # (a field that is not connected): pinv as it is.
        import scipy.linalg

        shift = np.full((n, n), 1.0 / n)
        try:
            c, low = scipy.linalg.cho_factor(h + shift)
        except np.linalg.LinAlgError:
            return np.asarray(np.linalg.pinv(h, hermitian=True))
        inverse: np.ndarray = scipy.linalg.cho_solve((c, low), np.eye(n))
        return np.asarray(inverse - shift)
    keep = [i for i in range(n) if i != anchor_index]
    cov = np.zeros((n, n))
    cov[np.ix_(keep, keep)] = np.linalg.inv(h[np.ix_(keep, keep)])
    return cov


def _rescale(ratings: np.ndarray, names: Sequence[str], anchor: str | None, anchor_rating: float, average: float) -> np.ndarray:
    if anchor is not None:
        return np.asarray(ratings - ratings[list(names).index(anchor)] + anchor_rating)
    return np.asarray(ratings - ratings.mean() + average)


def _scale_text(anchor: str | None, anchor_rating: float, average: float) -> str:
    return f"anchor {anchor} = {anchor_rating:g}" if anchor else f"mean {average:g}"


def _bootstrap_cov(
    results: list[Result], names: list[str], prior: float, rounds: int, seed: int, anchor: str | None, anchor_rating: float, average: float
) -> np.ndarray:
    """Covariance of the ratings over refits on resampled duplicate deals (a deal's games stay together)."""
    groups: dict[str, list[Result]] = {}
    for i, r in enumerate(results):
        groups.setdefault(r.group or f"#{i}", []).append(r)
    units = list(groups.values())
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(rounds):
        pick = rng.integers(0, len(units), len(units))
        pw = pairwise((r for k in pick for r in units[k]), names)
        if not _connected(pw.games):
            continue
        # the same prior as the main fit, or one virtual draw where a resample lost strong connectivity
        p = prior if prior or _strongly_connected(pw.score) else 1.0
        s, g = _with_prior(pw.score, pw.games, p)
        x, _, _ = _mle(s, g)
        samples.append(_rescale(x * ELO_SCALE, names, anchor, anchor_rating, average))
    if len(samples) < 2:
        return np.zeros((len(names), len(names)))
    return np.atleast_2d(np.cov(np.array(samples), rowvar=False))


# ------------------------------------------------------------------------------------------ OpenSkill


def openskill_ratings(results: Iterable[Result], names: Sequence[str] | None = None) -> dict[str, tuple[float, float]]:
    """OpenSkill Plackett-Luce (mu, sigma) per bot, rating each match in the order given: every distinct bot
    at the table is one team, ranked by its place."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    state: dict[str, object] = {}
    for n in names or ():
        state[n] = model.rating(name=n)
    for r in results:
        places = r.places()
        bots = list(places)
        if len(bots) < 2:
            continue
        for b in bots:
            state.setdefault(b, model.rating(name=b))
        teams = [[state[b]] for b in bots]
        rated = model.rate(teams, ranks=[float(places[b]) for b in bots])  # type: ignore[arg-type]
        for b, team in zip(bots, rated, strict=True):
            state[b] = team[0]
    return {b: (float(v.mu), float(v.sigma)) for b, v in state.items()}  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------ the table


@dataclass
class BotRating:
    name: str
    elo: float
    error: float  # 95% half-width
    los_next: float | None  # likelihood of superiority over the next bot down the table
    games: int  # matches played
    pairwise_games: int
    score: float  # fraction of pairwise points
    forfeits: int
    openskill_mu: float
    openskill_sigma: float

    @property
    def openskill_ordinal(self) -> float:
        return self.openskill_mu - 3.0 * self.openskill_sigma


@dataclass
class RatingTable:
    bots: list[BotRating]  # best first
    names: list[str]  # crosstable order (= bots order)
    cross_score: np.ndarray  # [i, j]: i's pairwise points against j
    cross_games: np.ndarray
    matches: int
    fit: EloFit
    notes: list[str] = field(default_factory=list)

    def bot(self, name: str) -> BotRating:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)


def rate(
    results: Sequence[Result],
    anchor: str | None = None,
    anchor_rating: float = 1500.0,
    average: float = 0.0,
    bootstrap: int = 0,
    names: Sequence[str] | None = None,
) -> RatingTable:
    """Everything the report shows: Elo with error bars and LOS, OpenSkill, games, score and crosstable."""
    results = list(results)
    fit = fit_elo(results, anchor, anchor_rating, average, bootstrap=bootstrap, names=names)
    pw = pairwise(results, fit.names)
    os_r = openskill_ratings(results, fit.names)
    order = sorted(range(len(fit.names)), key=lambda i: -fit.ratings[i])
    bots: list[BotRating] = []
    for pos, i in enumerate(order):
        name = fit.names[i]
        nxt = fit.names[order[pos + 1]] if pos + 1 < len(order) else None
        pg = float(pw.games[i].sum())
        mu, sigma = os_r.get(name, (float("nan"), float("nan")))
        bots.append(
            BotRating(
                name=name,
                elo=float(fit.ratings[i]),
                error=float(fit.errors[i]),
                los_next=fit.los(name, nxt) if nxt else None,
                games=int(pw.matches[i]),
                pairwise_games=int(pg),
                score=float(pw.score[i].sum() / pg) if pg else float("nan"),
                forfeits=int(pw.forfeits[i]),
                openskill_mu=mu,
                openskill_sigma=sigma,
            )
        )
    names_sorted = [fit.names[i] for i in order]
    notes = [f"Elo scale: {fit.scale}; error bars: 95% ({fit.method})"]
    if fit.prior_draws:
        notes.append(f"some bot has a perfect or zero score: {fit.prior_draws:g} virtual draw per pair that met was added (BayesElo-style prior)")
    return RatingTable(bots, names_sorted, pw.score[np.ix_(order, order)], pw.games[np.ix_(order, order)], len(results), fit, notes)
