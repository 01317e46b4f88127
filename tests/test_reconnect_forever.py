"""A bot-token bot told to reconnect forever (``run_bot(reconnects=None)``, ``RUMMY_RECONNECT=forever``) outlives
its referee's restart however long it takes: a ladder's remote bot comes back by itself. A bot with the old bounded
count, down the same time, has given up; a wrong address still fails fast; a key the restarted referee does not
know ends the bot instead of looping."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import grpc
import pytest

from referee.rules.policies import random_policy
from referee.service.credentials import mint_bot_token
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import CHANNEL_OPTIONS, RECONNECTS, RefereeUnreachable, parse_args, run_bot
from tests.serving import free_port, kill, serve


class Counting(PolicyBot):
    """A random bot that counts the matches it finished."""

    def __init__(self, name: str) -> None:
        super().__init__(name, lambda v: random_policy, seed=len(name))
        self.finished: list[pb.MatchResult] = []

    def on_match_result(self, result: pb.MatchResult) -> None:
        self.finished.append(result)


async def _match(address: str, admin: str, tokens: list[str], seed: str) -> str:
    """A two-seat match naming the two bots' tokens; its id."""
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as ch:
        created = await pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
            variant="fortune", seed=seed, max_hands=1, max_turns_per_hand=30,
            seats=[pb.SeatSpec(name=f"s{i}", bot_token=t) for i, t in enumerate(tokens)],
            time_control=pb.TimeControl(per_move_ms=5000, connect_ms=20000)),
            metadata=(("authorization", f"Bearer {admin}"),), timeout=20)
        return str(created.match_id)


async def _until(what: str, cond, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def test_a_bot_told_to_reconnect_forever_is_seated_again_after_a_restart_longer_than_the_old_window(tmp_path: Path):
    port = free_port()
    address = f"127.0.0.1:{port}"
    records = tmp_path / "records"
    (tmp_path / "admin").write_text("admin-secret-1\n")
    (tmp_path / "other").write_text("admin-secret-2\n")
    tokens = [mint_bot_token("admin-secret-1", n) for n in ("alice", "bob")]
    referee = serve(port, records, "--admin-token-file", str(tmp_path / "admin"))
    lines: dict[str, list[str]] = {"alice": [], "bob": [], "bounded": []}
    # short waits so the test is quick: the old count (8) is used up within ~2 s, the outage lasts longer
    fast = {"backoff_s": 0.05, "backoff_cap_s": 0.4}
    try:
        async def go() -> tuple[list[Counting], BaseException | None, BaseException | None]:
            nonlocal referee
            bots = [Counting("alice"), Counting("bob")]
            forever = [asyncio.create_task(run_bot(b, address, bot_token=t, reconnects=None, log=lines[b.name].append,
                                                   **fast)) for b, t in zip(bots, tokens, strict=True)]
            bounded = asyncio.create_task(run_bot(Counting("bounded"), address, bot_token=mint_bot_token(
                "admin-secret-1", "bounded"), reconnects=RECONNECTS, log=lines["bounded"].append, **fast))
            await _match(address, "admin-secret-1", tokens, "before")
            await _until("the first match played", lambda: all(len(b.finished) == 1 for b in bots))
            kill(referee)
            await _until("the bounded bot giving up", bounded.done)
            await _until("more reconnects than the old count", lambda: min(len(lines["alice"]), len(lines["bob"]))
                         > RECONNECTS + 4)
            assert not any(t.done() for t in forever), "a forever bot gave up while the referee was down"
            referee = serve(port, records, "--admin-token-file", str(tmp_path / "admin"))  # the same port
            await _match(address, "admin-secret-1", tokens, "after")
            await _until("the second match played", lambda: all(len(b.finished) == 2 for b in bots))
            # a restart that no longer knows the key (revoked): final, even reconnecting forever
            kill(referee)
            referee = serve(port, records, "--admin-token-file", str(tmp_path / "other"))
            ended = await asyncio.wait_for(asyncio.gather(*forever, return_exceptions=True), 30)
            return bots, bounded.exception(), ended[0] if isinstance(ended[0], BaseException) else None

        bots, bounded_error, revoked = asyncio.run(go())
    finally:
        kill(referee)
    assert all(r.status == pb.MATCH_STATUS_FINISHED for b in bots for r in b.finished)
    assert isinstance(bounded_error, grpc.aio.AioRpcError) and bounded_error.code() == grpc.StatusCode.UNAVAILABLE
    assert len(lines["bounded"]) == RECONNECTS
    assert isinstance(revoked, grpc.aio.AioRpcError) and revoked.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "BOT_TOKEN_UNKNOWN" in (revoked.details() or "")
    for line in lines["alice"]:  # one line a reconnect, naming the address, never the key
        assert "\n" not in line and address in line and tokens[0] not in line
        assert re.search(r"joining again in \d+\.\d s \(try \d+\)$", line), line
    waits = [float(m.group(1)) for line in lines["alice"] if (m := re.search(r"in (\d+\.\d) s", line))]
    assert max(waits) <= 0.4 and waits[0] <= 0.1  # capped; the first wait short


def test_a_wrong_address_fails_fast_even_when_told_to_reconnect_forever(tmp_path: Path):
    address = f"unix:{tmp_path / 'none.sock'}"
    started = time.monotonic()
    with pytest.raises(RefereeUnreachable):
        asyncio.run(run_bot(PolicyBot("r", lambda v: random_policy), address, bot_token="t", reconnects=None,
                            log=lambda _line: None))
    assert time.monotonic() - started < 10


def test_the_command_line_reads_RUMMY_RECONNECT(monkeypatch, capsys):
    monkeypatch.delenv("RUMMY_RECONNECT", raising=False)
    assert parse_args([]).reconnect_forever is False
    assert parse_args(["--reconnect-forever"]).reconnect_forever is True
    monkeypatch.setenv("RUMMY_RECONNECT", "forever")
    assert parse_args([]).reconnect_forever is True
    monkeypatch.setenv("RUMMY_RECONNECT", "always")  # a typo is told, not taken for "no"
    with pytest.raises(SystemExit) as caught:
        parse_args([])
    assert caught.value.code == 2 and "RUMMY_RECONNECT is 'forever' or unset" in capsys.readouterr().err
