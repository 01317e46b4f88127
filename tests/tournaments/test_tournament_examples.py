"""The example configs shipped with the runner parse and schedule."""

import tomllib
from pathlib import Path

import pytest

from tournaments.config import parse_config

EXAMPLES = sorted((Path(__file__).parents[2] / "tournaments" / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_config_parses(path):
    config = parse_config(tomllib.loads(path.read_text()), base_dir=path.parent)
    assert len(config.bots) >= 2


def test_a_python_bot_command_runs_on_the_runners_interpreter():
    import sys

    from tournaments.botproc import resolve_command

    assert resolve_command(["python", "-m", "x"]) == [sys.executable, "-m", "x"]
    assert resolve_command(["./mybot", "--fast"]) == ["./mybot", "--fast"]
