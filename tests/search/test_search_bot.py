"""The sampling bot plays through the Search service: whole matches over gRPC, no rejected answer; and (slow)
it rates above the greedy bot with error bars apart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from referee.rules.policies import greedy_policy
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.bots.sampling import SamplingBot, _pick
from rummybot.sdk import run_bot


class Counted(SamplingBot):
    rejected: list[str]

    def on_rejected(self, view, legal, code, message):  # type: ignore[no-untyped-def]
        self.rejected.append(code)
        return None


@pytest.mark.parametrize("variant", ["indian", "500-rum"])
def test_the_sampling_bot_plays_a_match_through_the_search_service(variant: str) -> None:
    """Samples and simulations over gRPC at its decisions; every answer accepted; the match ends."""
    with EmbeddedReferee(default_time=TimeControl(per_move_ms=20000, grace_ms=2000, connect_ms=10000)) as ref:
        with grpc.insecure_channel(ref.address) as ch:
            m = pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
                variant=variant, seats=[pb.SeatSpec(name="sampling"), pb.SeatSpec(name="greedy")], seed="bot-test",
                max_hands=1))
        bot = Counted(samples=2, depth=4, budget_s=0.5, seed=1)
        bot.rejected = []
        bot.connect(ref.address, m.seat_tokens[0])

        async def play():  # type: ignore[no-untyped-def]
            return await asyncio.gather(
                run_bot(bot, ref.address, match_id=m.match_id, token=m.seat_tokens[0]),
                run_bot(PolicyBot("greedy", greedy_policy, seed=2), ref.address, match_id=m.match_id, token=m.seat_tokens[1]))

        results = asyncio.run(play())
    assert results[0][0].status == pb.MATCH_STATUS_FINISHED and not results[0][0].forfeited
    assert bot.searched > 0 and bot.rejected == []


def test_the_greedy_choice_stands_unless_the_deals_show_better() -> None:
    """Paired margins: a candidate must be ahead by more than z standard errors to replace the first."""
    assert _pick([[0, 0, 0, 0], [1, -1, 1, -1]], 0.5) == 0  # no better on average
    assert _pick([[0, 0, 0, 0], [3, 2, 4, 3], [1, 1, 1, 1]], 0.5) == 1
    assert _pick([[0, 0], [5, -4]], 0.5) == 0  # ahead on average, within the noise
    assert _pick([[0, 0, 0], [float("-inf"), 9, 9]], 0.5) == 0  # not legal in some deal


# the settings of the figures in the README: 500 Rum one hand a match; Indian rummy four deals a match (IND-13
# deals-4), where counts add up and a drop can be worth its 20
TOURNAMENTS = {
    "500-rum": dict(deals=250, samples=16, depth=4, max_hands=1, options={}),
    "indian": dict(deals=120, samples=8, depth=10, max_hands=0, options={"format": "deals-4"}),
}


@pytest.mark.slow
@pytest.mark.timeout(2 * 3600)  # tens of minutes: past the suite's 300 s default
@pytest.mark.parametrize("variant", list(TOURNAMENTS))
def test_the_sampling_bot_rates_above_the_greedy_bot(tmp_path: Path, variant: str) -> None:
    """A round-robin over duplicate deals with real bot processes: sampling's Elo minus its 95% error is above
    greedy's plus its error (bench/search_tournament.py, which prints the table; tens of minutes)."""
    from bench.search_tournament import play

    t = TOURNAMENTS[variant]
    r = play(variant, tmp_path / variant, t["deals"], t["samples"], t["depth"], 6.0, 2, t["max_hands"], t["options"])
    assert r["apart"], r
