"""The code stays clean: ruff over the project's own Python (mypy --strict runs with `make lint`)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "referee", "tournaments", "clients/python/rummybot",
                           "protos/python/rummy/wire", "tests", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
