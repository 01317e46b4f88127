"""Faults are results (#31): a bot's refused answers by reason code, the moves the referee made for it on a missed
deadline, its disconnects and its process restarts show on the terminal at the end of a run, in SQLite with each
game, in ``ratings.json`` and in the HTML report, not only in its log."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))

from tournament_fakes import FakeReferee, fake_config  # noqa: E402

from referee.service.session import SeatStats  # noqa: E402
from tournaments.cli import print_faults  # noqa: E402
from tournaments.faults import SeatFaults  # noqa: E402
from tournaments.htmlreport import _duration, load_report_data, render_html  # noqa: E402
from tournaments.report import load_faults, load_ratings, write_reports  # noqa: E402
from tournaments.runner import MatchOutcome, MatchRequest, plan, run_tournament, static_backend  # noqa: E402
from tournaments.schedule import Game  # noqa: E402
from tournaments.store import DB_NAME, SCHEMA_VERSION, Store  # noqa: E402

PY = sys.executable


# ------------------------------------------------------------------------------------------ the real thing


def test_a_bot_with_refusals_timeouts_and_restarts_shows_them_everywhere(tmp_path: Path) -> None:
    """Misbehaving bots against greedy, through the CLI as a user runs it, then `tournament report`."""
    cfg = tmp_path / "t.toml"
    bots = {"greedy": "rummybot.bots.greedy", "illegal": "illegal", "slow": "slow", "crash": "crash-mid-hand"}
    blocks = []
    for name, what in bots.items():
        argv = [PY, "-m", what] if name == "greedy" else [PY, "-m", "rummybot.bots.misbehaving", "--mode", what]
        blocks.append(f'[[bots]]\nname = "{name}"\ncommand = {json.dumps(argv)}\n')
    cfg.write_text("""
[tournament]
variant = "fortune"
schedule = "gauntlet"
candidates = ["illegal", "slow", "crash"]
games_per_pairing = 1
concurrency = 2
seed = "faults"
output = "out"
max_hands = 1
time_control = { per_move_ms = 1000, grace_ms = 100, connect_ms = 10000 }

