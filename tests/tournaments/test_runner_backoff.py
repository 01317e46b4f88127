"""The runner against a referee that restarts, goes away or cannot write its records: it retries a referee that
does not answer (UNAVAILABLE) with exponential backoff and jitter, up to a bound, then stops with a clear error;
it stops at once, keeping every stored result, when the referee cannot record matches (RECORDS_UNWRITABLE); no
slot waits out a match's timeout on a referee that will never answer."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))

from tournament_fakes import FakeReferee, fake_config  # noqa: E402

from referee.service.records import read_record  # noqa: E402
from referee.service.replay import verify_file  # noqa: E402
from referee.service.resume import RESUMED  # noqa: E402
from tests.serving import free_port, kill, serve  # noqa: E402
from tournaments import matches  # noqa: E402
from tournaments.config import load_config, parse_config  # noqa: E402
from tournaments.runner import Backoff, MatchError, MatchOutcome, MatchRequest, run_tournament, static_backend  # noqa: E402
from tournaments.store import DB_NAME, Store  # noqa: E402

UNWRITABLE = ("CreateMatch: FAILED_PRECONDITION: RECORDS_UNWRITABLE: no match can be recorded: cannot write in the "
              "records folder /r: No space left on device")


def _stored(out: Path) -> set[str]:
    with Store(out / DB_NAME, readonly=True) as s:
        return s.done_keys()


def test_the_backoff_doubles_with_jitter_up_to_its_cap_and_gives_up_after_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(matches, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    b = Backoff(give_up_s=30, base_s=0.25, cap_s=4)
    delays = []
    while (d := b.next_delay()) is not None:
        delays.append(d)
        clock[0] += d
    for i, d in enumerate(delays[:-1]):  # the last is cut to the bound
        full = min(4.0, 0.25 * 2**i)
        assert full / 2 <= d <= full
    assert sum(delays) == pytest.approx(30) and len(delays) < 20  # not a spin: a handful of tries in 30 s
    b.reset()
    assert b.next_delay() is not None and b.failures == 1


class Restarting(FakeReferee):
    """A referee that is away (UNAVAILABLE at once, as gRPC answers when nothing listens) from ``down_at`` for
    ``down_s`` seconds after the first call."""

    def __init__(self, down_at: float, down_s: float, **kw: Any) -> None:
        super().__init__(**kw)
        self.down_at, self.down_s = down_at, down_s
        self.t0: float | None = None
        self.refused = 0

    async def __call__(self, req: MatchRequest) -> MatchOutcome:
        now = time.monotonic()
        self.t0 = self.t0 or now
        if self.t0 + self.down_at <= now < self.t0 + self.down_at + self.down_s:
            self.refused += 1
            raise MatchError("CreateMatch: UNAVAILABLE: failed to connect to all addresses", code="UNAVAILABLE")
        return await super().__call__(req)


def test_a_referee_away_for_a_few_seconds_is_waited_for_and_the_run_completes(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=10, concurrency=4)
    fake = Restarting(down_at=0.1, down_s=2.0, delay=0.01)
    stats = run_tournament(config, backend=static_backend(fake), handle_signals=False)
    assert stats.stop_reason == "" and stats.failed == 0 and stats.played == 60 and stats.missing == 0
    assert fake.refused <= 4 * 8, fake.refused  # backoff, not the 18 instant failures that used to stop the run
    assert fake.refused >= 4
    with Store(tmp_path / "out" / DB_NAME, readonly=True) as s:
        assert s.failures() == []  # a restart is not a failed match


class KeyLogging(Restarting):
    """A restarting referee that notes the idempotency key of every CreateMatch, refused or not."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.keys: list[tuple[str, str]] = []

    async def __call__(self, req: MatchRequest) -> MatchOutcome:
        self.keys.append((req.game.key, req.idempotency_key))
        return await super().__call__(req)


def test_a_game_asked_again_after_the_referee_was_away_carries_the_same_idempotency_key(tmp_path: Path) -> None:
    """The referee may have made the match before it went away (its answer lost): the same key lets the restarted
    referee answer with that match (resumed from its record) instead of leaving it orphaned. A failed game tried
    again, and a later run, get new keys: they are new matches."""
    config = fake_config(tmp_path / "out", games_per_pairing=4, concurrency=2)
    first = KeyLogging(down_at=1e9, down_s=0)
    run_tournament(fake_config(tmp_path / "probe", games_per_pairing=4, concurrency=2), backend=static_backend(first),
                   handle_signals=False)
    failing = first.keys[0][0]  # a game scheduled early, failing once (before the referee goes away)
    fake = KeyLogging(down_at=0.05, down_s=1.0, delay=0.02, fail={failing: 1})
    stats = run_tournament(config, backend=static_backend(fake), handle_signals=False)
    assert stats.played == len(first.keys) and stats.failed == 1 and fake.refused > 0
    by_game: dict[str, list[str]] = {}
    for game, key in fake.keys:
        by_game.setdefault(game, []).append(key)
    repeated = [g for g, keys in by_game.items() if len(keys) > 1 and g != failing]
    assert repeated and all(len(set(by_game[g])) == 1 for g in repeated), "a repeat after UNAVAILABLE keeps its key"
    assert len(set(by_game[failing])) == 2, "a failed game tried again is a new match: a new key"
    assert not {k for _, k in first.keys} & {k for _, k in fake.keys}, "another run: other keys"
    assert all(key for _, key in fake.keys)


