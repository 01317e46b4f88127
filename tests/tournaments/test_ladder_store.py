"""The ladder's store on both backends (SQLite, and PostgreSQL on a real server): the schema is migrated once at
start, also by two services started at once; a newer schema is refused; a finished game is written once, with its
faults, in one transaction, whoever writes it and however often; a process killed -9 inside a transaction leaves no
part of it; bots, pauses and rating runs read back as written (timestamps to the microsecond)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tournaments.faults import SeatFaults
from tournaments.ladder.keys import key_digest, new_key
from tournaments.ladder.rating import Rater
from tournaments.ladder.store import (
    _PAIRS,
    MIGRATIONS,
    SCHEMA_VERSION,
    BotExists,
    FaultSummary,
    NoSuchBot,
    SqliteLadderStore,
    StoreTooNew,
    StoreUnavailable,
    pair_scores,
    redact_url,
    tally_game,
)
from tournaments.ladder.stores import open_store
from tournaments.store import connect_wal

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


def test_connections_creating_one_sqlite_file_at_once_all_get_it_in_wal_mode(tmp_path: Path) -> None:
    """The race the test above lost one run in ten: SQLite refuses the losers of a switch to WAL at once."""
    for round_ in range(40):
        path = tmp_path / f"race-{round_}.db"
        start = threading.Barrier(4)
        modes: list[str] = []

        def open_one(path: Path = path, start: threading.Barrier = start, modes: list[str] = modes) -> None:
            start.wait(10)
            db = connect_wal(path)
            modes.append(db.execute("PRAGMA journal_mode").fetchone()[0])
            db.close()

        threads = [threading.Thread(target=open_one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert modes == ["wal"] * 4, f"round {round_}"


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
from tournaments.ladder.stores import open_store
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


def _random_games(store: SqliteLadderStore, bots: list[int], n: int, rng: random.Random, first: int = 0
                  ) -> list[tuple[list[int], list[list[int]], list[int], list[SeatFaults]]]:
    """``n`` three-seat games with ties and some forfeits and faults, stored; what was stored."""
    out = []
    for i in range(first, first + n):
        seats = rng.sample(bots, 3)
        order = rng.sample(range(3), 3)
        ranking = [[order[0], order[1]], [order[2]]] if rng.random() < 0.2 else [[s] for s in order]
        forfeited = [order[2]] if rng.random() < 0.1 else []
        faults = [SeatFaults(order[1], {"MELD_INVALID": 1}, timed_out=1)] if rng.random() < 0.2 else []
        assert store.record_game(f"g{i}|r0", f"g{i}", 0, seats, ranking, [0, 0, 0], "out", forfeited, f"m{i}", "", 1.0,
                                 faults)
        out.append((seats, ranking, forfeited, faults))
    return out


def test_a_resumed_rater_equals_one_that_took_in_every_game(ladder_db: str | Path) -> None:
    """A restart reads the last rating run and sums its games in the database; what it then fits is what a rater
    fed every game fits. The service's in-memory fault tallies equal the store's own count."""
    rng = random.Random(7)
    with open_store(ladder_db) as store:
        bots = [store.add_bot(f"b{i}", "1", "remote", None).id for i in range(6)]
        tallies: dict[int, FaultSummary] = {}
        live = Rater()
        for g in _random_games(store, bots, 40, rng):
            tally_game(tallies, g[0], g[2], g[3])
        for g in store.games():
            live.add(g.seats, g.ranking, g.forfeited, g.id)
        first = live.fit()
        store.add_rating_run(live.count, live.last_game, {b: (r.elo, r.err, r.mu, r.sigma, r.games)
                                                          for b, r in first.items()})
        for g in _random_games(store, bots, 25, rng, first=40):
            tally_game(tallies, g[0], g[2], g[3])
        assert tallies == store.faults()
        resumed = Rater.resume(store)
        assert (resumed.count, resumed.last_game) == (40, live.last_game)
        for g in store.games(resumed.last_game):
            resumed.add(g.seats, g.ranking, g.forfeited, g.id)
            live.add(g.seats, g.ranking, g.forfeited, g.id)
        assert resumed.count == live.count == 65 and resumed.last_game == live.last_game
        want, got = live.fit(), resumed.fit()
        assert set(want) == set(got) == set(bots)
        for b in bots:
            i, j = live.index[b], resumed.index[b]
            assert live.matches[i] == resumed.matches[j] and live.forfeits[i] == resumed.forfeits[j]
            for c in bots:
                assert live.score[i, live.index[c]] == resumed.score[j, resumed.index[c]]
                assert live.games[i, live.index[c]] == resumed.games[j, resumed.index[c]]
            assert got[b].elo == pytest.approx(want[b].elo, abs=1e-6)
            assert got[b].err == pytest.approx(want[b].err, abs=1e-6)
            assert (got[b].mu, got[b].sigma, got[b].games) == pytest.approx((want[b].mu, want[b].sigma, want[b].games))


def test_the_pairs_of_games_stored_before_their_table_are_filled_in(ladder_db: str | Path) -> None:
    rng = random.Random(3)
    with open_store(ladder_db) as store:
        bots = [store.add_bot(f"b{i}", "1", "remote", None).id for i in range(4)]
        _random_games(store, bots, 12, rng)
        before = store.rating_totals(10**9)
        with store._tx():  # back to the schema before game_pairs, its games kept
            store.db.execute("DROP TABLE game_pairs")
            store.db.execute("DROP INDEX game_bots_game")
            store.db.execute("UPDATE schema_version SET version = ?", (MIGRATIONS.index(_PAIRS),))
    with open_store(ladder_db) as store:
        assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        after = store.rating_totals(10**9)
    assert sorted(after.pairs) == sorted(before.pairs) and len(before.pairs) > 0 and after.count == 12
    assert after.games == before.games and after.forfeits == before.forfeits
    assert sum(n for *_, n in after.pairs) == 12 * 3  # three pairs a three-seat game


def test_pair_scores_are_the_fits_pairwise_outcomes() -> None:
    # seats 0..2 hold bots 30, 10, 20; seat 2 won, seats 0 and 1 tied behind it
    assert pair_scores([30, 10, 20], [[2], [0, 1]]) == [(10, 20, 0.0), (10, 30, 0.5), (20, 30, 1.0)]
    # a seat missing from the ranking is placed last
    assert pair_scores([1, 2], [[1]]) == [(1, 2, 0.0)]
