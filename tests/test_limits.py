"""No request can hold the referee hostage: every client number is bounded, a match with no one left to play
ends at once, autopilot moves yield to the loop, and overlong ids are refused without being echoed.

The end-to-end test runs a real ``referee serve`` process and sends it the hostile requests of issue 16.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest

from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.policies import random_policy
from referee.service.limits import ServerLimits, shown
from referee.service.replay import replay
from referee.service.server import REASON_KEY
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot

HOSTILE = dict(variant="fortune", seats=[pb.SeatSpec(), pb.SeatSpec()], max_hands=4_000_000_000,
               max_turns_per_hand=4_000_000_000, time_control=pb.TimeControl(per_move_ms=4_000_000_000, connect_ms=1))


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.fixture()
def served(tmp_path):
    """A real ``referee serve`` process on 127.0.0.1 with its own records folder."""
    records = tmp_path / "records"
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--records", str(records),
                             "--log-level", "warning"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = json.loads(proc.stdout.readline())["address"]
        with grpc.insecure_channel(address) as channel:
            grpc.channel_ready_future(channel).result(timeout=10)
            yield proc, address, pb_grpc.RefereeServiceStub(channel), records
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _reason(err: grpc.RpcError) -> str:
    return dict(err.trailing_metadata() or ()).get(REASON_KEY, "")


class Pinger:
    """Calls ListVariants every 50 ms on its own thread and keeps the slowest answer."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.worst = 0.0
        self.calls = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with grpc.insecure_channel(self.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            while not self._stop.is_set():
                t = time.monotonic()
                try:
                    stub.ListVariants(pb.ListVariantsRequest(), timeout=2)
                except grpc.RpcError as exc:
                    self.failures.append(exc.code().name)
                self.worst = max(self.worst, time.monotonic() - t)
                self.calls += 1
                self._stop.wait(0.05)

    def __enter__(self) -> Pinger:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _normal_match(address: str, stub: pb_grpc.RefereeServiceStub) -> pb.MatchResult:
    created = stub.CreateMatch(pb.CreateMatchRequest(variant="indian", seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")],
                                                     seed="normal", max_hands=1))

    async def play() -> None:
        await asyncio.gather(*(run_bot(PolicyBot("random", lambda v: random_policy, seed=i), address,
                                       match_id=created.match_id, token=t) for i, t in enumerate(created.seat_tokens)))

    asyncio.run(asyncio.wait_for(play(), 60))
    return stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=10).result


