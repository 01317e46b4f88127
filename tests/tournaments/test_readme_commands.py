"""Every command of the hosting guide's tournament block (docs/hosting.md, "Run a tournament") runs as written, from
a copy of the repo's layout."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def readme_tournament_commands() -> list[str]:
    """The shell lines of the first ``sh`` block under "## Run a tournament" in docs/hosting.md, comments dropped."""
    text = (ROOT / "docs" / "hosting.md").read_text()
    section = text[text.index("## Run a tournament\n"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "the Run a tournament section has no sh block"
    return [re.sub(r"\s+#\s.*$", "", line).strip() for line in block.group(1).splitlines() if line.strip()]


def _layout(folder: Path) -> Path:
    """A folder that looks like the repo to the commands: the examples, and ``.venv`` pointing at the real one."""
    (folder / "tournaments").mkdir(parents=True)
    shutil.copytree(ROOT / "tournaments" / "examples", folder / "tournaments" / "examples",
                    ignore=shutil.ignore_patterns("tournament-output"))
    (folder / ".venv").symlink_to(Path(sys.prefix))
    return folder


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command as written, with ``--no-progress`` after its subcommand (a bar is no use in a log)."""
    quiet = re.sub(r"^(\S+ (?:run|ladder add)) ", r"\1 --no-progress ", command)
    return subprocess.run(["bash", "-c", quiet], cwd=cwd, capture_output=True, text=True, timeout=600)


def _serve_referee(port: int, cwd: Path) -> subprocess.Popen[str]:
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", port)) == 0:
            pytest.fail(f"port {port}, which the guide's --referee line names, is taken by another program")
    proc = subprocess.Popen([str(Path(sys.prefix) / "bin" / "referee"), "serve", "--port", str(port)], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.1)
    proc.kill()
    pytest.fail(f"the referee did not start on port {port}")


def test_every_tournament_command_in_the_hosting_guide_runs_as_written(tmp_path: Path) -> None:
    """Each line exits 0 and does what its comment says; the --referee line plays on a referee started as the
    operations guide's command line says (from a fresh copy, so it plays rather than resumes)."""
    commands = readme_tournament_commands()
    assert len(commands) >= 8
    assert all(c.startswith(".venv/bin/tournament ") for c in commands), commands
    repo = _layout(tmp_path / "repo")
    for command in commands:
        where = repo
        referee = None
        if "--referee" in command:
            port = int(command.rsplit(":", 1)[1].split()[0])
            where = _layout(tmp_path / "fresh")
            referee = _serve_referee(port, where)
        try:
            run = _run(command, where)
        finally:
            if referee is not None:
                referee.terminate()
                referee.wait(10)
        assert run.returncode == 0, f"{command}\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
        assert "warning:" not in run.stderr, f"{command}\n{run.stderr[-2000:]}"
        out = run.stdout.replace("\n", " ")
        if " run " in command or " add " in command:
            assert "games played this run" in out and "results: " in out, (command, out)
        if "--referee" in command:
            assert "12 games played this run, 0 before" in out, out
        if "sprt.toml" in command:
            assert "H1 accepted: greedy is better than noisy" in out, out
        if " ladder add " in command:
            assert "added greedy to the ladder" in out, out
        if "--history" in command:
            assert "Rating history (2 rating runs)" in out and "added greedy" in out, out
        if " schedule " in command:
            assert "12 games" in out, out
    assert (repo / "tournaments/examples/tournament-output/fortune/tournament.sqlite").is_file()
