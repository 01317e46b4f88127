"""What the ladder's end-to-end tests share: the CLI as a user runs it, waiting for a condition, the leaderboard,
the referee's Prometheus series, the store a ladder keeps its results in (SQLite or PostgreSQL) read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tournaments.ladder.store import FaultSummary, GameRow
from tournaments.ladder.stores import open_store

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'clients' / 'python'}", "RUMMY_PURE_PYTHON": "1"}


def ladder_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``tournament ladder ARGS...`` in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "tournaments.cli", "ladder", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=60, check=False)


def ladder_here(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``tournament ladder ARGS...`` run by this process in ``cwd`` (the same ``main`` the console script runs, without
    an interpreter to start: some 3 s a command on a busy 2-core box); its output and exit status as ``ladder_cli``'s."""
    import contextlib
    import io

    from tournaments.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["ladder", *args])
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["tournament", "ladder", *args], code, out.getvalue(), err.getvalue())


def wait_for(what: str, cond: Callable[[], Any], timeout: float = 120.0) -> Any:
    """``cond()``'s first true value, asked every 0.3 s. :raises AssertionError: none within ``timeout``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def leaderboard(web: str) -> dict[str, dict[str, Any]]:
    """/api/leaderboard's bots by name (empty while the page does not answer)."""
    try:
        with urllib.request.urlopen(f"{web}/api/leaderboard", timeout=5) as r:
            return {b["bot"]: b for b in json.loads(r.read())["bots"]}
    except OSError:
        return {}


def metric_sum(page: str, name: str) -> float:
    """The sum of series ``name``'s samples over every label in a Prometheus text ``page`` (the ladder's
    ``/metrics``: the embedded referee's counters)."""
    return sum(s.value for family in text_string_to_metric_families(page) for s in family.samples if s.name == name)


@dataclass(frozen=True)
class Backend:
    """Where a test ladder keeps its results: SQLite in DATA/ladder.db (``url`` ""), or a PostgreSQL database given
    to every command as ``--database URL``. ``full``: the whole flow here; the other store runs it shortened (one
    100-game run per ``make test``: on PostgreSQL where it is installed, as CI has it, else on SQLite)."""

    url: str = ""
    full: bool = True

    @property
    def name(self) -> str:
        return "postgresql" if self.url else "sqlite"

    @property
    def args(self) -> list[str]:
        """What each `ladder` command is given to use this store."""
        return ["--database", self.url] if self.url else []

    def storage(self, tmp: Path) -> str | Path:
        """The store as ``open_store`` takes it (a test ladder's data folder is ``tmp / "data"``)."""
        return self.url or tmp / "data" / "ladder.db"

    def games(self, tmp: Path) -> list[GameRow]:
        """Every stored game, in the order stored, read through the store as the service wrote it. (Opened for
        writing, as the service would: after a kill -9 an SQLite WAL may need a recovery a read-only reader cannot
        run.)"""
        with open_store(self.storage(tmp)) as store:
            return store.games()

    def bot_id(self, tmp: Path, name: str, version: str = "1") -> int:
        with open_store(self.storage(tmp)) as store:
            (bot,) = store.find(name, version)
            return bot.id

    def games_of(self, tmp: Path, bot_id: int) -> int:
        """Games stored with ``bot_id`` at a seat."""
        with open_store(self.storage(tmp)) as store:
            return store.faults().get(bot_id, FaultSummary()).games
