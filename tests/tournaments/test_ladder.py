"""A continuing ladder: the configured bots' round-robin first, then each added bot against the pool as rated
when it joined; every run that plays games keeps its ratings, so each bot's Elo over time can be shown."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))

from tournament_fakes import FakeReferee, fake_config  # noqa: E402

from tournaments import ladder  # noqa: E402
from tournaments.cli import main  # noqa: E402
from tournaments.config import ConfigError, load_config  # noqa: E402
from tournaments.runner import plan, run_tournament, static_backend  # noqa: E402
from tournaments.store import DB_NAME, Store  # noqa: E402


def _ladder(tmp_path: Path) -> object:
    return fake_config(tmp_path / "out", ("strong", "weak"), schedule="ladder", games=12, games_per_pairing=4)


def test_a_continuing_ladder_starts_as_a_round_robin_and_keeps_its_ratings(tmp_path: Path) -> None:
    """The first run plays the configured bots against each other and keeps one rating run."""
    config = _ladder(tmp_path)
    assert ladder.is_continuing(config)  # type: ignore[arg-type]
    stats = run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False, label="start")  # type: ignore[arg-type]
    assert stats.played == 8
    with Store(tmp_path / "out" / DB_NAME) as store:
        (run,) = store.rating_history()
    assert run.label == "start" and run.games == 8 and set(run.ratings) == {"strong", "weak"}
    assert run.ratings["strong"][0] > run.ratings["weak"][0] and run.ratings["strong"][2] == 8


def test_an_added_bot_plays_the_pool_and_everyone_is_rated_again(tmp_path: Path) -> None:
    """The newcomer's games are all against the pool, its pool order is stored, and history has both runs."""
    config = _ladder(tmp_path)
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    entry = ladder.add_entry(config, "middle", ["true"], tmp_path)  # type: ignore[arg-type]
    assert entry.pool == ("strong", "weak")  # best first, as rated when it joined
    fake = FakeReferee()
    stats = run_tournament(config, backend=static_backend(fake), handle_signals=False, label="added middle")  # type: ignore[arg-type]
    assert stats.played == 12 and stats.already_done == 8
    assert all("middle" in key.split("|")[0] for key in fake.played)
    opponents = {key.split("|")[0] for key in fake.played}
    assert opponents == {"middle+strong", "middle+weak"}
    with Store(tmp_path / "out" / DB_NAME) as store:
        first, second = store.rating_history()
    assert "middle" not in first.ratings and second.label == "added middle" and second.games == 20
    assert second.ratings["strong"][0] > second.ratings["middle"][0] > second.ratings["weak"][0]


def test_the_schedule_is_the_same_on_every_rerun_so_an_interrupted_ladder_resumes(tmp_path: Path) -> None:
    """The plan depends only on the stored entries, not on ratings that moved since; a rerun plays nothing."""
    config = _ladder(tmp_path)
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    ladder.add_entry(config, "middle", ["true"], tmp_path)  # type: ignore[arg-type]
    before = [g.key for g in plan(ladder.with_entries(config)).games]  # type: ignore[arg-type]
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    assert [g.key for g in plan(ladder.with_entries(config)).games] == before  # type: ignore[arg-type]
    again = run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    assert again.played == 0 and again.missing == 0
    with Store(tmp_path / "out" / DB_NAME) as store:
        assert len(store.rating_history()) == 2  # a run that played nothing keeps no rating run


def test_a_taken_name_or_a_ladder_with_a_pool_cannot_take_a_new_bot(tmp_path: Path) -> None:
    """Names are unique across the configured and the added bots; only a continuing ladder grows."""
    config = _ladder(tmp_path)
    with pytest.raises(ConfigError, match="in the ladder already"):
        ladder.add_entry(config, "strong", ["true"], tmp_path)  # type: ignore[arg-type]
    round_robin = fake_config(tmp_path / "rr", ("strong", "weak"))
    with pytest.raises(ConfigError, match="continuing ladder"):
        ladder.add_entry(round_robin, "middle", ["true"], tmp_path)


def test_history_prints_one_row_per_rating_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`tournament ratings OUTPUT --history` shows each run with each bot's Elo, blank before it joined."""
    config = _ladder(tmp_path)
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False, label="start")  # type: ignore[arg-type]
    ladder.add_entry(config, "middle", ["true"], tmp_path)  # type: ignore[arg-type]
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False, label="added middle")  # type: ignore[arg-type]
    assert main(["ratings", str(tmp_path / "out"), "--history"]) == 0
    out = capsys.readouterr().out
    assert "Rating history (2 rating runs)" in out and "added middle" in out and "start" in out
    assert main(["ratings", str(tmp_path / "nothing"), "--history"]) == 2


def test_a_newcomer_whose_program_is_not_there_is_not_added(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`ladder add` with a mistyped command is refused before the bot is stored: a stored bot stays in the ladder,
    so every later run (and adding it again under its name, rightly typed) would be refused."""
    cfg = tmp_path / "ladder.toml"
    cfg.write_text('[tournament]\nvariant = "indian"\nseats = 2\nschedule = "ladder"\ngames_per_pairing = 1\n'
                   'games = 2\noutput = "out"\n[[bots]]\nname = "strong"\ncommand = ["true"]\n'
                   '[[bots]]\nname = "weak"\ncommand = ["true"]\n', encoding="utf-8")
    config = load_config(cfg)
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)
    assert main(["ladder", "add", str(cfg), "middle", "--no-progress", "--", "./no-such-bot.sh"]) == 2
    assert "no-such-bot.sh" in capsys.readouterr().err
    assert ladder.entries(config) == []
    with pytest.raises(ConfigError, match="cannot start"):
        ladder.add_entry(config, "middle", ["./no-such-bot.sh"], tmp_path)
    assert ladder.add_entry(config, "middle", ["true"], tmp_path).name == "middle"


def test_the_report_draws_a_bot_added_in_the_last_rating_run(tmp_path: Path) -> None:
    """Ratings over time: a newcomer has one point so far (the run that added it); drawn as a line and a band of
    one point it would be in the legend and nowhere on the chart, so it is a marker with its error bar."""
    from tournaments.htmlreport import _figure, load_report_data

    config = _ladder(tmp_path)
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    ladder.add_entry(config, "middle", ["true"], tmp_path)  # type: ignore[arg-type]
    run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    data = load_report_data(tmp_path / "out")
    assert data.history_source == "stored" and ["middle" in p.ratings for p in data.history] == [False, True]
    _, over_time = _figure(data).axes
    (line,) = [ln for ln in over_time.get_lines() if ln.get_label() == "middle"]
    assert np.asarray(line.get_xydata())[:, 0].tolist() == [20.0] and line.get_marker() not in (None, "None", "", " ")
    assert len(over_time.containers) == 1  # its error bar; the others have two points and a band
