"""Fixtures for the ladder's stores: a throwaway PostgreSQL server for the session (skipped where PostgreSQL is not
installed, saying what to install; required, so failing instead, when CI=true or RUMMY_REQUIRE_POSTGRES=1), and
``ladder_db``: a fresh, empty database of each backend in turn."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tournaments.pgserver import TempPostgres, missing


def _required() -> bool:
    return os.environ.get("CI") == "true" or os.environ.get("RUMMY_REQUIRE_POSTGRES") == "1"


@pytest.fixture(scope="session")
def postgres() -> Iterator[TempPostgres]:
    why = missing()
    if why is not None:
        if _required():
            pytest.fail(f"the PostgreSQL tests are required here (CI=true or RUMMY_REQUIRE_POSTGRES=1) but {why}")
        pytest.skip(why)
    server = TempPostgres()
    try:
        server.start()
    except RuntimeError as exc:
        server.stop()
        if _required():
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres: TempPostgres) -> str:
    """A new, empty PostgreSQL database."""
    return postgres.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def ladder_db(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """A fresh ladder database: an SQLite file's path, or a PostgreSQL URL (``stores.open_store`` takes either)."""
    if request.param == "sqlite":
        return tmp_path / "ladder.db"
    url: str = request.getfixturevalue("postgres_url")
    return url
