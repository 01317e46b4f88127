"""Every SDK (Python, the stdio bridge, Node, Go, Java, Rust, C++) started as the sandboxed tournament runner
starts it: the referee on a Unix domain socket (``unix:/PATH``, the sandbox has no network), the token only in the
environment. Each plays a game over the socket in both connection modes, never shows its token, exits 0 when its
match is over (seat mode) or its referee stops (bot-token mode); with no referee listening it exits 1 with one
line naming the address it tried (issue #31, item 5)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest

from tests.clients.harness import CLIENTS, PY, SDKS, UnixReferee, require

LANGS = ["python", "bridge", *SDKS]
SECRET = "tok-SECRET-7f3a9c"  # a token the output must never show


def _command(lang: str) -> list[str]:
    if lang == "python":
        return [PY, "-m", "rummybot.bots.greedy"]
    if lang == "bridge":
        return [PY, "-m", "rummybot.stdio", "--", "sh", str(CLIENTS / "stdio/examples/first_legal.sh")]
    artifact, prefix, toolchain = SDKS[lang]
    require(lang, artifact, toolchain=toolchain)
    return [*prefix, str(artifact)]


def _env(**values: str) -> dict[str, str]:
    """This process's environment without any RUMMY_* variable, plus ``values``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUMMY_")}
    return {**env, **values}


@contextmanager
def _running(argv: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def _finish(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    output, _ = proc.communicate(timeout=timeout)
    return output


@pytest.mark.parametrize("lang", LANGS)
def test_one_seat_over_a_unix_socket_with_only_the_environment(lang: str) -> None:
    """RUMMY_REFEREE=unix:/PATH, RUMMY_MATCH and RUMMY_SEAT_TOKEN, nothing on the command line: the seat plays
    its match to the end over the socket and exits 0; the opponent joins with the ``unix:///PATH`` spelling."""
    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    command = _command(lang)
    with UnixReferee() as ref, grpc.insecure_channel(ref.address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        created = stub.CreateMatch(pb.CreateMatchRequest(
            variant="indian", seats=[pb.SeatSpec(name="python"), pb.SeatSpec(name=lang)], seed=f"uds-{lang}",
            max_hands=2, time_control=pb.TimeControl(per_move_ms=3000, connect_ms=30000)))
        mid, tokens = created.match_id, list(created.seat_tokens)
        client_env = _env(RUMMY_REFEREE=ref.address, RUMMY_MATCH=mid, RUMMY_SEAT_TOKEN=tokens[1])
        other_env = _env(RUMMY_REFEREE=f"unix://{ref.path}", RUMMY_MATCH=mid, RUMMY_SEAT_TOKEN=tokens[0])
        with _running(command, client_env) as client, \
                _running([PY, "-m", "rummybot.bots.random_bot"], other_env) as other:
            result = stub.GetResult(pb.GetResultRequest(match_id=mid, wait=True), timeout=120).result
            output, other_output = _finish(client), _finish(other)
    assert result.status == pb.MATCH_STATUS_FINISHED, (result, output[-3000:])
    assert not list(result.forfeited), (result.reason, output[-3000:], other_output[-3000:])
    assert client.returncode == 0, output[-3000:]
    assert other.returncode == 0, other_output[-3000:]
    assert tokens[1] not in output


@pytest.mark.parametrize("lang", LANGS)
def test_a_bot_token_from_the_environment_over_a_unix_socket(lang: str) -> None:
    """As the sandboxed runner starts a bot: ``--referee unix:///PATH`` appended, RUMMY_BOT_TOKEN only in the
    environment. The referee seats it by that token; once the match is over and the referee stops (a tournament
    ends so), the bot exits 0, and its output never shows the token."""
    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    command = _command(lang)
    ref = UnixReferee().start()
    try:
        with grpc.insecure_channel(ref.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            created = stub.CreateMatch(pb.CreateMatchRequest(
                variant="indian", seats=[pb.SeatSpec(name=lang, bot_token=SECRET), pb.SeatSpec(name="python")],
                seed=f"uds-bot-{lang}", max_hands=2, time_control=pb.TimeControl(per_move_ms=3000, connect_ms=30000)))
            mid = created.match_id
            other_env = _env(RUMMY_REFEREE=ref.address, RUMMY_MATCH=mid, RUMMY_SEAT_TOKEN=created.seat_tokens[1])
            with _running([*command, "--referee", f"unix://{ref.path}"], _env(RUMMY_BOT_TOKEN=SECRET)) as client, \
                    _running([PY, "-m", "rummybot.bots.random_bot"], other_env) as other:
                result = stub.GetResult(pb.GetResultRequest(match_id=mid, wait=True), timeout=120).result
                _finish(other)
                ref.stop()
                output = _finish(client)  # the Python SDK tries to rejoin for ~9 s before it gives up
    finally:
        ref.stop()
    assert result.status == pb.MATCH_STATUS_FINISHED, (result, output[-3000:])
    assert not list(result.forfeited), (result.reason, output[-3000:])
    assert client.returncode == 0, output[-3000:]
    assert SECRET not in output, output[-3000:]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("where", ["unix", "tcp"])
@pytest.mark.parametrize("lang", LANGS)
def test_no_referee_listening_is_exit_1_and_one_line_naming_the_address(lang: str, where: str,
                                                                      tmp_path: Path) -> None:
    address = f"unix:{tmp_path / 'none.sock'}" if where == "unix" else f"127.0.0.1:{_closed_port()}"
    run = subprocess.run(_command(lang), env=_env(RUMMY_REFEREE=address, RUMMY_BOT_TOKEN=SECRET),
                         capture_output=True, text=True, timeout=60)
    lines = (run.stdout + run.stderr).strip().splitlines()
    assert run.returncode == 1, (run.returncode, lines)
    assert len(lines) == 1, lines
    assert f"cannot reach the referee at {address}: " in lines[0], lines
    assert SECRET not in lines[0]


@pytest.mark.parametrize("lang", LANGS)
def test_no_token_anywhere_is_exit_2(lang: str, tmp_path: Path) -> None:
    """Neither RUMMY_BOT_TOKEN nor a seat (nor their flags): a bad command line, exit 2, before connecting."""
    run = subprocess.run(_command(lang), env=_env(RUMMY_REFEREE=f"unix:{tmp_path / 'none.sock'}"),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    assert "cannot reach" not in run.stderr
