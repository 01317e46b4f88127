"""Reconnects: a seat whose stream drops rejoins with its token within the grace period and takes up where it
was: the events it missed are resent after the seq it names (``Join.resume``), the open request comes again with
the time it has left, and an action naming any other request (repeated, stale) is rejected ``STALE_REQUEST`` and
never applied. The Python SDK rejoins by itself: streams cut under it mid-match cost it no event and no seat."""

from __future__ import annotations

import asyncio
import random
import time

import grpc
import pytest

from referee.rules.policies import random_policy
from referee.service.records import read_numbered, read_record
from referee.service.replay import verify
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from referee.tools.testing import TcpProxy, check_seat_logs
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot


@pytest.fixture(scope="module")
def referee(tmp_path_factory):
    tc = TimeControl(per_move_ms=3000, grace_ms=3000, connect_ms=5000)
    with EmbeddedReferee(records_dir=tmp_path_factory.mktemp("records"), default_time=tc) as ref:
        yield ref


class Seat:
    """A raw client of one seat: one Play stream at a time, every message it got kept in order."""

    def __init__(self, stub, match_id: str, token: str) -> None:
        self.stub, self.match_id, self.token = stub, match_id, token
        self.got: list[pb.PlayResponse] = []
        self.out: asyncio.Queue | None = None
        self.call = None

    def open(self, last_seq: int | None = None) -> None:
        self.out = out = asyncio.Queue()
        resume = [pb.ResumePoint(match_id=self.match_id, last_seq=last_seq)] if last_seq is not None else []
        out.put_nowait(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=self.match_id, token=self.token),
                                                     resume=resume)))

        async def requests():
            while (m := await out.get()) is not None:
                yield m

        self.call = self.stub.Play(requests())

    async def next(self, body: str | None = None, timeout: float = 10) -> pb.PlayResponse:
        """The next message (of kind ``body``: the others are kept on the way)."""
        while True:
            msg = await asyncio.wait_for(self.call.read(), timeout)
            assert msg is not grpc.aio.EOF, "the stream ended"
            self.got.append(msg)
            if body is None or msg.WhichOneof("body") == body:
                return msg

    def act(self, request_id: int, action: pb.Action) -> None:
        self.out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(match_id=self.match_id, request_id=request_id,
                                                                     action=action)))

    def drop(self) -> None:
        self.out.put_nowait(None)
        self.call.cancel()

    @property
    def last_seq(self) -> int:
        return max((m.event.seq for m in self.got if m.WhichOneof("body") == "event"), default=0)


def _turn_ender(d: pb.DecisionRequest) -> pb.Action:
    """A discard if one is listed (the turn passes on), else the first listed action."""
    return next((a for a in d.legal_actions if a.WhichOneof("kind") == "discard"), d.legal_actions[0])


