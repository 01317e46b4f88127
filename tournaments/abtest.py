"""The SPRT schedule's bookkeeping: game results in, duplicate-deal units out, the test's state always current.

A unit is one deal played in both seatings (see :mod:`tournaments.schedule`); it counts once both games are in,
in whatever order concurrent matches finish them. The state is rebuilt from the results database on resume, so
an interrupted SPRT goes on where it stopped and one that has decided plays nothing more.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tournaments.config import SprtOptions
from tournaments.sprt import SprtParameters, SprtState

__all__ = ["game_score", "SprtTracker"]


def game_score(seats: Sequence[str], ranking: Sequence[Sequence[int]], candidate: str) -> float:
    """The candidate's score in one game against the other bot: 1 if its best seat ranked above the other bot's
    best seat, 0.5 if level, 0 if below (for two seats, simply win / tie / loss; for partners, the side)."""
    place = {seat: i for i, group in enumerate(ranking) for seat in group}
    unranked = len(ranking)
    mine = min(place.get(s, unranked) for s, bot in enumerate(seats) if bot == candidate)
    theirs = min(place.get(s, unranked) for s, bot in enumerate(seats) if bot != candidate)
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


@dataclass
class SprtTracker:
    """Collects the games of each deal until the unit is complete, then adds it to the test."""

    options: SprtOptions
    rotations: int
    cap: int | None = None
    state: SprtState = field(init=False)
    _open: dict[int, dict[int, float]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        o = self.options
        self.state = SprtState(SprtParameters(o.elo0, o.elo1, o.alpha, o.beta), rotations=self.rotations, cap=self.cap)

    @classmethod
    def from_results(cls, options: SprtOptions, rotations: int, cap: int | None,
                     games: Iterable[tuple[int, int, Sequence[str], Sequence[Sequence[int]]]]) -> SprtTracker:
        """Rebuilt from stored games, each ``(deal, rotation, seats, ranking)``."""
        tracker = cls(options, rotations, cap)
        for deal, rotation, seats, ranking in games:
            tracker.add(deal, rotation, seats, ranking)
        return tracker

    def add(self, deal: int, rotation: int, seats: Sequence[str], ranking: Sequence[Sequence[int]]) -> bool:
        """Count one finished game; True once the test has decided (a bound crossed or the cap reached)."""
        games = self._open.setdefault(deal, {})
        games[rotation] = game_score(seats, ranking, self.options.candidate)
        if len(games) == self.rotations:
            del self._open[deal]
            self.state = self.state.add_games([games[r] for r in sorted(games)])
        return self.decided

    @property
    def decided(self) -> bool:
        return self.state.status != "continue"

    def summary(self) -> str:
        """One line: the verdict, the LLR against its bounds, the Elo estimate and the units' counts."""
        s, p, o = self.state, self.state.params, self.options
        verdict = {"H1": f"H1 accepted: {o.candidate} is better than {o.baseline}",
                   "H0": f"H0 accepted: {o.candidate} is not {o.elo1:g} Elo better than {o.baseline}",
                   "cap": "no decision: the game cap was reached", "continue": "running"}[s.status]
        e = s.elo
        return (f"SPRT [{o.elo0:g}, {o.elo1:g}] alpha={o.alpha:g} beta={o.beta:g}: LLR {s.llr:+.2f} "
                f"(bounds {p.lower_bound:+.2f}, {p.upper_bound:+.2f}); {verdict}; Elo {e.elo:+.1f} "
                f"[{e.lower:+.1f}, {e.upper:+.1f}] over {s.units} deals ({s.games} games), counts {list(s.counts)}")
