"""The ladder service end to end on 127.0.0.1: two house bots (one in bwrap where the host has it) and two remote
Python bots that join with keys from `ladder bots add` play unattended; a made-up key is refused; a remote bot killed
and started again rejoins as the same entry; /api/leaderboard lists every bot with error bars; a kill -9 of the
service and a restart lose and double no finished game."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'clients' / 'python'}", "RUMMY_PURE_PYTHON": "1"}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tournaments.cli", "ladder", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=60, check=False)


def _wait(what: str, cond: Callable[[], Any], timeout: float = 90.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _board(web: str) -> dict[str, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"{web}/api/leaderboard", timeout=5) as r:
            return {b["bot"]: b for b in json.loads(r.read())["bots"]}
    except OSError:
        return {}


def _games(db: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute("SELECT key, match_id FROM games ORDER BY id").fetchall()
    finally:
        con.close()


def _serve(tmp: Path) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    (tmp / "data" / "service.json").unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "tournaments.cli", "ladder", "serve", "ladder.toml"], cwd=tmp, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    addrs = _wait("the service's addresses", lambda: (tmp / "data" / "service.json").is_file()
                  and json.loads((tmp / "data" / "service.json").read_text()))
    return proc, addrs


def _remote(tmp: Path, referee: str, key: str, module: str, name: str) -> subprocess.Popen[bytes]:
    env = {**ENV, "RUMMY_REFEREE": referee, "RUMMY_BOT_TOKEN": key}  # the key in the environment, not on argv
    return subprocess.Popen([sys.executable, "-m", f"rummybot.bots.{module}"], cwd=tmp, env=env,
                            stdout=(tmp / f"{name}.log").open("ab"), stderr=subprocess.STDOUT)


def test_a_ladder_runs_by_itself(tmp_path: Path) -> None:
    tmp = tmp_path
    (tmp / "ladder.toml").write_text(
        '[ladder]\nvariant = "indian"\nseats = 2\ndata = "data"\nlisten = "127.0.0.1:0"\nweb = "127.0.0.1:0"\n'
        "concurrency = 3\nmax_hands = 1\nrefit_s = 0.5\ntime_control = { per_move_ms = 3000, connect_ms = 5000 }\n")
    assert _cli("bots", "add", "house-random", "-c", "ladder.toml", "--sandbox", "none", "--", "python", "-m",
                "rummybot.bots.random_bot", cwd=tmp).returncode == 0
    assert _cli("bots", "add", "house-greedy", "-c", "ladder.toml", "--", "python", "-m", "rummybot.bots.greedy",
                cwd=tmp).returncode == 0  # bwrap where the host has it
    keys = {}
    for name in ("alice", "bob"):
        done = _cli("bots", "add", name, "-c", "ladder.toml", cwd=tmp)
        assert done.returncode == 0, done.stderr
        keys[name] = done.stdout.strip().splitlines()[-1]
    db = tmp / "data" / "ladder.db"
    service, addrs = _serve(tmp)
    bots: dict[str, subprocess.Popen[bytes]] = {}
    try:
        bots["alice"] = _remote(tmp, addrs["referee"], keys["alice"], "greedy", "alice")
        bots["bob"] = _remote(tmp, addrs["referee"], keys["bob"], "random_bot", "bob")
        forged = _remote(tmp, addrs["referee"], keys["alice"][:-4] + "AAAA", "greedy", "forged")
        assert forged.wait(30) == 1
        assert "BOT_TOKEN_UNKNOWN" in (tmp / "forged.log").read_text()
        web = addrs["web"]
        board = _wait("20 games with every bot", lambda: (b := _board(web)) and sum(x["games"] for x in b.values()) >= 40
                      and all(x["games"] >= 3 for x in b.values()) and b)
        assert set(board) == {"house-random@1", "house-greedy@1", "alice@1", "bob@1"}
        _wait("every bot rated with an error bar", lambda: all(x["error95"] is not None and x["elo"] is not None
                                                               for x in _board(web).values()))
        if os.path.exists("/usr/bin/bwrap") or subprocess.run(["sh", "-c", "command -v bwrap"], capture_output=True).returncode == 0:
            log = (tmp / "data" / "ladder.log").read_text()
            assert '"bot": "house-greedy@1", "sandboxed": true' in log
        # a remote bot killed and started again rejoins as the same entry
        before = _board(web)["alice@1"]["games"]
        bots["alice"].send_signal(signal.SIGKILL)
        bots["alice"].wait(10)
        _wait("alice offline", lambda: _board(web).get("alice@1", {}).get("online") is False)
        bots["alice"] = _remote(tmp, addrs["referee"], keys["alice"], "greedy", "alice")
        _wait("alice back and playing", lambda: (a := _board(web).get("alice@1")) and a["online"] and a["games"] > before + 2)
        assert [b for b in _board(web) if b.startswith("alice")] == ["alice@1"]
        page = urllib.request.urlopen(f"{web}/bots/alice@1", timeout=5).read().decode()
        assert "/replay/" in page and "Rating history" in page
        # kill -9: every finished game stays, none doubles
        service.send_signal(signal.SIGKILL)
        service.wait(10)
        for p in bots.values():
            p.kill()
            p.wait(10)
        stored = _games(db)
        assert len(stored) == len({k for k, _ in stored}) == len({m for _, m in stored})
        service, addrs = _serve(tmp)
        bots["alice"] = _remote(tmp, addrs["referee"], keys["alice"], "greedy", "alice")
        bots["bob"] = _remote(tmp, addrs["referee"], keys["bob"], "random_bot", "bob")
        _wait("games after the restart", lambda: len(_games(db)) >= len(stored) + 6)
        again = _games(db)
        assert again[:len(stored)] == stored  # nothing lost
        assert len(again) == len({k for k, _ in again}) == len({m for _, m in again})  # nothing doubled
        status = _cli("status", "-c", "ladder.toml", cwd=tmp)
        assert status.returncode == 0 and "alice@1" in status.stdout and "±" in status.stdout
    finally:
        for p in bots.values():
            p.kill()
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(20)
        except subprocess.TimeoutExpired:
            service.kill()
