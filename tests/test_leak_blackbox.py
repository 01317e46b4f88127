"""No seat is ever sent a card it could not know, seen from outside: bots that log every message they receive play
random matches of every variant over gRPC, and each card any of those messages names is checked against the
match's record for whether that seat could know it at that moment (``referee.tools.testing.check_seat_log``).

Twenty-four matches per variant run in the unit suite; ``test_a_thousand_matches_per_variant_leak_nothing`` (slow) plays
``RUMMY_LEAK_MATCHES`` per variant (default 1000; ``RUMMY_LEAK_VARIANTS`` picks variants) and prints its figures
as each variant ends.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass

import grpc
import pytest

from bench.wire import never_dropping
from referee.rules.variants import all_variants
from referee.rules.variants.base import Discard
from referee.service.records import read_numbered
from referee.service.replay import verify
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from referee.tools.testing import HiddenCardLeak, check_seat_logs
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire import protocodec as codec
from tests.serving import free_port, kill, serve

VARIANTS = {v.name: v for v in all_variants()}
UNIT_MATCHES = 24  # per variant in the unit suite: 216 matches in all (the slow test plays 1,000 per variant)


@pytest.fixture(scope="module")
def referee(tmp_path_factory):
    tc = TimeControl(per_move_ms=10_000, grace_ms=5000, connect_ms=10_000)
    with EmbeddedReferee(records_dir=tmp_path_factory.mktemp("records"), default_time=tc) as ref:
        yield ref


@dataclass
class Figures:
    games: int = 0
    messages: int = 0
    cards: int = 0
    events: int = 0
    decisions: int = 0
    leaks: int = 0


async def _logging_seat(stub, match_id: str, token: str, rng: random.Random) -> list[pb.PlayResponse]:
    """One seat's raw client: logs every message and answers each decision with a random listed action (not a drop)."""
    out: asyncio.Queue = asyncio.Queue()
    out.put_nowait(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=match_id, token=token), bot_name="log")))

    async def requests():
        while (m := await out.get()) is not None:
            yield m

    log: list[pb.PlayResponse] = []
    call = stub.Play(requests())
    try:
        async for msg in call:
            log.append(msg)
            body = msg.WhichOneof("body")
            if body == "decision":
                d = msg.decision
                # a random seat would drop on its first turn nine games in ten, and a game ended at once checks little
                out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(
                    match_id=match_id, request_id=d.request_id, action=rng.choice(never_dropping(d.legal_actions)))))
            elif body == "match_result":
                break
    finally:
        out.put_nowait(None)
        call.cancel()
    return log


def _random_request(name: str, rng: random.Random, seed: str, hands: int, turns: int) -> pb.CreateMatchRequest:
    """A match of ``name`` with a random seat count and random option values."""
    v = VARIANTS[name]
    seats = 4 if v.team_play else rng.randint(v.min_seats, min(v.max_seats, 4))
    options = {o.name: rng.choice([c for c in o.choices if not c.startswith("<")] or [o.default]) for o in v.options}
    return pb.CreateMatchRequest(variant=name, seed=seed, options=options, max_hands=hands, max_turns_per_hand=turns,
                                 seats=[pb.SeatSpec(name=f"log{i}") for i in range(seats)])


async def play_logged(stub, request: pb.CreateMatchRequest, bot_seed: int) -> tuple[pb.MatchResult, list[list]]:
    """One match of logging random bots: its result and each seat's log."""
    created = await stub.CreateMatch(request)
    bots = random.Random(bot_seed)
    logs = await asyncio.gather(*(_logging_seat(stub, created.match_id, t, random.Random(bots.random()))
                                  for t in created.seat_tokens))
    return logs[0][-1].match_result, logs


async def play_and_check(address: str, name: str, matches: int, seed: int, concurrency: int = 8, hands: int = 2,
                         turns: int = 80) -> Figures:
    """Play ``matches`` random matches of ``name``, ``concurrency`` at a time, and check every seat's log."""
    figures = Figures()
    rng = random.Random(seed)
    todo = [(_random_request(name, rng, f"leak-{name}-{seed}-{i}", hands, turns), rng.randrange(2**32))
            for i in range(matches)]
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)

        async def one(request: pb.CreateMatchRequest, bot_seed: int) -> None:
            result, logs = await play_logged(stub, request, bot_seed)
            assert result.status == pb.MATCH_STATUS_FINISHED, result.reason
            assert not result.forfeited, f"{name}: a random bot forfeited: {result.reason}"
            numbered, _ = read_numbered(result.record_path)
            report = check_seat_logs(numbered, dict(enumerate(logs)))
            figures.messages += report.messages
            figures.cards += report.cards
            figures.events += report.events
            figures.decisions += report.decisions
            figures.games += 1

        async def worker() -> None:
            while todo:
                await one(*todo.pop())

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return figures


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_no_message_to_a_seat_names_a_card_it_cannot_know(referee, name):
    figures = asyncio.run(play_and_check(referee.address, name, matches=UNIT_MATCHES, seed=7, concurrency=4, hands=1,
                                         turns=24))
    assert figures.games == UNIT_MATCHES
    assert figures.decisions > 0 and figures.events > 0 and figures.cards > 0


