"""A bot that keeps failing is paused with the reason (its faults and a house bot's last log lines), for longer
after each failed retry, and a clean game ends the series."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tournaments.ladder.health import MAX_PAUSE_S, log_tail, pause_length, pause_reason
from tournaments.ladder.store import GameRow


def _game(i: int, forfeited: tuple[int, ...]) -> GameRow:
    return GameRow(i, f"d|r{i}", "d", 0, (7, 8), ((0,), (1,)), forfeited, (0, 0), "x", f"m{i}", 0.0)


def test_only_a_run_of_failed_games_pauses() -> None:
    failing = [_game(i, (1,)) for i in range(4)]
    assert pause_reason(failing[:3], 8, 4) is None  # too few games yet
    assert pause_reason([_game(9, ()), *failing[:3]], 8, 4) is None  # the newest game was clean
    assert pause_reason(failing, 7, 4) is None  # the other seat failed, not bot 7
    why = pause_reason(failing, 8, 4, [(Counter({"CARD_NOT_IN_HAND": 5}), 2, 1)], "Traceback | KeyError: 'x'")
    assert why is not None
    assert "forfeited its last 4 games" in why and "CARD_NOT_IN_HAND x5" in why and "2 missed deadlines" in why
    assert "1 disconnects" in why and why.endswith("KeyError: 'x'")
    assert "did not join" in (pause_reason(failing, 8, 4) or "")


def test_pauses_double_up_to_a_day() -> None:
    assert [pause_length(n, 300) for n in range(3)] == [300, 600, 1200]
    assert pause_length(40, 300) == MAX_PAUSE_S


def test_log_tail_is_the_last_lines_on_one_line(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)) + "\n")
    assert log_tail(log, 3) == "line 97 | line 98 | line 99"
    assert log_tail(tmp_path / "missing.log") == ""


def test_log_tail_keeps_what_the_bot_said_when_restarts_filled_its_log_with_notes(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    start = "=== 2026-12-07 08:02:34 start (sandboxed): " + "x" * 200 + " ==="
    log.write_text(f"{start}\nescape-write failed: OSError: read-only\n=== 2026-12-07 08:02:35 stopped (exit code 1) ===\n"
                   + "".join(f"{start}\n=== 2026-12-07 08:02:3{i} stopped (exit code 1) ===\n" for i in range(4))
                   + f"{start}\n")
    tail = log_tail(log)
    assert "escape-write failed: OSError: read-only" in tail  # the failure, not pushed out by the notes
    assert tail.endswith(start[:300]) and tail.count("===") == 2  # and only the latest note


def test_log_tail_keeps_how_a_killed_bot_ended_when_it_was_restarted_since(tmp_path: Path) -> None:
    """A bot the kernel killed for memory says nothing itself: the supervisor's exit note is its failure, and the
    restart's note after it must not push it out (a CI failure of test_sandbox_ladder's memory bot)."""
    log = tmp_path / "bot.log"
    start = "=== 2026-12-07 09:08:50 start (sandboxed): python escape_bot.py memory ==="
    killed = "=== 2026-12-07 09:08:51 exited with code -9 (SIGKILL: killed: out of memory, past its CPU time, or stopped) ==="
    restart = "=== 2026-12-07 09:08:52 restart #1 (sandboxed): python escape_bot.py memory ==="
    log.write_text(f"{start}\n{killed}\n{restart}\n")
    tail = log_tail(log)
    assert "killed: out of memory" in tail and tail.endswith(restart), tail
