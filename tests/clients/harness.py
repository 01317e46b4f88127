"""Shared checks for the bot SDKs in other languages: each client's test plays its example bot against the
Python bots over gRPC, in both connection modes, and checks the documented outcomes.

A client is built by its own ``clients/LANG/build.sh`` (``make clients``). ``make test`` skips a client that is
not built, saying which and how to build it; ``make test-clients`` (and CI) sets RUMMY_REQUIRE_CLIENTS=1, so a
missing toolchain or build fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from referee.service.records import read_record
from tournaments.config import parse_config
from tournaments.runner import run_tournament
from tournaments.store import DB_NAME, Store

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
PY = sys.executable
REQUIRED = os.environ.get("RUMMY_REQUIRE_CLIENTS") == "1"

# language -> (built artifact, command that runs its greedy example, toolchain it needs)
SDKS = {
    "node": (CLIENTS / "node/dist/examples/greedy.js", ["node"], ["node", "npm"]),
    "go": (CLIENTS / "go/bin/greedy", [], ["go"]),
    "java": (CLIENTS / "java/target/rummybot-examples.jar", ["java", "-jar"], ["java", "mvn"]),
    "rust": (CLIENTS / "rust/target/release/greedy", [], ["cargo"]),
    "cpp": (CLIENTS / "cpp/build/greedy", [], ["cmake", "g++"]),
}


def require(lang: str, artifact: Path, toolchain: Sequence[str] = ()) -> None:
    """Skip (or, under RUMMY_REQUIRE_CLIENTS=1, fail) when the client's toolchain or build is missing."""
    missing = [t for t in toolchain if shutil.which(t) is None]
    if missing:
        why = f"{lang} client: toolchain missing ({', '.join(missing)}); `make test-clients` installs and builds it"
    elif not artifact.exists():
        why = f"{lang} client not built ({artifact.relative_to(ROOT)} missing): run `make clients` or `make test-clients`"
    else:
        return
    if REQUIRED:
        pytest.fail(why)
    pytest.skip(why)


def _rows(out: Path) -> list[Any]:
    with Store(out / DB_NAME, readonly=True) as s:
        return list(s.rows())


def play_gauntlet(tmp_path: Path, name: str, command: Sequence[str], *, cwd: Path | None = None,
                  opponent: str = "rummybot.bots.random_bot", variant: str = "indian", games: int = 4,
                  per_move_ms: int = 3000, options: dict[str, str] | None = None) -> list[Any]:
    """``name`` (the client's bot, started once and seated in match after match over one connection) against a
    bundled Python bot in ``games`` duplicate deals (each played from both seats). Returns the stored rows;
    asserts every game ended by the rules with no forfeit."""
    out = tmp_path / f"{name}-gauntlet"
    bot: dict[str, Any] = {"name": name, "command": list(command)}
    if cwd is not None:
        bot["cwd"] = str(cwd)
    tournament = {"variant": variant, "games_per_pairing": games, "concurrency": 2, "seed": f"client-{name}",
                  "output": str(out), "schedule": "gauntlet", "candidates": [name], "max_hands": 20,
                  "time_control": {"per_move_ms": per_move_ms, "grace_ms": 2000, "connect_ms": 30000},
                  "options": options or {}}
    config = parse_config({"tournament": tournament,
                           "bots": [bot, {"name": "python", "command": [PY, "-m", opponent]}]}, base_dir=tmp_path)
    stats = run_tournament(config, handle_signals=False)
    rows = _rows(out)
    assert stats.missing == 0 and stats.failed == 0, stats
    assert len(rows) == 2 * games
    for row in rows:
        assert not row.forfeited, (row.key, row.reason, (out / "bots" / f"{name}-0.log").read_text()[-3000:])
        assert row.ranking, row.reason
        assert not late_moves(row, name), (row.key, late_moves(row, name)[:3],
                                           (out / "bots" / f"{name}-0.log").read_text()[-3000:])
    return rows


def late_moves(row: Any, name: str) -> list[dict[str, Any]]:
    """The moves of ``name``'s seats in a game that the referee made for it on a missed deadline."""
    seats = {i for i, seat_name in enumerate(row.seats) if seat_name == name}
    return [e for e in read_record(row.record_path)
            if e["type"] == "action" and e.get("timed_out") and e["seat"] in seats]


def wins(rows: Sequence[Any], name: str) -> int:
    """Games where ``name`` ranked first alone."""
    return sum(1 for r in rows if len(r.ranking[0]) == 1 and r.seats[r.ranking[0][0]] == name)


def play_one_seat(command: Sequence[str], *, cwd: Path | None = None, variant: str = "indian",
                  timeout_s: float = 120) -> tuple[Any, str]:
    """Seat-token mode: create one match on an embedded referee, run the client with ``--match ID --token T``
    for seat 1 (left of the dealer: it is asked first, so a probe always meets a decision) and the Python random
    bot for seat 0; return the final MatchResult and the client's output."""
    import grpc

    from referee.service.server import EmbeddedReferee
    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    with EmbeddedReferee() as ref:
        with grpc.insecure_channel(ref.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            created = stub.CreateMatch(pb.CreateMatchRequest(
                variant=variant, seats=[pb.SeatSpec(name="python"), pb.SeatSpec(name="client")], seed="one-seat",
                max_hands=3, time_control=pb.TimeControl(per_move_ms=3000, connect_ms=30000)))
            mid, tokens = created.match_id, list(created.seat_tokens)
            client = subprocess.Popen([*command, "--referee", ref.address, "--match", mid, "--token", tokens[1]],
                                      cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            other = subprocess.Popen([PY, "-m", "rummybot.bots.random_bot", "--referee", ref.address, "--match", mid,
                                      "--token", tokens[0]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                result = stub.GetResult(pb.GetResultRequest(match_id=mid, wait=True), timeout=timeout_s).result
                output, _ = client.communicate(timeout=30)  # a seat-token client exits once its match ends
                other_output, _ = other.communicate(timeout=30)
            finally:
                for p in (client, other):
                    if p.poll() is None:
                        p.kill()
                        p.wait()
    assert result.status == pb.MATCH_STATUS_FINISHED, result
    assert not list(result.forfeited), (result.reason, output, other_output[-3000:])
    assert client.returncode == 0, output
    return result, output


def assert_rejection_shown(output: str) -> None:
    """A client run with ``--probe-rejection`` first answers an illegal action; its SDK must hand the referee's
    reason code and message to the bot, which prints ``rejected CODE: message``, then play on."""
    import re

    assert re.search(r"^rejected [A-Z][A-Z_]+: .+", output, re.M), output[-3000:]



class UnixReferee:
    """A referee on a Unix domain socket in a fresh short temp folder (a socket path has at most 107 bytes), on a
    background thread (``referee.service.server.EmbeddedReferee`` with ``unix_path``): what a sandboxed bot sees.
    ``address`` is ``unix:/tmp/.../ref.sock``; ``stop()`` stops it, as a tournament ends."""

    def __init__(self) -> None:
        import tempfile

        from referee.service.server import EmbeddedReferee

        self.folder = Path(tempfile.mkdtemp(prefix="rummy-uds-", dir="/tmp"))
        self.path = self.folder / "ref.sock"
        self.address = f"unix:{self.path}"
        self._referee = EmbeddedReferee(unix_path=str(self.path))

    def start(self) -> UnixReferee:
        self._referee.start()
        assert self.path.is_socket(), self.path
        return self

    def stop(self) -> None:
        self._referee.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> UnixReferee:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
