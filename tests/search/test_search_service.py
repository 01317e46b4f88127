"""The Search service never reveals a live match's hidden cards: the sampler's input is the same whatever they
are, samples vary over unseen cards, tokens are signed and refused when forged, and nothing touches the match."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import random
import shutil
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import grpc
import pytest

from referee.rules.cards import Card, build_deck, shuffled
from referee.rules.match import Match, MatchConfig
from referee.rules.policies import greedy_policy
from referee.rules.variants.base import Action, Discard, DrawStock, SeatView, TakeDiscards
from referee.search import SearchState, TokenCodec, sample_states, seat_record
from referee.service.server import REASON_KEY, EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.search.v1 import search_pb2 as spb
from rummy.search.v1 import search_pb2_grpc as spb_grpc
from rummy.wire import protocodec as codec
from rummybot.bots.base import PolicyBot
from rummybot.sdk import Bot, Request, run_bot
from rummybot.search import SearchClient

ROOT = Path(__file__).resolve().parents[2]
SEED = "the-secret-match-seed"


# ------------------------------------------------------------------------------ two worlds, one seat's knowledge


def _indian_decks() -> tuple[list[Card], list[Card]]:
    """Two decks that deal seat 0 the same cards, the same wild joker, open card and stock top, but seat 1 other
    cards: seat 1's dealt cards (even positions, dealt first from the dealer's left) swap with the deep stock."""
    a = shuffled(build_deck(1, 1), "two-worlds")
    b = list(a)
    seat1 = list(range(0, 26, 2))
    deep = list(range(len(a) - 13, len(a)))
    for i, j in zip(seat1, deep, strict=True):
        b[i], b[j] = a[j], a[i]
    return a, b


def _play_same(m: Match, rounds: int) -> None:
    """Each seat draws from the stock and discards what it drew: the same visible moves in both worlds."""
    for _ in range(rounds * 2):
        d = m.pending()
        assert d is not None
        m.submit(d.seat, DrawStock())
        drawn = m.state.hands[d.seat][-1]  # type: ignore[union-attr]
        m.submit(d.seat, Discard(drawn))


def test_the_sampler_sees_the_same_input_whatever_the_hidden_cards() -> None:
    """Two matches that differ only in cards seat 0 has not seen give seat 0 the same record and the same samples."""
    deck_a, deck_b = _indian_decks()
    worlds = []
    for deck in (deck_a, deck_b):
        m = Match(MatchConfig(variant="indian", seats=2, seed=SEED, decks=(tuple(deck),), max_hands=1))
        _play_same(m, 3)
        worlds.append(m)
    a, b = worlds
    assert a.state is not None and b.state is not None
    assert Counter(a.state.hands[1]) != Counter(b.state.hands[1]), "the worlds must differ in hidden cards"
    assert a.view(0) == b.view(0)
    rec_a, rec_b = seat_record(a, 0), seat_record(b, 0)
    assert rec_a == rec_b, "the sampler's input depends on hidden cards"
    samples_a = [(s.state, d) for s, d in sample_states(rec_a, 20, "same")]
    samples_b = [(s.state, d) for s, d in sample_states(rec_b, 20, "same")]
    assert samples_a == samples_b
    assert len({d.hands[1] for _, d in samples_a}) > 15, "samples must vary over the unseen cards"


def test_a_card_taken_from_a_fanned_pile_is_known_and_others_vary() -> None:
    """500 Rum: the cards seat 1 took from the fanned pile and did not meld are in its hand in every sample."""
    m = Match(MatchConfig(variant="500-rum", seats=2, seed="fanned", max_hands=1))
    rng_moves = 0
    taken: list[Card] = []
    while not taken and rng_moves < 200:
        d = m.pending()
        assert d is not None
        legal = m.legal_actions(d.seat)
        deep = [a for a in legal if isinstance(a, TakeDiscards) and (a.count or 0) >= 2] if d.seat == 1 else []
        action: Action = deep[0] if deep else greedy_policy("500-rum")(m.view(d.seat), legal, random.Random(rng_moves))
        before = list(m.state.discards)  # type: ignore[union-attr]
        m.submit(d.seat, action)
        if deep:
            k = deep[0].count
            taken = [c for c in before[-k + 1:] if c in m.state.hands[1]]  # type: ignore[union-attr]
        rng_moves += 1
    if not taken:
        pytest.skip("no deep take happened on this deal")
    while m.pending() is not None and m.pending().seat != 0:  # type: ignore[union-attr]
        d = m.pending()
        assert d is not None
        m.submit(d.seat, m.legal_actions(d.seat)[-1])
    rec = seat_record(m, 0)
    hands = [d.hands[1] for _, d in sample_states(rec, 30, "fanned")]
    for h in hands:
        assert not Counter(taken) - Counter(h)
    assert len(set(hands)) > 10


# ------------------------------------------------------------------------------ over gRPC, a live match


@pytest.fixture(scope="module")
def referee():
    with EmbeddedReferee(allow_stacked_decks=True, default_time=TimeControl(per_move_ms=20000, grace_ms=2000,
                                                                            connect_ms=10000)) as ref:
        yield ref


def _truth(ref: EmbeddedReferee, match_id: str) -> Match:
    assert ref.service is not None
    return ref.service.sessions[match_id].match


class Prober(Bot):
    """Seat 0: at its fourth decision, checks the Search service against the truth, then plays greedy."""

    name = "prober"

    def __init__(self, ref: EmbeddedReferee, match_id: str, token: str, other_token: str) -> None:
        self.ref, self.match_id, self.token, self.other_token = ref, match_id, token, other_token
        self.decisions = 0
        self.checked = False
        self.greedy = PolicyBot("greedy", greedy_policy, seed=1)

    def decide(self, view: SeatView, legal, request: Request):  # type: ignore[no-untyped-def]
        self.decisions += 1
        if self.decisions == 4 and not self.checked:
            self.check(view, legal)
            self.checked = True
        return self.greedy.decide(view, legal, request)

    def check(self, view: SeatView, legal) -> None:  # type: ignore[no-untyped-def]
        m = _truth(self.ref, self.match_id)
        st = m.state
        assert st is not None
        truth_hands = copy.deepcopy(st.hands)
        truth_stock = list(st.stock)
        with grpc.insecure_channel(self.ref.address) as ch:
            stub = spb_grpc.SearchServiceStub(ch)
            cred = pb.SeatCredential(match_id=self.match_id, token=self.token)
            resp = stub.SampleDeals(spb.SampleDealsRequest(seat=cred, n=64, seed="probe"))
            assert len(resp.samples) == 64 and resp.seat == 0
            hidden = Counter(truth_hands[1]) - Counter(codec.cards_from_pb(resp.known[1].cards))
            opp = [Counter(codec.cards_from_pb(s.hands[1].cards)) for s in resp.samples]
            assert all(Counter(codec.cards_from_pb(s.hands[0].cards)) == Counter(truth_hands[0]) for s in resp.samples)
            assert sum(h == Counter(truth_hands[1]) for h in opp) == 0, "a sample is the true hidden hand"
            assert len({tuple(sorted(h.elements())) for h in opp}) == 64
            # the true hidden cards are no likelier in the sampled hand than any other unseen card
            unseen = Counter(truth_stock) + hidden
            rate = {c: sum(h[c] > 0 for h in opp) / 64 for c in unseen}
            true_rate = sum(rate[c] for c in hidden) / len(hidden)
            other = [rate[c] for c in unseen if c not in hidden]
            assert abs(true_rate - sum(other) / len(other)) < 0.15, (true_rate, sum(other) / len(other))
            assert [codec.cards_from_pb(s.stock) for s in resp.samples[:5]] != [tuple(truth_stock)] * 5
            # tokens: signed, opaque, without the match's seed or identity
            token = resp.samples[0].token
            assert token.startswith("rs2.")
            text = token.split(".", 2)[2]
            body = zlib.decompress(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))[:-16])
            assert SEED.encode() not in body and self.match_id.encode() not in body and self.token.encode() not in body
            # simulating never changes the live match
            first = codec.action_to_pb(legal[0])
            sim = stub.Simulate(spb.SimulateRequest(token=token, actions=[first],
                                                    rollout=spb.Rollout(policy=spb.ROLLOUT_POLICY_RANDOM), evaluate=True))
            assert sim.applied == 1 and sim.position.hand_over and len(sim.position.scores) == 2
            assert st.hands == truth_hands and st.stock == truth_stock and m.view(0) == view
            # an illegal action comes back with its reason code, nothing applied
            absent = next(c for c in unseen if c not in view.hand)
            bad = stub.Simulate(spb.SimulateRequest(token=token, actions=[codec.action_to_pb(Discard(absent))]))
            assert bad.applied == 0 and bad.HasField("rejected") and bad.rejected.code in ("WRONG_PHASE", "CARD_NOT_IN_HAND")
            # live legal actions are the decision's
            live = stub.LegalActions(spb.LegalActionsRequest(seat=cred))
            assert [codec.action_from_pb(a) for a in live.position.legal_actions] == list(legal)
            other = stub.LegalActions(spb.LegalActionsRequest(seat=pb.SeatCredential(match_id=self.match_id,
                                                                                     token=self.other_token)))
            assert not other.position.legal_actions and codec.view_from_pb(other.position.view).seat == 1
            self.refusals(stub, token, cred)
            self.no_token_plays(ch, token)

    def refusals(self, stub: spb_grpc.SearchServiceStub, token: str, cred: pb.SeatCredential) -> None:
        def code(call, request):  # type: ignore[no-untyped-def]
            with pytest.raises(grpc.RpcError) as err:
                call(request)
            reason = dict(err.value.trailing_metadata() or ()).get(REASON_KEY)
            return err.value.code(), reason

        for at in (10, 40):  # in the owner tag, in the body
            flipped = token[:at] + ("A" if token[at] != "A" else "B") + token[at + 1:]
            assert code(stub.Simulate, spb.SimulateRequest(token=flipped)) == (grpc.StatusCode.PERMISSION_DENIED,
                                                                              "BAD_SEARCH_TOKEN")
        foreign = TokenCodec(b"another server's key").seal(
            SearchState("indian", 0, copy.deepcopy(_truth(self.ref, self.match_id).state), 400))  # type: ignore[arg-type]
        assert code(stub.LegalActions, spb.LegalActionsRequest(token=foreign)) == (grpc.StatusCode.PERMISSION_DENIED,
                                                                                  "BAD_SEARCH_TOKEN")
        assert code(stub.Simulate, spb.SimulateRequest(token="hello")) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEARCH_TOKEN")
        wrong = pb.SeatCredential(match_id=cred.match_id, token="not-a-seat")
        assert code(stub.SampleDeals, spb.SampleDealsRequest(seat=wrong, n=1)) == (grpc.StatusCode.PERMISSION_DENIED,
                                                                                   "BAD_SEAT_TOKEN")
        nowhere = pb.SeatCredential(match_id="nope", token=cred.token)  # the same answer: it never says which part
        assert code(stub.SampleDeals, spb.SampleDealsRequest(seat=nowhere, n=1)) == (grpc.StatusCode.PERMISSION_DENIED,
                                                                                     "BAD_SEAT_TOKEN")
        assert code(stub.SampleDeals, spb.SampleDealsRequest(seat=cred, n=100000)) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                                                       "LIMIT_SAMPLES")

    def no_token_plays(self, ch: grpc.Channel, token: str) -> None:
        """A state token is no seat token: live matches never accept one."""
        stub = pb_grpc.RefereeServiceStub(ch)
        join = pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=self.match_id, token=token[:100])))
        with pytest.raises(grpc.RpcError) as err:
            list(stub.Play(iter([join])))
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_no_sample_token_or_simulation_reveals_a_live_matchs_hidden_cards(referee: EmbeddedReferee) -> None:
    """Checked from inside a live Indian match at seat 0's fourth decision (see ``Prober``)."""
    with grpc.insecure_channel(referee.address) as ch:
        m = pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
            variant="indian", seats=[pb.SeatSpec(name="prober"), pb.SeatSpec(name="greedy")], seed=SEED, max_hands=1))
    prober = Prober(referee, m.match_id, m.seat_tokens[0], m.seat_tokens[1])

    async def play() -> None:
        await asyncio.gather(run_bot(prober, referee.address, match_id=m.match_id, token=m.seat_tokens[0]),
                             run_bot(PolicyBot("greedy", greedy_policy, seed=2), referee.address, match_id=m.match_id,
                                     token=m.seat_tokens[1]))

    asyncio.run(play())
    if not prober.checked:
        pytest.fail(f"the hand ended after {prober.decisions} decisions of seat 0, before the probe")