def test_a_rejoining_seat_gets_what_it_missed_then_its_request_with_the_time_left(referee):
    async def go():
        async with grpc.aio.insecure_channel(referee.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                variant="fortune", seed="rejoin", seats=[pb.SeatSpec(name="raw"), pb.SeatSpec(name="sdk")],
                max_hands=1, max_turns_per_hand=16))

            class Slow(PolicyBot):  # the other seat takes a little while over each move, so seat 0 misses some
                async def decide(self, view, legal, request):
                    await asyncio.sleep(0.02)
                    return random.Random(request.request_id).choice(legal)

            other = asyncio.create_task(run_bot(Slow("sdk", lambda v: random_policy), referee.address, match_id=created.match_id,
                                                token=created.seat_tokens[1]))
            me = Seat(stub, created.match_id, created.seat_tokens[0])
            me.open()
            assert (await me.next("seated")).seated.last_seq == 0
            # 1: answer until a discard is accepted (the turn passes), then drop at once and miss the other's turn
            while True:
                d = (await me.next("decision")).decision
                action = _turn_ender(d)
                me.act(d.request_id, action)
                assert (await me.next("accepted")).accepted.request_id == d.request_id
                if action.WhichOneof("kind") == "discard":
                    break
            answered = d.request_id
            seen = me.last_seq
            me.drop()
            await asyncio.sleep(0.5)  # the other seat plays its turn meanwhile
            me.open(last_seq=seen)
            seated = (await me.next("seated")).seated
            assert seated.last_seq > seen, "events happened while the seat was away"
            resent = []
            while len(resent) < seated.last_seq - seen:
                resent.append((await me.next("event")).event)
            assert [e.seq for e in resent] == list(range(seen + 1, seated.last_seq + 1))
            # 2: a stale answer (the request answered before the drop) is refused and changes nothing
            me.act(answered, _turn_ender(d))
            got = {}
            while len(got) < 2:  # the refusal, and the seat's next request (in either order)
                msg = await me.next()
                if msg.WhichOneof("body") in ("rejected", "decision"):
                    got[msg.WhichOneof("body")] = getattr(msg, msg.WhichOneof("body"))
            assert (got["rejected"].code, got["rejected"].request_id) == ("STALE_REQUEST", answered)
            # 3: drop while a request is open: the rejoin gets the same request with less time left
            d = got["decision"]
            asked = time.monotonic()
            me.drop()
            await asyncio.sleep(0.4)
            me.open(last_seq=me.last_seq)
            again = (await me.next("decision")).decision
            assert again.request_id == d.request_id and again.view == d.view
            away_ms = (time.monotonic() - asked) * 1000
            assert again.time_left_ms <= d.time_left_ms - 350 and again.time_left_ms >= d.time_left_ms - away_ms - 50
            # 4: the same answer twice: applied once, the second is stale (refused at the seat's next request)
            me.act(again.request_id, again.legal_actions[0])
            me.act(again.request_id, again.legal_actions[0])
            assert (await me.next("accepted")).accepted.request_id == again.request_id
            twice = None
            while True:  # play it out
                msg = await me.next()
                if msg.WhichOneof("body") == "decision":
                    me.act(msg.decision.request_id, _turn_ender(msg.decision))
                elif msg.WhichOneof("body") == "rejected":
                    assert twice is None, msg.rejected
                    twice = msg.rejected
                elif msg.WhichOneof("body") == "match_result":
                    break
            assert (twice.code, twice.request_id) == ("STALE_REQUEST", again.request_id)
            me.drop()
            await other
            return msg.match_result, me

    result, me = asyncio.run(go())
    assert result.status == pb.MATCH_STATUS_FINISHED and not list(result.forfeited)
    numbered, _ = read_numbered(result.record_path)
    assert verify(numbered).exit_code == 0
    accepted = sum(1 for m in me.got if m.WhichOneof("body") == "accepted")
    moves = [e for _, e in numbered if e["type"] == "action" and e["seat"] == 0 and not e["timed_out"]]
    assert len(moves) == accepted, "every accepted answer applied once, nothing else"
    # across its three streams the seat got each of its events once, in order (a resent one is seen again only
    # when the seat named an earlier seq), and every card it was shown it could know
    log, last = [], 0
    for m in me.got:
        if m.WhichOneof("body") == "event":
            if m.event.seq <= last:
                continue
            last = m.event.seq
        log.append(m)
    report = check_seat_logs(numbered, {0: log})
    assert report.events == last


def test_the_clock_of_an_open_request_runs_on_while_its_seat_is_away(referee):
    """A seat away for longer than its move's time but within the grace period: its default move is played, it
    keeps its seat, and on its return it plays on."""

    async def go():
        async with grpc.aio.insecure_channel(referee.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                variant="fortune", seed="clock", seats=[pb.SeatSpec(name="raw"), pb.SeatSpec(name="sdk")],
                max_hands=1, max_turns_per_hand=20,
                time_control=pb.TimeControl(per_move_ms=300, grace_ms=2500)))
            other = asyncio.create_task(run_bot(PolicyBot("sdk", lambda v: random_policy, seed=2), referee.address,
                                                match_id=created.match_id, token=created.seat_tokens[1]))
            me = Seat(stub, created.match_id, created.seat_tokens[0])
            me.open()
            await me.next("decision")
            me.drop()
            await asyncio.sleep(0.9)  # past the move's 300 ms, within the 2.5 s grace period
            me.open(last_seq=me.last_seq)
            while (msg := await me.next()).WhichOneof("body") != "match_result":
                if msg.WhichOneof("body") == "decision":
                    me.act(msg.decision.request_id, msg.decision.legal_actions[0])
            me.drop()
            await other
            return msg.match_result

    result = asyncio.run(go())
    assert result.status == pb.MATCH_STATUS_FINISHED and not list(result.forfeited)
    record = read_record(result.record_path)
    assert any(e["type"] == "event" and e["kind"] == "TIMED_OUT" and e["seat"] == 0 for e in record)
    assert any(e["type"] == "action" and e["seat"] == 0 and not e["timed_out"] for e in record), "it played on"


