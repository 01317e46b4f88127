"""What the ladder's end-to-end tests share: the CLI as a user runs it, waiting for a condition, the leaderboard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'clients' / 'python'}", "RUMMY_PURE_PYTHON": "1"}


def ladder_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``tournament ladder ARGS...`` in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "tournaments.cli", "ladder", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=60, check=False)


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
