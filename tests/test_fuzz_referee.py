"""Fuzzing a live referee: hypothesis streams of random and malformed ``PlayRequest``s (actions before a join,
joins out of order and with wrong or foreign tokens, request ids stale or made up, cards that do not exist or are
not held, huge repeated fields, resume points that lie), and garbage bytes over a raw channel. The referee never
crashes, never lets a match hang past its deadlines, never shows a hidden card (every card the fuzzed seat is
sent is checked against the record), and a match played beside it all along still completes.

``max_examples`` is small in the unit suite; the ``slow`` variants run many more.
"""

from __future__ import annotations

import asyncio
import random
import socket
import threading
import time

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.policies import random_policy
from referee.service.records import read_numbered
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from referee.tools.testing import check_seat_logs, pb_cards
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot

U64 = 2**64 - 1


@pytest.fixture(scope="module")
def referee(tmp_path_factory):
    tc = TimeControl(per_move_ms=150, grace_ms=100, connect_ms=300)
    with EmbeddedReferee(records_dir=tmp_path_factory.mktemp("records"), default_time=tc) as ref:
        yield ref


@pytest.fixture(scope="module")
def beside(referee):
    """Matches of two unhurried bots played one after another beside the fuzzing, from the first example to the
    last: every one must complete, with no forfeit."""
    results: list[pb.MatchResult] = []
    stop = threading.Event()

    class Unhurried(PolicyBot):
        async def decide(self, view, legal, request):
            await asyncio.sleep(0.01)
            return self.rng.choice(legal)

    async def go():
        async with grpc.aio.insecure_channel(referee.address) as ch:
            stub = pb_grpc.RefereeServiceStub(ch)
            while not stop.is_set():
                created = await stub.CreateMatch(pb.CreateMatchRequest(
                    variant="indian", seed=f"beside-{len(results)}", seats=[pb.SeatSpec(name="g0"), pb.SeatSpec(name="g1")],
                    max_hands=2, time_control=pb.TimeControl(per_move_ms=5000, grace_ms=2000, connect_ms=10_000)))
                played = await asyncio.gather(*(
                    run_bot(Unhurried(f"g{i}", lambda v: random_policy, seed=i), referee.address, match_id=created.match_id,
                            token=t) for i, t in enumerate(created.seat_tokens)))
                results.append(played[0][0])

    thread = threading.Thread(target=lambda: asyncio.run(go()), daemon=True)
    thread.start()
    yield results
    stop.set()
    thread.join(60)
    assert not thread.is_alive(), "a match beside the fuzzing never ended"
    assert results, "no match beside the fuzzing ended"
    for result in results:
        assert result.status == pb.MATCH_STATUS_FINISHED and not list(result.forfeited), result.reason


# ---------------------------------------------------------------- what the fuzzer sends

cards = st.builds(pb.Card, rank=st.integers(0, 20), suit=st.integers(0, 7))  # some ranks and suits do not exist
groups = st.builds(pb.Group, cards=st.lists(cards, max_size=6),
                   stands_for=st.lists(st.builds(pb.WildAssignment, wild=cards, as_card=cards), max_size=2))
actions = st.one_of(
    st.just(pb.Action()),
    st.builds(lambda: pb.Action(draw_stock=pb.DrawStock())),
    st.builds(lambda n, g: pb.Action(take_discards=pb.TakeDiscards(count=n, meld=g)), st.integers(0, 2**32 - 1), groups),
    st.builds(lambda gs: pb.Action(meld=pb.MeldAction(groups=gs)), st.lists(groups, max_size=4)),
    st.builds(lambda i, cs: pb.Action(lay_off=pb.LayOff(meld_id=i, cards=cs)), st.integers(0, 2**32 - 1), st.lists(cards, max_size=4)),
    st.builds(lambda i, a, b: pb.Action(exchange_wild=pb.ExchangeWild(meld_id=i, natural=a, wild=b)), st.integers(0, 50), cards, cards),
    st.builds(lambda c: pb.Action(discard=pb.Discard(card=c)), cards),
    st.builds(lambda gs, c: pb.Action(declare=pb.Declare(groups=gs, discard=c)), st.lists(groups, max_size=5), cards),
    st.builds(lambda: pb.Action(drop=pb.Drop())),
    st.builds(lambda: pb.Action(end_turn=pb.EndTurn())),
    st.builds(lambda c: pb.Action(offer=pb.Offer(card=c)), cards),
    st.builds(lambda: pb.Action(accept_offer=pb.AcceptOffer())),
    st.builds(lambda: pb.Action(decline_offer=pb.DeclineOffer())),
)
resumes = st.lists(st.builds(pb.ResumePoint, match_id=st.sampled_from(["", "own", "x" * 200, "nope"]),
                             last_seq=st.integers(0, U64)), max_size=3)
