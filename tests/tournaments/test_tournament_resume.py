"""Kill the runner mid-tournament (SIGKILL, or SIGINT for a clean stop), rerun it: no game lost or played twice."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

FAKE = Path(__file__).parent / "fixtures" / "fake_tournament.py"
TOTAL = 3 * 2 * 10  # fake_config: 3 bots, 2 seats, 10 deals
CONCURRENCY = 2


def _rows(db: Path) -> list[str]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as c:
            return [r[0] for r in c.execute("SELECT key FROM games")]
    except sqlite3.OperationalError:  # the schema is not there yet
        return []


def _start(out: Path, delay: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(FAKE), str(out), str(delay)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for_rows(db: Path, n: int, proc: subprocess.Popen[str], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while len(_rows(db)) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the runner made no progress"
        time.sleep(0.02)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM], ids=["SIGKILL", "SIGINT", "SIGTERM"])
def test_a_killed_tournament_resumes_without_losing_or_repeating_games(tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "out"
    db = out / "tournament.sqlite"
    played_log = tmp_path / "played.log"

    proc = _start(out, delay=0.03)
    _wait_for_rows(db, 8, proc)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=20)
    first = _rows(db)
    assert 8 <= len(first) < TOTAL, "stopped too late to test resuming"
    if sig is signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:  # a clean stop: exit code 130, a message, and every game it reports as played is stored
        assert proc.returncode == 130, stderr
        assert "stopping" in stderr
        assert stdout.strip().splitlines()[-1] == f"played {len(first)}"

    proc = _start(out, delay=0.0)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert stdout.strip().splitlines()[-1] == f"played {TOTAL - len(first)}"  # only the missing games

    final = _rows(db)
    assert len(final) == len(set(final)) == TOTAL
    assert set(first) <= set(final)
    # A game runs twice only if it was in flight when the first run died (finished but not yet committed, or
    # cancelled): at most one per concurrent slot, and never one that had been committed.
    played = Counter(played_log.read_text().split())
    twice = [k for k, n in played.items() if n > 1]
    assert len(twice) <= CONCURRENCY and not set(twice) & set(first)
    assert set(played) == set(final)
