"""The Node (TypeScript) SDK: its greedy example beats the Python random bot and plays both connection modes."""

from __future__ import annotations

from pathlib import Path

from tests.clients.harness import CLIENTS, assert_rejection_shown, play_gauntlet, play_one_seat, require, wins

ARTIFACT = CLIENTS / "node" / "dist" / "examples" / "greedy.js"
COMMAND = ["node", str(ARTIFACT)]
TOOLCHAIN = ["node", "npm"]


def test_greedy_beats_random(tmp_path: Path) -> None:
    require("node", ARTIFACT, toolchain=TOOLCHAIN)
    rows = play_gauntlet(tmp_path, "node-greedy", COMMAND, games=4)
    won = wins(rows, "node-greedy")
    assert won >= 6, f"node greedy won {won} of {len(rows)}"


def test_one_seat() -> None:
    require("node", ARTIFACT, toolchain=TOOLCHAIN)
    _, output = play_one_seat(COMMAND)
    assert "ended: ranking" in output, output[-3000:]


def test_rejection_is_shown_and_play_goes_on() -> None:
    require("node", ARTIFACT, toolchain=TOOLCHAIN)
    _, output = play_one_seat([*COMMAND, "--probe-rejection"])  # finishes, no forfeit, exit 0
    assert_rejection_shown(output)
    assert "ended: ranking" in output, output[-3000:]