ops = st.lists(st.one_of(
    st.tuples(st.just("join"), st.sampled_from(["own", "own", "foreign", "wrong", "no-match", "bot-token", "none"]), resumes),
    st.tuples(st.just("action"), st.sampled_from(["open", "open", "stale", "zero", "huge", "random"]),
              st.sampled_from(["own", "own", "other"]), actions),
    st.tuples(st.just("legal")),
    st.tuples(st.just("legal")),
    st.tuples(st.just("resign"), st.sampled_from(["own", "other"])),
    st.tuples(st.just("empty")),
    st.tuples(st.just("huge"), st.sampled_from(["groups", "cards", "resume", "name"])),
    st.tuples(st.just("drop")),
), min_size=1, max_size=14)


class Fuzzer:
    """Sends one example's messages over Play streams to seat 0 of a match, keeping what each stream got."""

    def __init__(self, stub, match_id: str, token: str, foreign: tuple[str, str]) -> None:
        self.stub, self.match_id, self.token, self.foreign = stub, match_id, token, foreign
        self.streams: list[tuple[str, list[pb.PlayResponse]]] = []  # (how it joined, what it got)
        self.out: asyncio.Queue | None = None
        self.reader: asyncio.Task | None = None
        self.opened: list[tuple[asyncio.Queue, object, asyncio.Task]] = []
        self.answered: set[int] = set()
        self.stale = 0

    def _open(self, how: str) -> None:
        self.out = out = asyncio.Queue()
        got: list[pb.PlayResponse] = []
        self.streams.append((how, got))

        async def requests():
            while (m := await out.get()) is not None:
                yield m

        call = self.stub.Play(requests())

        async def read():
            try:
                async for msg in call:
                    got.append(msg)
            except grpc.aio.AioRpcError:
                pass

        self.reader = asyncio.ensure_future(read())
        self.call = call
        self.opened.append((out, call, self.reader))

    def send(self, msg: pb.PlayRequest, how: str = "own") -> None:
        if self.out is None or self.reader.done():
            if len(self.streams) >= 4:
                return
            self._open(how)
        self.out.put_nowait(msg)

    def drop(self) -> None:
        if self.out is not None:
            self.out.put_nowait(None)
            self.call.cancel()
            self.out = None

    def open_request(self) -> pb.DecisionRequest | None:
        for _how, got in reversed(self.streams):
            for m in reversed(got):
                if m.WhichOneof("body") == "decision" and m.decision.request_id not in self.answered:
                    return m.decision
        return None

    def request_ids(self) -> list[int]:
        return [m.decision.request_id for _, got in self.streams for m in got if m.WhichOneof("body") == "decision"]

    async def run(self, example: list[tuple], rng: random.Random) -> None:
        for op in example:
            kind = op[0]
            if kind == "join":
                _, who, resume = op
                resume = [pb.ResumePoint(match_id=self.match_id if p.match_id == "own" else p.match_id, last_seq=p.last_seq)
                          for p in resume]
                cred = {"own": (self.match_id, self.token), "foreign": self.foreign, "wrong": (self.match_id, "x" * 24),
                        "no-match": ("no-such-match", self.token)}.get(who)
                if who == "bot-token":
                    join = pb.Join(bot_token=f"fuzz-{rng.random()}", resume=resume)
                elif cred is None:
                    join = pb.Join(bot_name="no credential", resume=resume)
                else:
                    join = pb.Join(seat=pb.SeatCredential(match_id=cred[0], token=cred[1]), resume=resume)
                if self.out is not None and rng.random() < 0.5:
                    self.drop()  # half the joins open a new stream; the others come mid-stream, out of order
                self.send(pb.PlayRequest(join=join), how=who if cred is not None or who == "bot-token" else "none")
            elif kind == "action":
                _, rid_kind, match, action = op
                open_ = self.open_request()
                rid = {"open": open_.request_id if open_ else 1, "zero": 0, "huge": U64,
                       "random": rng.randrange(U64), "stale": (self.request_ids() or [1])[0]}[rid_kind]
                self.send(pb.PlayRequest(action=pb.ActionMessage(
                    match_id=self.match_id if match == "own" else "nope", request_id=rid, action=action)))
            elif kind == "legal":
                ends = time.monotonic() + 0.06
                while (d := self.open_request()) is None and time.monotonic() < ends:
                    await asyncio.sleep(0.01)
                if d is not None:
                    self.answered.add(d.request_id)
                    self.send(pb.PlayRequest(action=pb.ActionMessage(
                        match_id=self.match_id, request_id=d.request_id, action=rng.choice(d.legal_actions))))
            elif kind == "resign":
                self.send(pb.PlayRequest(resign=pb.Resign(match_id=self.match_id if op[1] == "own" else "nope")))
            elif kind == "empty":
                self.send(pb.PlayRequest())
            elif kind == "huge":
                what = op[1]
                if what in ("groups", "cards"):  # "cards" is past the 4 MiB message limit: gRPC refuses it
                    big = pb.ActionMessage(match_id=self.match_id, request_id=1)
                    big.action.CopyFrom(_huge(what))
                    self.send(pb.PlayRequest(action=big))
                elif what == "resume":
                    join = pb.Join(seat=pb.SeatCredential(match_id=self.match_id, token=self.token))
                    join.resume.extend(_RESUME_FLOOD)
                    self.drop()
                    self.send(pb.PlayRequest(join=join), how="too many resume points")
                else:
                    self.drop()
                    self.send(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=self.match_id, token=self.token),
                                                            bot_name="n" * 100_000)), how="overlong name")
            elif kind == "drop":
                self.drop()
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)
        self.drop()
        for out, call, _ in self.opened:
            out.put_nowait(None)
            call.cancel()
        await asyncio.gather(*(reader for _, _, reader in self.opened), return_exceptions=True)


