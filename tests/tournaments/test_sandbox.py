"""The bot sandbox (tournaments/sandbox.py): no token on a command line, what a sandboxed bot sees, the limits
that stop a bot that forks or allocates without end (the tournament goes on), the config keys."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from tests.tournaments.sandboxing import need_bwrap
from tournaments.botproc import BotProcess, Isolation
from tournaments.config import BotSpec, ConfigError, parse_config
from tournaments.sandbox import Cgroups, Limits, Sandbox, bwrap_path, modes

PY = sys.executable



def _sandbox(tmp_path: Path, limits: Limits | None = None, hidden: tuple[Path, ...] = ()) -> Sandbox:
    bwrap = bwrap_path()
    assert bwrap is not None
    return Sandbox(bwrap, limits or Limits(), hidden=hidden, others=(tmp_path / "other",), socket=None)


async def _run_bot(tmp_path: Path, script: str, limits: Limits, seconds: float = 20.0) -> tuple[BotProcess, str]:
    """Run ``script`` as a persistent bot until it has exited once; returns the process and its log."""
    (tmp_path / "bot").mkdir(exist_ok=True)
    (tmp_path / "bot" / "bot.py").write_text(script)
    spec = BotSpec("b", (PY, "bot.py"), tmp_path / "bot")
    cgroups = Cgroups()
    proc = BotProcess(spec, 0, "127.0.0.1:1", tmp_path / "logs", isolation=Isolation(_sandbox(tmp_path, limits), cgroups))
    proc.start()
    deadline = time.monotonic() + seconds
    while not proc.exits and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await proc.stop(grace=1)
    cgroups.remove_all()
    return proc, (tmp_path / "logs" / "b-0.log").read_text()


def test_no_token_on_the_command_line(tmp_path: Path) -> None:
    p = BotProcess(BotSpec("b", ("python", "bot.py"), tmp_path), 0, "127.0.0.1:5", tmp_path)
    assert p.token not in " ".join(p.argv) and "--bot-token" not in p.argv
    assert p.argv[-2:] == ["--referee", "127.0.0.1:5"]


def test_the_bwrap_command_line_holds_no_secret_and_hides_the_output(tmp_path: Path) -> None:
    need_bwrap()
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "out").mkdir()
    sb = _sandbox(tmp_path, hidden=(tmp_path / "bot" / "out",))
    argv = sb.argv([PY, "bot.py"], tmp_path / "bot", {"RUMMY_BOT_TOKEN": "secret-0-abcdefghijklmnop"})
    assert "secret-0-abcdefghijklmnop" not in " ".join(argv)
    assert ["--tmpfs", str(tmp_path / "bot" / "out")] == argv[argv.index(str(tmp_path / "bot" / "out")) - 1:][:2]
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop"):
        assert flag in argv
    assert "--share-net" in argv  # no socket: a TCP referee needs the network


def test_a_node_script_gets_its_package_even_when_the_bot_starts_inside_it(tmp_path: Path) -> None:
    """``node ../dist/examples/bot.js`` run from the package's ``examples/``: the package (its ``node_modules``,
    the compiled SDK, the .proto files) is bound read-only, the bot's own folder writable on top of it."""
    need_bwrap()
    package = tmp_path / "node-sdk"
    (package / "dist" / "examples").mkdir(parents=True)
    (package / "examples").mkdir()
    (package / "package.json").write_text("{}")
    (package / "dist" / "examples" / "bot.js").write_text("")
    argv = _sandbox(tmp_path).argv(["node", "../dist/examples/bot.js"], package / "examples", {})
    ro = argv.index("--ro-bind", argv.index(str(package)) - 1)
    assert argv[ro:ro + 3] == ["--ro-bind", str(package), str(package)]
    assert argv.index(str(package / "examples")) > ro  # its own folder, bound (writable) after the package


