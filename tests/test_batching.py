"""Join.batch: a client that asks for batches gets what the referee has ready as one message, in the same order
and with the same content as a client reading one message at a time; a client that does not ask never sees one."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.sdk import messages


@pytest.fixture(scope="module")
def referee():
    with EmbeddedReferee(default_time=TimeControl(per_move_ms=5000, grace_ms=500, connect_ms=5000)) as ref:
        yield ref


async def _play(address: str, batch: bool) -> tuple[list[list[pb.PlayResponse]], list[list[int]]]:
    """One seeded match of two raw clients answering the first listed non-drop action: per seat, the messages
    taken apart and the size of each write (1 for a single message)."""
    async with grpc.aio.insecure_channel(address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        created = await stub.CreateMatch(pb.CreateMatchRequest(
            variant="500-rum", seed="batching", max_hands=1, seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")]))

        async def seat(token: str, rng: random.Random) -> tuple[list[pb.PlayResponse], list[int]]:
            got: list[pb.PlayResponse] = []
            writes: list[int] = []
            call = stub.Play()
            await call.write(pb.PlayRequest(join=pb.Join(
                seat=pb.SeatCredential(match_id=created.match_id, token=token), batch=batch)))

            async def counted():  # type: ignore[no-untyped-def]
                async for msg in call:
                    writes.append(len(msg.batch.messages) if msg.WhichOneof("body") == "batch" else 1)
                    yield msg

            async for msg in messages(counted()):
                got.append(msg)
                if msg.WhichOneof("body") == "decision":
                    d = msg.decision
                    action = rng.choice([a for a in d.legal_actions if a.WhichOneof("kind") != "drop"])
                    await call.write(pb.PlayRequest(action=pb.ActionMessage(
                        match_id=created.match_id, request_id=d.request_id, action=action)))
                elif msg.WhichOneof("body") == "match_result":
                    break
            await call.done_writing()
            return got, writes

        out = await asyncio.gather(*(seat(t, random.Random(i)) for i, t in enumerate(created.seat_tokens)))
    return [m for m, _ in out], [w for _, w in out]


def _comparable(msgs: list[pb.PlayResponse]) -> list[tuple[str, bytes]]:
    """Each message's kind and content, less what differs from one match to the next (ids, clocks)."""
    out = []
    for m in msgs:
        kind = m.WhichOneof("body")
        body = getattr(m, kind)
        body = type(body).FromString(body.SerializeToString())
        for name in ("match_id", "time_left_ms", "bank_left_ms", "server_version"):
            if name in body.DESCRIPTOR.fields_by_name:
                body.ClearField(name)
        if kind == "match_result":  # its hands name the match: compare the outcome
            out.append((kind, repr((list(body.ranking), list(body.totals), body.reason))))
            continue
        out.append((kind, body.SerializeToString(deterministic=True)))
    return out


def test_a_batching_client_gets_the_same_messages_in_fewer_writes(referee: EmbeddedReferee) -> None:
    batched, writes = asyncio.run(_play(referee.address, batch=True))
    single, single_writes = asyncio.run(_play(referee.address, batch=False))
    for seat in (0, 1):
        assert _comparable(batched[seat]) == _comparable(single[seat])
        assert set(single_writes[seat]) == {1}  # never a batch without Join.batch
        assert max(writes[seat]) > 1 and len(writes[seat]) < len(single_writes[seat])
    assert batched[0][-1].WhichOneof("body") == "match_result"


def test_a_batch_is_taken_apart_in_order() -> None:
    inner = [pb.PlayResponse(accepted=pb.ActionAccepted(request_id=i)) for i in (3, 4, 5)]

    async def stream():  # type: ignore[no-untyped-def]
        yield pb.PlayResponse(welcome=pb.Welcome(bot_name="x"))
        yield pb.PlayResponse(batch=pb.Batch(messages=inner))

    async def collect() -> list[pb.PlayResponse]:
        return [m async for m in messages(stream())]

    got = asyncio.run(collect())
    assert [m.WhichOneof("body") for m in got] == ["welcome", "accepted", "accepted", "accepted"]
    assert [m.accepted.request_id for m in got[1:]] == [3, 4, 5]


