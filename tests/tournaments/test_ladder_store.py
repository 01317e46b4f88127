"""The ladder's store on both backends (SQLite, and PostgreSQL on a real server): the schema is migrated once at
start, also by two services started at once; a newer schema is refused; a finished game is written once, with its
faults, in one transaction, whoever writes it and however often; a process killed -9 inside a transaction leaves no
part of it; bots, pauses and rating runs read back as written (timestamps to the microsecond)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tournaments.faults import SeatFaults
from tournaments.ladder.keys import key_digest, new_key
from tournaments.ladder.store import (
    SCHEMA_VERSION,
    BotExists,
    NoSuchBot,
    SqliteLadderStore,
    StoreTooNew,
    StoreUnavailable,
    open_store,
    redact_url,
)

ROOT = Path(__file__).resolve().parents[2]


def _two_bots(store: SqliteLadderStore) -> tuple[int, int]:
    a = store.add_bot("a", "1", "remote", key_digest(new_key()))
    b = store.add_bot("b", "1", "remote", key_digest(new_key()))
    return a.id, b.id


def _game(key: str, a: int, b: int, faults: list[SeatFaults] | None = None) -> tuple[object, ...]:
    deal = key.split("|")[0]
    return (key, deal, 0, [a, b], [[0], [1]], [10, 0], "out", [1], f"m-{key}", "", 1.0, faults or [])


def test_the_schema_is_migrated_once_and_a_newer_one_refused(ladder_db: str | Path) -> None:
    with open_store(ladder_db) as store:
        assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        assert store.migrate() == SCHEMA_VERSION  # again: nothing to do
        assert store.db.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 1
    with open_store(ladder_db) as store:  # a restart finds it done
        assert store.migrate() == SCHEMA_VERSION
        with store._tx():
            store.db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreTooNew, match="upgrade the ladder"):
        open_store(ladder_db)


def test_services_started_at_once_migrate_one_after_another(ladder_db: str | Path) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        try:
            start.wait(10)
            open_store(ladder_db).close()
        except BaseException as exc:  # noqa: BLE001 -- reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with open_store(ladder_db) as store:
        assert store.db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_a_game_is_written_once_with_its_faults(ladder_db: str | Path) -> None:
    with open_store(ladder_db) as store, open_store(ladder_db) as other:
        a, b = _two_bots(store)
        store.add_deal("d1", [a, b], "why: a test")
        store.add_deal("d1", [a, b], "a second scheduling of the same deal is ignored")
        faults = [SeatFaults(seat=1, rejected={"CARD_NOT_IN_HAND": 2}, timed_out=1, disconnects=1)]
        assert store.record_game(*_game("d1|r0", a, b, faults)) is True  # type: ignore[arg-type]
        assert store.record_game(*_game("d1|r0", a, b, faults)) is False  # a replayed write: nothing doubles
        assert other.record_game(*_game("d1|r0", a, b, faults)) is False  # nor from another connection
        (g,) = other.games()
        assert (g.key, g.seats, g.ranking, g.forfeited, g.totals) == ("d1|r0", (a, b), ((0,), (1,)), (1,), (10, 0))
        assert g.why == "why: a test" and g.match_id == "m-d1|r0" and abs(g.finished_at - time.time()) < 60
        f = other.faults()
        assert f[b].games == 1 and f[b].forfeits == 1 and f[b].refused == {"CARD_NOT_IN_HAND": 2}
        assert (f[b].timed_out, f[b].disconnects) == (1, 1)
        assert f[a].total == 0 and f[a].games == 1
        assert other.game_count() == 1 and other.games_since(time.time() - 60) == {a: 1, b: 1}
        assert [x.key for x in other.recent_games(a)] == ["d1|r0"]
        assert store.record_game(*_game("d1|r1", a, b)) is True
        assert [x.key for x in other.games(after_id=g.id)] == ["d1|r1"]


def test_a_failed_write_leaves_nothing_of_the_game(ladder_db: str | Path) -> None:
    with open_store(ladder_db) as store:
        a, b = _two_bots(store)
        bad = [SeatFaults(seat=0, rejected={"X": object()})]  # type: ignore[dict-item]  # fails after the insert
        with pytest.raises(TypeError):
            store.record_game(*_game("d|r0", a, b, bad))  # type: ignore[arg-type]
        assert store.games() == [] and store.faults() == {}
        assert store.record_game(*_game("d|r0", a, b)) is True  # the key is free: the first write left nothing


_KILLED_WRITER = """
import sys, time
from tournaments.ladder.store import open_store
store = open_store(sys.argv[1])
a, b = [x.id for x in store.bots()]
assert store.record_game("d|r0", "d", 0, [a, b], [[0], [1]], [1, 0], "out", [], "m0", "", 1.0)
with store._tx():
    store.db.execute("INSERT INTO games (key, deal, rotation, seats, ranking, totals, reason, forfeited, match_id, "
                     "record_path, duration_s, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                     ("d|r1", "d", 1, "[1,2]", "[[0],[1]]", "[0,0]", "out", "[]", "m1", "", 1.0, 0.0))
    print("inside", flush=True)
    time.sleep(120)
"""


def test_a_kill_9_inside_a_transaction_leaves_no_part_of_it(ladder_db: str | Path) -> None:
    with open_store(ladder_db) as store:
        _two_bots(store)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'clients' / 'python'}"}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(ladder_db)], env=env, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "inside"
    finally:
        proc.kill()
        proc.wait(30)
    with open_store(ladder_db) as store:
        assert [g.key for g in store.games()] == ["d|r0"]  # the committed game stays, the one in flight is gone
        a, b = [x.id for x in store.bots()]
        assert store.record_game(*_game("d|r1", a, b)) is True


def test_bots_pauses_and_rating_runs_read_back_as_written(ladder_db: str | Path) -> None:
    with open_store(ladder_db) as store:
        a, b = _two_bots(store)
        with pytest.raises(BotExists):
            store.add_bot("a", "1", "house", None, ["python", "-m", "x"])
        h = store.add_bot("h", "2", "house", None, ["python", "-m", "rummybot.bots.greedy"], "/tmp", "none")
        assert (h.label, h.command, h.cwd, h.sandbox, h.kind) == ("h@2", ("python", "-m", "rummybot.bots.greedy"),
                                                                  "/tmp", "none", "house")
        until = 1_900_000_000.123456  # a 4-byte float would round this by minutes
        store.pause(h.id, until, "forfeited 4 games in a row")
        (got,) = store.find("h", "2")
        assert got.paused_until == until and got.pauses == 1 and got.pause_reason == "forfeited 4 games in a row"
        store.unpause(h.id)
        assert store.find("h")[0].paused_until is None and store.find("h")[0].pauses == 0
        assert {i for i, _ in store.keys()} == {a, b}  # a house bot has no key
        assert [x.label for x in store.revoke("a")] == ["a@1"]
        assert {i for i, _ in store.keys()} == {b} and [x.label for x in store.bots()] == ["b@1", "h@2"]
        with pytest.raises(NoSuchBot):
            store.revoke("a")
        assert store.latest_ratings() == (0, {})
        store.add_rating_run(10, 7, {a: (12.5, 30.25, 26.0, 7.5, 10), b: (-12.5, 30.25, 24.0, 7.5, 10)})
        run = store.add_rating_run(12, 9, {a: (20.0, 25.0, 26.5, 7.0, 12), b: (-20.0, -1.0, 23.5, 7.0, 12)})
        assert store.latest_ratings() == (9, {a: (20.0, 25.0, 26.5, 7.0, 12), b: (-20.0, -1.0, 23.5, 7.0, 12)})
        history = store.rating_history(a)
        assert [(p.games, p.elo, p.err) for p in history] == [(10, 12.5, 30.25), (12, 20.0, 25.0)]
        assert history[-1].run == run


def test_a_postgres_url_that_does_not_answer_is_told_without_its_password() -> None:
    pytest.importorskip("psycopg")
    url = "postgresql://ladder:s3cret-pw@127.0.0.1:1/ladder"
    with pytest.raises(StoreUnavailable) as err:
        open_store(url)
    assert "s3cret-pw" not in str(err.value) and "ladder:***@127.0.0.1:1/ladder" in str(err.value)
    assert redact_url("postgresql://u@h/db") == "postgresql://u@h/db"