def test_what_a_sandboxed_bot_sees(tmp_path: Path) -> None:
    """Its own processes only, no network, its folder writable and nothing else, the hidden folder empty, no
    capability (so it cannot unmount what hides the output)."""
    need_bwrap()
    import subprocess

    (tmp_path / "bot" / "out").mkdir(parents=True)
    (tmp_path / "bot" / "out" / "record.jsonl").write_text("deck")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "secret").write_text("x")
    script = (
        f"import os, socket, json\nSECRET = {str(tmp_path / 'other' / 'secret')!r}\n"
        "r = {'pids': [p for p in os.listdir('/proc') if p.isdigit()], 'out': os.listdir('out'),\n"
        "     'other': os.path.exists(SECRET), 'caps': [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1]}\n"
        "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=1); r['net'] = True\n"
        "except OSError:\n    r['net'] = False\n"
        "try:\n    open('/usr/x', 'w'); r['usr_writable'] = True\n"
        "except OSError:\n    r['usr_writable'] = False\n"
        "open('mine', 'w').write('ok')\n"
        "print(json.dumps(r))\n"
    )
    (tmp_path / "bot" / "probe.py").write_text(script)
    sb = Sandbox(bwrap_path() or "", Limits(), hidden=(tmp_path / "bot" / "out",), others=(tmp_path / "other",),
                 socket=tmp_path / "sock")
    (tmp_path / "sock").write_text("")  # stands in for the referee's socket: a bind needs only a file
    done = subprocess.run(sb.argv([PY, "probe.py"], tmp_path / "bot", os.environ), cwd=tmp_path / "bot",
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    import json

    r = json.loads(done.stdout)
    assert len(r["pids"]) <= 2 and r["out"] == [] and r["other"] is False
    assert r["caps"] == "0000000000000000" and r["net"] is False and r["usr_writable"] is False
    assert (tmp_path / "bot" / "mine").read_text() == "ok"


def test_a_fork_bomb_is_bounded_by_the_process_limit(tmp_path: Path) -> None:
    need_bwrap()
    if "pids" not in Cgroups().kinds:
        pytest.skip("no writable pids cgroup here")
    bomb = ("import os, time\nn = 0\nwhile True:\n    try:\n        pid = os.fork()\n    except OSError as e:\n"
            "        print('fork refused after', n, e, flush=True); os._exit(3)\n"
            "    if pid == 0:\n        time.sleep(60); os._exit(0)\n    n += 1\n")
    proc, log = asyncio.run(_run_bot(tmp_path, bomb, Limits(processes=32)))
    assert proc.exits and proc.exits[0] == 3, log
    assert "fork refused after" in log and int(log.split("fork refused after ")[1].split()[0]) < 32


def test_a_memory_hog_is_killed(tmp_path: Path) -> None:
    need_bwrap()
    hog = "x = []\nwhile True:\n    x.append(bytearray(16 * 1024 * 1024))\n"
    proc, log = asyncio.run(_run_bot(tmp_path, hog, Limits(memory_mb=128)))
    assert proc.exits and proc.exits[0] not in (0, None), log  # SIGKILL (cgroup OOM) or MemoryError (RLIMIT_DATA)


def test_a_spinning_bot_is_stopped_at_its_cpu_time(tmp_path: Path) -> None:
    need_bwrap()
    started = time.monotonic()
    proc, log = asyncio.run(_run_bot(tmp_path, "while True:\n    pass\n", Limits(cpu_time_s=1, cpu_cores=0)))
    assert proc.exits and proc.exits[0] in (-9, -24, 137, 152), log  # SIGXCPU, then SIGKILL
    assert time.monotonic() - started < 10


def test_config_keys(tmp_path: Path) -> None:
    def cfg(t: dict, b: dict | None = None) -> dict:  # type: ignore[type-arg]
        return {"tournament": {"variant": "indian", "games_per_pairing": 1, **t},
                "bots": [{"name": "a", "command": ["x"], **(b or {})}, {"name": "b", "command": ["y"]}]}

    c = parse_config(cfg({"sandbox": "none", "limits": {"memory_mb": 512}}, {"sandbox": "bwrap", "limits": {"cpu_cores": 2}}),
                     base_dir=tmp_path)
    assert c.sandbox == "none" and c.limits == {"memory_mb": 512}
    assert c.bots[0].sandbox == "bwrap" and c.bots[0].limits == {"cpu_cores": 2.0}
    for bad, key in (({"sandbox": "docker"}, "tournament.sandbox"), ({"limits": {"memory": 5}}, "tournament.limits.memory"),
                     ({"limits": {"processes": -1}}, "tournament.limits.processes"),
                     ({"limits": {"memory_mb": 1}}, "tournament.limits.memory_mb")):
        with pytest.raises(ConfigError) as exc:
            parse_config(cfg(bad), base_dir=tmp_path)
        assert exc.value.key == key
    with pytest.raises(ConfigError) as exc:
        parse_config(cfg({}, {"binds": ["no/such"]}), base_dir=tmp_path)
    assert exc.value.key == "bots[0].binds"


def test_modes_say_why_a_bot_is_unsandboxed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"tournament": {"variant": "indian", "games_per_pairing": 1},
            "bots": [{"name": "a", "command": ["x"]}, {"name": "b", "command": ["y"], "sandbox": "bwrap"}]}
    import tournaments.sandbox as sandbox

    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: "bwrap is not installed")
    with pytest.raises(ConfigError) as exc:
        modes(parse_config(data, base_dir=tmp_path))
    assert exc.value.key == "bots[1].sandbox" and "bwrap is not installed" in exc.value.problem
    del data["bots"][1]["sandbox"]
    chosen, why = modes(parse_config(data, base_dir=tmp_path))
    assert chosen == {"a": "none", "b": "none"} and why is not None and "apt-install.sh bubblewrap" in why


def test_a_tournament_goes_on_past_a_bot_that_allocates_without_end(tmp_path: Path) -> None:
    """The hog is killed at its memory limit (and again after each restart) and forfeits; every game is played."""
    need_bwrap()
    from tournaments.runner import run_tournament

    (tmp_path / "hog").mkdir()
    (tmp_path / "hog" / "hog.py").write_text("x = []\nwhile True:\n    x.append(bytearray(16 * 1024 * 1024))\n")
    data = {"tournament": {"variant": "indian", "games_per_pairing": 1, "output": "out", "max_hands": 1,
                           "time_control": {"per_move_ms": 300, "connect_ms": 1000}},
            "bots": [{"name": "hog", "command": [PY, "hog.py"], "cwd": "hog", "limits": {"memory_mb": 64}},
                     {"name": "good", "command": [PY, "-m", "rummybot.bots.greedy"]}]}
    stats = run_tournament(parse_config(data, base_dir=tmp_path), handle_signals=False)
    assert stats.played == 2 and stats.failed == 0
    log = (tmp_path / "out" / "bots" / "hog-0.log").read_text()
    assert "(SIGKILL: killed: out of memory" in log, log  # bwrap reports its child killed as 128 + 9