def test_the_python_client_wraps_every_call(referee: EmbeddedReferee) -> None:
    """SampleDeals, Simulate (a greedy rollout to the end of the hand) and LegalActions through rummybot.search."""
    with grpc.insecure_channel(referee.address) as ch:
        m = pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
            variant="500-rum", seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")], seed="client", max_hands=1))
    with SearchClient(referee.address, token=m.seat_tokens[0]) as search:  # the dealer: seat 1 plays first
        samples = search.sample_deals(m.match_id, n=4, seed="s")
        assert len(samples) == 4 and samples.seat == 0 and samples.unseen_cards > 0
        pos = search.legal_actions(samples.samples[0].token)
        assert pos.to_act == 1 and pos.legal and pos.view is not None and pos.view.seat == 1
        sim = search.simulate(samples.samples[0].token, [pos.legal[0]], rollout="greedy", seed="r", events=True)
        assert sim.applied == 1 and sim.position.hand_over and sim.points and sim.events and sim.rollout
        assert search.legal_actions(match_id=m.match_id).legal == ()  # seat 1 is to act, not this seat


@pytest.mark.skipif(shutil.which("node") is None or not (ROOT / "clients/node/dist/src/search.js").exists(),
                    reason="the Node SDK is not built (bash clients/node/build.sh)")
def test_the_node_client_talks_to_the_real_service(referee: EmbeddedReferee) -> None:
    """The TypeScript SDK's Search wrapper against this referee: samples, a rollout, its points."""
    with grpc.insecure_channel(referee.address) as ch:
        m = pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
            variant="indian", seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")], seed="node", max_hands=1))
    script = f"""
const {{ Search, points }} = require({json.dumps(str(ROOT / "clients/node/dist/src"))});
(async () => {{
  const search = new Search({json.dumps(referee.address)}, {json.dumps(m.seat_tokens[0])});
  const res = await search.sampleDeals({json.dumps(m.match_id)}, 3, "node");
  const sim = await search.simulate(res.samples[0].token, [], {{ rollout: "greedy", evaluate: true }});
  console.log(JSON.stringify({{ n: res.samples.length, over: sim.position.hand_over, points: points(sim) }}));
  search.close();
}})().catch((e) => {{ console.error(e); process.exit(1); }});
"""
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["n"] == 3 and out["over"] and len(out["points"]) == 2
