"""A new version against the previous one: the SPRT the tournament runner runs (:mod:`tournaments.abtest`,
:mod:`tournaments.sprt`), fed by the ladder's own duplicate deals of the two versions.

- **Which test.** When ``name@v2`` is registered after ``name@v1``, the candidate is the new entry and the baseline
  the newest earlier version of the same name that is not revoked. One test per candidate, started once; its
  parameters (``[ladder] sprt = {...}``) are stored with it, so a running test keeps its bounds.
- **Its games.** The matchmaker schedules the test's deals beside its normal ones (their reason starts
  ``sprt:``); a deal is one game per seat rotation with the same cards, the test's unit (pentanomial for 2 seats).
  At a 3-6 seat table the other seats are filled by other bots, and a game scores the candidate's seat against the
  baseline's only (:func:`pair_view`): the fillers' places do not count.
- **Its state** is rebuilt from the stored games at start (a deal counts once all its rotations are in), so a
  killed service goes on where it stood; it stops at the first verdict (H0, H1, or the cap of deals), and games
  that finish after it are not counted, live or rebuilt.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tournaments.abtest import SprtTracker
from tournaments.config import SprtOptions
from tournaments.ladder.store import BotRow, GameRow, SprtRow
from tournaments.sprt import SprtParameters, SprtState

__all__ = ["SprtSettings", "VersionTest", "previous_version", "pair_view", "status_of", "sprt_view"]


@dataclass(frozen=True)
class SprtSettings:
    """The config's ``sprt`` table: H0 says the new version is ``elo0`` better, H1 ``elo1``; ``max_deals`` ends an
    undecided test ("cap"); ``share``: at most this share of the deals under way are SPRT deals (at least one).

    :raises ValueError: bounds the SPRT refuses (``elo0 < elo1``, error rates in (0, 1)), a share outside (0, 1]
        or fewer than one deal.
    """

    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = 0.05
    beta: float = 0.05
    max_deals: int = 500
    share: float = 0.5

    def __post_init__(self) -> None:
        SprtParameters(self.elo0, self.elo1, self.alpha, self.beta)  # its checks and messages
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"sprt share must be in (0, 1], got {self.share}")
        if self.max_deals < 1:
            raise ValueError(f"sprt max_deals must be at least 1, got {self.max_deals}")


def previous_version(bots: Iterable[BotRow], bot: BotRow) -> BotRow | None:
    """The entry ``bot`` is tested against: the newest earlier version of its name that is not revoked."""
    earlier = [b for b in bots if b.name == bot.name and b.id < bot.id and b.revoked_at is None]
    return max(earlier, key=lambda b: b.id) if earlier else None


def pair_view(seats: Sequence[int], ranking: Sequence[Sequence[int]], pair: tuple[int, int]
              ) -> tuple[list[int], list[list[int]]]:
    """The game as the two bots of ``pair`` played it: their seats only (in order), the ranking re-indexed to them.
    Two seats: the game itself."""
    keep = [s for s, b in enumerate(seats) if b in pair]
    index = {s: i for i, s in enumerate(keep)}
    ranking2 = [[index[s] for s in group if s in index] for group in ranking]
    return [seats[s] for s in keep], [g for g in ranking2 if g]


def status_of(state: SprtState) -> str:
    """The stored and shown status: "running" while the LLR is between the bounds, else the runner's verdict."""
    return "running" if state.status == "continue" else state.status


@dataclass
class VersionTest:
    """One candidate's test: the runner's tracker, fed the games of the test's deals."""

    row: SprtRow
    candidate_label: str
    baseline_label: str
    tracker: SprtTracker = field(init=False)
    _deals: dict[str, int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        r = self.row
        options = SprtOptions(self.candidate_label, self.baseline_label, r.elo0, r.elo1, r.alpha, r.beta)
        self.tracker = SprtTracker(options, r.rotations, r.max_deals)

    @property
    def pair(self) -> tuple[int, int]:
        return self.row.candidate_id, self.row.baseline_id

    @property
    def decided(self) -> bool:
        return self.tracker.decided

    def add(self, game: GameRow) -> bool:
        """Count one finished game of the test's deals; True when it completed a unit (the state changed). A game
        after the verdict is not counted."""
        if self.decided:
            return False
        seats, ranking = pair_view(game.seats, game.ranking, self.pair)
        if len(seats) != 2 or self.row.candidate_id not in seats or self.row.baseline_id not in seats:
            return False  # not a game of the two (cannot be, from a test's deal; never counted)
        labels = [self.candidate_label if b == self.row.candidate_id else self.baseline_label for b in seats]
        units = self.tracker.state.units
        deal = self._deals.setdefault(game.deal, len(self._deals))
        self.tracker.add(deal, game.rotation, labels, ranking)
        return self.tracker.state.units != units

    @classmethod
    def rebuilt(cls, row: SprtRow, candidate_label: str, baseline_label: str, games: Iterable[GameRow]) -> VersionTest:
        test = cls(row, candidate_label, baseline_label)
        for g in games:
            test.add(g)
        return test


def sprt_view(row: SprtRow, labels: dict[int, str]) -> dict[str, Any]:
    """A test as the bot pages and ``/api/bots/NAME`` show it: verdict, LLR and bounds, Elo estimate, units."""
    state = SprtState(SprtParameters(row.elo0, row.elo1, row.alpha, row.beta), row.rotations, row.max_deals, row.counts)
    p, e = state.params, state.elo
    candidate, baseline = labels.get(row.candidate_id, str(row.candidate_id)), labels.get(row.baseline_id, str(row.baseline_id))
    verdict = {"H1": f"H1 accepted: {candidate} is better than {baseline}",
               "H0": f"H0 accepted: {candidate} is not {row.elo1:g} Elo better than {baseline}",
               "cap": f"no decision after {row.max_deals} deals", "running": "running"}.get(row.status, row.status)

    def num(x: float) -> float | None:
        return round(x, 1) if abs(x) != float("inf") else None

    return {"candidate": candidate, "baseline": baseline, "status": row.status, "verdict": verdict,
            "llr": round(row.llr, 3), "lower_bound": round(p.lower_bound, 3), "upper_bound": round(p.upper_bound, 3),
            "elo0": row.elo0, "elo1": row.elo1, "alpha": row.alpha, "beta": row.beta, "deals": state.units,
            "games": state.games, "max_deals": row.max_deals, "counts": list(row.counts),
            "elo": {"elo": num(e.elo), "lower": num(e.lower), "upper": num(e.upper)},
            "started_at": row.started_at, "updated_at": row.updated_at}
