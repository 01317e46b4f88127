"""Access control: unguessable seat tokens scoped to one seat of one match, one live stream per seat, an admin
token for CreateMatch and AbortMatch (also from the tournament runner), and limits on message size and on the
long-lived calls one client may hold open."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import time

import grpc
import pytest

from referee.service.limits import ServerLimits
from referee.service.server import REASON_KEY, EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from tournaments.matches import admin_interceptors, admin_token_from_env

ADMIN = "s3cret-admin-token-for-tests"
BEARER = (("authorization", f"Bearer {ADMIN}"),)


@pytest.fixture(scope="module")
def referee():
    with EmbeddedReferee(admin_token=ADMIN, default_time=TimeControl(connect_ms=10_000, grace_ms=2000)) as ref:
        yield ref


@pytest.fixture()
def stub(referee):
    with grpc.insecure_channel(referee.address) as channel:
        yield pb_grpc.RefereeServiceStub(channel)


def create(stub, seats=2, metadata=BEARER):
    return stub.CreateMatch(pb.CreateMatchRequest(variant="indian", seed="access", seats=[pb.SeatSpec(name=f"s{i}")
                                                                                            for i in range(seats)]),
                            metadata=metadata)


def refusal(err: grpc.RpcError) -> tuple[grpc.StatusCode, str]:
    """The status code and reason code of a refused call (the reason is in the trailers and leads the message)."""
    reason = dict(err.trailing_metadata() or ()).get(REASON_KEY, "")
    assert err.details().startswith(f"{reason}: "), err.details()
    return err.code(), reason


def join(stub, match_id: str, token: str) -> list[str]:
    """Join a seat and read until the seat is given (the request stream then ends, and so does the call)."""
    msgs = stub.Play(iter([pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=match_id, token=token)))]))
    return [m.WhichOneof("body") for m in msgs]


def test_seat_tokens_are_unguessable_and_distinct(stub):
    tokens = [t for _ in range(3) for t in create(stub, seats=4).seat_tokens]
    assert len(set(tokens)) == len(tokens)
    for t in tokens:
        raw = base64.urlsafe_b64decode(t + "=" * (-len(t) % 4))
        assert len(raw) * 8 >= 128, t


@pytest.mark.parametrize("which", ["wrong", "foreign"])
def test_a_wrong_or_foreign_seat_token_is_refused(stub, which):
    mine, other = create(stub), create(stub)
    token = "x" * 24 if which == "wrong" else other.seat_tokens[0]
    with pytest.raises(grpc.RpcError) as err:
        join(stub, mine.match_id, token)
    assert refusal(err.value) == (grpc.StatusCode.PERMISSION_DENIED, "BAD_SEAT_TOKEN")


def test_a_second_live_stream_on_a_seat_is_refused_and_a_reconnect_after_it_closes_works(referee, stub):
    created = create(stub)

    async def go():
        async with grpc.aio.insecure_channel(referee.address) as ch:
            s = pb_grpc.RefereeServiceStub(ch)
            hello = pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=created.match_id,
                                                                         token=created.seat_tokens[0])))
            held: asyncio.Queue = asyncio.Queue()
            held.put_nowait(hello)

            async def requests():
                while (m := await held.get()) is not None:
                    yield m

            first = s.Play(requests())
            assert [(await first.read()).WhichOneof("body") for _ in range(2)] == ["welcome", "seated"]
            second = s.Play(iter([hello]))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await second.read()
            assert refusal(err.value) == (grpc.StatusCode.PERMISSION_DENIED, "SEAT_TAKEN")
            first.cancel()  # the first stream goes away: the seat may be joined again, within the grace period
            again: asyncio.Queue = asyncio.Queue()
            again.put_nowait(hello)

            async def rejoin():
                while (m := await again.get()) is not None:
                    yield m

            third = s.Play(rejoin())
            assert [(await third.read()).WhichOneof("body") for _ in range(2)] == ["welcome", "seated"]
            third.cancel()

    asyncio.run(go())
    stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id, reason="test over"), metadata=BEARER)
    with pytest.raises(grpc.RpcError) as err:
        join(stub, created.match_id, created.seat_tokens[1])
    assert refusal(err.value) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER")


def test_admin_calls_need_the_admin_token_and_the_rest_do_not(stub):
    with pytest.raises(grpc.RpcError) as err:
        create(stub, metadata=())
    assert refusal(err.value) == (grpc.StatusCode.UNAUTHENTICATED, "ADMIN_TOKEN_MISSING")
    for wrong in ("Bearer not-it", f"Basic {ADMIN}", ADMIN):
        with pytest.raises(grpc.RpcError) as err:
            create(stub, metadata=(("authorization", wrong),))
        assert refusal(err.value) == (grpc.StatusCode.PERMISSION_DENIED, "ADMIN_TOKEN_WRONG")
    created = create(stub)
    with pytest.raises(grpc.RpcError) as err:
        stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id))
    assert refusal(err.value) == (grpc.StatusCode.UNAUTHENTICATED, "ADMIN_TOKEN_MISSING")
    assert stub.ListVariants(pb.ListVariantsRequest()).variants
    assert stub.GetResult(pb.GetResultRequest(match_id=created.match_id)).result.status == pb.MATCH_STATUS_WAITING
    aborted = stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id), metadata=BEARER).result
    assert aborted.status == pb.MATCH_STATUS_ABORTED


@pytest.mark.parametrize("how", ["RUMMY_ADMIN_TOKEN", "RUMMY_ADMIN_TOKEN_FILE"])
def test_the_tournament_runner_sends_the_admin_token_from_its_environment(referee, monkeypatch, tmp_path, how):
    if how == "RUMMY_ADMIN_TOKEN":
        monkeypatch.setenv(how, ADMIN)
    else:
        (tmp_path / "token").write_text(ADMIN + "\n")
        monkeypatch.delenv("RUMMY_ADMIN_TOKEN", raising=False)
        monkeypatch.setenv(how, str(tmp_path / "token"))

    async def go():
        async with grpc.aio.insecure_channel(referee.address, interceptors=admin_interceptors(admin_token_from_env())) as ch:
            s = pb_grpc.RefereeServiceStub(ch)
            created = await s.CreateMatch(pb.CreateMatchRequest(variant="indian", seats=[pb.SeatSpec(), pb.SeatSpec()]))
            return (await s.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id, reason="runner test"))).result

    assert asyncio.run(go()).status == pb.MATCH_STATUS_ABORTED


def test_referee_serve_reads_its_admin_token_from_a_file(tmp_path):
    token_file = tmp_path / "admin-token"
    token_file.write_text(ADMIN + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--records", str(tmp_path),
                             "--admin-token-file", str(token_file), "--log-level", "warning"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = json.loads(proc.stdout.readline())["address"]
        with grpc.insecure_channel(address) as ch:
            s = pb_grpc.RefereeServiceStub(ch)
            with pytest.raises(grpc.RpcError) as err:
                create(s, metadata=())
            assert refusal(err.value) == (grpc.StatusCode.UNAUTHENTICATED, "ADMIN_TOKEN_MISSING")
            assert create(s).match_id
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_message_larger_than_the_limit_is_refused():
    with EmbeddedReferee(limits=ServerLimits(max_message_bytes=2048)) as ref, grpc.insecure_channel(ref.address) as ch:
        s = pb_grpc.RefereeServiceStub(ch)
        cards = [pb.Card(rank=pb.RANK_ACE, suit=suit) for suit in (pb.SUIT_HEARTS, pb.SUIT_SPADES, pb.SUIT_CLUBS)]
        assert s.Evaluate(pb.EvaluateRequest(variant="indian", groups=[pb.Group(cards=cards)]))
        with pytest.raises(grpc.RpcError) as err:
            s.Evaluate(pb.EvaluateRequest(variant="indian", groups=[pb.Group(cards=cards)] * 300))
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_long_lived_calls_from_one_client_are_limited():
    limits = ServerLimits(max_client_streams=2)
    with EmbeddedReferee(limits=limits, default_time=TimeControl(connect_ms=10_000)) as ref:
        with grpc.insecure_channel(ref.address) as ch:
            created = create(pb_grpc.RefereeServiceStub(ch), metadata=())

        async def go():
            async with grpc.aio.insecure_channel(ref.address) as ch:
                s = pb_grpc.RefereeServiceStub(ch)
                watch = [s.Watch(pb.WatchRequest(match_id=created.match_id)) for _ in range(2)]
                ends = time.monotonic() + 5
                while sum(ref.service.streams.values()) < 2:
                    assert time.monotonic() < ends
                    await asyncio.sleep(0.01)
                with pytest.raises(grpc.aio.AioRpcError) as err:  # a third: GetResult with wait counts too
                    await s.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True))
                assert refusal(err.value) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_CLIENT_STREAMS")
                watch[0].cancel()
                while sum(ref.service.streams.values()) > 1:
                    assert time.monotonic() < ends
                    await asyncio.sleep(0.01)
                more = s.Watch(pb.WatchRequest(match_id=created.match_id))
                await s.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id))
                assert [e async for e in more] == []  # it was let in, and ends with the match
                watch[1].cancel()

        asyncio.run(go())