_HUGE: dict[str, pb.Action] = {}
_RESUME_FLOOD = [pb.ResumePoint(match_id=f"m{i}", last_seq=i) for i in range(5_000)]  # more than the live-match limit


def _huge(what: str) -> pb.Action:
    """Huge repeated fields, built once: 20,000 groups (within the message limit), or 1.2 million cards (past it)."""
    if what not in _HUGE:
        if what == "groups":
            _HUGE[what] = pb.Action(meld=pb.MeldAction(groups=[pb.Group(cards=[pb.Card(rank=1, suit=1)] * 3)] * 20_000))
        else:
            _HUGE[what] = pb.Action(declare=pb.Declare(groups=[pb.Group(cards=[pb.Card(rank=5, suit=2)] * 1_200_000)]))
    return _HUGE[what]


async def _fuzz_one(address: str, example: list[tuple], seed: int, foreign: tuple[str, str]):
    async with grpc.aio.insecure_channel(address, options=[("grpc.max_send_message_length", 16 * 2**20)]) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        created = await stub.CreateMatch(pb.CreateMatchRequest(
            variant="fortune", seed=f"fuzz-{seed}", seats=[pb.SeatSpec(name="fuzz"), pb.SeatSpec(name="random")],
            max_hands=1, max_turns_per_hand=16))
        other = asyncio.ensure_future(run_bot(PolicyBot("random", lambda v: random_policy, seed=seed), address,
                                              match_id=created.match_id, token=created.seat_tokens[1]))
        fuzzer = Fuzzer(stub, created.match_id, created.seat_tokens[0], foreign)
        await fuzzer.run(example, random.Random(seed))
        started = time.monotonic()
        result = (await asyncio.wait_for(stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)), 30)).result
        waited = time.monotonic() - started
        await asyncio.wait_for(other, 10)
        await asyncio.wait_for(stub.ListVariants(pb.ListVariantsRequest()), 2)  # the referee still answers
        return created, fuzzer, result, waited


