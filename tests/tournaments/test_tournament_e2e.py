"""End to end over gRPC with real bot processes: faulty bots lose and the tournament completes; partnerships;
a bot that cannot start; an external referee; the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tournaments.config import parse_config
from tournaments.runner import run_tournament
from tournaments.store import DB_NAME, Store

FIXTURES = Path(__file__).parent / "fixtures"
PY = sys.executable


def _bot(name: str, module: str | None = None, script: str | None = None) -> dict[str, Any]:
    cmd = [PY, "-m", module] if module else [PY, str(FIXTURES / str(script))]
    return {"name": name, "command": cmd}


def _config(out: Path, bots: list[dict[str, Any]], **t: Any) -> Any:
    tournament = {"variant": "indian", "games_per_pairing": 1, "concurrency": 4, "seed": "e2e", "output": str(out),
                  "time_control": {"per_move_ms": 400, "grace_ms": 300}, **t}
    return parse_config({"tournament": tournament, "bots": bots}, base_dir=out.parent)


def _rows(out: Path) -> list[Any]:
    with Store(out / DB_NAME, readonly=True) as s:
        return list(s.rows())


def test_crashing_stalling_and_garbage_bots_lose_and_the_tournament_completes(tmp_path: Path) -> None:
    """A bot that exits at its first decision, one that never answers and one that answers only illegal
    actions each lose every game to greedy; the crashing one forfeits and is restarted; all games end."""
    out = tmp_path / "out"
    config = _config(out, [_bot("greedy", "rummybot.bots.greedy"), _bot("crash", script="crash_bot.py"),
                           _bot("stall", script="stall_bot.py"), _bot("garbage", script="garbage_bot.py")],
                     schedule="gauntlet", candidates=["crash", "stall", "garbage"], games_per_pairing=1)
    stats = run_tournament(config, handle_signals=False)
    assert stats.played == 6 and stats.missing == 0 and stats.failed == 0
    rows = _rows(out)
    assert len(rows) == 6
    for row in rows:
        greedy_seat = row.seats.index("greedy")
        assert row.ranking[0] == (greedy_seat,), (row.key, row.ranking, row.reason)
        bad_seat = 1 - greedy_seat
        if row.seats[bad_seat] == "crash":
            assert row.forfeited == (bad_seat,)
        assert Path(row.record_path).is_file()
    crash_log = (out / "bots" / "crash-0.log").read_text()
    assert "crash bot: dying" in crash_log and "exited with code 3" in crash_log and "restart #1" in crash_log
    assert "ignoring request" in (out / "bots" / "stall-0.log").read_text()
    assert (out / "bots" / "greedy-0.log").read_text().rstrip().endswith("===")  # start and stop lines
    events = [json.loads(line)["event"] for line in (out / "tournament.log").read_text().splitlines()]
    assert "bot_died" in events and events.count("game_finished") == 6


def test_bot_logs_are_capped(tmp_path: Path) -> None:
    from tournaments.botproc import TailLog

    log = TailLog(tmp_path / "x.log", cap=100, interval=0)
    for i in range(50):
        log.write(f"line {i:03d}\n".encode())
    log.flush()
    data = (tmp_path / "x.log").read_bytes()
    assert len(data) == 100 and data.endswith(b"line 049\n")


def test_partnership_games_seat_each_bot_twice_with_two_processes(tmp_path: Path) -> None:
    """500 Rum partnership: bot A on seats 0,2 vs bot B on 1,3 and swapped; partners are separate processes
    (one connection holds one seat of a match, COM-6)."""
    out = tmp_path / "out"
    config = _config(out, [_bot("greedy", "rummybot.bots.greedy"), _bot("random", "rummybot.bots.random_bot")],
                     variant="500-partnership", max_hands=1, time_control={"per_move_ms": 2000})
    stats = run_tournament(config, handle_signals=False)
    assert stats.played == 2 and stats.missing == 0
    assert sorted(r.seats for r in _rows(out)) == [("greedy", "random", "greedy", "random"), ("random", "greedy", "random", "greedy")]
    for r in _rows(out):
        assert sorted(s for g in r.ranking for s in g) == [0, 1, 2, 3]
        assert not r.forfeited
    assert {p.name for p in (out / "bots").iterdir()} >= {"greedy-0.log", "greedy-1.log", "random-0.log", "random-1.log"}


def test_a_bot_that_dies_at_once_loses_by_forfeit_on_an_external_referee(tmp_path: Path) -> None:
    """A bot that exits as soon as it starts: the referee forfeits the seat that never connects; the games end.
    (A program that is not there at all stops the run before it begins: tests/tournaments/test_tournament_health.py.)"""
    from referee.service.server import EmbeddedReferee
    from referee.service.session import TimeControl

    out = tmp_path / "out"
    config = _config(out, [_bot("greedy", "rummybot.bots.greedy"), {"name": "broken", "command": [sys.executable, "-c", "import sys; sys.exit(3)"]}])
    ref = EmbeddedReferee(records_dir=tmp_path / "records", default_time=TimeControl(per_move_ms=150, grace_ms=300, connect_ms=1500))
    address = ref.start()
    try:
        stats = run_tournament(config, referee=address, handle_signals=False)
    finally:
        ref.stop()
    assert stats.played == 2
    for r in _rows(out):
        broken = r.seats.index("broken")
        assert r.forfeited == (broken,) and r.ranking[-1] == (broken,)
    assert "exited with code 3" in (out / "bots" / "broken-0.log").read_text()
    assert (tmp_path / "records").is_dir()


def test_the_command_line_runs_resumes_and_rates(tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        f"""
[tournament]
variant = "indian"
games_per_pairing = 2
seed = "cli"
output = "out"
concurrency = 2
time_control = {{ per_move_ms = 2000 }}

