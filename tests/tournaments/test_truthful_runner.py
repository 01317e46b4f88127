"""The runner tells the truth: paths resolve against the config's folder, troubled bots are named, messages
arrive whole, and nothing is left behind (no lingering child, no transport closed after its loop)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tournaments.config import load_config

# times that hold on a loaded 2-core machine (CI runs three test workers): a Python bot starts in about a second
CONFIG = """
[tournament]
variant = "indian"
seats = 2
games_per_pairing = 1
seed = "truth"
output = "out"
concurrency = 2
[tournament.time_control]
per_move_ms = 1000
grace_ms = 500
connect_ms = 6000
[[bots]]
name = "greedy"
command = ["python", "-m", "rummybot.bots.greedy"]
[[bots]]
name = "{name}"
command = {command}
"""


def _tournament(folder: Path, name: str, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.toml").write_text(CONFIG.format(name=name, command=command))
    return subprocess.run([sys.executable, "-m", "tournaments.cli", "run", str(folder / "t.toml"), "--no-progress"],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


def test_a_bots_relative_command_runs_in_the_config_files_folder(tmp_path: Path) -> None:
    """A script named relative to the config is found from any shell folder; the output sits beside the config."""
    config_dir = tmp_path / "league"
    (config_dir / "bots").mkdir(parents=True)
    (config_dir / "bots" / "mine.py").write_text(
        "from rummybot.bots.base import PolicyBot\nfrom referee.rules.policies import greedy_policy\n"
        "from rummybot.sdk import main\nmain(PolicyBot('mine', greedy_policy))\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = _tournament(config_dir, "mine", '["python", "bots/mine.py"]', cwd=elsewhere)
    assert run.returncode == 0, run.stderr[-2000:]
    assert load_config(config_dir / "t.toml").bot("mine").cwd == config_dir.resolve()
    assert "warning" not in run.stderr, run.stderr
    assert (config_dir / "out" / "tournament.sqlite").is_file() and not (elsewhere / "out").exists()
    assert f"results: {config_dir.resolve() / 'out' / 'tournament.sqlite'}" in run.stdout.replace("\n", "")


def test_a_bot_that_never_joins_is_named_with_its_log(tmp_path: Path) -> None:
    """A live process that never connects forfeits every game, and the terminal says which bot and where its log is."""
    run = _tournament(tmp_path / "t", "mute", '["python", "-c", "import time; print(\'thinking\', flush=True); time.sleep(60)"]', cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    err = run.stderr.replace("\n", " ")
    assert "bot 'mute' forfeited all 2 of its games" in err and "mute-0.log" in err, run.stderr


def test_a_bot_whose_child_outlives_it_leaves_nothing_behind(tmp_path: Path) -> None:
    """A shell bot whose child never exits: the runner ends cleanly, with no 'Event loop is closed' noise and
    no lingering child process."""
    marker = f"{time.time_ns()}"
    run = _tournament(tmp_path / "t", "shell", f'["sh", "-c", "sleep 3{marker[-4:]}; true"]', cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Exception ignored" not in run.stderr and "Event loop is closed" not in run.stderr, run.stderr
    left = subprocess.run(["pgrep", "-f", f"sleep 3{marker[-4:]}"], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"a bot's child is still running: {left.stdout}"


def test_a_config_error_keeps_its_bracketed_words(tmp_path: Path) -> None:
    """Messages are printed as text, not as terminal markup: '[tournament]' survives."""
    (tmp_path / "t.toml").write_text('[[bots]]\nname = "a"\ncommand = ["x"]\n[[bots]]\nname = "b"\ncommand = ["y"]\n')
    run = subprocess.run([sys.executable, "-m", "tournaments.cli", "run", str(tmp_path / "t.toml")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "missing: a [tournament] table is required" in run.stderr.replace("\n", " "), run.stderr
