"""The ladder on PostgreSQL end to end (a real server, see conftest.py): bots registered with `--database`, the
service plays unattended with its results in PostgreSQL only (no ladder.db), a kill -9 of the service and a
restart lose and double no finished game, and `ladder status` reads the leaderboard from the database."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.tournaments.ladder_helpers import ENV
from tests.tournaments.ladder_helpers import ladder_cli as _cli
from tests.tournaments.ladder_helpers import leaderboard as _board
from tests.tournaments.ladder_helpers import wait_for as _wait


def _games(url: str) -> list[tuple[str, str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [(str(k), str(m)) for k, m in conn.execute("SELECT key, match_id FROM games ORDER BY id")]


def _serve(tmp: Path, url: str) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    (tmp / "data" / "service.json").unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "tournaments.cli", "ladder", "serve", "ladder.toml", "--database", url],
                            cwd=tmp, env=ENV, stdout=subprocess.DEVNULL, stderr=(tmp / "serve.err").open("ab"))
    addrs = _wait("the service's addresses", lambda: (tmp / "data" / "service.json").is_file()
                  and json.loads((tmp / "data" / "service.json").read_text()))
    return proc, addrs


def test_a_ladder_on_postgres_survives_a_kill_9(tmp_path: Path, postgres_url: str) -> None:
    tmp, url = tmp_path, postgres_url
    (tmp / "ladder.toml").write_text(
        '[ladder]\nvariant = "indian"\nseats = 2\ndata = "data"\nlisten = "127.0.0.1:0"\nweb = "127.0.0.1:0"\n'
        "concurrency = 2\nmax_hands = 1\nrefit_s = 0.5\ntime_control = { per_move_ms = 3000, connect_ms = 5000 }\n")
    for name, module in (("greedy", "greedy"), ("random", "random_bot")):
        done = _cli("bots", "add", name, "-c", "ladder.toml", "--database", url, "--sandbox", "none", "--", "python",
                    "-m", f"rummybot.bots.{module}", cwd=tmp)
        assert done.returncode == 0, done.stderr
    listed = _cli("bots", "list", "-c", "ladder.toml", "--database", url, cwd=tmp)
    assert "greedy@1" in listed.stdout and "random@1" in listed.stdout
    assert _cli("bots", "list", "-c", "ladder.toml", cwd=tmp).stdout.count("@1") == 0  # SQLite: a ladder of its own
    (tmp / "data" / "ladder.db").unlink(missing_ok=True)
    service, addrs = _serve(tmp, url)
    try:
        web = addrs["web"]
        _wait("10 games rated", lambda: (b := _board(web)) and sum(x["games"] for x in b.values()) >= 20
              and all(x["error95"] is not None for x in b.values()))
        service.send_signal(signal.SIGKILL)
        service.wait(10)
        stored = _games(url)
        assert len(stored) >= 10 and len(stored) == len({k for k, _ in stored}) == len({m for _, m in stored})
        service, addrs = _serve(tmp, url)
        _wait("games after the restart", lambda: len(_games(url)) >= len(stored) + 4)
        again = _games(url)
        assert again[:len(stored)] == stored  # nothing lost
        assert len(again) == len({k for k, _ in again}) == len({m for _, m in again})  # nothing doubled
        status = _cli("status", "-c", "ladder.toml", "--database", url, cwd=tmp)
        assert status.returncode == 0 and "greedy@1" in status.stdout and "±" in status.stdout
    finally:
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(30)
        except subprocess.TimeoutExpired:
            service.kill()
    assert not (tmp / "data" / "ladder.db").exists()  # everything went to PostgreSQL
    (tmp / "data" / "service.json").unlink()
    offline = _cli("status", "-c", "ladder.toml", "--database", url, cwd=tmp)  # the service gone: from the database
    assert offline.returncode == 0 and "greedy@1" in offline.stdout and "does not answer" in offline.stdout
    assert url.split("@")[0].split(":")[-1] not in offline.stdout  # the password is not shown