[ratings]
anchor = "random"
anchor_rating = 1000

[[bots]]
name = "random"
command = [{json.dumps(PY)}, "-m", "rummybot.bots.random_bot"]

[[bots]]
name = "greedy"
command = [{json.dumps(PY)}, "-m", "rummybot.bots.greedy"]
"""
    )
    tournament = [PY, "-m", "tournaments.cli"]
    run = subprocess.run([*tournament, "run", str(cfg), "--no-progress"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "4 games played this run" in run.stdout and "anchor random = 1000" in run.stdout
    again = subprocess.run([*tournament, "run", str(cfg), "--no-progress"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "0 games played this run, 4 before, 0 missing" in again.stdout
    rated = subprocess.run([*tournament, "ratings", str(tmp_path / "out"), "--anchor", "greedy"], capture_output=True, text=True, timeout=60)
    assert rated.returncode == 0, rated.stderr
    assert "greedy" in rated.stdout and "anchor greedy = 1500" in rated.stdout
    doc = json.loads((tmp_path / "out" / "ratings.json").read_text())
    assert doc["matches"] == 4 and {r["bot"] for r in doc["ratings"]} == {"random", "greedy"}
    assert (tmp_path / "out" / "crosstable.csv").is_file() and (tmp_path / "out" / "ratings.csv").is_file()
    sched = subprocess.run([*tournament, "schedule", str(cfg)], capture_output=True, text=True, timeout=60)
    assert sched.returncode == 0 and "4 games" in sched.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text(cfg.read_text().replace("games_per_pairing = 2", "games_per_pairing = -2"))
    err = subprocess.run([*tournament, "run", str(bad)], capture_output=True, text=True, timeout=60)
    assert err.returncode == 2 and "tournament.games_per_pairing: must be at least 1" in err.stderr
    assert not (tmp_path / "out" / "bad-output").exists()


@pytest.mark.parametrize("variant", ["indian"])
def test_the_demo_runs_and_ranks_greedy_above_random(tmp_path: Path, variant: str) -> None:
    demo = subprocess.run([PY, "-m", "tournaments.demo", "--variant", variant, "--deals", "6", "--output", str(tmp_path / "demo")],
                          capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0, demo.stderr
    assert "Demo ratings" in demo.stdout and "greedy" in demo.stdout
    assert (tmp_path / "demo" / "ratings.json").is_file()
    last = demo.stdout.strip().splitlines()[-1]
    assert last == f"tournament report: {tmp_path / 'demo' / 'report.html'}", "the demo ends with its report's path"
