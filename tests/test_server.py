"""The referee over gRPC on 127.0.0.1: matches between SDK bots, typed errors for bad input, deadlines."""

from __future__ import annotations

import asyncio
import random
import re

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.rules.cards import parse_cards
from referee.rules.policies import greedy_policy, random_policy
from referee.rules.variants import all_variants
from referee.rules.variants.base import Discard
from referee.service.replay import replay_file
from referee.service.server import REASON_KEY, EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire.protocodec import card_to_pb
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot

FAST = TimeControl(per_move_ms=2000, grace_ms=300, connect_ms=5000)


@pytest.fixture(scope="module")
def referee(tmp_path_factory):
    records = tmp_path_factory.mktemp("records")
    with EmbeddedReferee(records_dir=records, allow_stacked_decks=True, default_time=FAST) as ref:
        yield ref


@pytest.fixture()
def stub(referee):
    with grpc.insecure_channel(referee.address) as channel:
        yield pb_grpc.RefereeServiceStub(channel)


def create(stub, variant="indian", seats=2, **kw):
    return stub.CreateMatch(pb.CreateMatchRequest(variant=variant, seats=[pb.SeatSpec(name=f"s{i}") for i in range(seats)],
                                                  seed="server-test", **kw))


def random_bot(seed=0):
    return PolicyBot("random", lambda variant: random_policy, seed=seed)


async def play_all(address, match_id, tokens, bots):
    return await asyncio.gather(*(run_bot(b, address, match_id=match_id, token=t) for b, t in zip(bots, tokens, strict=True)))


def test_list_variants_health_and_reflection(referee, stub):
    names = {v.name for v in stub.ListVariants(pb.ListVariantsRequest()).variants}
    assert "indian" in names
    with grpc.insecure_channel(referee.address) as channel:
        status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service="rummy.referee.v1.RefereeService"))
        assert status.status == health_pb2.HealthCheckResponse.SERVING
        from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

        reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
        responses = reflect.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
        services = {s.name for r in responses for s in r.list_services_response.service}
        assert "rummy.referee.v1.RefereeService" in services


def test_a_match_between_two_sdk_bots_completes_and_its_record_replays(referee, stub):
    created = create(stub, options={"format": "deals-2"})
    results = asyncio.run(play_all(referee.address, created.match_id, created.seat_tokens, [random_bot(1), random_bot(2)]))
    final = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)).result
    assert final.status == pb.MATCH_STATUS_FINISHED and len(final.hands) == 2
    assert results[0][-1].ranking == final.ranking
    replayed = replay_file(final.record_path)
    assert replayed["result"]["totals"] == list(final.totals)


def test_a_wrong_seat_token_is_denied_with_a_reason(referee, stub):
    created = create(stub)

    async def join():
        async with grpc.aio.insecure_channel(referee.address) as ch:
            call = pb_grpc.RefereeServiceStub(ch).Play(iter([pb.PlayRequest(join=pb.Join(
                seat=pb.SeatCredential(match_id=created.match_id, token="not-a-token")))]))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                async for _ in call:
                    pass
            return err.value, await call.trailing_metadata()

    err, trailers = asyncio.run(join())
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED and "BAD_SEAT_TOKEN" in err.details()
    assert (REASON_KEY, "BAD_SEAT_TOKEN") in tuple(tuple(m) for m in trailers)
    # the real seats still play, and the match completes
    asyncio.run(play_all(referee.address, created.match_id, created.seat_tokens, [random_bot(8), random_bot(9)]))
    final = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)).result
    assert final.status == pb.MATCH_STATUS_FINISHED and not final.forfeited


def test_seat_tokens_pass_as_command_line_arguments(stub):
    """A token is handed to a bot as ``--token T``: one starting with '-' would read as an option (it did: the
    url-safe alphabet has '-', and one seat in ~40 never joined). Tokens are hex, 128 bits."""
    created = [create(stub) for _ in range(40)]
    for c in created:
        stub.AbortMatch(pb.AbortMatchRequest(match_id=c.match_id))
    tokens = [t for c in created for t in c.seat_tokens]
    assert all(re.fullmatch(r"[0-9a-f]{32}", t) for t in tokens), tokens
    assert len(set(tokens)) == len(tokens)