def test_a_referee_that_never_comes_back_stops_the_run_after_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUMMY_REFEREE_RETRY_S", "1.5")
    config = fake_config(tmp_path / "out", games_per_pairing=10, concurrency=4)
    fake = Restarting(down_at=0.2, down_s=1e9, delay=0.05)
    t0 = time.monotonic()
    stats = run_tournament(config, backend=static_backend(fake), handle_signals=False)
    took = time.monotonic() - t0
    assert 1.5 <= took < 6, took
    assert "the referee has not answered for 2 s" in stats.stop_reason or "has not answered for 1 s" in stats.stop_reason
    assert "UNAVAILABLE" in stats.stop_reason and not stats.interrupted
    assert len(_stored(tmp_path / "out")) == stats.played == len(fake.played) > 0  # what finished is kept
    assert fake.refused < 4 * 10


class Unwritable(FakeReferee):
    """A referee whose records folder fills up after ``ok`` matches: the match in flight ends ABORTED with the
    reason code, the next CreateMatch is refused with it."""

    def __init__(self, ok: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.ok = ok
        self.calls = 0

    async def __call__(self, req: MatchRequest) -> MatchOutcome:
        self.calls += 1
        if self.calls == self.ok + 1:
            raise MatchError("match m1 ended MATCH_STATUS_ABORTED: RECORDS_UNWRITABLE: cannot write /r/m1.jsonl: No "
                             "space left on device", reason="RECORDS_UNWRITABLE")
        if self.calls > self.ok:
            raise MatchError(UNWRITABLE, code="FAILED_PRECONDITION", reason="RECORDS_UNWRITABLE")
        return await super().__call__(req)


def test_records_the_referee_cannot_write_stop_the_run_at_once_keeping_what_finished(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=10, concurrency=1)
    fake = Unwritable(ok=7)
    stats = run_tournament(config, backend=static_backend(fake), handle_signals=False)
    assert stats.played == 7 and stats.failed == 1 and fake.calls == 8
    assert stats.stop_reason.startswith("the referee cannot write its match records")
    assert "No space left on device" in stats.stop_reason and "run again" in stats.stop_reason
    assert _stored(tmp_path / "out") == set(fake.played)


def test_a_results_database_that_cannot_be_written_stops_the_run_with_what_is_stored(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=10, concurrency=2)
    real = Store.record
    calls = [0]

    def record(self: Store, *a: Any, **k: Any) -> None:
        calls[0] += 1
        if calls[0] > 5:
            raise sqlite3.OperationalError("database or disk is full")
        real(self, *a, **k)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Store, "record", record)
        stats = run_tournament(config, backend=static_backend(FakeReferee(delay=0.005)), handle_signals=False)
    assert "database or disk is full" in stats.stop_reason and "kept" in stats.stop_reason
    assert len(_stored(tmp_path / "out")) == 5 and stats.played == 5


# ------------------------------------------------------------------------------------------ a real referee


def _bots() -> list[dict[str, Any]]:
    return [{"name": n, "command": [sys.executable, "-m", "rummybot.bots.random_bot"]} for n in ("random-a", "random-b")]


def _mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir(parents=True)
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                         text=True, timeout=10, check=False)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root needed): {got.stderr.strip()}")


def test_a_tournament_on_a_records_folder_that_fills_up_ends_with_a_clear_error_within_a_minute(tmp_path: Path) -> None:
    out = tmp_path / "out"
    records = out / "records"  # where the embedded referee keeps them: a 200 KB file system
    _mount_tmpfs(records, "200k")
    try:
        config = parse_config({"tournament": {
            "variant": "indian", "seats": 2, "games_per_pairing": 40, "concurrency": 4, "seed": "full-disk",
            "output": str(out), "options": {"format": "deals-3"}, "match_timeout_s": 3600,
            "time_control": {"per_move_ms": 2000, "grace_ms": 300, "connect_ms": 5000}}, "bots": _bots()},
            base_dir=tmp_path)
        t0 = time.monotonic()
        stats = run_tournament(config, handle_signals=False)
        took = time.monotonic() - t0
        assert took < 60, took
        assert "RECORDS_UNWRITABLE" in stats.stop_reason and "No space left on device" in stats.stop_reason, stats
        assert stats.missing > 0 and not stats.interrupted
        with Store(out / DB_NAME, readonly=True) as s:
            rows = list(s.rows())
        assert len(rows) == stats.played > 0
        for row in rows:  # every stored result has the record of a finished match
            assert verify_file(row.record_path).exit_code == 0, row.record_path
        assert stat_mode(records) == 0o700 and all(stat_mode(p) == 0o600 for p in records.glob("*.jsonl"))
    finally:
        subprocess.run(["umount", "-l", str(records)], capture_output=True, timeout=10, check=False)


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


