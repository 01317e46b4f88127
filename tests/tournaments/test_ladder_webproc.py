"""The ladder's web page runs in a process of its own (tournaments.ladder.webproc), niced, as the referee's viewer
does: a client looping on its heaviest pages shares no event loop with matchmaking and the games, which go on; the
page reads the store (SQLite read-only, or PostgreSQL) and asks the service only for what its memory alone holds
(who is online, what is being played, the referee's metrics), at most once a second; it ends with the service,
however the service ends, and is started again if it dies; a port in use stops `ladder serve` with one line.

The store-reading half is also checked in this process, on both stores: the fault tallies it keeps by adding the
games stored since it last looked equal the store's whole count, and a presence not known shows online as unknown."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from referee.service.limits import DEFAULT_LIMITS
from tests.tournaments.ladder_helpers import ENV, metric_sum
from tests.tournaments.ladder_helpers import ladder_here as _cli
from tests.tournaments.ladder_helpers import leaderboard as _board
from tests.tournaments.ladder_helpers import wait_for as _wait
from tournaments.faults import SeatFaults
from tournaments.ladder.keys import key_digest, new_key
from tournaments.ladder.stores import open_store
from tournaments.ladder.web import UNKNOWN, Presence, StoreSource, routes
from tournaments.ladder.webproc import WEB_NICE


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _alive(pid: int) -> bool:
    try:
        return _stat(pid)[0] != "Z"
    except OSError:
        return False


def _count(log: Path, event: str) -> int:
    return log.read_text().count(f'"event": "{event}"') if log.is_file() else 0


def _config(tmp: Path, web: str = "127.0.0.1:0", bots: bool = True) -> None:
    (tmp / "ladder.toml").write_text(
        f'[ladder]\nvariant = "indian"\nseats = 2\ndata = "data"\nlisten = "127.0.0.1:0"\nweb = "{web}"\n'
        "concurrency = 2\nmax_hands = 1\nrefit_s = 0.5\ntime_control = { per_move_ms = 3000, connect_ms = 5000 }\n")
    for name, module in (("greedy", "greedy"), ("random", "random_bot")) if bots else ():
        done = _cli("bots", "add", name, "-c", "ladder.toml", "--sandbox", "none", "--", "python", "-m",
                    f"rummybot.bots.{module}", cwd=tmp)
        assert done.returncode == 0, done.stderr


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_page_is_a_process_of_its_own_and_the_ladder_plays_on_while_a_client_loops_on_it(tmp_path: Path) -> None:
    tmp = tmp_path
    _config(tmp)
    log = tmp / "data" / "ladder.log"
    service = subprocess.Popen([sys.executable, "-m", "tournaments.cli", "ladder", "serve", "ladder.toml"], cwd=tmp,
                               env=ENV, stdout=subprocess.DEVNULL, stderr=(tmp / "serve.err").open("ab"))
    try:
        addrs = _wait("the service's addresses", lambda: (tmp / "data" / "service.json").is_file()
                      and json.loads((tmp / "data" / "service.json").read_text()))
        web, page_pid = addrs["web"], int(addrs["web_pid"])
        assert page_pid != service.pid and int(_stat(page_pid)[1]) == service.pid  # a child of the service
        assert int(_stat(page_pid)[16]) >= int(_stat(service.pid)[16]) + WEB_NICE  # at a lower priority
        assert b"tournaments.ladder.webproc" in Path(f"/proc/{page_pid}/cmdline").read_bytes()
        _wait("games rated", lambda: (b := _board(web)) and all(x["games"] >= 2 and x["error95"] is not None
                                                                  for x in b.values()) and len(b) == 2)
        assert all(x["online"] is True for x in _board(web).values())  # asked of the service
        match = json.loads(_get(f"{web}/api/bots/greedy@1")[1])["recent_games"][0]["match_id"]
        heavy = ["/", "/api/leaderboard", "/bots/greedy@1", "/api/bots/random@1", "/metrics", "/api/records",
                 f"/api/records/{match}", f"/replay/{match}", "/bots/nobody", "/api/bots/" + "x" * 300]
        scheduled, finished = _count(log, "deal_scheduled"), _count(log, "game_finished")
        statuses: list[int] = []
        stop = threading.Event()

        def loop() -> None:
            while not stop.is_set():
                for path in heavy:
                    statuses.append(_get(web + path)[0])

        clients = [threading.Thread(target=loop) for _ in range(4)]
        for c in clients:
            c.start()
        try:  # the matchmaker keeps scheduling and games keep finishing while the page is busy
            _wait("deals scheduled and games finished during the loop",
                  lambda: _count(log, "deal_scheduled") >= scheduled + 3 and _count(log, "game_finished") >= finished + 4
                  and len(statuses) >= 4 * len(heavy))
        finally:
            stop.set()
            for c in clients:
                c.join(30)
        assert set(statuses) <= {200, 404}, sorted(set(statuses))
        assert statuses.count(404) >= 2 * 4  # the two unknown bots, nothing else
        status, body = _get(f"{web}/api/bots/nobody")
        assert status == 404 and json.loads(body)["reason"] == "NO_SUCH_BOT"
        scraped = _get(f"{web}/metrics")[1].decode()  # the referee's counters, from the service's memory
        finished_total = metric_sum(scraped, "rummy_matches_finished_total")
        assert finished_total >= 4 and "rummy_connected_bots 2.0" in scraped, scraped[:1000]
        # bounded as the referee's viewer: one address holding its share of connections is refused more (503)
        host, port = urllib.parse.urlsplit(web).hostname, urllib.parse.urlsplit(web).port
        held = [socket.create_connection((host, port), timeout=10) for _ in range(DEFAULT_LIMITS.viewer_client_connections)]
        try:
            time.sleep(0.3)
            with socket.create_connection((host, port), timeout=10) as extra:
                extra.sendall(b"GET /api/leaderboard HTTP/1.1\r\nHost: x\r\n\r\n")
                refused = extra.recv(4096)
            assert refused.startswith(b"HTTP/1.1 503") and b"LIMIT_CLIENT_CONNECTIONS" in refused, refused[:200]
        finally:
            for h in held:
                h.close()
        _wait("the page answering again once they are closed", lambda: _get(f"{web}/api/leaderboard")[0] == 200)
        # the page process killed (a crash, the OOM killer): the service starts another on the same port
        os.kill(page_pid, signal.SIGKILL)
        page_pid = int(_wait("a new page process", lambda: (a := json.loads((tmp / "data" / "service.json").read_text()))
                             and int(a["web_pid"]) != page_pid and a["web_pid"], timeout=60))
        assert _wait("the page again", lambda: _board(web)) and service.poll() is None
        # kill -9 of the service: the page ends with it (its stdin pipe closes)
        service.send_signal(signal.SIGKILL)
        service.wait(10)
        _wait("the page process gone", lambda: not _alive(page_pid), timeout=20)
    finally:
        if service.poll() is None:
            service.send_signal(signal.SIGTERM)
            try:
                service.wait(20)
            except subprocess.TimeoutExpired:
                service.kill()
    assert "Traceback" not in (tmp / "serve.err").read_text()


def test_a_web_port_in_use_stops_serve_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        _config(tmp_path, f"127.0.0.1:{taken.getsockname()[1]}", bots=False)
        done = subprocess.run([sys.executable, "-m", "tournaments.cli", "ladder", "serve", "ladder.toml"], cwd=tmp_path,
                              env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "ladder web: cannot serve on 127.0.0.1:" in done.stderr and "did not start" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- the store-reading half, in this process


def _record(store: Any, key: str, a: int, b: int, forfeited: list[int], faults: list[SeatFaults]) -> None:
    assert store.record_game(key, key.split("|")[0], 0, [a, b], [[0], [1]], [10, 0], "out", forfeited, f"m-{key}", "",
                             1.0, faults)


async def _served(source: StoreSource) -> tuple[Any, str]:
    from referee.tools.viewer import start_viewer

    await source.open()
    runner, port = await start_viewer(None, None, "127.0.0.1", 0, routes=routes(source))
    return runner, f"http://127.0.0.1:{port}"


def test_the_page_adds_the_games_stored_since_it_last_looked_to_its_fault_tallies(ladder_db: str | Path) -> None:
    from tournaments.ladder import web as ladder_web

    with open_store(ladder_db) as store:
        a = store.add_bot("a", "1", "remote", key_digest(new_key())).id
        b = store.add_bot("b", "1", "remote", key_digest(new_key())).id
        gone = store.add_bot("gone", "1", "remote", key_digest(new_key())).id
        _record(store, "d1|r0", a, b, [1], [SeatFaults(1, {"NOT_YOUR_TURN": 2}, 1, 0)])
        store.add_rating_run(1, 1, {a: (50.0, 80.0, 27.0, 6.0, 1), b: (-50.0, 80.0, 23.0, 6.0, 1)})
        presence: list[Presence] = [Presence(frozenset({a}), {"m-live": (a, b)})]

        async def ask() -> Presence:
            return presence[0]

        async def scenario() -> None:
            source = StoreSource(ladder_db, "indian", ask)
            runner, url = await _served(source)
            try:
                first = json.loads(await asyncio.to_thread(lambda: _get(f"{url}/api/leaderboard")[1]))
                rows = {r["bot"]: r for r in first["bots"]}
                assert first["games"] == 1 and rows["b@1"]["faults"]["forfeits"] == 1
                assert (rows["a@1"]["online"], rows["b@1"]["online"], rows["a@1"]["rank"]) == (True, False, 1)
                bot = json.loads(await asyncio.to_thread(lambda: _get(f"{url}/api/bots/a@1")[1]))
                assert bot["live_games"] == [{"match_id": "m-live", "live": "/live/m-live", "seats": ["a@1", "b@1"]}]
                # more games, one with a bot revoked since; the service's presence gone
                _record(store, "d2|r0", b, a, [], [SeatFaults(0, {}, 0, 1), SeatFaults(1, {"NOT_YOUR_TURN": 1}, 2, 0)])
                _record(store, "d3|r0", a, gone, [0], [])
                store.revoke("gone", "1")
                presence[0] = UNKNOWN
                later: dict[str, Any] = first
                for _ in range(100):  # a page past its second is rebuilt (its readers meanwhile get the last one)
                    await asyncio.sleep(ladder_web.CACHE_S / 4)
                    later = json.loads(await asyncio.to_thread(lambda: _get(f"{url}/api/leaderboard")[1]))
                    if later["games"] == 3:
                        break
                got = {r["bot"]: r["faults"] for r in later["bots"]}
                whole = store.faults()
                assert later["games"] == 3 == store.game_count()
                assert got == {f"{n}@1": whole[i].to_json() for n, i in (("a", a), ("b", b))}  # the same as counted whole
                assert got["a@1"]["refused"] == {"NOT_YOUR_TURN": 1} and got["a@1"]["forfeits"] == 1
                assert all(r["online"] is None for r in later["bots"])  # not known: not shown as offline
                assert (await asyncio.to_thread(lambda: _get(f"{url}/api/bots/gone@1")))[0] == 404  # revoked
                page = (await asyncio.to_thread(lambda: _get(f"{url}/bots/a")))[1].decode()  # the newest version
                assert "<h1>a@1</h1>" in page and "href='/replay/m-d3|r0'" in page
            finally:
                await runner.cleanup()
                source.close()

        asyncio.run(scenario())


def test_presence_is_asked_of_the_service_at_most_once_a_second(tmp_path: Path) -> None:
    """A crowd of readers costs the service one small request a second; a service that stops answering leaves
    the last presence shown a while, then online unknown."""
    from tournaments.ladder import webproc
    from tournaments.ladder.webproc import PresenceClient, start_internal

    asked: list[float] = []
    answer = {"online": [1], "live": [["m1", [1, 2]]]}

    def presence() -> dict[str, Any]:
        asked.append(time.monotonic())
        return answer

    async def scenario() -> None:
        sock = tmp_path / "s.sock"
        internal = await start_internal(sock, presence, None)
        client = PresenceClient(str(sock))
        try:
            got = await asyncio.gather(*(client() for _ in range(200)))
            assert len(asked) == 1 and all(p == Presence(frozenset({1}), {"m1": (1, 2)}) for p in got)
            assert os.stat(sock).st_mode & 0o077 == 0  # the service's socket is its user's only
            await internal.cleanup()  # the service stops answering
            await asyncio.sleep(webproc.ASK_S + 0.05)
            assert (await client()).online == frozenset({1})  # the last one, for a while
            client._answered -= webproc.PRESENCE_KEPT_S
            await asyncio.sleep(webproc.ASK_S + 0.05)
            assert await client() == UNKNOWN
        finally:
            await client.close()

    asyncio.run(scenario())
