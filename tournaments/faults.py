"""A bot's faults as results: answers the referee refused (by reason code), moves the referee made for it on a
missed deadline, dropped streams, and restarts of its processes.

The referee counts the first three per seat and gives them in the match's result (``MatchResult.faults``); the
runner counts process starts (``tournaments.botproc``). The store keeps them with each game and each run, so a
bot that breaks the protocol shows on the terminal, in ``ratings.json`` and in the HTML report, not only in its
log: a rating earned while the referee played a third of a bot's moves is not that bot's rating.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SeatFaults", "BotRun", "BotFaults", "plural"]


@dataclass(frozen=True)
class SeatFaults:
    """One seat's faults in one match, as the referee counted them."""

    seat: int
    rejected: Mapping[str, int] = field(default_factory=dict)  # refused answers by reason code
    timed_out: int = 0  # moves the referee made for it (a missed deadline, or a flood of refusals)
    disconnects: int = 0
    asked: int = 0  # decisions asked of it
    log_path: str = ""  # the log of the bot process that held the seat ("" when unknown)

    @property
    def refused(self) -> int:
        return sum(self.rejected.values())

    @property
    def any(self) -> bool:
        return bool(self.refused or self.timed_out or self.disconnects)

    @classmethod
    def from_pb(cls, msg: Any) -> SeatFaults:
        """From a ``rummy.referee.v1.SeatFaults``."""
        return cls(int(msg.seat), {str(k): int(v) for k, v in sorted(msg.rejected.items())}, int(msg.timed_out),
                   int(msg.disconnects), int(msg.asked))


@dataclass(frozen=True)
class BotRun:
    """One bot process over one run: how often it was started, how it ended when it was not asked to."""

    bot: str
    process: int
    starts: int  # attempts, the first included
    deaths: int  # exits while the run still needed it
    failed_starts: int  # the command could not be run at all
    last_code: int | None
    log_path: str

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)


@dataclass
class BotFaults:
    """A bot's faults summed over games (and runs, for restarts)."""

    bot: str
    games: int = 0  # games whose faults were recorded (games stored before faults were kept have none)
    faulty_games: int = 0  # of those, games with at least one fault
    asked: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    timed_out: int = 0
    disconnects: int = 0
    restarts: int = 0
    logs: list[str] = field(default_factory=list)  # where to look: the logs of the processes that had faults

    @property
    def refused(self) -> int:
        return sum(self.rejected.values())

    @property
    def any(self) -> bool:
        return bool(self.refused or self.timed_out or self.disconnects or self.restarts)

    def add_game(self, seats: Iterable[SeatFaults]) -> None:
        """The bot's seats of one game (partners: two seats, one game)."""
        seats = list(seats)
        self.games += 1
        self.faulty_games += any(s.any for s in seats)
        for s in seats:
            self.asked += s.asked
            self.rejected.update(s.rejected)
            self.timed_out += s.timed_out
            self.disconnects += s.disconnects
            if s.any:
                self._log(s.log_path)

    def add_run(self, run: BotRun) -> None:
        self.restarts += run.restarts
        if run.restarts or run.deaths or run.failed_starts:
            self._log(run.log_path)

    def _log(self, path: str) -> None:
        if path and path not in self.logs:
            self.logs.append(path)

    def counts(self) -> str:
        """What went wrong, in words: '12 answers refused (NOT_IN_HAND 10, STALE_REQUEST 2), 5 moves ...'."""
        parts = []
        if self.refused:
            codes = ", ".join(f"{code} {n}" for code, n in sorted(self.rejected.items(), key=lambda kv: (-kv[1], kv[0])))
            parts.append(f"{plural(self.refused, 'answer')} refused ({codes})")
        if self.timed_out:
            parts.append(f"{plural(self.timed_out, 'move')} made by the referee on a missed deadline")
        if self.disconnects:
            parts.append(plural(self.disconnects, "disconnect"))
        if self.restarts:
            parts.append(f"{plural(self.restarts, 'process restart')}")
        return ", ".join(parts)

    def describe(self) -> str:
        """One line for the terminal: the bot, its faults, in how many games, its logs."""
        where = f"; log: {', '.join(self.logs)}" if self.logs else ""
        games = f" in {self.faulty_games} of {self.games} games" if self.games else ""
        asked = f" ({self.asked} decisions asked)" if self.asked else ""
        return f"bot {self.bot!r}{games}{asked}: {self.counts()}{where}"

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "games_with_faults": self.faulty_games, "asked": self.asked,
                "refused": self.refused, "refused_by_code": dict(sorted(self.rejected.items())),
                "timed_out": self.timed_out, "disconnects": self.disconnects, "restarts": self.restarts,
                "logs": list(self.logs)}


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"