def _check(address: str, example: list[tuple], seed: int) -> None:
    foreign = _foreign(address)
    created, fuzzer, result, waited = asyncio.run(_fuzz_one(address, example, seed, foreign))
    assert result.status == pb.MATCH_STATUS_FINISHED, result.reason
    assert waited < 20, "the match outlived its deadlines"
    seen: list[pb.PlayResponse] = []
    sequences: set[int] = set()
    for how, got in fuzzer.streams:
        if how != "own":  # refused joins (and a bot token that holds no seat) are told nothing about any hand
            assert not any(pb_cards(m) for m in got), f"a stream that joined as {how!r} was sent cards"
            continue
        for m in got:
            if m.WhichOneof("body") == "event":
                if m.event.sequence in sequences:
                    continue  # resent after a rejoin that named an earlier seq
                sequences.add(m.event.sequence)
            seen.append(m)
    numbered, _ = read_numbered(result.record_path)
    check_seat_logs(numbered, {0: seen}, complete=False)


_FOREIGN: dict[str, tuple[str, str]] = {}


def _foreign(address: str) -> tuple[str, str]:
    """A seat token of another match (one that never starts playing: its other seat never joins)."""
    if address not in _FOREIGN:
        with grpc.insecure_channel(address) as ch:
            created = pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
                variant="fortune", seats=[pb.SeatSpec(), pb.SeatSpec()], time_control=pb.TimeControl(connect_ms=600_000)))
        _FOREIGN[address] = (created.match_id, created.seat_tokens[1])
    return _FOREIGN[address]


FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                derandomize=True)


@FUZZ
@given(example=ops, seed=st.integers(0, 2**16))
def test_random_and_malformed_player_messages_never_break_the_referee(referee, beside, example, seed):
    _check(referee.address, example, seed)


@pytest.mark.slow
@settings(FUZZ, max_examples=400, derandomize=False)
@given(example=ops, seed=st.integers(0, 2**32))
def test_random_and_malformed_player_messages_never_break_the_referee_many(referee, beside, example, seed):
    _check(referee.address, example, seed)


async def _garbage(address: str, chunks: list[bytes]) -> None:
    """Raw bytes as Play messages (no protobuf encoding), then raw bytes straight at the port."""
    async with grpc.aio.insecure_channel(address) as ch:
        play = ch.stream_stream("/rummy.referee.v1.RefereeService/Play")  # no serialisers: bytes go as they are

        async def requests():
            for c in chunks:
                yield c
            await asyncio.sleep(0.2)

        call = play(requests())
        try:
            await asyncio.wait_for(_drain(call), 3)
        except TimeoutError:
            call.cancel()  # the bytes happened to be a valid Join: the stream is open, as it should be
        except grpc.aio.AioRpcError as exc:
            assert exc.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                                  grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED,
                                  grpc.StatusCode.CANCELLED, grpc.StatusCode.UNKNOWN), exc
        host, _, port = address.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=2) as sock:
            sock.sendall(b"".join(chunks)[:65536] or b"\x00")
        await asyncio.wait_for(pb_grpc.RefereeServiceStub(ch).ListVariants(pb.ListVariantsRequest()), 2)


async def _drain(call) -> None:
    async for _ in call:
        pass


@settings(max_examples=10, deadline=None, derandomize=True)
@given(chunks=st.lists(st.binary(max_size=2048), min_size=1, max_size=3))
def test_garbage_bytes_over_a_raw_channel_end_only_their_own_stream(referee, beside, chunks):
    asyncio.run(_garbage(referee.address, chunks))
