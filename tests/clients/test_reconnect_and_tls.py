"""A ladder's remote bot in each native SDK (and behind the stdio bridge): told to reconnect forever
(RUMMY_RECONNECT=forever), it is welcomed, its referee is killed and started again on the same port, and it comes
back by itself and plays on, one line on stderr per try (naming the address, never the key); a restarted referee
that no longer knows the key ends it (exit 1). And over TLS: a
bot given the referee's CA (RUMMY_TLS_ROOT_CERT) plays its seat; one that does not trust it fails in one line."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
import pytest

from referee.service.credentials import mint_bot_token
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.sdk import CHANNEL_OPTIONS
from tests.clients.harness import PY, SDKS, require
from tests.serving import free_port, kill, serve
from tests.test_tls import pki  # noqa: F401  (the throwaway CA and the referee's certificate, as PEM files)

ADMIN = "admin-secret-reconnect"
RECONNECT_LINE = re.compile(r": no stream to the referee at (\S+) \((\w+): .*\); joining again in \d+\.\d s "
                            r"\(try \d+\)$")


# A stdio bot in POSIX sh that plays the first legal action and says when a match ends, as the greedy examples do
STDIO_BOT = """while IFS= read -r line; do
  case $line in
    '{"type":"decision"'*) echo '{"legal_index": 0}' ;;
    '{"type":"match_result"'*) echo "match ended: ranking" >&2 ;;
  esac
done
"""


def _command(lang: str, folder: Path) -> list[str]:
    """The SDK's greedy example, or the stdio bridge playing a first-legal bot in sh."""
    if lang == "stdio":
        (folder / "bot.sh").write_text(STDIO_BOT)
        return [PY, "-m", "rummybot.stdio", "--", "sh", str(folder / "bot.sh")]
    artifact, prefix, toolchain = SDKS[lang]
    require(lang, artifact, toolchain=toolchain)
    return [*prefix, str(artifact)]


class Watched:
    """A bot process whose output lines are collected as they come (stdout and stderr together)."""

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(list(command), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, what: str, cond: Callable[[str], bool], timeout: float = 90) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if found := next((line for line in self.lines if cond(line)), None):
                return found
            assert self.proc.poll() is None, f"the bot exited ({self.proc.returncode}) waiting for {what}: {self.text()}"
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}: {self.text()}")

    def matching(self, part: str) -> list[str]:
        return [line for line in self.lines if part in line]

    def text(self) -> str:
        return "\n".join(self.lines)[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)


def _play(address: str, tokens: Sequence[str], seed: str) -> pb.MatchResult:
    """A two-seat match naming the two bots' tokens, played to its end (the bots must come to it)."""
    with grpc.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        created = stub.CreateMatch(pb.CreateMatchRequest(
            variant="indian", seed=seed, max_hands=1, max_turns_per_hand=60,
            seats=[pb.SeatSpec(name=f"s{i}", bot_token=t) for i, t in enumerate(tokens)],
            time_control=pb.TimeControl(per_move_ms=5000, connect_ms=60000)),
            metadata=(("authorization", f"Bearer {ADMIN}"),), timeout=30)
        return stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=180).result


@pytest.mark.parametrize("lang", ["rust", "java", "cpp", "stdio"])
def test_a_bot_told_to_reconnect_forever_comes_back_after_its_referee_restarts(tmp_path: Path, lang: str) -> None:
    command = _command(lang, tmp_path)
    port = free_port()
    address = f"127.0.0.1:{port}"
    records = tmp_path / "records"
    (tmp_path / "admin").write_text(ADMIN + "\n")
    tokens = [mint_bot_token(ADMIN, lang), mint_bot_token(ADMIN, "python")]
    referee = serve(port, records, "--admin-token-file", str(tmp_path / "admin"))
    env = {**os.environ, "RUMMY_REFEREE": address, "RUMMY_RECONNECT": "forever"}
    bot = Watched(command, {**env, "RUMMY_BOT_TOKEN": tokens[0]})
    other = Watched([PY, "-m", "rummybot.bots.random_bot"], {**env, "RUMMY_BOT_TOKEN": tokens[1]})
    try:
        before = _play(address, tokens, "before")
        assert before.status == pb.MATCH_STATUS_FINISHED and not list(before.forfeited), (before, bot.text())
        bot.wait_for("the first match's line", lambda _line: len(bot.matching(" ended: ranking")) == 1)
        kill(referee)  # SIGKILL: no goodbye; the stream just drops
        bot.wait_for("a reconnect line", lambda line: "joining again in" in line)
        time.sleep(1.5)  # down a while: more than one try
        assert bot.proc.poll() is None, bot.text()
        referee = serve(port, records, "--admin-token-file", str(tmp_path / "admin"))  # the same port
        after = _play(address, tokens, "after")
        assert after.status == pb.MATCH_STATUS_FINISHED and not list(after.forfeited), (after, bot.text())
        # one line per match: both were played by this one process
        bot.wait_for("the second match's line", lambda _line: len(bot.matching(" ended: ranking")) == 2)
        assert bot.proc.poll() is None, "a bot reconnecting forever exits only when told to: " + bot.text()
        # a restart that no longer knows the key (revoked): a final answer, even reconnecting forever
        kill(referee)
        (tmp_path / "other").write_text("another-admin-secret\n")
        referee = serve(port, records, "--admin-token-file", str(tmp_path / "other"))
        code = bot.proc.wait(120)
        assert code == 1 and bot.matching("BOT_TOKEN_UNKNOWN"), (code, bot.text())
    finally:
        bot.stop()
        other.stop()
        kill(referee)
    tries = bot.matching("joining again in")
    assert tries, bot.text()
    for line in tries:  # one line a try, naming the address, never the key
        match = RECONNECT_LINE.search(line)
        assert match and match.group(1) == address and tokens[0] not in line, line