def test_a_stream_that_does_not_start_with_join_is_invalid(referee):
    async def go():
        async with grpc.aio.insecure_channel(referee.address) as ch:
            call = pb_grpc.RefereeServiceStub(ch).Play(iter([pb.PlayRequest(resign=pb.Resign(match_id="x"))]))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                async for _ in call:
                    pass
            return err.value

    err = asyncio.run(go())
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "NO_JOIN" in err.details()


def test_bad_create_requests_get_typed_errors(stub):
    with pytest.raises(grpc.RpcError) as err:
        create(stub, variant="no-such-game")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "UNKNOWN_VARIANT" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        create(stub, options={"no_such_option": "1"})
    assert "UNKNOWN_OPTION" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        create(stub, seats=9)
    assert "BAD_SEAT_COUNT" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        stub.GetResult(pb.GetResultRequest(match_id="nope"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


class LiarBot(PolicyBot):
    """First sends garbage and an illegal discard for each request, then plays legally."""

    def __init__(self):
        super().__init__("liar", lambda variant: random_policy, seed=3)
        self.rejections: list[tuple[str, str]] = []
        self.lied: set[int] = set()

    def decide(self, view, legal, request):
        if request.request_id not in self.lied and len(self.lied) < 3:
            self.lied.add(request.request_id)
            missing = next(c for c in __import__("referee.rules.cards", fromlist=["build_deck"]).build_deck(1)
                           if c not in view.hand)
            return Discard(missing)
        return super().decide(view, legal, request)

    def on_rejected(self, view, legal, code, message):
        self.rejections.append((code, message))
        return random.Random(len(self.rejections)).choice(list(legal))


@pytest.mark.parametrize("variant", [v.name for v in all_variants()])
def test_an_illegal_action_is_rejected_with_a_code_and_the_match_still_completes(referee, stub, variant):
    v = next(x for x in all_variants() if x.name == variant)
    created = create(stub, variant=variant, seats=4 if v.team_play else 2, max_hands=1)
    liar = LiarBot()
    others = [random_bot(4 + i) for i in range(len(created.seat_tokens) - 1)]
    asyncio.run(play_all(referee.address, created.match_id, created.seat_tokens, [liar, *others]))
    final = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)).result
    assert final.status == pb.MATCH_STATUS_FINISHED and final.ranking
    assert sum(len(p.seats) for p in final.ranking) == len(created.seat_tokens)
    assert not final.forfeited, "three rejected answers cost no seat"
    assert liar.rejections, "the illegal discards were not rejected"
    for code, message in liar.rejections:
        assert re.fullmatch(r"[A-Z][A-Z_]+", code), code
        assert re.search(r"[A-Z]{2,4}-[0-9]+", message), f"{code}: {message!r} names no rule clause"


def test_a_malformed_action_is_rejected_as_malformed(referee, stub):
    created = create(stub)

    async def go():
        seen = []
        async with grpc.aio.insecure_channel(referee.address) as ch:
            out: asyncio.Queue = asyncio.Queue()
            out.put_nowait(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=created.match_id,
                                                                                 token=created.seat_tokens[1]))))

            async def gen():
                while (m := await out.get()) is not None:
                    yield m

            other = asyncio.create_task(run_bot(random_bot(5), referee.address, match_id=created.match_id,
                                                token=created.seat_tokens[0]))
            call = pb_grpc.RefereeServiceStub(ch).Play(gen())
            async for msg in call:
                kind = msg.WhichOneof("body")
                if kind == "decision":
                    d = msg.decision
                    if not seen:
                        out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(match_id=d.match_id, request_id=d.request_id,
                                                                                action=pb.Action())))
                    out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(match_id=d.match_id, request_id=d.request_id,
                                                                            action=d.legal_actions[0])))
                elif kind == "rejected":
                    seen.append(msg.rejected.code)
                elif kind == "match_result":
                    break
            out.put_nowait(None)
            await other
        return seen

    codes = asyncio.run(go())
    assert codes and codes[0] == "NO_ACTION"


def test_a_missed_deadline_gets_the_default_move_and_the_match_completes(referee, stub):
    """IND-11 applies over the wire: a silent seat misses turns and the match still ends with a result."""
    created = create(stub, time_control=pb.TimeControl(per_move_ms=40, grace_ms=100))

    class Silent(PolicyBot):
        async def decide(self, view, legal, request):
            await asyncio.sleep(3600)

    async def go():
        silent = asyncio.create_task(run_bot(Silent("silent", lambda v: random_policy), referee.address,
                                             match_id=created.match_id, token=created.seat_tokens[0]))
        greedy = PolicyBot("greedy", greedy_policy, seed=6)  # greedy never drops, so only the silent seat can lose
        await run_bot(greedy, referee.address, match_id=created.match_id, token=created.seat_tokens[1])
        silent.cancel()

    asyncio.run(go())
    final = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)).result
    assert final.status == pb.MATCH_STATUS_FINISHED
    assert list(final.ranking[0].seats) == [1], "the silent seat loses"


