"""The Java client (clients/java): its greedy example beats the Python random bot, and it plays one seat by seat
token, showing a rejection it provoked and playing on. Build it first: ``bash clients/java/build.sh``."""

from __future__ import annotations

from pathlib import Path

from tests.clients.harness import CLIENTS, assert_rejection_shown, play_gauntlet, play_one_seat, require, wins

JAR = CLIENTS / "java" / "target" / "rummybot-examples.jar"
COMMAND = ["java", "-jar", str(JAR)]
TOOLCHAIN = ["java", "mvn"]
# The example prints this when the match ended before its first draw (the random opponent moved first and
# dropped, about one time in three), so there was no decision to answer illegally: then the match is replayed.
NO_PROBE = "--probe-rejection: no probe in match"
PROBE_ATTEMPTS = 8


def test_java_greedy_beats_random(tmp_path: Path) -> None:
    require("java", JAR, toolchain=TOOLCHAIN)
    rows = play_gauntlet(tmp_path, "java-greedy", COMMAND, games=4)
    won = wins(rows, "java-greedy")
    assert won >= 6, (won, [(r.key, r.ranking, r.reason) for r in rows])


def test_java_one_seat() -> None:
    require("java", JAR, toolchain=TOOLCHAIN)
    result, output = play_one_seat(COMMAND)
    assert f"match {result.match_id} ended: ranking" in output, output


def test_java_shows_rejection_and_plays_on() -> None:
    require("java", JAR, toolchain=TOOLCHAIN)
    for _ in range(PROBE_ATTEMPTS):
        result, output = play_one_seat([*COMMAND, "--probe-rejection"])  # asserts it finished with no forfeit
        if NO_PROBE not in output:
            break
    assert_rejection_shown(output)
    assert f"match {result.match_id} ended: ranking" in output, output
