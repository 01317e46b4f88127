"""``tournament ladder serve --cluster``: house bots' games are played on Dask workers (each with its own referee
and house bots), games with a remote bot on the service's referee, where the remote bot is connected; every game
is stored once, and a game played on a worker has its record in the service's records folder, so its replay opens.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from tests.tournaments.test_ladder_e2e import ENV, _board, _cli, _remote, _wait  # noqa: E402


def _events(log: Path, name: str) -> list[dict[str, object]]:
    out = []
    for line in log.read_text().splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == name:
            out.append(e)
    return out


def test_house_bots_games_run_on_two_workers_and_remote_bots_games_on_the_service(tmp_path: Path) -> None:
    tmp = tmp_path
    (tmp / "ladder.toml").write_text(
        '[ladder]\nvariant = "indian"\nseats = 2\ndata = "data"\nlisten = "127.0.0.1:0"\nweb = "127.0.0.1:0"\n'
        "concurrency = 3\nmax_hands = 1\nrefit_s = 0.5\nexploration = 0.3\n"
        "time_control = { per_move_ms = 3000, connect_ms = 20000 }\n")
    for name, module in (("house-greedy", "greedy"), ("house-random", "random_bot")):
        done = _cli("bots", "add", name, "-c", "ladder.toml", "--sandbox", "none", "--", "python", "-m",
                    f"rummybot.bots.{module}", cwd=tmp)
        assert done.returncode == 0, done.stderr
    done = _cli("bots", "add", "alice", "-c", "ladder.toml", cwd=tmp)
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip().splitlines()[-1]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as cluster:
        workers = {w.name for w in cluster.workers.values()}
        service = subprocess.Popen([sys.executable, "-m", "tournaments.cli", "ladder", "serve", "ladder.toml",
                                    "--cluster", cluster.scheduler_address], cwd=tmp, env=ENV,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        alice = None
        try:
            addrs = _wait("the service's addresses", lambda: (tmp / "data" / "service.json").is_file()
                          and json.loads((tmp / "data" / "service.json").read_text()), 120)
            alice = _remote(tmp, addrs["referee"], key, "greedy", "alice")
            log = tmp / "data" / "ladder.log"
            _wait("house games on the cluster and alice's games on the service", lambda: len(
                _events(log, "played_on_cluster")) >= 4 and (_board(addrs["web"]).get("alice@1") or {}).get(
                "games", 0) >= 4, 240)
            on_cluster = _events(log, "played_on_cluster")
            assert {str(e["worker"]) for e in on_cluster} <= {str(w) for w in workers}
            con = sqlite3.connect(tmp / "data" / "ladder.db", timeout=10)
            try:
                rows = con.execute("SELECT key, seats, match_id, record_path FROM games").fetchall()
                ids = dict(con.execute("SELECT name, id FROM bots").fetchall())
            finally:
                con.close()
            assert len(rows) == len({r[0] for r in rows}) == len({r[2] for r in rows})  # each game once
            house = {ids["house-greedy"], ids["house-random"]}
            cluster_ids = {str(e["match_id"]) for e in on_cluster}
            for game_key, seats, match_id, record_path in rows:
                only_house = set(json.loads(seats)) <= house
                assert (match_id in cluster_ids) == only_house, (game_key, seats)  # where it was played
                assert Path(record_path).parent == (tmp / "data" / "records").resolve() or \
                    Path(record_path).parent == tmp / "data" / "records"
                assert Path(record_path).is_file()
            played_there = next(r for r in rows if r[2] in cluster_ids)
            with urllib.request.urlopen(f"{addrs['web']}/api/records/{played_there[2]}", timeout=10) as r:
                assert r.status == 200  # the replay of a game played on a worker opens on the ladder's page
        finally:
            if alice is not None:
                alice.kill()
                alice.wait(10)
            service.send_signal(signal.SIGTERM)
            try:
                _, err = service.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                service.kill()
                _, err = service.communicate()
    assert service.returncode == 0, err.decode()[-2000:]


def test_no_scheduler_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "ladder.toml").write_text('[ladder]\nvariant = "indian"\ndata = "data"\nlisten = "127.0.0.1:0"\n'
                                          'web = ""\n')
    from tests.serving import free_port

    done = subprocess.run([sys.executable, "-m", "tournaments.cli", "ladder", "serve", "ladder.toml", "--cluster",
                           f"tcp://127.0.0.1:{free_port()}"], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "no Dask scheduler answering at tcp://127.0.0.1:" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