def test_the_check_finds_a_card_slipped_into_a_message(referee):
    """The check is not vacuous: a card another seat has held since the deal, slipped into seat 0's first
    decision (its legal actions), is a leak; put into an event, it is an event the record does not have."""

    async def go():
        async with grpc.aio.insecure_channel(referee.address) as channel:
            request = _random_request("fortune", random.Random(1), "leak-mutant", 1, 24)
            return await play_logged(pb_grpc.RefereeServiceStub(channel), request, 3)

    result, logs = asyncio.run(go())
    numbered, _ = read_numbered(result.record_path)
    check_seat_logs(numbered, dict(enumerate(logs)))
    held: list = []  # per step, each seat's hand; None once seat 0 is asked

    def follow(match, before, events):  # the cards each seat holds at every step until seat 0 is first asked
        if not held or held[-1] is not None:
            held.append([set(h) for h in match.state.hands])
            if (d := match.pending()) is not None and d.seat == 0:
                held.append(None)

    verify(numbered, 0, on_step=follow)
    held = held[:-1]
    hidden = next(min(kept) for s in range(1, len(logs)) if (kept := set.intersection(*(h[s] for h in held))))
    first = next(i for i, m in enumerate(logs[0]) if m.WhichOneof("body") == "decision")

    for kind in ("decision", "event"):
        tampered = list(logs[0])
        at = first if kind == "decision" else next(i for i, m in enumerate(tampered) if m.WhichOneof("body") == "event")
        msg = pb.PlayResponse()
        msg.CopyFrom(tampered[at])
        if kind == "decision":
            msg.decision.legal_actions.append(codec.action_to_pb(Discard(hidden)))
        else:
            msg.event.cards.append(codec.card_to_pb(hidden))
        tampered[at] = msg
        logs_now = {**dict(enumerate(logs)), 0: tampered}
        if kind == "decision":
            with pytest.raises(HiddenCardLeak, match=str(hidden)):
                check_seat_logs(numbered, logs_now)
        else:
            with pytest.raises(AssertionError, match="is not the record's"):
                check_seat_logs(numbered, logs_now)


@pytest.mark.slow
@pytest.mark.timeout(4 * 3600)
def test_a_thousand_matches_per_variant_leak_nothing(tmp_path, capsys):
    """``RUMMY_LEAK_MATCHES`` (default 1000) random matches per variant against a ``referee serve`` process (the
    bots and the checks in this one): every card of every message checked; the figures are printed."""
    per_variant = int(os.environ.get("RUMMY_LEAK_MATCHES", "1000"))
    names = os.environ.get("RUMMY_LEAK_VARIANTS", "").split() or sorted(VARIANTS)
    port = free_port()
    referee = serve(port, tmp_path / "records", "--per-move-ms", "30000", "--max-finished-kept", "100")
    total = Figures()
    try:
        for name in names:
            started = time.monotonic()
            f = asyncio.run(play_and_check(f"127.0.0.1:{port}", name, matches=per_variant, seed=11, concurrency=12,
                                           hands=1, turns=60))
            with capsys.disabled():  # each variant's figures as it ends: a long run shows its progress
                print(f"\nblack-box leak check, {name}: {f.games} games, {f.messages} messages, {f.cards} cards "
                      f"checked, {f.events} events, {f.decisions} decisions, 0 leaks ({time.monotonic() - started:.0f} s)",
                      flush=True)
            for k in ("games", "messages", "cards", "events", "decisions"):
                setattr(total, k, getattr(total, k) + getattr(f, k))
            assert f.games == per_variant
            for record in (tmp_path / "records").glob("*.jsonl"):
                record.unlink()  # checked: a thousand matches per variant need not stay on disk
    finally:
        kill(referee)
    with capsys.disabled():
        print(f"black-box leak check, total: {total.games} games, {total.messages} messages, {total.cards} cards, "
              f"{total.events} events, {total.decisions} decisions, 0 leaks", flush=True)