def test_the_hostile_create_match_is_refused_and_the_server_answers_throughout(served):
    """Issue 16's reproduction: caps of four billion and a 1 ms connect time are refused, each by the limit it
    breaks; then the largest allowed caps with nobody joining end at once; the server answers every call."""
    proc, address, stub, records = served
    rss_before = _rss_kb(proc.pid)
    with Pinger(address) as pinger:
        with pytest.raises(grpc.RpcError) as err:
            stub.CreateMatch(pb.CreateMatchRequest(**HOSTILE), timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert _reason(err.value) == "LIMIT_MAX_HANDS" and "1000" in err.value.details()
        for field, value, reason in [("max_turns_per_hand", 4_000_000_000, "LIMIT_MAX_TURNS_PER_HAND"),
                                     ("per_move_ms", 4_000_000_000, "LIMIT_PER_MOVE_MS"),
                                     ("connect_ms", 1, "LIMIT_CONNECT_MS")]:
            request = pb.CreateMatchRequest(variant="fortune", seats=[pb.SeatSpec(), pb.SeatSpec()])
            if field in ("per_move_ms", "connect_ms"):
                setattr(request.time_control, field, value)
            else:
                setattr(request, field, value)
            with pytest.raises(grpc.RpcError) as err:
                stub.CreateMatch(request, timeout=5)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and _reason(err.value) == reason
        # the largest caps this server allows, and nobody ever joins: both seats forfeit together and it ends
        limits = ServerLimits()
        started = time.monotonic()
        ids = [stub.CreateMatch(pb.CreateMatchRequest(
            variant="fortune", seats=[pb.SeatSpec(), pb.SeatSpec()], max_hands=limits.max_hands,
            max_turns_per_hand=limits.max_turns_per_hand,
            time_control=pb.TimeControl(per_move_ms=limits.max_per_move_ms, connect_ms=limits.min_connect_ms)),
            timeout=5).match_id for _ in range(5)]
        for mid in ids:
            result = stub.GetResult(pb.GetResultRequest(match_id=mid, wait=True), timeout=10).result
            assert result.status == pb.MATCH_STATUS_FINISHED and sorted(result.forfeited) == [0, 1]
            assert [list(p.seats) for p in result.ranking] == [[0, 1]], "seats that leave together tie"
            assert "every seat forfeited" in result.reason
        assert time.monotonic() - started < 5
        normal = _normal_match(address, stub)
        assert normal.status == pb.MATCH_STATUS_FINISHED and not normal.forfeited
    assert pinger.calls >= 2 and not pinger.failures and pinger.worst < 1.0, (pinger.worst, pinger.failures)
    assert _rss_kb(proc.pid) < rss_before + 100_000
    assert _folder_bytes(records) < 2_000_000


def test_a_live_bot_against_an_absent_one_never_holds_the_loop(served):
    """One seat never joins and is played by the autopilot while a random bot plays the other, at the largest
    caps: the match goes on at the live bot's pace and ListVariants still answers at once."""
    proc, address, stub, records = served
    limits = ServerLimits()
    created = stub.CreateMatch(pb.CreateMatchRequest(
        variant="fortune", seats=[pb.SeatSpec(name="live"), pb.SeatSpec(name="absent")], max_hands=limits.max_hands,
        max_turns_per_hand=limits.max_turns_per_hand, time_control=pb.TimeControl(connect_ms=200)), timeout=5)

    async def play_for_a_while() -> None:
        bot = run_bot(PolicyBot("random", lambda v: random_policy, seed=3), address, match_id=created.match_id,
                      token=created.seat_tokens[0])
        try:
            await asyncio.wait_for(bot, 3)
        except TimeoutError:
            pass

    with Pinger(address) as pinger:
        started = time.monotonic()
        asyncio.run(play_for_a_while())
        # a random seat may reach the target in its first hand (the seed is the referee's): ping on for 1.5 s anyway
        time.sleep(max(0.0, 1.5 - (time.monotonic() - started)))
        aborted = stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id, reason="test over"), timeout=5).result
    assert aborted.status in (pb.MATCH_STATUS_ABORTED, pb.MATCH_STATUS_FINISHED)
    assert list(aborted.forfeited) == [1]
    assert pinger.calls > 10 and not pinger.failures and pinger.worst < 1.0, (pinger.worst, pinger.failures)
    assert _folder_bytes(records) < 20_000_000


def test_an_overlong_match_id_is_refused_at_once_without_being_echoed(served):
    _, _, stub, _ = served
    long_id = "x" * 100_000
    for call in (lambda: stub.GetResult(pb.GetResultRequest(match_id=long_id), timeout=2).result,
                 lambda: stub.AbortMatch(pb.AbortMatchRequest(match_id=long_id), timeout=2).result):
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as err:
            call()
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and _reason(err.value) == "LIMIT_LENGTH"
        assert len(err.value.details()) < 200 and time.monotonic() - started < 1.5
    with pytest.raises(grpc.RpcError) as err:
        stub.GetResult(pb.GetResultRequest(match_id="y" * 100), timeout=2)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND and len(err.value.details()) < 200
    with pytest.raises(grpc.RpcError) as err:
        stub.CreateMatch(pb.CreateMatchRequest(variant="indian", seats=[pb.SeatSpec(name="n" * 10_000), pb.SeatSpec()]),
                         timeout=2)
    assert _reason(err.value) == "LIMIT_LENGTH" and len(err.value.details()) < 200