def test_one_bot_connection_plays_match_after_match(referee, stub):
    async def go():
        bots = [asyncio.create_task(run_bot(random_bot(i), referee.address, bot_token=f"lobby-{i}", max_matches=3))
                for i in range(2)]
        await asyncio.sleep(0.2)
        async with grpc.aio.insecure_channel(referee.address) as ch:
            s = pb_grpc.RefereeServiceStub(ch)
            ids = []
            for k in range(3):
                r = await s.CreateMatch(pb.CreateMatchRequest(variant="indian", seed=f"lobby{k}",
                                                              seats=[pb.SeatSpec(name=f"b{i}", bot_token=f"lobby-{i}") for i in range(2)]))
                ids.append(r.match_id)
            finals = [(await s.GetResult(pb.GetResultRequest(match_id=m, wait=True))).result for m in ids]
        played = await asyncio.gather(*bots)
        return finals, played

    finals, played = asyncio.run(go())
    assert all(f.status == pb.MATCH_STATUS_FINISHED for f in finals)
    assert [len(p) for p in played] == [3, 3]


def test_stacked_decks_are_refused_unless_the_server_allows_them():
    with EmbeddedReferee() as ref, grpc.insecure_channel(ref.address) as ch:
        s = pb_grpc.RefereeServiceStub(ch)
        with pytest.raises(grpc.RpcError) as err:
            create(s, decks=[pb.Cards(cards=[pb.Card(rank=1, suit=1)])])
        assert "STACKED_DECKS_DISABLED" in err.value.details()


def test_a_seat_that_never_joins_forfeits_after_the_connect_time_and_the_match_ends(referee, stub):
    created = create(stub, time_control=pb.TimeControl(connect_ms=200))
    asyncio.run(run_bot(PolicyBot("greedy", greedy_policy, seed=1), referee.address, match_id=created.match_id,
                        token=created.seat_tokens[0]))
    final = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)).result
    assert final.status == pb.MATCH_STATUS_FINISHED and list(final.forfeited) == [1]
    assert list(final.ranking[-1].seats) == [1]


def test_abort_match_ends_a_running_match_as_aborted_and_records_it(referee, stub):
    created = create(stub)  # nobody joins: it waits for its seats
    result = stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id, reason="tournament stopped")).result
    assert result.status == pb.MATCH_STATUS_ABORTED and "tournament stopped" in result.reason
    again = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)).result
    assert again.status == pb.MATCH_STATUS_ABORTED
    assert '"aborted"' in open(again.record_path).read()


def test_a_spectator_sees_public_events_only(referee, stub):
    created = create(stub)

    async def go():
        async with grpc.aio.insecure_channel(referee.address) as ch:
            watch = pb_grpc.RefereeServiceStub(ch).Watch(pb.WatchRequest(match_id=created.match_id))
            bots = asyncio.gather(*(run_bot(random_bot(i), referee.address, match_id=created.match_id, token=t)
                                    for i, t in enumerate(created.seat_tokens)))
            seen = [r.event async for r in watch]
            await bots
            return seen

    events = asyncio.run(go())
    assert events and all(not e.private for e in events)
    draws = [e for e in events if e.kind == "DREW_STOCK"]
    assert draws and all(not e.cards for e in draws), "a spectator must not see a drawn card"
    assert any(e.kind == "HAND_ENDED" for e in events)


def test_a_flooding_bot_loses_its_seat_and_the_match_goes_on(referee, stub):
    """A bot that answers every request with a flood of garbage is treated as missing its turns."""
    created = create(stub, variant="fortune", max_hands=1)

    async def go():
        async with grpc.aio.insecure_channel(referee.address) as ch:
            out: asyncio.Queue = asyncio.Queue()
            out.put_nowait(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=created.match_id,
                                                                                 token=created.seat_tokens[0]))))

            async def gen():
                while (m := await out.get()) is not None:
                    yield m

            other = asyncio.create_task(run_bot(PolicyBot("greedy", greedy_policy, seed=2), referee.address,
                                                match_id=created.match_id, token=created.seat_tokens[1]))
            async for msg in pb_grpc.RefereeServiceStub(ch).Play(gen()):
                if msg.WhichOneof("body") == "decision":
                    for k in range(200):
                        out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(
                            match_id=created.match_id, request_id=msg.decision.request_id + k, action=pb.Action())))
                elif msg.WhichOneof("body") == "match_result":
                    break
            out.put_nowait(None)
            await other

    asyncio.run(go())
    final = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True)).result
    assert final.status == pb.MATCH_STATUS_FINISHED
    assert list(final.forfeited) == [0] and list(final.ranking[-1].seats) == [0]


