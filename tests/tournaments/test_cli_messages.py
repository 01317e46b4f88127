"""What `tournament run` tells the user when it cannot go on: no traceback for a referee or a Dask scheduler that
is not there, and a rerun hint that names the results folder and referee the run used."""

from __future__ import annotations

from pathlib import Path

import pytest

from tournaments import runner
from tournaments.cli import main
from tournaments.runner import MatchError, RunStats

_CONFIG = ('[tournament]\nvariant = "indian"\nseats = 2\ngames_per_pairing = 1\noutput = "out"\n'
           '[[bots]]\nname = "a"\ncommand = ["true"]\n[[bots]]\nname = "b"\ncommand = ["true"]\n')


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "t.toml"
    cfg.write_text(_CONFIG, encoding="utf-8")
    return cfg


def test_no_referee_answering_is_an_error_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--referee HOST:PORT` with nothing listening (or `--cluster` with no scheduler): exit 2 and one line."""

    def no_referee(*args: object, **kwargs: object) -> RunStats:
        raise MatchError("no referee answering at 127.0.0.1:9")

    monkeypatch.setattr(runner, "run_tournament", no_referee)
    assert main(["run", str(_config(tmp_path)), "--referee", "127.0.0.1:9", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "error: no referee answering at 127.0.0.1:9" in err and "Traceback" not in err


@pytest.mark.parametrize("stats", [RunStats(scheduled=4, budget_reached=True), RunStats(scheduled=4, interrupted=True)])
def test_the_rerun_hint_keeps_the_output_folder_and_referee_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stats: RunStats
) -> None:
    """A run with `--output` stopped by its time budget or Ctrl-C says to rerun into that same folder (the bare
    `tournament run CONFIG` would start afresh in the config's own output)."""
    monkeypatch.setattr(runner, "run_tournament", lambda *args, **kwargs: stats)
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping inside a long path
    cfg = _config(tmp_path)
    out = tmp_path / "elsewhere"
    main(["run", str(cfg), "--output", str(out), "--referee", "127.0.0.1:9", "--no-progress"])
    err = " ".join(capsys.readouterr().err.split())  # the console wraps long lines
    assert f"rerun `tournament run {cfg} --output {out} --referee 127.0.0.1:9` to play the 4 missing games" in err
