"""The runner tells the truth about bots: each bot that could not start or died is named on the terminal with
its last words and the path of its log, not only counted as forfeits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PY = sys.executable


def test_bots_that_fail_to_start_or_die_are_named_with_their_logs(tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text(f"""
[tournament]
variant = "indian"
games_per_pairing = 1
seed = "health"
output = "out"
time_control = {{ per_move_ms = 500, connect_ms = 1000 }}

[[bots]]
name = "good"
command = [{json.dumps(PY)}, "-m", "rummybot.bots.greedy"]

[[bots]]
name = "typo"
command = [{json.dumps(PY)}, "{tmp_path / 'no_such_bot.py'}"]

[[bots]]
name = "absent"
command = ["/no/such/executable"]
""")
    run = subprocess.run([PY, "-m", "tournaments.cli", "run", str(cfg), "--no-progress"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = {line.split("'")[1]: line for line in run.stderr.splitlines() if line.startswith("warning: bot ")}
    assert set(lines) == {"typo", "absent"}, run.stderr
    assert "can't open file" in lines["typo"] and str(tmp_path / "out" / "bots" / "typo-0.log") in lines["typo"]
    assert "cannot start '/no/such/executable'" in lines["absent"] and "absent-0.log" in lines["absent"]