CONFIG = """
[tournament]
variant = "fortune"
seats = 2
games_per_pairing = 8
schedule = "round-robin"
seed = "backoff-restart"
output = "out"
concurrency = 2
max_hands = 1
max_turns_per_hand = 40

[tournament.time_control]
per_move_ms = 2000
grace_ms = 4000
connect_ms = 8000

[[bots]]
name = "random-a"
command = ["python", "-m", "rummybot.bots.random_bot"]

[[bots]]
name = "random-b"
command = ["python", "-m", "rummybot.bots.random_bot"]
"""


def _in_flight(records: Path) -> bool:
    """A match with moves made and no end yet: killed now, the restarted referee has one to resume."""
    for path in records.glob("*.jsonl"):
        try:
            kinds = [json.loads(line).get("type") for line in path.read_text().splitlines() if line.endswith("}")]
        except (OSError, ValueError):
            continue
        if "action" in kinds and not {"result", "aborted"} & set(kinds):
            return True
    return False


def _rows(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as c:
            return list(c.execute("SELECT key, match_id FROM games"))
    except sqlite3.OperationalError:
        return []


def test_a_referee_stopped_and_started_again_a_second_later_on_the_same_port_the_runner_resumes(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(CONFIG)
    db = tmp_path / "out" / DB_NAME
    records = tmp_path / "records"
    port = free_port()
    address = f"127.0.0.1:{port}"
    referee = serve(port, records)
    runner_proc = subprocess.Popen([sys.executable, "-m", "tournaments.cli", "run", str(tmp_path / "t.toml"), "--referee",
                                    address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, "RUMMY_REFEREE_RETRY_S": "40"})
    try:
        deadline = time.monotonic() + 60
        while not (_rows(db) and _in_flight(records)):  # a result is in, and a game is being played
            assert runner_proc.poll() is None, runner_proc.communicate()
            assert time.monotonic() < deadline, "the tournament made no progress"
            time.sleep(0.01)
        kill(referee)  # SIGKILL mid-match: the records are left unfinished
        time.sleep(1.0)
        referee = serve(port, records)  # the same port and folder: matches in flight are resumed
        out, err = runner_proc.communicate(timeout=120)
        assert runner_proc.returncode == 0, out + err
    finally:
        if runner_proc.poll() is None:
            runner_proc.kill()
            runner_proc.wait()
        kill(referee)
    rows = _rows(db)
    assert len(rows) == len({k for k, _ in rows}) == 16, "every game once, in the run that saw the restart"
    resumed = {p.stem for p in records.glob("*.jsonl") if any(e["type"] == RESUMED for e in read_record(p))}
    assert resumed and resumed <= {m for _, m in rows}, "the matches in flight were resumed and their results kept"
    events = [json.loads(line) for line in (tmp_path / "out" / "tournament.log").read_text().splitlines()]
    assert not [e for e in events if e["event"] == "game_failed"], "a restart fails no game"



def test_a_frozen_referee_stops_the_run_after_the_bound_not_after_the_match_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A referee that takes connections but never answers (SIGSTOP): the result wait is asked again, a quick call
    finds no answer, the backoff gives up after its bound; no slot waits out ``match_timeout_s`` (an hour)."""
    monkeypatch.setattr(matches, "RESULT_POLL_S", 1.0)
    monkeypatch.setattr(matches, "LIVENESS_TIMEOUT_S", 1.0)
    monkeypatch.setattr(matches, "CREATE_TIMEOUT_S", 2.0)
    monkeypatch.setenv("RUMMY_REFEREE_RETRY_S", "3")
    (tmp_path / "t.toml").write_text(CONFIG.replace("games_per_pairing = 8", "games_per_pairing = 40"))
    config = load_config(tmp_path / "t.toml")
    port = free_port()
    referee = serve(port, tmp_path / "records")
    frozen_at: list[float] = []

    def freeze_after_a_result() -> None:
        deadline = time.monotonic() + 60
        while not _rows(tmp_path / "out" / DB_NAME) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.killpg(referee.pid, signal.SIGSTOP)
        frozen_at.append(time.monotonic())

    freezer = threading.Thread(target=freeze_after_a_result, daemon=True)
    freezer.start()
    try:
        stats = run_tournament(config, referee=f"127.0.0.1:{port}", handle_signals=False)
        ended = time.monotonic()
    finally:
        os.killpg(referee.pid, signal.SIGCONT)
        kill(referee)
        freezer.join(5)
    assert frozen_at and ended - frozen_at[0] < 20, ended - frozen_at[0]
    assert "the referee has not answered" in stats.stop_reason, stats.stop_reason
    assert stats.played >= 1 and len(_rows(tmp_path / "out" / DB_NAME)) == stats.played
