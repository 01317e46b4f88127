"""Ladders. Two kinds live here:

- the offline, continuing ladder of a tournament config (``tournament ladder add CONFIG NAME -- COMMAND...``,
  :mod:`tournaments.ladder.offline`): every bot a program on the host, played by ``tournament run``;
- the ladder service (``tournament ladder serve CONFIG``): bots anywhere join with a key and are matched around the
  clock. One idea per module: :mod:`.keys` (keys and the registry), :mod:`.store` (results, SQLite), :mod:`.matchmaker`
  (who plays next, and why), :mod:`.rating` (refits as games arrive), :mod:`.health` (faults, pauses),
  :mod:`.service` (the loop), :mod:`.web` (leaderboard and JSON).

The offline ladder's names are re-exported so ``from tournaments import ladder; ladder.add_entry(...)`` still works.
"""

from tournaments.ladder.offline import (
    Entry,
    add_entry,
    entries,
    games,
    is_continuing,
    keep_ratings,
    with_entries,
)

__all__ = ["Entry", "is_continuing", "entries", "with_entries", "games", "add_entry", "keep_ratings"]
