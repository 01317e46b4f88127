"""Every command of the ladder guide's "Run a ladder" section runs as written, in a folder laid out like the repo
(``.venv`` pointing at the real one): the certificate, house bots in folders of their own, a remote bot's key,
the service (in the background, stopped with Ctrl-C's SIGINT at the end), a participant connecting over TLS with
its key in the environment, a new version and its SPRT, the leaderboard in the terminal and as JSON, a revoke.

Three things differ from the text, so that the test runs on a shared host: the ports 50051 and 8080 become free
ones, ``0.0.0.0`` becomes ``127.0.0.1``, and ``ladder.example.org`` becomes ``localhost`` (in the certificate
too). The section is the ladder guide's, docs/ladder.md.
"""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serving import free_port
from tests.tournaments.ladder_helpers import ENV, ROOT, leaderboard, wait_for

HEADING = "## Run a ladder\n"
GUIDE = ROOT / "docs" / "ladder.md"

def ladder_section() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    if HEADING not in text:
        pytest.fail(f"no {HEADING.strip()!r} section in {GUIDE}")
    section = text[text.index(HEADING) + len(HEADING):]
    end = re.search(r"^#{1,2} ", section, re.M)
    return section[:end.start()] if end else section


def blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


def commands(block: str) -> list[str]:
    """The block's shell lines: continuations joined, comments (`` # ...``) dropped."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [re.sub(r"\s+#\s.*$", "", line).strip() for line in joined.splitlines() if line.strip()]


def test_every_command_of_run_a_ladder_runs_as_written(tmp_path: Path) -> None:
    section = ladder_section()
    referee_port, web_port = free_port(), free_port()
    local = {"ladder.example.org": "localhost", "0.0.0.0": "127.0.0.1", ":50051": f":{referee_port}",
             ":8080": f":{web_port}"}

    def here(text: str) -> str:
        for a, b in local.items():
            text = text.replace(a, b)
        return text

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".venv").symlink_to(Path(sys.prefix))
    (toml,) = blocks(section, "toml")
    (repo / "ladder.toml").write_text(here(toml), encoding="utf-8")
    lines = [here(c) for b in blocks(section, "sh") for c in commands(b)]
    assert len(lines) >= 12 and any(" serve " in c for c in lines), lines
    keys: dict[str, str] = {}
    for c in lines:  # which key file holds which entry's key: `bots add NAME [--version V] ... > FILE`
        m = re.search(r"bots add (\S+)(?: --version (\S+))?.*> (\S+)$", c)
        if m:
            keys[m.group(3)] = f"{m.group(1)}@{m.group(2) or '1'}"
    background: list[subprocess.Popen[str]] = []
    service: subprocess.Popen[str] | None = None
    web = f"http://127.0.0.1:{web_port}"
    try:
        for line in lines:
            if " ladder serve " in line:
                service = subprocess.Popen(["bash", "-c", line], cwd=repo, env=ENV, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True)
                wait_for("the service", lambda: (repo / "ladder-data" / "service.json").is_file(), 60)
                continue
            if line.startswith("RUMMY_REFEREE="):  # a participant's bot: runs until stopped
                label = keys[re.search(r"cat (\S+)\)", line).group(1)]  # type: ignore[union-attr]
                assert "RUMMY_BOT_TOKEN=" in line and "--bot-token" not in line  # the key in the environment
                log = (repo / f"{label}.log").open("w")
                background.append(subprocess.Popen(["bash", "-c", line], cwd=repo, env=ENV, stdout=log,
                                                   stderr=subprocess.STDOUT, text=True))
                wait_for(f"{label} connected over TLS and playing", lambda label=label: (b := leaderboard(web))
                      and b.get(label, {}).get("online") and b[label]["games"] >= 2, 120)
                continue
            done = subprocess.run(["bash", "-c", line], cwd=repo, env=ENV, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            out = done.stdout
            if line.startswith("openssl "):
                assert (repo / "ladder.crt").is_file() and (repo / "ladder.key").is_file()
            elif "> " in line and " bots add " in line:
                key = (repo / line.rsplit("> ", 1)[1]).read_text().strip()
                assert key.startswith("rl_") and len(key) > 30
            elif " bots add " in line:
                assert "registered house bot" in out, out
            elif " bots list " in line:
                assert all(label in out for label in ("greedy@1", "random@1", "alice@1")), out
            elif " status " in line:
                assert "alice@1" in out and "±" in out, out
            elif line.startswith("curl ") and "/api/leaderboard" in line:
                board = json.loads(out)["bots"]
                assert {b["bot"] for b in board} >= {"greedy@1", "random@1", "alice@1", "alice@2"}
                assert any(b["error95"] is not None for b in board)
            elif line.startswith("curl ") and "/api/bots/alice@2" in line:
                (test,) = json.loads(out)["sprt"]
                assert (test["candidate"], test["baseline"]) == ("alice@2", "alice@1") and test["upper_bound"] > 0
            elif " revoke " in line:
                assert "revoked alice@1" in out, out
        assert service is not None and all(p.poll() is None for p in background)
        assert "(TLS)" in _stop(service)
    finally:
        for p in background:
            p.kill()
            p.wait(10)
        if service is not None and service.poll() is None:
            service.kill()
    for line in lines:
        assert shlex.split(line)  # every line is one shell command a user can paste


def _stop(service: subprocess.Popen[str]) -> str:
    """Ctrl-C: the service stops by itself, saying so."""
    service.send_signal(signal.SIGINT)
    out, err = service.communicate(timeout=30)
    assert service.returncode == 0, err[-2000:]
    assert "ladder stopped" in err, err
    return err
