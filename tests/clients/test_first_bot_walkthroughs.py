"""Each SDK's README walks a newcomer through "your first bot": the shell commands there are run as written (the
build step aside: the SDK is built already) and the tournament they start ends by the rules, with no forfeit, no
bot that failed to start and no answer late.

The commands run in a scratch folder that holds links to ``clients/`` and ``protos/``, so what they write (a
``mybot/`` folder, results) stays out of the repository; the tournament's results go to the scratch folder
(``--output``). The README's second way, on a referee of one's own (``referee serve`` first), plays the same
tournament on a fixed port and is left out.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.harness import CLIENTS, ROOT, SDKS, _rows, late_moves, require

BIN = Path(sys.executable).parent


def walkthrough(lang: str, output: Path) -> str:
    """The shell commands of ``clients/LANG/README.md``'s "Your first bot" section, as a script: the build step
    and any block that starts a referee of one's own left out, ``.venv/bin/`` the running interpreter's, and the
    tournament's results sent to ``output``."""
    readme = (CLIENTS / lang / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your first bot", 1)[1].split("\n## ", 1)[0]
    lines: list[str] = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", section, re.S):
        if "referee serve" in block:
            continue
        for line in block.splitlines():
            if re.fullmatch(r"bash clients/\w+/build\.sh", line.strip()):
                continue
            line = line.replace(".venv/bin/", f"{BIN}/").replace(" --referee 127.0.0.1:50051", "")
            if re.search(r"/tournament run ", line):
                line = re.sub(r" --output \S+", "", line) + f" --output {shlex.quote(str(output))}"
            lines.append(line)
    script = "\n".join(lines)
    assert script.count("/tournament run ") == 1, script
    return "set -e\n" + script + "\n"


@pytest.mark.parametrize("lang", SDKS)
def test_the_readme_first_bot_walkthrough_plays_a_clean_tournament(tmp_path: Path, lang: str) -> None:
    artifact, _, toolchain = SDKS[lang]
    require(lang, artifact, toolchain=toolchain)
    work = tmp_path / "work"
    work.mkdir()
    for name in ("clients", "protos"):
        (work / name).symlink_to(ROOT / name)
    out = tmp_path / "out"
    run = subprocess.run(["bash", "-c", walkthrough(lang, out)], cwd=work, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "warning: bot" not in run.stderr, run.stderr[-3000:]
    rows = _rows(out)
    assert rows
    for row in rows:
        assert not row.forfeited and row.ranking, (row.key, row.reason)
        for name in set(row.seats):
            assert not late_moves(row, name), (row.key, name)


def stdio_first_command(socket: Path) -> str:
    """The first shell block of ``clients/stdio/README.md`` as a script: ``.venv/bin/`` the running interpreter's,
    and the referee on a Unix socket in a scratch folder (RUMMY_REFEREE names it to every command) rather than on
    port 50051, which another test or referee may hold."""
    readme = (CLIENTS / "stdio" / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block is not None
    script = block.group(1).replace(".venv/bin/", f"{BIN}/")
    assert script.count("--port 50051") == 1, script
    return "set -e\n" + script.replace("--port 50051", f"--port 0 --unix {shlex.quote(str(socket))}")


def test_the_stdio_readme_first_command_creates_a_match_the_bridged_bot_plays_to_its_end(tmp_path: Path) -> None:
    """#31: the stdio README's first command waited forever (nothing created a match); now a referee, ``referee
    create-match``, a bundled bot in one seat and the bridged POSIX sh bot in the other play one match to its end
    and the script stops the referee, as written."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("clients", "protos"):
        (work / name).symlink_to(ROOT / name)
    socket = tmp_path / "referee.sock"
    env = {**os.environ, "RUMMY_REFEREE": f"unix:{socket}"}
    with (tmp_path / "out.log").open("w") as log:
        # a session of its own: a background job left running by a failure is stopped with its group
        run = subprocess.Popen(["bash", "-c", stdio_first_command(socket)], cwd=work, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = run.wait(timeout=300)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)
    out = (tmp_path / "out.log").read_text()
    assert code == 0, out[-3000:]
    assert "refused" not in out and "Traceback" not in out, out[-3000:]
    records = list((work / "records").glob("*.jsonl"))
    assert len(records) == 1, out[-3000:]
    lines = [json.loads(line) for line in records[0].read_text().splitlines()]
    assert lines[0]["seat_names"] == ["mine", "greedy"]
    assert lines[-1]["type"] == "result" and not lines[-1]["forfeited"], lines[-1]
    assert not [e for e in lines if e["type"] == "action" and e["timed_out"]]