def test_evaluate_over_grpc_and_a_bad_wild_rank_is_invalid(stub):
    ok = stub.Evaluate(pb.EvaluateRequest(variant="fortune", groups=[pb.Group(cards=[
        pb.Card(rank=5, suit=2), pb.Card(rank=6, suit=2), pb.Card(rank=7, suit=2)])]))
    assert ok.groups[0].valid
    with pytest.raises(grpc.RpcError) as err:
        stub.Evaluate(pb.EvaluateRequest(variant="indian", wild_ranks=[99]))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "BAD_RANK" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        stub.Evaluate(pb.EvaluateRequest(variant="indian", wild_ranks=[pb.RANK_UNSPECIFIED]))
    assert "BAD_RANK" in err.value.details() and "RANK_UNSPECIFIED" in err.value.details()


@pytest.mark.parametrize("card, missing", [
    ("{}", "neither rank nor suit"),
    ('{"rank": "RANK_QUEEN"}', "suit of a card of rank RANK_QUEEN is unset (SUIT_UNSPECIFIED)"),
    ('{"suit": "SUIT_HEARTS"}', "rank is unset (RANK_UNSPECIFIED)"),
    ('{"rank": "RANK_JOKER", "suit": "SUIT_HEARTS"}', "has suit SUIT_NONE, not SUIT_HEARTS"),
])
def test_evaluate_refuses_a_card_with_a_field_unset_rather_than_read_it_as_a_joker(stub, card, missing):
    """The request of issue 33 as grpcurl sends it (JSON): the card {} was read as a printed joker."""
    from google.protobuf import json_format

    request = json_format.Parse('{"variant": "indian", "groups": [{"cards": [' + card + ']}]}', pb.EvaluateRequest())
    with pytest.raises(grpc.RpcError) as err:
        stub.Evaluate(request)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "BAD_CARD" in err.value.details() and missing in err.value.details(), err.value.details()


@pytest.mark.parametrize("variant, options, seats, cards, verdict", [
    ("fortune", {}, 2, "JK 2S 2H", "NOT_IN_THE_DECK"),  # FOR-1: two packs, no joker
    ("arlington", {}, 2, "JK 2S 2H", "NOT_IN_THE_DECK"),  # ARL-7 joker = off
    ("arlington", {"joker": "on"}, 2, "JK 2S 2H", "answered"),
    ("500-rum", {}, 2, "JK 2S 2H", "NOT_IN_THE_DECK"),  # FH-12 jokers = 0
    ("500-rum", {"jokers": "1"}, 2, "JK 2S 2H", "answered"),
    ("iceberg", {}, 2, "AS AS", "NOT_IN_THE_DECK"),  # ICE-1: one pack for 2 or 3
    ("iceberg", {}, 4, "AS AS", "answered"),
    ("fortune", {}, 2, "AS AS AS", "NOT_IN_THE_DECK"),  # two packs
    ("indian", {}, 2, "JK JK 5S", "NOT_IN_THE_DECK"),  # IND-1: one printed joker for 2 players
    ("indian", {}, 3, "JK JK 5S", "answered"),
])
def test_evaluate_refuses_cards_the_games_deck_cannot_hold(stub, variant, options, seats, cards, verdict):
    """A joker in Fortune was read as a suited joker and failed with an internal card error (compiled: a status
    with no reason code): a card no hand of the game can hold is refused, naming the deck."""
    group = pb.Group(cards=[card_to_pb(c) for c in parse_cards(cards)])
    request = pb.EvaluateRequest(variant=variant, options=options, seats=seats, groups=[group])
    if verdict == "answered":
        assert len(stub.Evaluate(request).groups) == 1
        return
    with pytest.raises(grpc.RpcError) as err:
        stub.Evaluate(request)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and verdict in err.value.details()
    assert f"{variant} deck for {seats} seats" in err.value.details()
