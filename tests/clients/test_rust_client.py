"""The Rust client (clients/rust, built by its build.sh): its greedy bot against the Python random bot over one
connection, and one seat with and without a deliberately rejected first answer."""

from __future__ import annotations

from pathlib import Path

from tests.clients.harness import CLIENTS, assert_rejection_shown, play_gauntlet, play_one_seat, require, wins

ARTIFACT = CLIENTS / "rust" / "target" / "release" / "greedy"
COMMAND = [str(ARTIFACT)]


def test_rust_greedy_beats_random(tmp_path: Path) -> None:
    require("rust", ARTIFACT, toolchain=["cargo"])
    rows = play_gauntlet(tmp_path, "rust-greedy", COMMAND, games=4)
    assert wins(rows, "rust-greedy") >= 6, [(r.key, r.ranking, r.reason) for r in rows]


def test_rust_one_seat() -> None:
    require("rust", ARTIFACT, toolchain=["cargo"])
    result, output = play_one_seat(COMMAND)
    assert f"match {result.match_id} ended: ranking" in output, output


def test_rust_rejection_is_shown_and_play_goes_on() -> None:
    require("rust", ARTIFACT, toolchain=["cargo"])
    result, output = play_one_seat([*COMMAND, "--probe-rejection"])
    assert_rejection_shown(output)
    assert "rejected" in output.split(f"match {result.match_id} ended: ranking")[0], output
