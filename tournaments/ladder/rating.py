"""Ratings that keep up with a ladder: the runner's whole-history Bradley-Terry fit (Elo with 95% error bars,
``tournaments.ratings.fit_elo``) and OpenSkill, fed one game at a time.

A game adds its pairwise outcomes to running totals (``score``, ``games``) and one OpenSkill update, so nothing is
read twice; a refit starts Newton's method from the previous fit's ratings (a warm start: a few more games move
the optimum a little, and one or two steps reach it). Bots that have not yet met the main group (its largest
connected part) have no Elo on its scale: they are shown unrated, with an infinite error bar, until they do.

A service that starts on a long history does not read it back: :meth:`Rater.resume` takes the pairwise totals of
the games up to the last rating run from the database (summed there, ``store.rating_totals``), OpenSkill as that
run stored it and its Elo as the next fit's start; only the games stored since are taken in one by one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tournaments.ratings import EloFit, Pairwise, Result, fit_elo

if TYPE_CHECKING:
    from tournaments.ladder.store import LadderStore, RatingTotals

__all__ = ["Rater", "Rating", "UNRATED_ERR"]

UNRATED_ERR = float("inf")


@dataclass(frozen=True)
class Rating:
    elo: float
    err: float  # 95% half-width; inf: not rated yet
    mu: float  # OpenSkill (Plackett-Luce)
    sigma: float
    games: int


class Rater:
    """Running pairwise totals and OpenSkill state over bot ids; :meth:`fit` gives everyone's rating."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.index: dict[int, int] = {}
        self.score = np.zeros((0, 0))
        self.games = np.zeros((0, 0))
        self.matches = np.zeros(0, dtype=int)
        self.forfeits = np.zeros(0, dtype=int)
        self.last_game = 0  # the id of the last stored game taken in
        self.count = 0
        self.previous: dict[str, float] = {}  # the last fit's Elo, by str(id): where the next fit starts
        self.last_fit: EloFit | None = None
        from openskill.models import PlackettLuce

        self._model = PlackettLuce()
        self._os: dict[int, object] = {}

    @classmethod
    def resume(cls, store: LadderStore) -> Rater:
        """A rater where the store's last rating run left off (empty without one: then every game is taken in)."""
        last, ratings = store.latest_ratings()
        rater = cls()
        if last == 0:
            return rater
        rater.take_totals(store.rating_totals(last))
        for b, (elo, err, mu, sigma, _n) in ratings.items():
            rater._os[b] = rater._model.rating(mu=mu, sigma=sigma, name=str(b))
            if 0 <= err < math.inf:
                rater.previous[str(b)] = float(elo)
        return rater

    def take_totals(self, totals: RatingTotals) -> None:
        """Add games summed by the database (pairwise scores, games and forfeits per bot); no OpenSkill update."""
        for b in sorted({b for p in totals.pairs for b in p[:2]} | set(totals.games) | set(totals.forfeits)):
            self._grow(b)
        if totals.pairs:
            pairs = np.array([p[:2] for p in totals.pairs], dtype=int)
            ia = np.array([self.index[a] for a in pairs[:, 0]])
            ib = np.array([self.index[b] for b in pairs[:, 1]])
            score = np.array([p[2] for p in totals.pairs])
            n = np.array([p[3] for p in totals.pairs], dtype=float)
            np.add.at(self.score, (ia, ib), score)
            np.add.at(self.score, (ib, ia), n - score)
            np.add.at(self.games, (ia, ib), n)
            np.add.at(self.games, (ib, ia), n)
        for b, k in totals.games.items():
            self.matches[self.index[b]] += k
        for b, k in totals.forfeits.items():
            self.forfeits[self.index[b]] += k
        self.last_game = max(self.last_game, totals.upto)
        self.count += totals.count

    def _grow(self, bot: int) -> int:
        if bot in self.index:
            return self.index[bot]
        i = len(self.ids)
        self.ids.append(bot)
        self.index[bot] = i
        n = i + 1
        if n > self.score.shape[0]:
            cap = max(8, 2 * self.score.shape[0])
            for name in ("score", "games"):
                old = getattr(self, name)
                new = np.zeros((cap, cap))
                new[:old.shape[0], :old.shape[1]] = old
                setattr(self, name, new)
            for name in ("matches", "forfeits"):
                old = getattr(self, name)
                new_v = np.zeros(cap, dtype=int)
                new_v[:old.shape[0]] = old
                setattr(self, name, new_v)
        return i

    def add(self, seats: Sequence[int], ranking: Sequence[Sequence[int]], forfeited: Sequence[int] = (),
            game_id: int = 0) -> None:
        """Take in one finished game (the bot id on each seat, the referee's ranking of seats)."""
        result = Result(tuple(str(b) for b in seats), tuple(tuple(g) for g in ranking), tuple(forfeited))
        places = result.places()
        bots = [int(b) for b in places]
        idx = [self._grow(b) for b in bots]
        for i in idx:
            self.matches[i] += 1
        for s in forfeited:
            if 0 <= s < len(seats):
                self.forfeits[self._grow(seats[s])] += 1
        for a in range(len(bots)):
            for b in range(a + 1, len(bots)):
                pa, pb = places[str(bots[a])], places[str(bots[b])]
                sa = 1.0 if pa < pb else 0.0 if pa > pb else 0.5
                ia, ib = idx[a], idx[b]
                self.score[ia, ib] += sa
                self.score[ib, ia] += 1.0 - sa
                self.games[ia, ib] += 1
                self.games[ib, ia] += 1
        if len(bots) >= 2:
            for b in bots:
                self._os.setdefault(b, self._model.rating(name=str(b)))
            rated = self._model.rate([[self._os[b]] for b in bots],  # type: ignore[list-item]
                                     ranks=[float(places[str(b)]) for b in bots])
            for b, team in zip(bots, rated, strict=True):
                self._os[b] = team[0]
        self.last_game = max(self.last_game, game_id)
        self.count += 1

    def _component(self) -> list[int]:
        """Indices of the largest group of bots connected by games (ties: the one with the most games)."""
        n = len(self.ids)
        seen = [False] * n
        best: list[int] = []
        best_games = -1.0
        g = self.games[:n, :n]
        for s in range(n):
            if seen[s]:
                continue
            comp, stack = [], [s]
            seen[s] = True
            while stack:
                u = stack.pop()
                comp.append(u)
                for v in np.nonzero(g[u] > 0)[0]:
                    if not seen[v]:
                        seen[v] = True
                        stack.append(int(v))
            total = float(g[np.ix_(comp, comp)].sum())
            if (len(comp), total) > (len(best), best_games):
                best, best_games = sorted(comp), total
        return best

    def fit(self) -> dict[int, Rating]:
        """Everyone's rating now (mean Elo 0 over the main group); warm-started from the last fit."""
        n = len(self.ids)
        os_of = {b: (float(v.mu), float(v.sigma)) for b, v in self._os.items()}  # type: ignore[attr-defined]
        out: dict[int, Rating] = {}
        comp = self._component() if n else []
        fit: EloFit | None = None
        if len(comp) >= 2:
            names = [str(self.ids[i]) for i in comp]
            pw = Pairwise(names, self.score[np.ix_(comp, comp)].copy(), self.games[np.ix_(comp, comp)].copy(),
                          self.matches[comp].copy(), self.forfeits[comp].copy())
            fit = fit_elo(pw, init=self.previous or None)
            self.previous = {nm: float(r) for nm, r in zip(fit.names, fit.ratings, strict=True)}
            self.last_fit = fit
        rated = {int(nm): (float(r), float(e)) for nm, r, e in zip(fit.names, fit.ratings, fit.errors, strict=True)} \
            if fit is not None else {}
        for i, b in enumerate(self.ids):
            elo, err = rated.get(b, (0.0, UNRATED_ERR))
            mu, sigma = os_of.get(b, (25.0, 25.0 / 3))
            out[b] = Rating(elo, err, mu, sigma, int(self.matches[i]))
        return out

    def los(self, a: int, b: int) -> float:
        """The last fit's likelihood that bot ``a`` is stronger than ``b`` (0.5 when either is unrated)."""
        f = self.last_fit
        if f is None or str(a) not in f.names or str(b) not in f.names:
            return 0.5
        return f.los(str(a), str(b))
