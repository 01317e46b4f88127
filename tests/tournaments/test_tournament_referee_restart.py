"""A tournament on a separate referee (``tournament run --referee ADDRESS``) whose referee is killed with SIGKILL
mid-tournament and started again on the same records folder: the runner gives up on the games in flight (they
fail, and are not recorded), a rerun plays what is missing, and in the end every scheduled game is in the results
database exactly once, each with the record of a match that finished, and no result committed before the kill is
lost or changed."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from referee.service.records import read_record
from referee.service.replay import verify_file
from referee.service.resume import RESUMED, unfinished_records
from tests.serving import free_port, kill, serve

CONFIG = """
[tournament]
variant = "fortune"
seats = 2
games_per_pairing = 10
schedule = "round-robin"
seed = "referee-restart"
output = "out"
concurrency = 2
max_hands = 1
max_turns_per_hand = 40

[tournament.time_control]
per_move_ms = 2000
grace_ms = 500
connect_ms = 1500

[[bots]]
name = "random-a"
command = ["python", "-m", "rummybot.bots.random_bot"]

[[bots]]
name = "random-b"
command = ["python", "-m", "rummybot.bots.random_bot"]
"""
SCHEDULED = 20  # one pairing, 10 deals, 2 seat rotations: enough that a loaded machine still kills mid-run


def _rows(db: Path) -> list[tuple[str, str, str]]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as c:
            return list(c.execute("SELECT key, match_id, record_path FROM games"))
    except sqlite3.OperationalError:
        return []


def _run(config: Path, address: str) -> subprocess.Popen[str]:
    # the runner waits 2 s, not 60, for a referee that does not answer (it is not started again until it stops)
    return subprocess.Popen([sys.executable, "-m", "tournaments.cli", "run", str(config), "--referee", address],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "RUMMY_REFEREE_RETRY_S": "2"})


def test_a_referee_killed_mid_tournament_loses_no_result_and_a_rerun_counts_each_game_once(tmp_path):
    config = tmp_path / "t.toml"
    config.write_text(CONFIG)
    db = tmp_path / "out" / "tournament.sqlite"
    records = tmp_path / "records"
    port = free_port()
    address = f"127.0.0.1:{port}"
    referee = serve(port, records)
    try:
        runner = _run(config, address)
        deadline = time.monotonic() + 60
        # kill once a result is in and a match is in flight (its record on disk unfinished): on a loaded machine the
        # kill could otherwise fall between two matches, and then nothing is left to resume (a record is never on
        # disk without its header and match lines: it is written whole, then renamed into place)
        while not (_rows(db) and any(unfinished_records(records))):
            assert runner.poll() is None, runner.communicate()
            assert time.monotonic() < deadline, "the tournament made no progress"
            time.sleep(0.005)
        kill(referee)
        before = {key: (match_id, path) for key, match_id, path in _rows(db)}
        runner.communicate(timeout=60)  # its in-flight games fail; so do the next, and it stops
        after_kill = {key: (match_id, path) for key, match_id, path in _rows(db)}
        assert len(after_kill) < SCHEDULED, "the kill came too late to test anything"
        referee = serve(port, records)  # the same folder: the matches in flight are resumed (no one rejoins them)
        rerun = _run(config, address)
        out, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, out + err
    finally:
        kill(referee)
    final = _rows(db)
    keys = [key for key, _, _ in final]
    assert len(keys) == len(set(keys)) == SCHEDULED, "every scheduled game exactly once"
    by_key = {key: (match_id, path) for key, match_id, path in final}
    assert all(by_key[k] == v for k, v in before.items()) and all(by_key[k] == v for k, v in after_kill.items()), \
        "a result committed before the kill is kept as it was"
    match_ids = [match_id for _, match_id, _ in final]
    assert len(set(match_ids)) == SCHEDULED, "no match counted for two games"
    resumed = []
    for path in records.glob("*.jsonl"):
        record = read_record(path)
        if any(e["type"] == RESUMED for e in record):
            resumed.append(path.stem)
        assert verify_file(path).exit_code in (0, 4), verify_file(path)  # finished, or ended by the restart
    for _, match_id, path in final:
        assert verify_file(path).exit_code == 0, f"{match_id}: a result whose record is not a finished match"
        assert match_id not in resumed, "a result the runner gave up on is never counted"
    assert resumed, "the restarted referee resumed the matches the kill left unfinished"
