"""The runner with a fake match function: every game once, concurrency, failures, stop, store, ladder."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))

from tournament_fakes import FakeReferee, fake_config  # noqa: E402

from tournaments.config import ConfigError  # noqa: E402
from tournaments.report import load_ratings, write_reports  # noqa: E402
from tournaments.runner import MatchError, plan, play_games, run_tournament, static_backend  # noqa: E402
from tournaments.store import DB_NAME, Store, StoreMismatch  # noqa: E402


def test_every_scheduled_game_is_played_once_and_stored(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=5, concurrency=3)
    fake = FakeReferee(delay=0.005)
    stats = run_tournament(config, backend=static_backend(fake), handle_signals=False)
    keys = {g.key for g in plan(config).games}
    assert stats.played == len(keys) == 3 * 2 * 5
    assert sorted(fake.played) == sorted(keys)
    assert 1 < fake.max_running <= 3
    with Store(tmp_path / "out" / DB_NAME) as store:
        assert store.done_keys() == keys
        row = next(store.rows())
        assert row.reason == "fake" and row.match_id.startswith("fake-") and row.duration_s >= 0.005
        assert row.variant == "indian" and len(row.seats) == 2 and row.seed.startswith("fake/deal-")


def test_a_rerun_plays_only_missing_games(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=2)
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)
    again = FakeReferee()
    stats = run_tournament(config, backend=static_backend(again), handle_signals=False)
    assert stats.played == 0 and again.played == [] and stats.already_done == 12
    more = FakeReferee()  # more deals per pairing: only the new deals are played
    stats = run_tournament(dataclasses.replace(config, games_per_pairing=3), backend=static_backend(more), handle_signals=False)
    assert stats.played == 6 and all("|d2|" in k for k in more.played)


def test_a_failed_match_is_retried_once_then_left_for_the_next_run(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=2)
    keys = [g.key for g in plan(config).games]
    fake = FakeReferee(fail={keys[0]: 1, keys[1]: -1})
    stats = run_tournament(config, backend=static_backend(fake), handle_signals=False)
    assert stats.played == 11 and stats.failed == 3 and stats.missing == 1
    with Store(tmp_path / "out" / DB_NAME) as store:
        assert keys[0] in store.done_keys() and keys[1] not in store.done_keys()
        assert [k for k, _ in store.failures()] == [keys[0], keys[1], keys[1]]
    fixed = FakeReferee()
    assert run_tournament(config, backend=static_backend(fixed), handle_signals=False).played == 1
    assert fixed.played == [keys[1]]


def test_many_failures_in_a_row_stop_the_run(tmp_path: Path) -> None:
    """If every match fails (the referee is gone), the run stops instead of burning through the schedule."""
    config = fake_config(tmp_path / "out", games_per_pairing=20, concurrency=1)
    fake = FakeReferee(fail={g.key: -1 for g in plan(config).games})
    stats = run_tournament(config, backend=static_backend(fake), handle_signals=False)
    assert stats.played == 0 and stats.failed == 20 and "20 matches in a row failed" in stats.stop_reason


def test_stopping_cancels_games_in_flight_and_records_only_finished_ones(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=10, concurrency=2)
    games = plan(config).games
    store = Store(tmp_path / "db.sqlite")

    async def go() -> tuple[int, FakeReferee]:
        fake = FakeReferee(delay=0.02)
        stop = asyncio.Event()

        class StopAfter:
            def started(self, total: int, done: int) -> None: ...

            def finished(self, game: object, outcome: object, error: str | None) -> None:
                if len(fake.played) >= 5:
                    stop.set()

        stats = await play_games(games, fake, store, config, concurrency=2, stop=stop, progress=StopAfter())
        assert stats.interrupted
        return stats.played, fake

    played, fake = asyncio.run(go())
    assert 5 <= played < len(games) - 2  # a game finishing in the same instant as the fifth is kept too
    assert store.count() == played
    assert store.done_keys() == set(fake.played)  # every finished game stored; the cancelled ones never finished
    store.close()


def test_a_database_of_another_tournament_is_refused(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=1)
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)
    with pytest.raises(StoreMismatch, match="seed"):
        run_tournament(dataclasses.replace(config, seed="other"), backend=static_backend(FakeReferee()), handle_signals=False)


def test_ratings_and_report_files_come_from_the_database(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=30)
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)
    rt, _ = load_ratings(tmp_path / "out")
    assert [b.name for b in rt.bots] == ["strong", "middle", "weak"]
    assert rt.matches == 180
    paths = write_reports(rt, tmp_path / "out")
    assert {p.name for p in paths} == {"ratings.csv", "ratings.json", "crosstable.csv"}
    assert (tmp_path / "out" / "ratings.csv").read_text().splitlines()[1].startswith("1,strong,")
    assert '"tournament.log"' not in (tmp_path / "out" / "ratings.json").read_text()
    assert '"event": "game_finished"' in (tmp_path / "out" / "tournament.log").read_text()


def test_a_ladder_rates_new_bots_against_the_pool_of_a_previous_tournament(tmp_path: Path) -> None:
    pool_cfg = fake_config(tmp_path / "pool", games_per_pairing=20)
    run_tournament(pool_cfg, backend=static_backend(FakeReferee()), handle_signals=False)
    ladder_cfg = fake_config(
        tmp_path / "ladder", bots=("strong", "middle", "weak", "new"), schedule="ladder",
        pool=str(tmp_path / "pool" / DB_NAME), games=12,
    )
    p = plan(ladder_cfg)
    assert p.new_bots == ["new"] and p.pool == ["strong", "middle", "weak"]
    fake = FakeReferee()
    stats = run_tournament(ladder_cfg, backend=static_backend(fake), handle_signals=False)
    assert stats.played == 12 and all("new" in k for k in fake.played)
    rt, _ = load_ratings(tmp_path / "ladder")
    assert rt.matches == 120 + 12  # the pool's games are imported, so the new bot is on the pool's scale
    assert rt.bot("new").games == 12
    # a rerun neither replays nor re-imports
    assert run_tournament(ladder_cfg, backend=static_backend(FakeReferee()), handle_signals=False).played == 0
    assert load_ratings(tmp_path / "ladder")[0].matches == 132


def test_a_ladder_without_new_bots_is_a_config_error(tmp_path: Path) -> None:
    run_tournament(fake_config(tmp_path / "pool", games_per_pairing=2), backend=static_backend(FakeReferee()), handle_signals=False)
    cfg = fake_config(tmp_path / "l", schedule="ladder", pool=str(tmp_path / "pool" / DB_NAME), games=4)
    with pytest.raises(ConfigError) as info:
        plan(cfg)
    assert info.value.key == "bots"


def test_match_error_text_is_kept(tmp_path: Path) -> None:
    assert str(MatchError("CreateMatch: UNAVAILABLE")) == "CreateMatch: UNAVAILABLE"


def test_a_time_budget_ends_the_run_at_a_deal_boundary(tmp_path: Path) -> None:
    """Once the budget is spent no new deal begins, and the deals begun are complete (every rotation played)."""
    config = fake_config(tmp_path / "out", games_per_pairing=50, concurrency=2)
    stats = run_tournament(config, backend=static_backend(FakeReferee(delay=0.01)), handle_signals=False, time_budget_s=0.15)
    assert stats.budget_reached and not stats.interrupted and 0 < stats.played < 300
    with Store(tmp_path / "out" / DB_NAME) as store:
        per_deal = Counter(row.deal for row in store.rows())
    assert set(per_deal.values()) == {6}  # 3 pairings x 2 rotations in every deal played
    assert sorted(per_deal) == list(range(len(per_deal)))


def test_the_store_keeps_the_first_result_of_a_key(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=1)
    game = plan(config).games[0]
    with Store(tmp_path / "db.sqlite") as store:
        kw = dict(ranking=[[0], [1]], totals=[0, 40], reason="r", forfeited=[], duration_s=1.0)
        assert store.record(game, **kw) is True  # type: ignore[arg-type]
        assert store.record(game, **{**kw, "reason": "again"}) is False  # type: ignore[arg-type]
        assert [r.reason for r in store.rows()] == ["r"]
    with pytest.raises(FileNotFoundError):
        load_ratings(tmp_path / "nowhere")
