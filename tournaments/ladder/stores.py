"""Which store a ladder's ``--database`` names: a ``postgresql://`` URL (:class:`.pgstore.PostgresLadderStore`), else
an SQLite file (:class:`.store.SqliteLadderStore`). Apart from both, so neither imports the other."""

from __future__ import annotations

from pathlib import Path

from tournaments.ladder.store import SqliteLadderStore, is_postgres_url

__all__ = ["open_store"]


def open_store(database: str | Path, readonly: bool = False) -> SqliteLadderStore:
    """The ladder's store. ``readonly``: look, never write or migrate (``ladder status`` beside a running service)."""
    if is_postgres_url(database):
        from tournaments.ladder.pgstore import PostgresLadderStore

        return PostgresLadderStore(str(database), readonly=readonly)
    return SqliteLadderStore(database, readonly=readonly)
