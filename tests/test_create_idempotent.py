"""CreateMatch with an idempotency key: a client whose answer was lost (a dropped connection, a referee killed
between writing the record and answering) asks again with the same key and gets the match the first call made,
even from a restarted referee that resumed it, instead of leaving an orphan match that nobody waits for."""

from __future__ import annotations

import asyncio
import shutil

import grpc
import pytest

from referee.service.records import read_record
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

TC = TimeControl(per_move_ms=5000, grace_ms=3000, connect_ms=60_000)


def _request(key: str, seed: str = "same") -> pb.CreateMatchRequest:
    return pb.CreateMatchRequest(variant="indian", seed=seed, idempotency_key=key, max_hands=1,
                                 seats=[pb.SeatSpec(name="a", bot_token="bot-a-token"),
                                        pb.SeatSpec(name="b", bot_token="bot-b-token")])


async def _create(address: str, request: pb.CreateMatchRequest) -> pb.CreateMatchResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        return await pb_grpc.RefereeServiceStub(channel).CreateMatch(request)


def test_a_repeat_with_the_same_key_answers_the_first_match_and_makes_no_second(tmp_path) -> None:
    with EmbeddedReferee(records_dir=tmp_path, default_time=TC) as ref:
        first = asyncio.run(_create(ref.address, _request("run-1/game-7/0")))
        again = asyncio.run(_create(ref.address, _request("run-1/game-7/0")))
        other = asyncio.run(_create(ref.address, _request("run-1/game-8/0")))
    assert again.match_id == first.match_id != other.match_id
    assert list(again.seat_tokens) == ["", ""]  # seat tokens are given once (none here: bot-token seats)
    assert sorted(p.stem for p in tmp_path.glob("*.jsonl")) == sorted({first.match_id, other.match_id})


def test_the_same_key_with_a_different_request_is_refused_already_exists(tmp_path) -> None:
    with EmbeddedReferee(records_dir=tmp_path, default_time=TC) as ref:
        asyncio.run(_create(ref.address, _request("k1")))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            asyncio.run(_create(ref.address, _request("k1", seed="another")))
    assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert "IDEMPOTENCY_KEY_REUSED" in refused.value.details() and "new key" in refused.value.details()


def test_an_overlong_key_is_refused_invalid_argument(tmp_path) -> None:
    with EmbeddedReferee(default_time=TC) as ref, pytest.raises(grpc.aio.AioRpcError) as refused:
        asyncio.run(_create(ref.address, _request("k" * 10_000)))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(refused.value.details()) < 300  # the message never echoes the whole key


def test_a_restarted_referee_knows_the_key_of_a_match_it_resumed(tmp_path) -> None:
    """The first referee wrote the record (with the key in its header) and was killed before its answer arrived: a
    copy of the record as it stood is what a kill leaves. The restarted referee resumes it and answers the repeat."""
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    with EmbeddedReferee(records_dir=first_dir, default_time=TC) as ref:
        first = asyncio.run(_create(ref.address, _request("run-2/game-1/0")))
        record = first_dir / f"{first.match_id}.jsonl"
        shutil.copytree(first_dir, second_dir)  # the folder as a kill leaves it: the match unfinished
    header = next(e for e in read_record(second_dir / record.name) if e["type"] == "header")
    assert header["idempotency_key"] == "run-2/game-1/0"
    with EmbeddedReferee(records_dir=second_dir, default_time=TC, unfinished="resume") as ref:
        again = asyncio.run(_create(ref.address, _request("run-2/game-1/0")))
        other = asyncio.run(_create(ref.address, _request("run-2/game-2/0")))
    assert again.match_id == first.match_id != other.match_id
    assert len(list(second_dir.glob("*.jsonl"))) == 2
