"""Every variant end to end over gRPC on 127.0.0.1: a full game between the bundled greedy bots ends by the
variant's own rule, its record replays, and a game of random bots ends by the rules or by the caps with a
recorded reason."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from referee.rules.policies import greedy_policy, random_policy
from referee.rules.variants import all_variants
from referee.service.replay import replay_file
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot

VARIANTS = {v.name: v for v in all_variants()}


@pytest.fixture(scope="module")
def referee(tmp_path_factory):
    tc = TimeControl(per_move_ms=5000, grace_ms=500, connect_ms=5000)
    with EmbeddedReferee(records_dir=tmp_path_factory.mktemp("records"), default_time=tc) as ref:
        yield ref


def seats_for(name: str) -> int:
    v = VARIANTS[name]
    return 4 if v.team_play else min(max(v.min_seats, 2), v.max_seats)


def play(address: str, name: str, policy, caps: dict, seed: str) -> pb.MatchResult:
    n = seats_for(name)

    async def go() -> pb.MatchResult:
        async with grpc.aio.insecure_channel(address) as ch:
            stub = pb_grpc.RefereeServiceStub(ch)
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                variant=name, seed=seed, seats=[pb.SeatSpec(name=f"s{i}") for i in range(n)], **caps))
            bots = [run_bot(PolicyBot(f"b{i}", policy, seed=i), address, match_id=created.match_id, token=t)
                    for i, t in enumerate(created.seat_tokens)]
            await asyncio.gather(*bots)
            return (await stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True))).result

    return asyncio.run(go())


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_full_game_of_greedy_bots_completes_over_grpc_and_replays(referee, name):
    result = play(referee.address, name, greedy_policy, {"max_hands": 200}, f"full-{name}")
    assert result.status == pb.MATCH_STATUS_FINISHED
    assert "cap" not in result.reason, f"{name} ended by a cap: {result.reason}"
    assert sum(len(p.seats) for p in result.ranking) == seats_for(name)
    replayed = replay_file(result.record_path)
    assert replayed["complete"] and replayed["result"]["totals"] == list(result.totals)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_random_bots_end_by_the_rules_or_the_caps_with_a_recorded_reason(referee, name):
    result = play(referee.address, name, lambda v: random_policy, {"max_hands": 3, "max_turns_per_hand": 60},
                  f"random-{name}")
    assert result.status == pb.MATCH_STATUS_FINISHED and result.reason
    assert len(result.hands) <= 3
    assert all(h.reason for h in result.hands)