def test_evaluate_is_bounded_so_it_never_holds_the_loop_and_never_echoes_client_text(served):
    """Evaluate is open to anyone: 60 Indian cards took the loop for hours (the least count searches groupings),
    and an overlong variant name or 100,000 bad wild ranks came back as a message too large for gRPC's metadata,
    an error with no reason code. Now: no game holds more than 108 cards, and an Indian hand no more than 14."""
    _, _, stub, _ = served
    deck = [pb.Card(rank=1 + i % 13, suit=1 + (i // 13) % 4) for i in range(104)]
    for request, code in ((pb.EvaluateRequest(variant="indian", seats=6, groups=[pb.Group(cards=deck[:60])]),
                           "HAND_TOO_LARGE"),
                          (pb.EvaluateRequest(variant="500-rum", groups=[pb.Group(cards=deck * 2)]),
                           "LIMIT_EVALUATE_CARDS"),
                          (pb.EvaluateRequest(variant="indian", groups=[pb.Group()] * 1000), "LIMIT_EVALUATE_CARDS"),
                          (pb.EvaluateRequest(variant="x" * 100_000), "LIMIT_LENGTH"),
                          (pb.EvaluateRequest(variant="indian", options={"format": "y" * 100_000}), "LIMIT_LENGTH"),
                          (pb.EvaluateRequest(variant="indian", wild_ranks=[99] * 100_000), "BAD_RANK")):
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as err:
            stub.Evaluate(request, timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and _reason(err.value) == code, err.value.details()
        assert len(err.value.details()) < 300 and time.monotonic() - started < 2
    two = stub.Evaluate(pb.EvaluateRequest(variant="indian", groups=[pb.Group(cards=deck[:7]),
                                                                     pb.Group(cards=deck[7:14])]), timeout=5)
    assert len(two.groups) == 2
    whole_pile = stub.Evaluate(pb.EvaluateRequest(variant="500-rum", groups=[pb.Group(cards=deck[:52])]), timeout=5)
    assert len(whole_pile.groups) == 1  # a 500 Rum hand that took a long discard pile is counted
    assert stub.ListVariants(pb.ListVariantsRequest(), timeout=2).variants


def test_live_matches_are_limited_per_client_and_over_all(tmp_path):
    """Past the per-client or the server-wide count of live matches, CreateMatch is RESOURCE_EXHAUSTED."""
    from referee.service.server import EmbeddedReferee

    for limits, reason in [(ServerLimits(max_client_matches=2), "LIMIT_CLIENT_MATCHES"),
                           (ServerLimits(max_live_matches=2), "LIMIT_LIVE_MATCHES")]:
        with EmbeddedReferee(limits=limits) as ref, grpc.insecure_channel(ref.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            request = pb.CreateMatchRequest(variant="indian", seats=[pb.SeatSpec(), pb.SeatSpec()])
            stub.CreateMatch(request)
            stub.CreateMatch(request)
            with pytest.raises(grpc.RpcError) as err:
                stub.CreateMatch(request)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and _reason(err.value) == reason


def test_error_messages_quote_client_text_cut_short():
    assert shown("abc") == "'abc'"
    long = shown("z" * 10_000)
    assert len(long) < 80 and "10000 characters" in long


# ---------------------------------------------------------------- the rules core: forfeits and early ends


def test_when_every_seat_has_forfeited_the_match_ends_at_once_and_replays():
    records: list[dict] = []
    match = Match(MatchConfig("fortune", 3, seed="all-gone", max_hands=1000, max_turns_per_hand=2000),
                  on_record=records.append)
    match.forfeit(1, "crashed")
    assert not match.over, "two seats still play"
    match.forfeit([0, 2], "never connected")
    assert match.over and match.pending() is None
    assert match.outcome.ranking == ((0, 2), (1,)), "later leavers rank higher; leaving together ties"
    assert replay(records)["result"]["ranking"] == [[0, 2], [1]]


def test_a_stopped_match_ranks_by_totals_with_forfeits_last_and_replays():
    records: list[dict] = []
    match = Match(MatchConfig("indian", 3, seed="stop", options={"format": "pool-101"}), on_record=records.append)
    for _ in range(40):
        d = match.pending()
        match.submit(d.seat, match.legal_actions(d.seat)[0])
    match.forfeit(0, "disconnected")
    match.stop("the server's time limit for a match (1 s)")
    assert match.over and match.outcome.ranking[-1] == (0,)
    assert match.outcome.reason.startswith("the server's time limit")
    replayed = replay(records)
    assert replayed["result"]["ranking"] == [list(g) for g in match.outcome.ranking]


def test_one_forfeit_still_lets_the_others_play_it_out():
    match = Match(MatchConfig("indian", 2, seed="one-left", max_hands=1))
    match.forfeit(0, "crashed")
    outcome = play_seats(match, lambda seat, view, legal: legal[0])
    assert outcome.ranking == ((1,), (0,)) and outcome.forfeited == (0,)


def test_the_operations_guide_lists_every_limit_with_its_default():
    """docs/operations.md's "Server limits" table has a row per flag of ``referee serve``, with its default."""
    guide = (Path(__file__).resolve().parents[1] / "docs" / "operations.md").read_text()
    table = guide[guide.index("## Server limits\n"):].split("\n## ", 1)[0]
    for name, default, _ in ServerLimits.flags():
        assert f"| `--{name.replace('_', '-')}` | {default} |" in table, name
