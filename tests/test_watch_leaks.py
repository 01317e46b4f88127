"""A spectator never sees a hidden card: real matches of every variant over gRPC, with a watcher on ``Watch``,
and every card the watcher was sent checked against the match's certified record.

The record is re-played (``referee.service.replay.verify``) and, step by step, the cards public at that moment are
collected: melded, on the pile as the variant shows it, face up or turned up, on offer, and every hand once its
hand is over (HAND_REVEALED). A watched event may name only those; a card in a hand or in the stock never.
The seat-side twin of this check is ``referee.tools.testing.KnowledgeTracker`` (the conformance suite); this one
reuses its ``table_cards``.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from referee.rules.cards import Card
from referee.rules.match import Match
from referee.rules.policies import greedy_policy
from referee.rules.variants import all_variants
from referee.rules.variants.base import Event, HandState
from referee.service.records import read_numbered
from referee.service.replay import verify
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from referee.tools.testing import public_so_far
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire import protocodec as codec
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot

VARIANTS = {v.name: v for v in all_variants()}


@pytest.fixture(scope="module")
def referee(tmp_path_factory):
    tc = TimeControl(per_move_ms=5000, grace_ms=500, connect_ms=5000)
    with EmbeddedReferee(records_dir=tmp_path_factory.mktemp("records"), default_time=tc) as ref:
        yield ref


class PublicCards:
    """What a spectator may know after each step of a re-played match, by the sequence number the server gives
    each event (it numbers every event it dispatches, from 1, in order)."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[HandState, set[Card]]] = {}  # id(state) -> (state, cards public so far)
        self.sequence = 0
        self.allowed: dict[int, tuple[Event, frozenset[Card]]] = {}

    def _public(self, match: Match, state: HandState) -> set[Card]:
        return public_so_far(self.known, match, state)

    def step(self, match: Match, before: HandState | None, events: list[Event]) -> None:
        assert match.state is not None
        now = self._public(match, match.state)
        if before is None:  # the first deal: the server sends its events to no one (seats see the view)
            return
        old = self._public(match, before)
        current = old
        for e in events:
            if e.kind == "HAND_STARTED":
                current = now
            self.sequence += 1
            self.allowed[self.sequence] = (e, frozenset(current))


def _watch_a_match(address: str, service, name: str) -> tuple[list[pb.MatchEvent], pb.MatchResult]:
    v = VARIANTS[name]
    seats = 4 if v.team_play else min(v.min_seats + 1, v.max_seats)

    async def go():
        async with grpc.aio.insecure_channel(address) as ch:
            stub = pb_grpc.RefereeServiceStub(ch)
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                variant=name, seed=f"watch-{name}", seats=[pb.SeatSpec(name=f"s{i}") for i in range(seats)],
                max_hands=2, max_turns_per_hand=60))
            watch = stub.Watch(pb.WatchRequest(match_id=created.match_id))
            seen: list[pb.MatchEvent] = []

            async def read():
                async for r in watch:
                    seen.append(r.event)

            reader = asyncio.create_task(read())
            ends = time.monotonic() + 5
            while not service.sessions[created.match_id].watchers:  # watching before the first event
                assert time.monotonic() < ends, "the watcher never subscribed"
                await asyncio.sleep(0.01)
            await asyncio.gather(*(run_bot(PolicyBot(f"b{i}", greedy_policy, seed=i), address, match_id=created.match_id,
                                           token=t) for i, t in enumerate(created.seat_tokens)))
            result = (await stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True))).result
            await asyncio.wait_for(reader, 10)
            return seen, result

    return asyncio.run(go())


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_watcher_is_sent_only_cards_that_are_public_at_that_moment(referee, name):
    watched, result = _watch_a_match(referee.address, referee.service, name)
    assert result.status == pb.MATCH_STATUS_FINISHED
    public = PublicCards()
    numbered, cut = read_numbered(result.record_path)
    verdict = verify(numbered, cut, on_step=public.step)
    assert verdict.exit_code == 0, str(verdict)  # the record of a match over gRPC is certified too

    assert watched, "the watcher saw nothing"
    sent_public = [seq for seq, (e, _) in public.allowed.items() if e.public]
    assert [w.sequence for w in watched] == sent_public, "the watcher gets every public event and nothing else"
    for w in watched:
        event, allowed = public.allowed[w.sequence]
        assert not w.private and w.kind == event.kind
        cards = set(codec.cards_from_pb(w.cards))
        assert cards == set(event.cards), f"event {w.sequence} differs from the record"
        leaked = cards - allowed
        assert not leaked, f"{name}: event {w.sequence} ({w.kind}, hand {w.hand_number}) shows the watcher " \
                           f"{sorted(map(str, leaked))}, which no one may see yet: {w.text!r}"
