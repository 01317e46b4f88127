"""Each SDK README says how to use the SDK from a project outside this repository (#31: a Go bot in its own module
needed a ``replace`` line and a copied ``go.sum`` that no doc mentioned). The README's shell block is run as written
in a scratch folder, with ``RUMMY=`` pointing at this clone, and the bot it builds is started with no referee
there: it must exit 1 naming the address, which shows it was built against the SDK and runs.

Only where it is cheap and needs no network: the Go module cache, the crates the Rust SDK was built with, and npm's
own links serve these.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.clients.harness import CLIENTS, ROOT, SDKS, require

SECTION = "## Using the SDK from your own"


def own_project_script(lang: str) -> str:
    """The first sh block of the README's "Using the SDK from your own ..." section, ``RUMMY=`` set to this clone."""
    readme = (CLIENTS / lang / "README.md").read_text(encoding="utf-8")
    assert SECTION in readme, f"clients/{lang}/README.md has no '{SECTION} ...' section"
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```(?:sh|bash)\n(.*?)```", section, re.S)
    assert block is not None, section
    script, n = re.subn(r'^RUMMY=\S+', f"RUMMY={shlex.quote(str(ROOT))}", block.group(1), count=1, flags=re.M)
    assert n == 1, "the block sets RUMMY= to the clone first"
    return "set -e\n" + script


def run_block(lang: str, tmp_path: Path, **env: str) -> Path:
    run = subprocess.run(["bash", "-c", own_project_script(lang)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600, env={**os.environ, **env})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return tmp_path


def unreachable(command: list[str], cwd: Path, tmp_path: Path) -> None:
    """The built bot, given a bot token and no referee at the address: exit 1, one line naming the address."""
    address = f"unix:{tmp_path}/nobody.sock"
    done = subprocess.run([*command, "--referee", address], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "RUMMY_BOT_TOKEN": "t0ken"})
    assert done.returncode == 1 and address in done.stderr, (done.returncode, done.stderr)


def test_a_go_bot_in_a_module_of_its_own_builds_with_the_readme_replace_line(tmp_path: Path) -> None:
    require("go", SDKS["go"][0], toolchain=["go"])
    # the module cache holds the SDK's dependencies once the SDK is built: no network (GOPROXY=off)
    run_block("go", tmp_path, GOPROXY="off", GOFLAGS="-mod=mod")
    gomod = (tmp_path / "mybot" / "go.mod").read_text()
    assert f"=> {ROOT}/clients/go" in gomod and "google.golang.org/grpc" in gomod
    unreachable([str(tmp_path / "mybot" / "mybot")], tmp_path, tmp_path)


@pytest.fixture(autouse=True)
def _no_stray_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("RUMMY_REFEREE", "RUMMY_MATCH", "RUMMY_SEAT_TOKEN"):
        monkeypatch.delenv(key, raising=False)


def test_a_rust_bot_in_a_crate_of_its_own_builds_with_the_readme_path_dependency(tmp_path: Path) -> None:
    require("rust", SDKS["rust"][0], toolchain=["cargo"])
    # offline, and into the SDK's own target folder: the crates built for the SDK are reused (about a minute the
    # first time, for the few whose features differ; seconds after)
    target = CLIENTS / "rust" / "target"
    run_block("rust", tmp_path, CARGO_NET_OFFLINE="true", CARGO_TARGET_DIR=str(target))
    manifest = (tmp_path / "mybot" / "Cargo.toml").read_text()
    assert "rummybot = {" in manifest and "clients/rust" in manifest
    unreachable([str(target / "release" / "mybot")], tmp_path, tmp_path)
