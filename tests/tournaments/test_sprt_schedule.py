"""The SPRT schedule: two bots on duplicate deals until the test decides; it resumes, and real bots decide it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))

from tournament_fakes import FakeReferee, fake_config  # noqa: E402

from tournaments.abtest import game_score  # noqa: E402
from tournaments.config import ConfigError, load_config  # noqa: E402
from tournaments.runner import run_tournament, static_backend  # noqa: E402

ROOT = Path(__file__).parents[2]
SPRT = {"elo0": 0, "elo1": 100, "alpha": 0.1, "beta": 0.1}


def _sprt_config(out: Path, bots: tuple[str, ...] = ("strong", "weak"), **t: object) -> object:
    return fake_config(out, bots, **{"schedule": "sprt", "games_per_pairing": 400, "sprt": SPRT, **t})


def test_a_game_scores_win_tie_or_loss_for_the_candidate_and_a_partnership_by_its_side() -> None:
    """Two seats: the candidate's rank against the other's; partners: the better seat of each side."""
    assert game_score(("a", "b"), ((1,), (0,)), "a") == 0.0
    assert game_score(("a", "b"), ((0, 1),), "a") == 0.5
    assert game_score(("a", "b", "a", "b"), ((0, 2), (1, 3)), "a") == 1.0
    assert game_score(("b", "a", "b", "a"), ((0, 2), (3,), (1,)), "a") == 0.0


@pytest.mark.parametrize(("change", "key"), [
    ({"bots": ("a", "b", "c")}, "bots"),
    ({"seats": 3}, "tournament.seats"),
    ({"sprt": {"elo0": 5, "elo1": 0}}, "tournament.sprt"),
    ({"sprt": {"elo0": 0, "elo1": 5, "alpha": 1.5}}, "tournament.sprt"),
    ({"sprt": {"elo": 5}}, "tournament.sprt.elo"),
    ({"schedule": "round-robin"}, "tournament.sprt"),
])
def test_a_bad_sprt_config_is_refused_naming_the_key(tmp_path: Path, change: dict[str, object], key: str) -> None:
    """Exactly two bots at 2-bot tables, elo0 < elo1, probabilities in (0, 1), SPRT settings only for an SPRT."""
    bots = change.pop("bots", ("strong", "weak"))
    with pytest.raises(ConfigError) as err:
        _sprt_config(tmp_path / "out", bots, **change)  # type: ignore[arg-type]
    assert err.value.key == key


def test_a_clear_difference_stops_early_with_h1_and_a_rerun_plays_nothing(tmp_path: Path) -> None:
    """Strong against weak crosses the upper bound long before the cap; the rerun rebuilds the same verdict."""
    config = _sprt_config(tmp_path / "out")
    stats = run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    assert stats.sprt is not None and stats.sprt.state.status == "H1"
    assert 0 < stats.played < 100 and stats.played % 2 == 0 and stats.missing == 0
    assert stats.sprt.state.games == stats.played and not stats.budget_reached
    again = run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    assert again.played == 0 and again.sprt is not None
    assert again.sprt.state.counts == stats.sprt.state.counts and again.sprt.state.llr == stats.sprt.state.llr
    assert "H1 accepted: strong is better than weak" in again.sprt.summary()


def test_equal_bots_accept_h0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two bots of the same strength end with H0 accepted (the lower bound crossed)."""
    import tournament_fakes

    monkeypatch.setitem(tournament_fakes.STRENGTH, "middle2", tournament_fakes.STRENGTH["middle"])
    config = _sprt_config(tmp_path / "out", ("middle", "middle2"), games_per_pairing=2000)
    stats = run_tournament(config, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    assert stats.sprt is not None and stats.sprt.state.status == "H0"


def test_an_sprt_cut_short_by_its_cap_resumes_where_it_stopped(tmp_path: Path) -> None:
    """A run capped at 2 deals stores them; raising the cap goes on from those deals, not from zero."""
    small = _sprt_config(tmp_path / "out", games_per_pairing=2)
    first = run_tournament(small, backend=static_backend(FakeReferee()), handle_signals=False)  # type: ignore[arg-type]
    assert first.sprt is not None and first.sprt.state.status == "cap" and first.played == 4
    fake = FakeReferee()
    second = run_tournament(_sprt_config(tmp_path / "out"), backend=static_backend(fake), handle_signals=False)  # type: ignore[arg-type]
    assert second.already_done == 4 and second.sprt is not None and second.sprt.state.status == "H1"
    assert second.sprt.state.games == 4 + second.played
    assert not {k for k in fake.played if "|d0|" in k or "|d1|" in k}


def _run_example(tmp_path: Path, config_text: str) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / "examples"
    folder.mkdir(exist_ok=True)
    path = folder / "sprt.toml"
    path.write_text(config_text)
    return subprocess.run([sys.executable, "-m", "tournaments.cli", "run", str(path), "--no-progress"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)


def test_greedy_against_noisy_accepts_h1_with_real_bots(tmp_path: Path) -> None:
    """The shipped SPRT example (greedy, the candidate, against noisy) stops with H1 accepted."""
    shutil.copy(ROOT / "tournaments/examples/sprt.toml", tmp_path / "sprt.toml")
    config = load_config(tmp_path / "sprt.toml")
    assert config.sprt is not None and config.sprt.candidate == "greedy"
    run = _run_example(tmp_path, (ROOT / "tournaments/examples/sprt.toml").read_text())
    assert run.returncode == 0, run.stderr[-3000:]
    assert "H1 accepted: greedy is better than noisy" in run.stdout.replace("\n", " "), run.stdout


def test_greedy_against_itself_accepts_h0_or_reaches_the_cap_with_real_bots(tmp_path: Path) -> None:
    """The same bot under two names never accepts H1: duplicate deals make the pairs level."""
    text = (ROOT / "tournaments/examples/sprt.toml").read_text()
    text = text.replace('name = "noisy"\ncommand = ["python", "-m", "rummybot.bots.noisy"]',
                        'name = "greedy-again"\ncommand = ["python", "-m", "rummybot.bots.greedy"]')
    text = text.replace("games_per_pairing = 200", "games_per_pairing = 40")
    assert "greedy-again" in text
    run = _run_example(tmp_path, text)
    assert run.returncode == 0, run.stderr[-3000:]
    flat = run.stdout.replace("\n", " ")
    assert "H0 accepted" in flat or "no decision: the game cap was reached" in flat, run.stdout
