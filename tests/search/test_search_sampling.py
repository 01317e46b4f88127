"""Sampled deals never contradict what the seat knows: random histories in every variant (hypothesis)."""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import fields, make_dataclass

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from referee.rules.cards import Rank
from referee.rules.match import Match, MatchConfig
from referee.rules.variants import all_variants, find
from referee.rules.variants.base import Drop, Event, HandState
from referee.search import public_state, sample_states, seat_record
from referee.search.errors import NotSearchable
from referee.search.knowledge import PUBLIC_FIELDS, REBUILT_FIELDS, public_fields
from referee.tools.testing import zone_cards

VARIANTS = [v.name for v in all_variants()]
STEPS = {"500-rum": 120, "500-partnership": 120, "persian": 120, "skarney": 150, "skarney-singles": 150}  # slow finders


def random_history(variant: str, seats: int, seed: int, steps: int, options: dict[str, str] | None = None) -> Match:
    """A match of one hand after ``steps`` random legal moves (never a drop, so hands last)."""
    m = Match(MatchConfig(variant=variant, seats=seats, seed=f"hist{seed}", max_hands=1, options=options or {},
                          max_turns_per_hand=2000))
    rng = random.Random(seed)
    for _ in range(steps):
        d = m.pending()
        if d is None:
            break
        legal = m.legal_actions(d.seat)
        m.submit(d.seat, rng.choice([a for a in legal if not isinstance(a, Drop)] or legal))
    return m


def publicly_held(events: tuple[Event, ...], seat: int, seats: int) -> list[Counter]:
    """An oracle written apart from the sampler, conservative: cards ``seat`` saw go into another hand face up
    (taken from a pile, accepted, passed by it, a wild taken back) and has not seen leave."""
    held = [Counter() for _ in range(seats)]
    for e in events:
        o = e.seat
        if o is None or o == seat:
            continue
        if e.kind in ("TOOK_DISCARDS", "ACCEPTED", "OFFER_KEPT", "PICKED_UP"):
            held[o].update(e.cards)
        elif e.kind == "EXCHANGED_WILD":
            held[o] -= Counter(e.cards[:1])
            held[o].update(e.cards[1:])
        elif e.kind in ("DISCARDED", "MELDED", "LAID_OFF", "OFFERED", "ACES_PLACED"):
            held[o] -= Counter(e.cards)
        elif e.kind in ("PASSED", "DECLARED"):
            held[o] = Counter() if not e.cards or e.kind == "DECLARED" else held[o] - Counter(e.cards)
    return held


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_samples_never_contradict_the_view(variant: str, data: st.DataObject) -> None:
    """Own hand, table, pile, sizes, notes and known cards as the seat knows them; every card once; playable."""
    v = find(variant)
    seats = data.draw(st.integers(v.min_seats, v.max_seats), label="seats")
    seed = data.draw(st.integers(0, 10**6), label="seed")
    steps = data.draw(st.integers(0, STEPS.get(variant, 300)), label="steps")
    options = {"restock": data.draw(st.sampled_from(["turn-over", "shuffle"]))} if variant in ("fortune", "arlington") else {}
    m = random_history(variant, seats, seed, steps, options)
    assume(m.pending() is not None)
    seat = data.draw(st.integers(0, seats - 1), label="seat")
    truth = m.state
    assert truth is not None
    record = seat_record(m, seat)
    held = publicly_held(record.events, seat, seats)
    started = {e.seat for e in record.events if e.kind in ("DREW_STOCK", "PICKED_UP", "ACES_PLACED")}
    for o in range(seats):
        assert not held[o] - Counter(truth.hands[o]), "the oracle itself is wrong"
    for n, (ss, deal) in enumerate(sample_states(record, 3, f"prop{seed}")):
        s = ss.state
        assert v.observe(s, seat) == m.view(seat), "the sample shows the seat something else than its view"
        assert zone_cards(s) == zone_cards(truth), "a card is duplicated or missing"
        assert public_fields(s) == public_fields(truth)
        assert s.discards == truth.discards and s.melds == truth.melds and s.face_up == truth.face_up
        assert [len(h) for h in s.hands] == [len(h) for h in truth.hands] and len(s.stock) == len(truth.stock)
        assert list(deal.hands[seat]) == list(truth.hands[seat])
        for o in range(seats):
            assert not held[o] - Counter(s.hands[o]), f"a card seat {o} is known to hold is elsewhere"
        for (c, who), (tc, twho) in zip(s.face_down, truth.face_down, strict=True):
            assert who == twho and (seat not in who or c == tc)
        if variant == "iceberg":  # ICE-2: a seat that has begun a turn holds no ace
            for o in started - {seat}:
                assert not any(c.rank is Rank.ACE for c in s.hands[o])
        assert s.seed != truth.seed and s.seed.startswith("rummy-search:")
        d = v.decision(s)
        assert d is not None
        legal = v.legal_actions(s, d.seat)
        assert legal, "no legal action in the sample"
        v.apply(copy.deepcopy(s), d.seat, legal[n % len(legal)])


def test_every_hand_state_field_is_classified() -> None:
    """A new field in any variant's hand state stops the sampler until someone says whether it is public."""
    for v in all_variants():
        m = Match(MatchConfig(variant=v.name, seats=v.min_seats, seed="fields"))
        assert m.state is not None
        names = {f.name for f in fields(m.state)}
        assert names <= PUBLIC_FIELDS | REBUILT_FIELDS, (v.name, names - PUBLIC_FIELDS - REBUILT_FIELDS)


def test_an_unclassified_field_is_refused() -> None:
    """Fail closed: a state with a field the table does not know is not sampled."""
    # a hand state with one more field (built beside HandState: the rules core may be compiled, and a compiled
    # class takes no interpreted subclass)
    Odd = make_dataclass("Odd", [(f.name, object) for f in fields(HandState)] + [("secret_card", object, None)])

    m = Match(MatchConfig(variant="indian", seats=2, seed="odd"))
    assert m.state is not None
    odd = Odd(**{f.name: getattr(m.state, f.name) for f in fields(HandState)})
    with pytest.raises(NotSearchable, match="UNKNOWN_STATE_FIELD"):
        public_state(odd, 0)


def test_the_public_state_holds_no_hidden_card() -> None:
    """Other hands, the stock and face-down cards others know are not even copied."""
    m = random_history("iceberg", 3, 5, 20)
    assert m.state is not None
    p = public_state(m.state, 0)
    assert p.hands[1:] == [[], []] and p.stock == [] and p.face_down == [] and p.seed == ""
    assert m.state.stock and m.state.hands[1]  # the truth is untouched
