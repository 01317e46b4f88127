"""A continuing ladder: a pool that grows as bots are added, each newcomer playing the pool, everyone rated again.

A config with ``schedule = "ladder"`` and no ``pool`` is a continuing ladder kept in its own output folder. Its
first run is a round-robin of the configured bots (``games_per_pairing`` deals a pairing). ``tournament ladder
add CONFIG NAME -- COMMAND...`` stores the newcomer in the results database with the pool as rated at that
moment, best first; the newcomer's games (``games`` of them, spread over the pool by :func:`schedule.ladder`)
follow from that stored order, so the schedule is the same on every rerun and an interrupted ladder resumes.
After every run that played games, the ratings are kept as a rating run: ``tournament ratings --history``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tournaments.config import BotSpec, ConfigError, TournamentConfig
from tournaments.ratings import fit_elo, pairwise
from tournaments.schedule import Game, ladder, round_robin
from tournaments.store import DB_NAME, Store

__all__ = ["Entry", "is_continuing", "entries", "with_entries", "games", "add_entry", "keep_ratings"]

_ENTRIES = "ladder_entries"


@dataclass(frozen=True)
class Entry:
    """A bot added to a continuing ladder, with the pool (best first) it was scheduled against."""

    name: str
    command: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str]
    pool: tuple[str, ...]

    def spec(self) -> BotSpec:
        return BotSpec(self.name, self.command, self.cwd, dict(self.env))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "command": list(self.command), "cwd": str(self.cwd), "env": dict(self.env),
                "pool": list(self.pool)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Entry:
        return cls(d["name"], tuple(d["command"]), Path(d["cwd"]), dict(d.get("env", {})), tuple(d["pool"]))


def is_continuing(config: TournamentConfig) -> bool:
    return config.schedule == "ladder" and config.pool is None


def entries(config: TournamentConfig) -> list[Entry]:
    """The bots added to ``config``'s ladder so far, in the order they were added."""
    db = config.output / DB_NAME
    if not db.is_file():
        return []
    with Store(db, readonly=True) as store:
        return [Entry.from_json(e) for e in store.meta(_ENTRIES) or []]


def with_entries(config: TournamentConfig) -> TournamentConfig:
    """``config`` with the added bots among its bots, so the runner starts them like the configured ones."""
    added = [e.spec() for e in entries(config) if e.name not in config.bot_names]
    return dataclasses.replace(config, bots=(*config.bots, *added)) if added else config


def games(config: TournamentConfig) -> list[Game]:
    """The whole schedule so far: the configured bots' round-robin, then each newcomer against its pool."""
    c = config
    added = entries(c)
    names = {e.name for e in added}
    out = round_robin([b for b in c.bot_names if b not in names], c.seats, c.games_per_pairing, c.seed, c.team_play)
    assert c.games is not None
    for e in added:
        out += ladder([e.name], list(e.pool), c.seats, c.games, c.seed, c.team_play)
    return out


def add_entry(config: TournamentConfig, name: str, command: Sequence[str], cwd: Path,
              env: Mapping[str, str] | None = None, check_program: bool = True) -> Entry:
    """Add a bot to the ladder's pool, to be scheduled against the pool as it is rated now. With
    ``check_program`` (the bots run here, not on a cluster's workers) a program that is not there is refused
    before the bot is stored: once stored, a bot stays in the ladder, and every run would stop on it.

    :raises ConfigError: when this is no continuing ladder, the name is taken, or the program is not there."""
    if not is_continuing(config):
        raise ConfigError("tournament.schedule", 'bots are added to a continuing ladder: schedule = "ladder" without a pool')
    if not command:
        raise ConfigError("command", "give the bot's command after --, e.g. -- python -m rummybot.bots.greedy")
    taken = [*config.bot_names, *(e.name for e in entries(config))]
    if name in taken:
        raise ConfigError("name", f"{name!r} is in the ladder already; bots: {', '.join(taken)}")
    # the name must be one the config would accept (it names log files)
    from tournaments.config import parse_config

    parse_config({"tournament": {"variant": config.variant, "games_per_pairing": 1},
                  "bots": [{"name": name, "command": list(command)}, {"name": f"{name}-check", "command": ["x"]}]})
    if check_program:
        from tournaments.botproc import cannot_start

        why = cannot_start(BotSpec(name, tuple(command), cwd.resolve(), dict(env or {})))
        if why is not None:
            raise ConfigError("command", f"bot {name!r} cannot start: {why}; nothing was added")
    with Store(config.output / DB_NAME) as store:
        results = store.results()
        rated = _rated(results)
        pool = tuple([b for b in rated if b in taken] + [b for b in taken if b not in rated])
        entry = Entry(name, tuple(command), cwd.resolve(), dict(env or {}), pool)
        store.set_meta(_ENTRIES, [*(store.meta(_ENTRIES) or []), entry.to_json()])
    return entry


def _rated(results: Sequence[Any]) -> list[str]:
    """Bots with results, best first (all of them unrated when the results cannot be fitted yet)."""
    if not results:
        return []
    try:
        fit = fit_elo(results)
    except ValueError:
        return list(pairwise(results).names)
    return sorted(fit.names, key=lambda n: -fit.rating(n))


def keep_ratings(store: Store, label: str, anchor: str | None = None, anchor_rating: float = 1500.0,
                 average: float = 0.0) -> int | None:
    """Fit every game in ``store`` and keep the ratings as a rating run; None when they cannot be fitted."""
    results = store.results()
    if not results:
        return None
    try:
        fit = fit_elo(results, anchor, anchor_rating, average)
    except ValueError:
        return None
    played = pairwise(results, fit.names).matches
    ratings = {n: (fit.rating(n), fit.error(n), int(played[i])) for i, n in enumerate(fit.names)}
    return store.add_rating_run(label, len(results), ratings)
