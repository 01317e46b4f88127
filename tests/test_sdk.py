"""The Python SDK as a newcomer uses it: the guide's bot (docs/bots/python.md) plays a match as its own process,
and nothing a seat receives names the seed before the match is over."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import grpc

from referee.rules.policies import random_policy
from referee.service.server import EmbeddedReferee
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot import PolicyBot, run_bot

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "bots" / "python.md"


def guide_bot() -> str:
    """The first ``python`` block of docs/bots/python.md, the bot a newcomer copies, as written."""
    block = re.search(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert block is not None, "docs/bots/python.md shows no Python bot"
    return block.group(1)


def test_the_guide_check_bot_command_passes_the_guide_bot(tmp_path):
    """docs/bots/python.md's shell block, as written, in a folder holding the guide's bot and ``.venv``: no fault."""
    (tmp_path / "first_legal.py").write_text(guide_bot())
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    block = re.search(r"```sh\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert block is not None and "check-bot" in block.group(1)
    run = subprocess.run(["bash", "-c", "set -e\n" + block.group(1)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "0 faults" in run.stdout and "2 of 2 finished" in run.stdout, run.stdout[-3000:]


def test_the_guide_bot_plays_a_match_as_a_separate_process(tmp_path):
    script = tmp_path / "first_legal.py"
    script.write_text(guide_bot())
    with EmbeddedReferee() as ref, grpc.insecure_channel(ref.address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        created = stub.CreateMatch(pb.CreateMatchRequest(variant="fortune", seed="sdk",
                                                         seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")],
                                                         max_hands=2))
        procs = [subprocess.Popen([sys.executable, str(script), "--referee", ref.address, "--match", created.match_id,
                                   "--token", t]) for t in created.seat_tokens]
        try:
            final = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=120).result
        finally:
            for p in procs:
                p.wait(timeout=30)
        assert final.status == pb.MATCH_STATUS_FINISHED and not final.forfeited
        assert [p.returncode for p in procs] == [0, 0]


def test_no_message_names_the_seed_before_the_match_ends():
    """The shuffle seed never leaves the referee before the end (DESIGN: hidden information)."""
    seed = "secret-seed-7f3a9c"
    with EmbeddedReferee() as ref, grpc.insecure_channel(ref.address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        created = stub.CreateMatch(pb.CreateMatchRequest(variant="indian", seed=seed,
                                                         seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")]))

        async def spy() -> list[pb.PlayResponse]:
            got: list[pb.PlayResponse] = []
            out: asyncio.Queue = asyncio.Queue()
            out.put_nowait(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=created.match_id,
                                                                                 token=created.seat_tokens[0]))))

            async def gen():
                while (m := await out.get()) is not None:
                    yield m

            other = asyncio.create_task(run_bot(PolicyBot("r", lambda v: random_policy, seed=1), ref.address,
                                                match_id=created.match_id, token=created.seat_tokens[1]))
            async with grpc.aio.insecure_channel(ref.address) as ach:
                async for msg in pb_grpc.RefereeServiceStub(ach).Play(gen()):
                    got.append(msg)
                    if msg.WhichOneof("body") == "decision":
                        d = msg.decision
                        out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(
                            match_id=d.match_id, request_id=d.request_id, action=d.legal_actions[-1])))
                    if msg.WhichOneof("body") == "match_result":
                        break
                out.put_nowait(None)
            await other
            return got

        messages = asyncio.run(spy())
    before_end = [m for m in messages if m.WhichOneof("body") != "match_result"]
    assert before_end and all(seed.encode() not in m.SerializeToString() for m in before_end)
    assert messages[-1].match_result.seed == seed


def test_the_bot_command_line_reads_the_environment(monkeypatch):
    """A tournament sets RUMMY_REFEREE, RUMMY_BOT_TOKEN and RUMMY_BOT_SEED; flags win over them."""
    from rummybot.sdk import parse_args

    monkeypatch.setenv("RUMMY_REFEREE", "127.0.0.1:5")
    monkeypatch.setenv("RUMMY_BOT_TOKEN", "tok")
    monkeypatch.setenv("RUMMY_BOT_SEED", "42")
    args = parse_args([])
    assert (args.referee, args.bot_token, args.seed) == ("127.0.0.1:5", "tok", 42)
    assert parse_args(["--seed", "7"]).seed == 7


def test_one_seat_from_the_environment_alone(monkeypatch):
    """The sandboxed runner passes a seat only in the environment (RUMMY_MATCH, RUMMY_SEAT_TOKEN) and the referee
    as a Unix socket: nothing on the command line is needed."""
    from rummybot.sdk import parse_args

    monkeypatch.setenv("RUMMY_REFEREE", "unix:/run/rummy/referee.sock")
    monkeypatch.setenv("RUMMY_MATCH", "m1")
    monkeypatch.setenv("RUMMY_SEAT_TOKEN", "seat-tok")
    args = parse_args([])
    assert (args.referee, args.match, args.token) == ("unix:/run/rummy/referee.sock", "m1", "seat-tok")


def test_no_referee_is_a_one_line_error_naming_the_address_and_not_the_token(tmp_path):
    """Nothing listening: ``run_bot`` gives up within seconds with ``RefereeUnreachable``, whose text names the
    address it tried and never the token."""
    import time

    import pytest

    from rummybot.sdk import RefereeUnreachable

    address = f"unix:{tmp_path / 'none.sock'}"
    started = time.monotonic()
    with pytest.raises(RefereeUnreachable) as caught:
        asyncio.run(run_bot(PolicyBot("r", lambda v: random_policy, seed=1), address, bot_token="tok-7f3a9c"))
    text = str(caught.value)
    assert time.monotonic() - started < 10
    assert caught.value.address == address and text.startswith(f"cannot reach the referee at {address}: ")
    assert "\n" not in text and "tok-7f3a9c" not in text