""" + "\n".join(blocks))
    run = subprocess.run([PY, "-m", "tournaments.cli", "run", str(cfg), "--no-progress"], capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    out = tmp_path / "out"

    # SQLite: one row per seat of every game, with the game; the run and its bot processes
    db = sqlite3.connect(out / DB_NAME)
    games = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    assert games == 6 and db.execute("SELECT COUNT(*) FROM seat_faults").fetchone()[0] == 2 * games
    assert db.execute("SELECT COUNT(*) FROM seat_faults f LEFT JOIN games g ON g.key = f.key WHERE g.key IS NULL"
                      " OR json_extract(g.seats, '$[' || f.seat || ']') != f.bot").fetchone()[0] == 0
    totals = {bot: (refused, timed_out, disconnects, asked) for bot, refused, timed_out, disconnects, asked in db.execute(
        "SELECT bot, SUM(refused), SUM(timed_out), SUM(disconnects), SUM(asked) FROM seat_faults GROUP BY bot")}
    codes: dict[str, Counter[str]] = {}
    for bot, text in db.execute("SELECT bot, refused_codes FROM seat_faults"):
        codes.setdefault(bot, Counter()).update(json.loads(text))
    starts = dict(db.execute("SELECT bot, SUM(starts) FROM run_bots GROUP BY bot").fetchall())
    (wall, tc), = db.execute("SELECT wall_s, time_control FROM runs").fetchall()
    db.close()
    assert totals["greedy"][:3] == (0, 0, 0) and totals["greedy"][3] > 0
    assert totals["illegal"][0] > 0 and totals["illegal"][1] > 0, totals
    assert totals["slow"][1] > 0 and codes["slow"]["STALE_REQUEST"] > 0, (totals, codes)
    assert totals["crash"][2] > 0 and starts["crash"] > 1 and starts["greedy"] == 1, (totals, starts)
    assert wall > 0 and json.loads(tc)["per_move_ms"] == 1000

    # the terminal: each bot with a fault named, with its counts and its log; greedy, clean, is not
    lines = {m.group(1): line for line in run.stderr.splitlines() if (m := re.match(r"faults: bot '([^']+)'", line))}
    assert set(lines) == {"illegal", "slow", "crash"}, run.stderr
    ill = lines["illegal"]
    assert f"{totals['illegal'][0]} answers refused (" in ill
    assert all(f"{code} {n}" in ill for code, n in codes["illegal"].items()), ill
    assert f"{totals['illegal'][1]} moves made by the referee on a missed deadline" in ill
    assert f"log: {out / 'bots' / 'illegal-0.log'}" in ill
    assert "disconnect" in lines["crash"] and "process restart" in lines["crash"], lines["crash"]
    assert "Faults (every game stored)" in run.stdout

    # ratings.json: per bot totals, the same as SQLite's
    doc = json.loads((out / "ratings.json").read_text())
    for bot, (refused, timed_out, disconnects, asked) in totals.items():
        f = doc["faults"][bot]
        assert (f["refused"], f["timed_out"], f["disconnects"], f["asked"]) == (refused, timed_out, disconnects, asked)
        assert f["refused_by_code"] == dict(codes.get(bot, {}))
        assert f["restarts"] == starts[bot] - 1
    row = next(r for r in doc["ratings"] if r["bot"] == "illegal")
    assert row["refused"] == totals["illegal"][0] and row["timed_out"] == totals["illegal"][1]

    # the HTML report: the faults table, and what was played
    page = tmp_path / "report.html"
    done = subprocess.run([PY, "-m", "tournaments.cli", "report", str(out), "--html", str(page)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    faulty = re.search(r'<tr class="fault"><th>illegal</th><td>(\d+) of 2</td><td>(\d+)</td><td>(\d+)</td>'
                       r'<td class="codes">(.*?)</td><td>(\d+)</td>', text)
    assert faulty is not None, text[text.index('id="faults"'):][:2000]
    assert (int(faulty[2]), int(faulty[3]), int(faulty[5])) == (totals["illegal"][3], *totals["illegal"][:2])
    assert all(f"<code>{code}</code> {n}" in faulty[4] for code, n in codes["illegal"].items())
    assert '<tr><th>greedy</th><td>0 of 6</td>' in text
    assert "<code>fortune</code>" in text and "per move 1,000 ms" in text and "grace after a disconnect 100 ms" in text
    assert re.search(r"<th>wall time</th><td>[\d.]+ s over 1 run", text), "the run's wall time"


def test_the_session_gives_refusals_by_reason_code_over_all_phases() -> None:
    stats = SeatStats()
    stats.asked.update({"DRAW": 3, "DISCARD": 2})
    stats.rejected.update({"DRAW/WRONG_PHASE": 2, "DISCARD/WRONG_PHASE": 1, "DISCARD/NOT_IN_HAND": 4})
    stats.timed_out.update({"DISCARD": 1})
    stats.disconnects = 2
    f = SeatFaults.from_pb(stats.faults(1))
    assert f == SeatFaults(1, {"NOT_IN_HAND": 4, "WRONG_PHASE": 3}, 1, 2, 5)


# ------------------------------------------------------------------------------------------ with a fake referee


class FaultyReferee(FakeReferee):
    """The fake referee, with the bot called ``weak`` refused twice (NOT_IN_HAND) and timed out once per game."""

    async def __call__(self, req: MatchRequest) -> MatchOutcome:
        out = await super().__call__(req)
        faults = tuple(SeatFaults(i, {"NOT_IN_HAND": 2} if b == "weak" else {}, 1 if b == "weak" else 0, 0, 10,
                                  f"/logs/{b}-0.log") for i, b in enumerate(req.game.seats))
        return dataclasses.replace(out, faults=faults)


def test_faults_are_stored_with_each_game_and_named_at_the_end_of_the_run(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=2)
    stats = run_tournament(config, backend=static_backend(FaultyReferee()), handle_signals=False)
    assert [f.bot for f in stats.faulty()] == ["weak"]
    weak = stats.faults["weak"]
    assert (weak.games, weak.faulty_games, weak.refused, weak.timed_out, weak.logs) == (8, 8, 16, 8, ["/logs/weak-0.log"])
    err = Console(file=io.StringIO(), width=300)
    print_faults(stats.faulty(), config.output, err)
    said = err.file.getvalue()  # type: ignore[attr-defined]
    assert said.startswith("faults: bot 'weak' in 8 of 8 games (80 decisions asked): 16 answers refused "
                           "(NOT_IN_HAND 16), 8 moves made by the referee on a missed deadline; log: /logs/weak-0.log")
    with Store(config.output / DB_NAME) as store:
        by_key = store.seat_faults()
        assert set(by_key) == store.done_keys()
        totals = store.faults()
        (run,) = store.runs()
    assert totals["weak"].refused == 16 and totals["strong"].refused == 0 and not totals["strong"].any
    assert run.played == 12 and run.time_control["connect_ms"] == config.time_control.connect_ms and run.wall_s > 0


class StrayReferee(FakeReferee):
    """Faults for a seat the game has not, and seat 1 twice (a referee of another version, or a broken one)."""

    async def __call__(self, req: MatchRequest) -> MatchOutcome:
        out = await super().__call__(req)
        return dataclasses.replace(out, faults=(SeatFaults(7, {"X": 1}), SeatFaults(1, {"Y": 1}), SeatFaults(1, {"Y": 2}),
                                                SeatFaults(0, {}, 1)))


def test_faults_for_seats_a_game_has_not_are_dropped_not_a_crash(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=1)
    stats = run_tournament(config, backend=static_backend(StrayReferee()), handle_signals=False)
    assert stats.played == 6 and stats.missing == 0
    with Store(config.output / DB_NAME) as store:
        kept = store.seat_faults()
    assert len(kept) == 6 and all(fs == [SeatFaults(0, {}, 1), SeatFaults(1, {"Y": 2})] for fs in kept.values())
    assert "faults_dropped" in (config.output / "tournament.log").read_text()


def test_a_game_and_its_faults_are_one_transaction(tmp_path: Path) -> None:
    game = Game("a+b|d0|r0", ("a", "b"), 0, "s", 0, ("a", "b"))
    with Store(tmp_path / DB_NAME) as store:
        with pytest.raises(ValueError, match="no seat 2"):
            store.record(game, ranking=[[0], [1]], totals=[0, 0], reason="x", forfeited=[], duration_s=1.0,
                         faults=[SeatFaults(0, {"X": 1}), SeatFaults(2, {"Y": 1})])
        assert store.done_keys() == set() and store.seat_faults() == {}, "nothing of the game stays"
        assert store.record(game, ranking=[[0], [1]], totals=[0, 0], reason="x", forfeited=[], duration_s=1.0,
                            faults=[SeatFaults(1, {"X": 1})])
        assert not store.record(game, ranking=[[1], [0]], totals=[0, 0], reason="x", forfeited=[], duration_s=1.0,
                                faults=[SeatFaults(1, {"Y": 5})])
        assert store.seat_faults() == {game.key: [SeatFaults(1, {"X": 1})]}, "a game already there keeps its faults"


# ------------------------------------------------------------------------------------------ older databases

_V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE games (key TEXT PRIMARY KEY, pairing TEXT NOT NULL, deal INTEGER NOT NULL, seed TEXT NOT NULL,
    rotation INTEGER NOT NULL, seats TEXT NOT NULL, ranking TEXT NOT NULL, totals TEXT NOT NULL, reason TEXT NOT NULL,
    forfeited TEXT NOT NULL, duration_s REAL NOT NULL, record_path TEXT NOT NULL, match_id TEXT NOT NULL,
    variant TEXT NOT NULL, finished_at REAL NOT NULL, source TEXT NOT NULL DEFAULT 'played');
CREATE TABLE failures (id INTEGER PRIMARY KEY, key TEXT NOT NULL, error TEXT NOT NULL, at REAL NOT NULL);
"""