def test_events_and_acceptances_wait_for_the_seats_next_request(referee: EmbeddedReferee) -> None:
    """What asks nothing of a seat (the other seats' moves, its own acceptance) rides with its next request: a
    write per decision, not one per seat per move. Each write but the last ends with a request."""
    batched, writes = asyncio.run(_play(referee.address, batch=True))
    for seat in (0, 1):
        decisions = sum(m.WhichOneof("body") == "decision" for m in batched[seat])
        assert len(writes[seat]) <= decisions + 4  # the welcome, the seating, the end, a rare held flush
        ends, at = [], 0
        for size in writes[seat]:
            at += size
            ends.append(batched[seat][at - 1].WhichOneof("body"))
        assert ends.count("decision") >= decisions - 2, ends


def test_a_held_message_goes_out_on_its_own_after_the_hold() -> None:
    """Nothing waits longer than HOLD_S for company; an urgent message takes what waits with it, in order."""
    from referee.service.session import HOLD_S, Connection

    async def go() -> tuple[list[list[str]], list[float]]:
        conn = Connection(batch=True)
        writes: list[list[str]] = []
        times: list[float] = []
        t0 = asyncio.get_running_loop().time()

        async def reader() -> None:
            async for data in conn.outgoing():
                msg = pb.PlayResponse.FromString(data)
                inner = list(msg.batch.messages) if msg.WhichOneof("body") == "batch" else [msg]
                writes.append([m.WhichOneof("body") for m in inner])
                times.append(asyncio.get_running_loop().time() - t0)

        task = asyncio.create_task(reader())
        conn.send(pb.PlayResponse(event=pb.MatchEvent(seq=1)))
        await asyncio.sleep(HOLD_S * 4)
        conn.send(pb.PlayResponse(accepted=pb.ActionAccepted(request_id=1)))
        conn.send(pb.PlayResponse(event=pb.MatchEvent(seq=2)))
        conn.send(pb.PlayResponse(decision=pb.DecisionRequest(request_id=2)))
        await asyncio.sleep(0.001)
        conn.close()
        await task
        return writes, times

    writes, times = asyncio.run(go())
    assert writes == [["event"], ["accepted", "event", "decision"]]
    assert HOLD_S * 0.9 <= times[0] < HOLD_S * 4 and times[1] >= HOLD_S * 4


def test_a_message_held_after_a_write_waits_its_own_hold_not_what_is_left_of_an_earlier_one() -> None:
    """One hold timer outlives a write: what comes after it still waits up to HOLD_S for company, from its own
    arrival."""
    from referee.service.session import HOLD_S, Connection

    async def go() -> list[tuple[list[str], float]]:
        conn = Connection(batch=True)
        writes: list[tuple[list[str], float]] = []
        loop = asyncio.get_running_loop()
        t0 = loop.time()

        async def reader() -> None:
            async for data in conn.outgoing():
                msg = pb.PlayResponse.FromString(data)
                inner = list(msg.batch.messages) if msg.WhichOneof("body") == "batch" else [msg]
                writes.append(([m.WhichOneof("body") for m in inner], loop.time() - t0))

        task = asyncio.create_task(reader())
        conn.send(pb.PlayResponse(event=pb.MatchEvent(seq=1)))
        await asyncio.sleep(HOLD_S * 0.4)
        conn.send(pb.PlayResponse(decision=pb.DecisionRequest(request_id=1)))  # takes the event with it
        await asyncio.sleep(HOLD_S * 0.4)
        conn.send(pb.PlayResponse(event=pb.MatchEvent(seq=2)))  # at 0.8 HOLD_S: due at 1.8 HOLD_S
        await asyncio.sleep(HOLD_S * 3)
        conn.close()
        await task
        return writes

    writes = asyncio.run(go())
    assert [w for w, _ in writes] == [["event", "decision"], ["event"]]
    assert HOLD_S * 1.7 <= writes[1][1] < HOLD_S * 3.5
