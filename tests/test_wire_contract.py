"""The wire contract (protos/) is settled: `buf lint` (STANDARD rules) passes and `buf breaking` finds no change that
breaks a client of v1 (the image protos/v1.binpb, built from the contract as v1 settled it).

buf is installed by scripts/buf.sh with `go install` (`make test` does it first). Without Go the test skips, saying
so; under CI=true or RUMMY_REQUIRE_CLIENTS=1 it fails instead, so CI cannot pass without the check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
BUF_SH = ROOT / "scripts" / "buf.sh"
BASELINE = "v1.binpb"  # relative to protos/, where buf runs
REQUIRED = os.environ.get("RUMMY_REQUIRE_CLIENTS") == "1" or os.environ.get("CI") == "true"


@pytest.fixture(scope="module")
def buf() -> Path:
    """The pinned buf, installed into .tools/bin if missing (a first install compiles it: minutes)."""
    if shutil.which("go") is None and not (ROOT / ".tools" / "bin" / "buf").exists():
        why = "Go not found: buf (the wire contract's lint and breaking check) is installed with `go install`"
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)
    done = subprocess.run(["bash", str(BUF_SH), "--install-only"], capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, f"installing buf failed:\n{done.stderr}"
    return Path(done.stdout.strip())


def _buf(buf: Path, *args: str, cwd: Path = PROTOS) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(buf), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.timeout(1800)
def test_buf_lint_passes_with_the_standard_rules(buf: Path) -> None:
    done = _buf(buf, "lint")
    assert done.returncode == 0 and not done.stdout.strip(), f"buf lint:\n{done.stdout}{done.stderr}"


@pytest.mark.timeout(1800)
def test_the_contract_breaks_no_client_of_v1(buf: Path) -> None:
    done = _buf(buf, "breaking", "--against", BASELINE)
    assert done.returncode == 0, f"buf breaking against protos/{BASELINE}:\n{done.stdout}{done.stderr}"


@pytest.mark.timeout(1800)
def test_the_breaking_check_catches_a_renumbered_enum_and_a_removed_field(buf: Path, tmp_path: Path) -> None:
    """The check is not vacuous: a copy of protos/ with the joker renumbered and a field gone fails against v1."""
    copy = tmp_path / "protos"
    shutil.copytree(PROTOS, copy)
    proto = copy / "rummy" / "referee" / "v1" / "referee.proto"
    text = proto.read_text()
    assert "  RANK_JOKER = 14;" in text and "  string bot_name = 3;\n" in text
    proto.write_text(text.replace("  RANK_JOKER = 14;", "  RANK_JOKER = 15;").replace("  string bot_name = 3;\n", "", 1))
    assert _buf(buf, "lint", cwd=copy).returncode == 0  # still well named: only the breaking check sees it
    done = _buf(buf, "breaking", "--against", str(PROTOS / BASELINE), cwd=copy)
    assert done.returncode != 0
    assert 'enum value "14" on enum "Rank"' in done.stdout and '"bot_name" on message "Join"' in done.stdout, done.stdout