def _older_database(config: object, keys: list[str]) -> Path:
    """A results database as the runner wrote it before faults were kept, holding the games ``keys``."""
    out = config.output  # type: ignore[attr-defined]
    out.mkdir(parents=True)
    db = sqlite3.connect(out / DB_NAME)
    db.executescript(_V1_SCHEMA)
    db.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (json.dumps(config.fingerprint(), sort_keys=True),))  # type: ignore[attr-defined]
    db.execute("INSERT INTO meta VALUES ('bots', ?)", (json.dumps({"strong": [], "middle": [], "weak": []}),))
    for g in plan(config).games:  # type: ignore[arg-type]
        if g.key in keys:
            db.execute("INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, '[[0],[1]]', '[0,0]', 'old', '[]', 2.0, '', '', "
                       "'indian', 0, 'played')", (g.key, "+".join(g.table), g.deal, g.seed, g.rotation, json.dumps(g.seats)))
    db.commit()
    db.close()
    return out / DB_NAME


def test_a_tournament_begun_before_faults_were_kept_resumes_and_reports(tmp_path: Path) -> None:
    config = fake_config(tmp_path / "out", games_per_pairing=2)
    keys = [g.key for g in plan(config).games]
    db = _older_database(config, keys[:5])

    data = load_report_data(db)  # read-only, not migrated: no faults, no runs, and it says so
    assert data.runs == [] and all(f.games == 0 for f in data.faults.values())
    page = render_html(data, "")
    assert "not kept by this database" in page and "stored before faults were kept" in page

    stats = run_tournament(config, backend=static_backend(FaultyReferee()), handle_signals=False)
    assert stats.already_done == 5 and stats.played == 7 and stats.faulty()[0].bot == "weak"
    with Store(db, readonly=True) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert set(store.seat_faults()) == set(keys[5:]), "the older games have no faults; the new ones do"
        assert len(store.runs()) == 1
    faults = load_faults(db)
    weak_new = sum("weak" in g.seats for g in plan(config).games if g.key in keys[5:])
    assert faults["weak"].games == weak_new and faults["weak"].refused == 2 * weak_new
    rt, _ = load_ratings(db)
    write_reports(rt, tmp_path / "files", faults=faults)
    doc = json.loads((tmp_path / "files" / "ratings.json").read_text())
    assert doc["faults"]["weak"]["refused_by_code"] == {"NOT_IN_HAND": 2 * weak_new}
    assert rt.matches == 12
    assert "1 bot with faults: weak." in render_html(load_report_data(db), "")


def test_durations_read_as_durations() -> None:
    """The issue's report said "0.5 minutes of play" for a 19 s run."""
    assert [_duration(s) for s in (4.26, 19.2, 185, 7440)] == ["4.3 s", "19 s", "3 min 5 s", "2 h 4 min"]
