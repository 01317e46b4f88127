"""Structured logs: a match's lines carry its match id, and per-decision lines the seat and hand number."""

import asyncio
import io
import sys

import grpc
from structlog.testing import capture_logs

from referee.rules.policies import greedy_policy
from referee.service.logs import configure_logging, get_logger
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot


class LateBot(PolicyBot):
    """Misses its first deadlines, then plays greedy."""

    missed = 0

    async def decide(self, view, legal, request):
        if LateBot.missed < 2:
            LateBot.missed += 1
            await asyncio.sleep(0.3)
        return greedy_policy(view.variant)(view, legal, self.rng)


def test_decision_log_lines_bind_match_seat_and_hand():
    configure_logging("info")  # other tests may have raised the level
    with capture_logs() as logs, EmbeddedReferee(default_time=TimeControl(per_move_ms=100, grace_ms=200)) as ref:
        with grpc.insecure_channel(ref.address) as ch:
            created = pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
                variant="indian", seed="logs", seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")]))

            async def go():
                await asyncio.gather(*(run_bot(LateBot("late", greedy_policy), ref.address, match_id=created.match_id,
                                               token=t) for t in created.seat_tokens))

            asyncio.run(go())
    missed = [e for e in logs if e["event"] == "deadline_missed"]
    assert missed, "no missed deadline was logged"
    assert all(e["match_id"] == created.match_id and "seat" in e and e["hand"] >= 1 for e in missed)
    assert any(e["event"] == "match_finished" and e["match_id"] == created.match_id for e in logs)


def test_lines_go_to_standard_error_as_it_is_when_written(monkeypatch):
    """A stderr swapped after logging was configured (a test runner's capture, since closed) takes no lines."""
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging("info")
    first.close()
    now = io.StringIO()
    monkeypatch.setattr(sys, "stderr", now)
    get_logger(match_id="m-9").info("seat_attached", seat=1)
    assert '"match_id": "m-9"' in now.getvalue() and '"seat_attached"' in now.getvalue()
