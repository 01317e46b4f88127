"""The runner tells the truth about bots: a bot whose program cannot be found stops the run before it begins,
named with where it was looked for (as fastchess and cutechess refuse an engine that is not there); each bot
that started but died is named on the terminal with its last words and the path of its log, not only counted
as forfeits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tournaments.botproc import cannot_start
from tournaments.config import BotSpec, ConfigError, parse_config
from tournaments.runner import run_tournament

PY = sys.executable


def _run_cli(tmp_path: Path, second_bot: str, command: list[str], extra: str = "") -> subprocess.CompletedProcess[str]:
    """Run a one-game tournament of the greedy bot and `second_bot` through the CLI, as a user would."""
    cfg = tmp_path / "t.toml"
    cfg.write_text(f"""
[tournament]
variant = "indian"
games_per_pairing = 1
output = "out"
{extra}
[[bots]]
name = "good"
command = [{json.dumps(PY)}, "-m", "rummybot.bots.greedy"]

[[bots]]
name = "{second_bot}"
command = {json.dumps(command)}
""")
    return subprocess.run([PY, "-m", "tournaments.cli", "run", str(cfg), "--no-progress"], capture_output=True,
                          text=True, timeout=120)


def test_bots_that_die_are_named_with_their_logs(tmp_path: Path) -> None:
    run = _run_cli(tmp_path, "typo", [PY, str(tmp_path / "no_such_bot.py")],
                   extra='seed = "health"\ntime_control = { per_move_ms = 500, connect_ms = 5000 }\n')
    assert run.returncode == 0, run.stderr
    lines = {line.split("'")[1]: line for line in run.stderr.splitlines() if line.startswith("warning: bot ")}
    assert set(lines) == {"typo"}, run.stderr
    assert "can't open file" in lines["typo"] and str(tmp_path / "out" / "bots" / "typo-0.log") in lines["typo"]


def _config(tmp_path: Path, command: list[str]) -> dict:  # type: ignore[type-arg]
    return {"tournament": {"variant": "indian", "games_per_pairing": 1, "output": str(tmp_path / "out")},
            "bots": [{"name": "good", "command": [PY, "-m", "rummybot.bots.greedy"]},
                     {"name": "mine", "command": command}]}


def test_a_bot_program_that_is_not_there_stops_the_run_before_it_begins(tmp_path: Path) -> None:
    """A relative path is looked for from the bot's folder (the config's): the error says where it looked."""
    (tmp_path / "mybot").mkdir()
    config = parse_config(_config(tmp_path, ["mybot/first_legal"]), base_dir=tmp_path / "mybot")
    with pytest.raises(ConfigError) as exc:
        run_tournament(config, handle_signals=False)
    assert exc.value.key == "bots[1].command"
    assert str(tmp_path / "mybot" / "mybot" / "first_legal") in exc.value.problem
    assert "taken from the bot's cwd" in exc.value.problem
    assert not (tmp_path / "out").exists()  # nothing started, nothing written


def test_the_cli_says_which_bot_cannot_start_and_exits_2(tmp_path: Path) -> None:
    run = _run_cli(tmp_path, "absent", ["/no/such/executable"])
    assert run.returncode == 2
    assert "bots[1].command" in run.stderr and "no such program: /no/such/executable" in " ".join(run.stderr.split())


def test_what_can_start(tmp_path: Path) -> None:
    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/sh\n")
    assert cannot_start(BotSpec("a", ("python", "-m", "x"), tmp_path)) is None  # the runner's own interpreter
    assert cannot_start(BotSpec("a", ("sh", "bot.sh"), tmp_path)) is None  # a bare name, on the PATH
    assert "not executable" in (cannot_start(BotSpec("a", ("./bot.sh",), tmp_path)) or "")
    script.chmod(0o755)
    assert cannot_start(BotSpec("a", ("./bot.sh",), tmp_path)) is None
    assert cannot_start(BotSpec("a", (str(script),), None)) is None  # absolute
    assert "not on the PATH" in (cannot_start(BotSpec("a", ("no-such-program-here",), tmp_path)) or "")
    # the bot's own PATH is the one searched
    assert cannot_start(BotSpec("a", ("bot.sh",), tmp_path, {"PATH": str(tmp_path) + os.pathsep + os.defpath})) is None