@pytest.mark.parametrize("lang", ["rust", "java", "cpp", "stdio"])
def test_a_misspelled_RUMMY_RECONNECT_is_told_and_exits_2(tmp_path: Path, lang: str) -> None:
    run = subprocess.run(_command(lang, tmp_path), env={**os.environ, "RUMMY_RECONNECT": "always", "RUMMY_BOT_TOKEN": "t"},
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run
    assert "RUMMY_RECONNECT is 'forever' or unset" in run.stderr, run.stderr


TLS_LANGS = ["rust", "java", "cpp", "stdio", "go", "node"]
GRPC_CORE_LOG = re.compile(r"^[IWE]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] ")


@pytest.fixture(scope="module")
def tls_referee(pki):  # noqa: F811  (pki is the fixture imported above)
    """A referee serving TLS on 127.0.0.1 with a certificate the throwaway CA signed."""
    from referee.service.server import EmbeddedReferee, server_credentials
    from referee.service.session import TimeControl

    creds = server_credentials(pki["server_cert"], pki["server_key"])
    with EmbeddedReferee(credentials=creds, default_time=TimeControl(connect_ms=30000)) as ref:
        yield ref


def _one_seat_over_tls(address: str, ca: Path, command: Sequence[str], env: dict[str, str]) -> tuple[pb.MatchResult,
                                                                                                     Watched]:
    """A two-seat match on the TLS referee: the client on seat 1 (given ``env``), the Python random bot trusting the
    CA on seat 0; the result and the client's process (exited)."""
    creds = grpc.ssl_channel_credentials(ca.read_bytes())
    with grpc.secure_channel(address, creds, options=CHANNEL_OPTIONS) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        created = stub.CreateMatch(pb.CreateMatchRequest(
            variant="indian", seed="tls", max_hands=1, seats=[pb.SeatSpec(name="python"), pb.SeatSpec(name="client")],
            time_control=pb.TimeControl(per_move_ms=5000, connect_ms=30000)), timeout=30)
        base = {**os.environ, "RUMMY_REFEREE": address, "RUMMY_MATCH": created.match_id}
        client = Watched(command, {**base, **env, "RUMMY_SEAT_TOKEN": created.seat_tokens[1]})
        other = Watched([PY, "-m", "rummybot.bots.random_bot", "--tls-root-cert", str(ca)],
                        {**base, "RUMMY_SEAT_TOKEN": created.seat_tokens[0]})
        try:
            result = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=180).result
            client.proc.wait(60)  # a seat-token client exits once its match ends
        finally:
            client.stop()
            other.stop()
    return result, client


@pytest.mark.parametrize("lang", TLS_LANGS)
def test_a_bot_given_the_referees_ca_plays_over_tls(tmp_path: Path, lang: str, tls_referee, pki) -> None:  # noqa: F811
    command = _command(lang, tmp_path)
    result, client = _one_seat_over_tls(tls_referee.address, pki["ca_cert"], command,
                                        {"RUMMY_TLS_ROOT_CERT": str(pki["ca_cert"])})
    assert result.status == pb.MATCH_STATUS_FINISHED and not list(result.forfeited), (result, client.text())
    assert client.proc.returncode == 0, client.text()
    assert client.matching(" ended: ranking"), client.text()


@pytest.mark.parametrize("lang", TLS_LANGS)
@pytest.mark.parametrize("how", ["plaintext", "system roots"])
def test_a_bot_that_does_not_trust_the_referee_fails_in_one_line(tmp_path: Path, lang: str, how: str, tls_referee,
                                                                  ) -> None:
    """Plaintext to a TLS referee, or TLS trusting only the system's roots (which did not sign its certificate):
    exit 1 and one line naming the address, not a hang and not a stack trace."""
    env = {**os.environ, "RUMMY_REFEREE": tls_referee.address, "RUMMY_BOT_TOKEN": "t", "RUMMY_TLS": ""}
    if how == "system roots":
        env["RUMMY_TLS"] = "1"
    run = subprocess.run(_command(lang, tmp_path), env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1, (run.returncode, run.stdout, run.stderr)
    # gRPC's C core (the bridge's Python gRPC, the C++ SDK) may log the failed handshake itself: not the bot's line
    lines = [line for line in run.stderr.splitlines() if line.strip() and not GRPC_CORE_LOG.match(line)]
    assert len(lines) == 1 and "cannot reach the referee at " + tls_referee.address in lines[0], run.stderr
