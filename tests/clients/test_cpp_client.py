"""The C++ SDK (clients/cpp, built by its build.sh): its greedy bot against the Python random bot, and one seat
with and without a deliberately rejected first answer."""

from __future__ import annotations

from pathlib import Path

from tests.clients.harness import CLIENTS, assert_rejection_shown, play_gauntlet, play_one_seat, require, wins

ARTIFACT = CLIENTS / "cpp" / "build" / "greedy"
COMMAND = [str(ARTIFACT)]
TOOLCHAIN = ["cmake", "g++"]
PROBE_ATTEMPTS = 8


def test_cpp_greedy_beats_random(tmp_path: Path) -> None:
    require("cpp", ARTIFACT, toolchain=TOOLCHAIN)
    rows = play_gauntlet(tmp_path, "cpp-greedy", COMMAND, games=4)
    assert wins(rows, "cpp-greedy") >= 6, [(r.key, r.ranking, r.reason) for r in rows]


def test_cpp_one_seat() -> None:
    require("cpp", ARTIFACT, toolchain=TOOLCHAIN)
    result, output = play_one_seat(COMMAND)
    assert f"match {result.match_id} ended: ranking" in output, output


def test_cpp_rejection_is_shown_and_play_goes_on() -> None:
    require("cpp", ARTIFACT, toolchain=TOOLCHAIN)
    # The one-seat match is a single deal and the random opponent may drop on its first turn (IND-8), ending the
    # match before the client is asked anything. The bot says "probe:" when it sends its illegal answer, so only
    # a match where it never got to probe is played again.
    for _ in range(PROBE_ATTEMPTS):
        result, output = play_one_seat([*COMMAND, "--probe-rejection"])
        assert f"match {result.match_id} ended: ranking" in output, output
        if "probe:" in output:
            break
    else:
        raise AssertionError(f"the opponent ended all {PROBE_ATTEMPTS} matches before the client's first decision")
    assert_rejection_shown(output)
