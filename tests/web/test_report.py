"""The tournament report page (`tournament report OUTPUT --html OUT`) and its charts, named after it."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tournaments.htmlreport import load_report_data, rating_history, write_html_report
from tournaments.ratings import Result
from tournaments.schedule import Game
from tournaments.store import DB_NAME, Store

STRENGTH = {"greedy": 2.0, "noisy": 1.0, "random": 0.0}


@pytest.fixture()
def results_dir(tmp_path):
    """A finished round-robin of three bots of known strength, as the runner stores it."""
    rng = random.Random(4)
    out = tmp_path / "out"
    with Store(out / DB_NAME) as store:
        store.set_meta("bots", {name: {} for name in STRENGTH})
        for deal in range(20):
            for table in (("greedy", "noisy"), ("greedy", "random"), ("noisy", "random")):
                for rotation in (0, 1):
                    seats = table if rotation == 0 else table[::-1]
                    p0 = 1 / (1 + 10 ** ((STRENGTH[seats[1]] - STRENGTH[seats[0]]) * 200 / 400))
                    ranking = [[0], [1]] if rng.random() < p0 else [[1], [0]]
                    store.record(Game(f"{'+'.join(table)}|{deal}|{rotation}", table, deal, f"s{deal}", rotation, seats),
                                 ranking=ranking, totals=[0, 0], reason="test", forfeited=[], duration_s=0.5,
                                 variant="indian")
    return out


def test_the_report_command_writes_the_page_and_charts_and_ends_with_the_pages_path(results_dir, tmp_path):
    page = tmp_path / "site" / "report.html"
    done = subprocess.run([sys.executable, "-m", "tournaments.cli", "report", str(results_dir), "--html", str(page)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(page)
    text = page.read_text()
    for section in ('id="ratings"', 'id="over-time"', 'id="crosstable"', 'id="pairings"'):
        assert section in text
    assert text.count('<svg class="bar"') == 3, "one error bar drawn per bot"
    assert re.search(r"greedy vs noisy</th><td>40</td>", text), "games per pairing"
    links = re.findall(r'(?:src|href)="([^"]*)"', text)
    assert all(link.startswith("#") for link in links), "the page loads nothing: its links point inside itself"
    assert "http" not in re.sub(r'xmlns(:\w+)?="[^"]*"', "", text), "no address of anywhere else"
    assert (page.parent / "report-ratings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ET.fromstring((page.parent / "report-ratings.svg").read_text())  # well-formed SVG


def test_reports_in_one_folder_keep_their_own_charts(results_dir, tmp_path):
    """#31: every report wrote ``ratings.svg`` and ``ratings.png``, so a second report in the folder replaced the
    first one's charts."""
    data = load_report_data(results_dir)
    first = write_html_report(data, tmp_path / "monday.html")
    second = write_html_report(data, tmp_path / "tuesday.html")
    assert [p.name for p in first] == ["monday.html", "monday-ratings.svg", "monday-ratings.png"]
    assert not set(first) & set(second) and all(p.exists() for p in first + second)


def test_the_rating_table_ranks_the_bots_by_strength_with_error_bars(results_dir):
    data = load_report_data(results_dir)
    assert [b.name for b in data.table.bots] == ["greedy", "noisy", "random"]
    assert all(b.error > 0 for b in data.table.bots)
    assert [(p.bots, p.games) for p in data.pairings] == [(("greedy", "noisy"), 40), (("greedy", "random"), 40),
                                                           (("noisy", "random"), 40)]
    assert sum(data.pairings[0].points) == 40


def test_ratings_over_time_are_fitted_on_prefixes_of_the_games_in_the_order_they_finished(results_dir):
    data = load_report_data(results_dir)
    assert data.history_source == "refitted"
    games = [p.games for p in data.history]
    assert games == sorted(games) and games[-1] == data.table.matches
    last = data.history[-1].ratings
    assert last["greedy"][0] == pytest.approx(data.table.bot("greedy").elo)
    assert data.history[0].ratings["greedy"][1] > last["greedy"][1], "error bars narrow as games come in"


def test_a_prefix_whose_bots_have_not_all_met_is_left_out():
    first = Result(("a", "b"), ((0,), (1,)))
    other = Result(("c", "d"), ((0,), (1,)))
    bridge = Result(("b", "c"), ((1,), (0,)))
    history = rating_history([first, other, bridge, Result(("a", "d"), ((1,), (0,)))], points=4)
    assert [p.games for p in history] == [1, 3, 4]


def test_kept_rating_runs_are_drawn_as_the_database_kept_them(results_dir):
    with Store(results_dir / DB_NAME) as store:
        store.add_rating_run("run", 60, {"greedy": (50.0, 90.0, 40), "random": (-50.0, 90.0, 40)})
        store.add_rating_run("added noisy", 120, {"greedy": (150.0, 40.0, 80), "noisy": (0.0, 50.0, 80)})
    data = load_report_data(results_dir)
    assert data.history_source == "stored"
    assert [(p.games, p.ratings) for p in data.history] == [
        (60, {"greedy": (50.0, 90.0), "random": (-50.0, 90.0)}), (120, {"greedy": (150.0, 40.0), "noisy": (0.0, 50.0)})]


def test_a_single_kept_run_is_no_history_so_the_prefixes_are_refitted(results_dir):
    """A round-robin keeps one rating run: one point draws no line over time."""
    with Store(results_dir / DB_NAME) as store:
        store.add_rating_run("run", 120, {"greedy": (150.0, 40.0, 80), "random": (-150.0, 40.0, 80)})
    data = load_report_data(results_dir)
    assert data.history_source == "refitted" and len(data.history) > 10


def test_the_report_of_a_missing_database_says_so(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tournaments.cli", "report", str(tmp_path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "no results database" in done.stderr
