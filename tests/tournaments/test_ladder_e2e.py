"""The ladder service end to end on 127.0.0.1, on each store: SQLite (the default) and PostgreSQL (a real server, see
conftest.py: skipped saying what to install where it is missing, required in CI). The whole flow (100+ games, the
remote bots down longer than the SDK's old reconnect window) runs once: on PostgreSQL where it is installed, else on
SQLite; the other store runs the same steps shortened (fewer games, a shorter outage).

- Two house bots (one in bwrap where the host has it) and two remote Python bots that join with keys from `ladder
  bots add` play unattended; a made-up key is refused; a remote bot killed and started again rejoins as the same
  entry; /api/leaderboard lists every bot with error bars; a kill -9 of the service and a restart lose and double
  no finished game, and the remote bots (``RUMMY_RECONNECT=forever``) come back by themselves and play on under
  their entries; `ladder status` reads the leaderboard from the running page, then from the store.
- Remote bots in three languages (Python, the Go SDK, a shell bot through `referee-bridge`) play 100+ games
  unattended; a second version of the Python bot gets an SPRT verdict against the first; the leaderboard page in
  headless Chromium shows the numbers /api/leaderboard gives, and a bot page's replay link opens the replay.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.serving import free_port
from tests.tournaments.ladder_helpers import ENV, ROOT, Backend, metric_sum
from tests.tournaments.ladder_helpers import ladder_here as _cli
from tests.tournaments.ladder_helpers import leaderboard as _board
from tests.tournaments.ladder_helpers import wait_for as _wait
from tests.tournaments.pgserver import missing as postgres_missing


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """The store under test; the whole flow on PostgreSQL, or on SQLite where PostgreSQL is not installed."""
    if request.param == "postgresql":
        return Backend(request.getfixturevalue("postgres_url"), full=True)
    return Backend("", full=postgres_missing() is not None)


SQLITE = Backend()


def _serve(tmp: Path, backend: Backend = SQLITE) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    (tmp / "data" / "service.json").unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "tournaments.cli", "ladder", "serve", "ladder.toml", *backend.args],
                            cwd=tmp, env=ENV, stdout=subprocess.DEVNULL, stderr=(tmp / "serve.err").open("ab"))
    addrs = _wait("the service's addresses", lambda: (tmp / "data" / "service.json").is_file()
                  and json.loads((tmp / "data" / "service.json").read_text()))
    return proc, addrs


def _keys(games: list[Any]) -> list[tuple[str, str]]:
    return [(g.key, g.match_id) for g in games]


def _remote(tmp: Path, referee: str, key: str, module: str, name: str) -> subprocess.Popen[bytes]:
    return _run_bot(tmp, referee, key, [sys.executable, "-m", f"rummybot.bots.{module}"], name)


def _run_bot(tmp: Path, referee: str, key: str, command: list[str], name: str) -> subprocess.Popen[bytes]:
    # the key in the environment, not on argv; as the participant's command line in docs/ladder.md: back by itself
    # after the ladder restarts
    env = {**ENV, "RUMMY_REFEREE": referee, "RUMMY_BOT_TOKEN": key, "RUMMY_RECONNECT": "forever"}
    return subprocess.Popen(command, cwd=tmp, env=env, stdout=(tmp / f"{name}.log").open("ab"), stderr=subprocess.STDOUT)


def test_a_ladder_runs_by_itself(tmp_path: Path, backend: Backend) -> None:
    tmp, db = tmp_path, backend.args
    port = free_port()  # the remote bots find the restarted service where they left it
    (tmp / "ladder.toml").write_text(
        f'[ladder]\nvariant = "indian"\nseats = 2\ndata = "data"\nlisten = "127.0.0.1:{port}"\nweb = "127.0.0.1:0"\n'
        "concurrency = 3\nmax_hands = 1\nrefit_s = 0.5\ntime_control = { per_move_ms = 3000, connect_ms = 5000 }\n")
    assert _cli("bots", "add", "house-random", "-c", "ladder.toml", *db, "--sandbox", "none", "--", "python", "-m",
                "rummybot.bots.random_bot", cwd=tmp).returncode == 0
    assert _cli("bots", "add", "house-greedy", "-c", "ladder.toml", *db, "--", "python", "-m", "rummybot.bots.greedy",
                cwd=tmp).returncode == 0  # bwrap where the host has it
    keys = {}
    for name in ("alice", "bob"):
        done = _cli("bots", "add", name, "-c", "ladder.toml", *db, cwd=tmp)
        assert done.returncode == 0, done.stderr
        keys[name] = done.stdout.strip().splitlines()[-1]
    if backend.url:  # the bots are in PostgreSQL; SQLite's ladder (no --database) is another, empty one
        assert _cli("bots", "list", "-c", "ladder.toml", *db, cwd=tmp).stdout.count("@1") == 4
        assert _cli("bots", "list", "-c", "ladder.toml", cwd=tmp).stdout.count("@1") == 0
        (tmp / "data" / "ladder.db").unlink()
    service, addrs = _serve(tmp, backend)
    bots: dict[str, subprocess.Popen[bytes]] = {}
    try:
        bots["alice"] = _remote(tmp, addrs["referee"], keys["alice"], "greedy", "alice")
        bots["bob"] = _remote(tmp, addrs["referee"], keys["bob"], "random_bot", "bob")
        forged = _remote(tmp, addrs["referee"], keys["alice"][:-4] + "AAAA", "greedy", "forged")
        web = addrs["web"]
        seats = 40 if backend.full else 20  # two seats a game: 20 games, or 10
        board = _wait("games with every bot", lambda: (b := _board(web)) and sum(x["games"] for x in b.values()) >= seats
                      and all(x["games"] >= 3 for x in b.values()) and b)
        assert forged.wait(30) == 1  # a made-up key: refused, the bot told why
        assert "BOT_TOKEN_UNKNOWN" in (tmp / "forged.log").read_text()
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
        # kill -9: every finished game stays, none doubles; the remote bots are left running, and come back
        service.send_signal(signal.SIGKILL)
        service.wait(10)
        stored = _keys(backend.games(tmp))
        assert len(stored) >= seats // 2 and len(stored) == len({k for k, _ in stored}) == len({m for _, m in stored})
        remote = {"alice@1": backend.bot_id(tmp, "alice"), "bob@1": backend.bot_id(tmp, "bob")}
        before = {b: backend.games_of(tmp, i) for b, i in remote.items()}
        # the whole flow: down longer than the SDK's old bounded window (8 reconnects, ~9 s)
        time.sleep(12 if backend.full else 2)
        assert all(bots[n].poll() is None for n in ("alice", "bob")), "a remote bot gave up while the ladder was down"
        service, addrs = _serve(tmp, backend)
        assert addrs["referee"] == f"127.0.0.1:{port}"
        _wait("both remote bots back and playing under their entries",
              lambda: all(backend.games_of(tmp, i) >= before[b] + 3 for b, i in remote.items()), timeout=120)
        assert all(bots[n].poll() is None for n in ("alice", "bob"))  # the same processes: none was restarted
        assert {b for b in _board(addrs["web"]) if b.startswith(("alice", "bob"))} == {"alice@1", "bob@1"}
        log = (tmp / "alice.log").read_text()
        assert "joining again in" in log and keys["alice"] not in log  # told, one line a reconnect, never the key
        assert log.count("joining again in") <= 12  # capped backoff: a dozen seconds down is a handful of lines
        again = _keys(backend.games(tmp))
        assert again[:len(stored)] == stored  # nothing lost
        assert len(again) == len({k for k, _ in again}) == len({m for _, m in again})  # nothing doubled
        status = _cli("status", "-c", "ladder.toml", *db, cwd=tmp)
        assert status.returncode == 0 and "alice@1" in status.stdout and "±" in status.stdout
    finally:
        for p in bots.values():
            p.kill()
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(30)
        except subprocess.TimeoutExpired:
            service.kill()
    assert "Traceback" not in (tmp / "serve.err").read_text()
    (tmp / "data" / "service.json").unlink()
    offline = _cli("status", "-c", "ladder.toml", *db, cwd=tmp)  # the service gone: from the store
    assert offline.returncode == 0 and "alice@1" in offline.stdout and "does not answer" in offline.stdout
    if backend.url:
        assert not (tmp / "data" / "ladder.db").exists()  # everything went to PostgreSQL
        assert backend.url.split("@")[0].split(":")[-1] not in offline.stdout  # the password is not shown


@pytest.fixture(scope="module")
def go_greedy(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The Go SDK's greedy bot: clients/go/bin/greedy when built (bash clients/go/build.sh), else built here once for
    both stores (the module cache makes it quick). None, with a warning, where Go is missing; required under CI."""
    built = ROOT / "clients" / "go" / "bin" / "greedy"
    if built.is_file():
        return built
    if shutil.which("go") is None:
        why = "Go is not installed: the ladder's end-to-end test runs without its Go bot (install Go, or run " \
              "`bash clients/go/build.sh` on a host with it)"
        if os.environ.get("CI") == "true" or os.environ.get("RUMMY_REQUIRE_CLIENTS") == "1":
            pytest.fail(why + "; required in CI")
        warnings.warn(why, stacklevel=2)
        return None
    out = tmp_path_factory.mktemp("go") / "go-greedy"
    done = subprocess.run(["go", "build", "-buildvcs=false", "-trimpath", "-o", str(out), "./cmd/greedy"],
                          cwd=ROOT / "clients" / "go", capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"the Go bot does not build: {done.stderr[-2000:]}"
    return out


def _chromium() -> Any:
    """Playwright's Chromium on Debian's package (as tests/web drives it), or a skip saying what is missing."""
    chromium = Path("/usr/bin/chromium")
    why = "" if chromium.exists() else "no /usr/bin/chromium (scripts/install-browser.sh installs it)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = why or "the playwright package is missing (pip install -e '.[dev]')"
    if why:
        if os.environ.get("RUMMY_REQUIRE_BROWSER") == "1":
            pytest.fail(f"RUMMY_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(f"the ladder's page is not checked in a browser: {why}")
    return sync_playwright, chromium


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def _metric(web: str, name: str) -> float:
    with urllib.request.urlopen(f"{web}/metrics", timeout=5) as r:
        return metric_sum(r.read().decode(), name)


def test_bots_in_three_languages_play_a_hundred_games_and_a_new_version_gets_an_sprt_verdict(
        tmp_path: Path, backend: Backend, go_greedy: Path | None) -> None:
    tmp, games = tmp_path, 100 if backend.full else 40
    sync_playwright, chromium = _chromium()
    (tmp / "ladder.toml").write_text(
        '[ladder]\nvariant = "indian"\nseats = 2\ndata = "data"\nlisten = "127.0.0.1:0"\nweb = "127.0.0.1:0"\n'
        "concurrency = 4\nmax_hands = 1\nrefit_s = 0.5\nexploration = 0.3\n"
        "time_control = { per_move_ms = 1000, connect_ms = 5000 }\n"
        "sprt = { elo0 = 0, elo1 = 200, alpha = 0.05, beta = 0.05, share = 0.5 }\n")
    keys = {}
    for name, version in (("py", "1"), ("go", "1"), ("stdio", "1"), ("py", "2")):
        done = _cli("bots", "add", name, "--version", version, "-c", "ladder.toml", *backend.args, cwd=tmp)
        assert done.returncode == 0, done.stderr
        keys[f"{name}@{version}"] = done.stdout.strip().splitlines()[-1]
    go = go_greedy
    bridge = [sys.executable, "-c", "from rummybot.stdio import main; main()", "--", "sh",
              str(ROOT / "clients" / "stdio" / "examples" / "first_legal.sh")]
    commands = {"py@1": [sys.executable, "-m", "rummybot.bots.random_bot"],  # the first version: random
                "py@2": [sys.executable, "-m", "rummybot.bots.greedy"],  # the second: greedy, clearly stronger
                "stdio@1": bridge}
    if go is not None:
        commands["go@1"] = [str(go)]
    service, addrs = _serve(tmp, backend)
    bots: dict[str, subprocess.Popen[bytes]] = {}
    web = addrs["web"]
    try:
        for label, command in commands.items():
            bots[label] = _run_bot(tmp, addrs["referee"], keys[label], command, label)
        board = _wait(f"{games} games, every bot in them", lambda: (b := _board(web))
                      and sum(x["games"] for x in b.values()) >= 2 * games  # two seats a game
                      and all(b[label]["games"] >= games // 10 for label in commands) and b, timeout=240)
        assert all(p.poll() is None for p in bots.values()), {k: p.poll() for k, p in bots.items()}
        test = _wait("the SPRT verdict", lambda: (t := _json(f"{web}/api/bots/py@2")["sprt"]) and t[0]["status"] != "running"
                     and t[0], timeout=120)
        assert (test["candidate"], test["baseline"], test["status"]) == ("py@2", "py@1", "H1"), test
        assert test["llr"] >= test["upper_bound"] == pytest.approx(2.944, abs=1e-3) and test["deals"] >= 2
        assert _json(f"{web}/api/bots/py@1")["sprt"][0]["status"] == "H1"  # shown on both entries
        # the test's games were scheduled for it, beside the normal ones, and say so (read through the store)
        whys = [g.why for g in backend.games(tmp)]
        sprt_games = [w for w in whys if w.startswith("sprt: py@2 (new version) against py@1 (the previous one)")]
        assert len(sprt_games) >= 2 * test["deals"] and len(whys) - len(sprt_games) >= games // 2
        for label in bots:  # every bot played by the rules: no forfeits, no refused answers
            f = board[label]["faults"]
            assert f["forfeits"] == 0 and not f["refused"], (label, f, (tmp / f"{label}.log").read_text()[-2000:])
        # stop the bots: the ladder goes quiet, and the page and the JSON can be compared number for number
        for p in bots.values():
            p.kill()
            p.wait(10)
        settled: list[Any] = []

        def quiet() -> bool:
            # a game the killed bots were in ends later (by the rules, once their time is up): until every match is
            # over, readings start again. The board is answered from a build at most one reading old (built anew
            # behind it), so two equal readings taken with no match live are the board of every game
            if _metric(web, "rummy_live_matches"):
                settled.clear()
                return False
            now = _json(f"{web}/api/leaderboard")
            settled.append(now)
            return len(settled) > 1 and settled[-2] == now and not any(b["online"] for b in now["bots"]) and \
                all(b["error95"] is not None for b in now["bots"])
        _wait("the ladder quiet", lambda: (time.sleep(1.5), quiet())[1], timeout=90)
        final = settled[-1]
        assert final["games"] >= games and {b["bot"] for b in final["bots"]} == set(commands)
        finished = _metric(web, "rummy_matches_finished_total")
        assert finished >= final["games"], finished
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox", "--disable-dev-shm-usage"])
            try:
                page = browser.new_page()
                page.goto(f"{web}/")
                rows = page.eval_on_selector_all("tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))")
                shown = {r[1]: r for r in rows}
                for b in final["bots"]:
                    r = shown[b["bot"]]
                    assert r[0] == str(b["rank"]) and r[2] == f"{b['elo']:.0f} ± {b['error95']:.0f}", (r, b)
                    assert r[4] == str(b["games"]), (r, b)
                assert page.locator("svg[aria-label]").count() == len(final["bots"])  # a drawn error bar each
                page.click("a[href='/bots/py@2']")
                page.wait_for_selector("tr.sprt")
                assert page.text_content("tr.sprt .sprt-status") == "H1"
                assert f"{test['llr']:+.2f}" in (page.text_content("tr.sprt") or "")
                replay = page.locator("a[href^='/replay/']").first
                href = replay.get_attribute("href")
                replay.click()
                page.wait_for_selector("#table[data-frame]", timeout=15_000)
                assert urllib.parse.urlsplit(page.url).path == href
                assert "py@2" in (page.text_content("body") or "")  # the replay names the seats by their entries
            finally:
                browser.close()
    finally:
        for p in bots.values():
            p.kill()
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(20)
        except subprocess.TimeoutExpired:
            service.kill()
