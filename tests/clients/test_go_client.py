"""The Go client (clients/go, built by its build.sh): its greedy bot against the Python random bot, and one seat
with and without a deliberately rejected first answer."""

from __future__ import annotations

from pathlib import Path

from tests.clients.harness import CLIENTS, assert_rejection_shown, play_gauntlet, play_one_seat, require, wins

ARTIFACT = CLIENTS / "go" / "bin" / "greedy"
COMMAND = [str(ARTIFACT)]


def test_go_greedy_beats_random(tmp_path: Path) -> None:
    require("go", ARTIFACT, toolchain=["go"])
    rows = play_gauntlet(tmp_path, "go-greedy", COMMAND, games=4)
    assert wins(rows, "go-greedy") >= 6, [(r.key, r.ranking, r.reason) for r in rows]


def test_go_one_seat() -> None:
    require("go", ARTIFACT, toolchain=["go"])
    result, output = play_one_seat(COMMAND)
    assert f"match {result.match_id} ended: ranking" in output, output


def test_go_rejection_is_shown_and_play_goes_on() -> None:
    require("go", ARTIFACT, toolchain=["go"])
    result, output = play_one_seat([*COMMAND, "--probe-rejection"])
    assert_rejection_shown(output)
    assert f"match {result.match_id} ended: ranking" in output, output
