"""A new version of a bot gets an SPRT against the previous one: the runner's test, fed the ladder's own duplicate
deals of the two (scheduled beside the normal ones, their reason "sprt: ..."), its verdict stored and shown on both
entries, rebuilt the same after a restart, and a store of the first schema migrated without losing a thing."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from tournaments.config import ConfigError
from tournaments.ladder.config import parse_ladder_config
from tournaments.ladder.keys import key_digest, new_key
from tournaments.ladder.matchmaker import Candidate, pick_sprt_table, pick_table
from tournaments.ladder.service import LadderService
from tournaments.ladder.store import MIGRATIONS, SCHEMA_VERSION, SqliteLadderStore
from tournaments.ladder.versions import VersionTest, pair_view, previous_version, sprt_view
from tournaments.ladder.web import bot_page_data


def _cfg(tmp_path: Path, seats: int = 2, sprt: str = "{ elo0 = 0, elo1 = 100, alpha = 0.1, beta = 0.1 }") -> object:
    import tomllib

    text = (f'[ladder]\nvariant = "indian"\nseats = {seats}\ndata = "data"\nlisten = "127.0.0.1:0"\nweb = ""\n'
            f"sprt = {sprt}\n")
    return parse_ladder_config(tomllib.loads(text), tmp_path)


def _play(store: SqliteLadderStore, deal: str, seats_per_rotation: list[tuple[int, ...]], winners: list[int],
          sprt: int | None) -> None:
    """A stored deal: rotation r seats ``seats_per_rotation[r]``, and the bot ``winners[r]`` wins it."""
    if sprt is not None:
        store.add_sprt_deal(deal, sprt)
    store.add_deal(deal, seats_per_rotation[0], f"sprt: test deal {deal}" if sprt else "normal")
    for r, (seats, w) in enumerate(zip(seats_per_rotation, winners, strict=True)):
        win = seats.index(w)
        ranking = [[win], [s for s in range(len(seats)) if s != win]]
        store.record_game(f"{deal}|r{r}", deal, r, seats, ranking, [0] * len(seats), "out", [], f"m-{deal}-{r}", "",
                          0.1)


def test_a_new_version_is_tested_against_the_previous_one_and_the_verdict_kept(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    with SqliteLadderStore(cfg.db) as store:  # type: ignore[attr-defined]
        v1 = store.add_bot("alice", "1", "remote", key_digest(new_key()))
        bob = store.add_bot("bob", "1", "remote", key_digest(new_key()))
        v2 = store.add_bot("alice", "2", "remote", key_digest(new_key()))
        assert previous_version(store.bots(), v2) == v1 and previous_version(store.bots(), v1) is None
    service = LadderService(cfg)  # type: ignore[arg-type]
    service.bots = {b.id: b for b in service.store.bots()}
    service._start_tests()
    assert list(service.tests) == [v2.id]  # alice@2 only: bob and alice@1 are no one's new version
    (row,) = service.store.sprt_tests()
    assert (row.candidate_id, row.baseline_id, row.status, row.elo1, row.alpha, row.rotations) == (
        v2.id, v1.id, "running", 100.0, 0.1, 2)
    # normal deals of the two do not count; the test's deals do, once both rotations are in
    _play(service.store, "n1", [(v2.id, v1.id), (v1.id, v2.id)], [v2.id, v2.id], sprt=None)
    for i in range(40):
        deal = f"s{i}"
        _play(service.store, deal, [(v2.id, v1.id), (v1.id, v2.id)], [v2.id, v2.id if i % 4 else v1.id], sprt=v2.id)
        for g in service.store.sprt_games(v2.id)[-2:]:
            service._sprt_game(v2.id, g)
        if service.tests[v2.id].decided:
            break
    test = service.tests[v2.id]
    assert test.decided and test.tracker.state.status == "H1"
    decided_at = test.tracker.state.units
    assert decided_at < 20 and test.tracker.state.llr >= test.tracker.state.params.upper_bound
    (row,) = service.store.sprt_tests()
    assert row.status == "H1" and row.counts == test.tracker.state.counts and row.llr == pytest.approx(test.tracker.state.llr)
    _play(service.store, "late", [(v2.id, v1.id), (v1.id, v2.id)], [v1.id, v1.id], sprt=v2.id)
    for g in service.store.sprt_games(v2.id)[-2:]:
        service._sprt_game(v2.id, g)
    assert service.tests[v2.id].tracker.state.units == decided_at  # a game after the verdict is not counted
    service.store.close()

    again = LadderService(cfg)  # type: ignore[arg-type]  # a restart: the test rebuilt from its stored games
    again.bots = {b.id: b for b in again.store.bots()}
    again._start_tests()
    assert again.tests[v2.id].tracker.state == test.tracker.state
    # both entries show it, with the LLR against its bounds
    labels = {b.id: b.label for b in again.store.bots(include_revoked=True)}
    for bot in (again.bots[v1.id], again.bots[v2.id]):
        (shown,) = bot_page_data(again.store, bot, {"bot": bot.label}, labels, {})["sprt"]
        assert shown["candidate"] == "alice@2" and shown["baseline"] == "alice@1" and shown["status"] == "H1"
        assert shown["llr"] >= shown["upper_bound"] > 0 > shown["lower_bound"] and shown["deals"] == decided_at
        assert shown["verdict"] == "H1 accepted: alice@2 is better than alice@1" and shown["elo"]["elo"] > 0
    assert bot_page_data(again.store, again.bots[bob.id], {"bot": "bob@1"}, labels, {})["sprt"] == []
    again.store.close()


def test_a_test_that_the_new_version_loses_accepts_h0(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    with SqliteLadderStore(cfg.db) as store:  # type: ignore[attr-defined]
        v1 = store.add_bot("a", "1", "remote", None)
        v2 = store.add_bot("a", "2", "remote", None)
        test = VersionTest(store.start_sprt(v2.id, v1.id, 0, 100, 0.1, 0.1, 2, 500), "a@2", "a@1")
        for i in range(40):
            _play(store, f"d{i}", [(v2.id, v1.id), (v1.id, v2.id)], [v1.id, v1.id if i % 3 else v2.id], sprt=v2.id)
        for g in store.sprt_games(v2.id):
            test.add(g)
        state = test.tracker.state
        assert state.status == "H0" and state.llr <= state.params.lower_bound and state.elo.elo < 0
        store.update_sprt(v2.id, "H0", state.llr, state.counts)
        view = sprt_view(store.sprt_tests()[0], {v1.id: "a@1", v2.id: "a@2"})
        assert view["verdict"] == "H0 accepted: a@2 is not 100 Elo better than a@1" and view["elo"]["elo"] < 0


def test_at_a_bigger_table_only_the_two_versions_places_count() -> None:
    # seats: filler 9, candidate 2, baseline 1; the filler won, the candidate beat the baseline
    seats, ranking = pair_view((9, 2, 1), ((0,), (1,), (2,)), (2, 1))
    assert seats == [2, 1] and ranking == [[0], [1]]
    seats, ranking = pair_view((1, 9, 2), ((1,), (0, 2)), (2, 1))  # the two tied behind the filler
    assert seats == [1, 2] and ranking == [[0, 1]]


def test_the_matchmaker_seats_a_running_test_beside_normal_tables() -> None:
    rng = random.Random(1)
    field = [Candidate(i, f"b{i}@1", 0.0, float("inf"), 0) for i in range(1, 6)]
    assert pick_sprt_table(field, [(1, 9)], 2, rng) is None  # the baseline is not connected: nothing to play
    t = pick_sprt_table(field, [(4, 2)], 2, rng)
    assert t is not None and t.bots == (4, 2) and t.sprt == 4 and t.why.startswith("sprt: b4@1 (new version)")
    t3 = pick_sprt_table(field, [(4, 2)], 4, rng)
    assert t3 is not None and t3.bots[:2] == (4, 2) and len(set(t3.bots)) == 4 and "filled by" in t3.why
    normal = pick_table(field, 2, rng)
    assert normal is not None and normal.sprt is None and not normal.why.startswith("sprt")


def test_sprt_settings_are_checked_in_the_config(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    assert cfg.sprt.elo1 == 100 and cfg.sprt.max_deals == 500  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="elo0 must be below elo1"):
        _cfg(tmp_path, sprt="{ elo0 = 10, elo1 = 5 }")
    with pytest.raises(ConfigError, match="ladder.sprt.bogus"):
        _cfg(tmp_path, sprt="{ bogus = 1 }")
    with pytest.raises(ConfigError, match="ladder.sprt.max_deals"):
        _cfg(tmp_path, sprt="{ max_deals = 1.5 }")
    with pytest.raises(ConfigError, match="share"):
        _cfg(tmp_path, sprt="{ share = 0 }")


def test_a_store_of_the_first_schema_is_migrated_and_keeps_its_games(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    con.execute("INSERT INTO schema_version VALUES (1)")
    con.executescript(MIGRATIONS[0])
    con.execute("INSERT INTO bots (id, name, version, kind, created_at) VALUES (1, 'a', '1', 'remote', 0), "
                "(2, 'a', '2', 'remote', 0)")
    con.execute("INSERT INTO games VALUES (1, 'd|r0', 'd', 0, '[2,1]', '[[0],[1]]', '[0,0]', 'x', '[]', 'm', '', 1, 5)")
    con.commit()
    con.close()
    with SqliteLadderStore(db) as store:
        assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)
        assert [g.key for g in store.games()] == ["d|r0"]
        assert store.sprt_tests() == [] and store.sprt_games(2) == []
        store.add_sprt_deal("d", 2)
        store.add_sprt_deal("d", 2)  # again: one row
        assert [g.key for g in store.sprt_games(2)] == ["d|r0"]
        row = store.start_sprt(2, 1, 0, 50, 0.05, 0.05, 2, 300)
        assert store.start_sprt(2, 1, -5, 5, 0.2, 0.2, 2, 10) == row  # started once: its bounds stay
        store.update_sprt(2, "H1", 3.1, [0, 0, 0, 0, 4])
        (r,) = store.sprt_tests()
        assert (r.status, r.llr, r.counts) == ("H1", 3.1, (0, 0, 0, 0, 4))