def test_a_seat_gone_past_the_grace_period_forfeits_and_the_match_ends(referee):
    async def go():
        async with grpc.aio.insecure_channel(referee.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                variant="fortune", seed="gone", seats=[pb.SeatSpec(name="raw"), pb.SeatSpec(name="sdk")],
                max_hands=1, max_turns_per_hand=20, time_control=pb.TimeControl(per_move_ms=5000, grace_ms=300)))
            other = asyncio.create_task(run_bot(PolicyBot("sdk", lambda v: random_policy, seed=2), referee.address,
                                                match_id=created.match_id, token=created.seat_tokens[1]))
            me = Seat(stub, created.match_id, created.seat_tokens[0])
            me.open()
            await me.next("seated")
            dropped = time.monotonic()
            me.drop()
            result = (await asyncio.wait_for(stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)), 30)).result
            await other
            return result, time.monotonic() - dropped

    result, took = asyncio.run(go())
    assert list(result.forfeited) == [0] and result.status == pb.MATCH_STATUS_FINISHED
    forfeit = next(e for e in read_record(result.record_path) if e["type"] == "forfeit")
    assert forfeit["reason"] == "disconnected"
    assert took < 5, "the grace period, not the move's 5 s, decides when a gone seat forfeits"


class Recording(PolicyBot):
    """A random bot that keeps the seq of every event it is given."""

    def __init__(self, name: str, seed: int) -> None:
        super().__init__(name, lambda v: random_policy, seed=seed)
        self.seqs: list[int] = []
        self.kinds: list[str] = []
        self.seated = 0

    def on_seated(self, seated):
        self.seated += 1

    def on_event(self, event):
        self.seqs.append(event.seq)
        self.kinds.append(event.kind)

    async def decide(self, view, legal, request):
        await asyncio.sleep(0.004)  # the match lasts long enough for the cuts to land in it
        return self.rng.choice(legal)


def test_the_sdk_rejoins_when_its_stream_is_cut_and_sees_every_event_once(referee):
    """Both bots reach the referee through a proxy that cuts every connection three times mid-match: one bot by
    seat token, one by bot token. The match ends with no forfeit, and each bot saw each of its events once."""

    async def go():
        proxy = TcpProxy(referee.address)
        address = await proxy.start()
        async with grpc.aio.insecure_channel(referee.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            bots = [Recording("by-seat", 1), Recording("by-bot-token", 2)]
            lobby = asyncio.create_task(run_bot(bots[1], address, bot_token="rejoin-bot-token", max_matches=1))
            ends = time.monotonic() + 5
            while "rejoin-bot-token" not in referee.service.bots:
                assert time.monotonic() < ends
                await asyncio.sleep(0.01)
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                variant="fortune", seed="cut", seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b", bot_token="rejoin-bot-token")],
                max_hands=2, max_turns_per_hand=60))
            seat_bot = asyncio.create_task(run_bot(bots[0], address, match_id=created.match_id, token=created.seat_tokens[0]))
            cuts = 0
            while cuts < 3 and not seat_bot.done():  # a cut after every 12 events the seat-token bot has seen
                await asyncio.sleep(0.005)
                if len(bots[0].seqs) >= 12 * (cuts + 1):
                    cuts += proxy.drop() > 0
            results = await asyncio.wait_for(asyncio.gather(seat_bot, lobby), 60)
            await proxy.close()
            return bots, results, cuts

    bots, results, cuts = asyncio.run(go())
    assert cuts == 3, "the match ended before the proxy cut it three times: make it longer"
    result = results[0][0]
    assert result.status == pb.MATCH_STATUS_FINISHED and not list(result.forfeited), result.reason
    assert results[1][0].match_id == result.match_id
    numbered, _ = read_numbered(result.record_path)
    visible: dict[int, list[str]] = {0: [], 1: []}

    def follow(match, before, events):
        if before is None:
            return
        for e in events:
            for seat in visible:
                if e.visible_to(seat):
                    visible[seat].append(e.kind)

    assert verify(numbered, on_step=follow).exit_code == 0
    for seat, bot in enumerate(bots):
        assert bot.seqs == list(range(1, len(bot.seqs) + 1)), f"seat {seat}: an event seen twice or missed"
        assert bot.kinds == visible[seat], f"seat {seat}: its events are not the record's"
        assert bot.seated == 1
