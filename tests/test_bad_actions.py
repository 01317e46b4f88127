"""Bad input at any point of any variant gets a typed error naming the rule, never a crash, and leaves the
state as it was (the seat may try again)."""

from __future__ import annotations

import copy
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.cards import SUITS, Card, Rank, shuffled
from referee.rules.errors import IllegalAction, InvalidAction
from referee.rules.variants import all_variants
from referee.rules.variants.base import (
    AcceptOffer,
    Declare,
    DeclineOffer,
    Discard,
    DrawStock,
    Drop,
    EndTurn,
    ExchangeWild,
    Group,
    LayOff,
    Meld,
    Offer,
    Table,
    TakeDiscards,
    default_teams,
)
from referee.tools.testing import zone_cards

CLAUSE = re.compile(r"\b[A-Z]{2,4}-[0-9]+\b")
cards = st.builds(Card, st.sampled_from([r for r in Rank if r is not Rank.JOKER]), st.sampled_from(SUITS))
groups = st.builds(Group, st.lists(cards, min_size=0, max_size=5).map(tuple))
garbage = st.one_of(
    st.just(DrawStock()), st.just(Drop()), st.just(EndTurn()), st.just(AcceptOffer()), st.just(DeclineOffer()),
    st.builds(Discard, cards), st.builds(Offer, cards),
    st.builds(TakeDiscards, st.integers(0, 60), st.none() | groups, st.none() | st.integers(0, 9)),
    st.builds(Meld, st.lists(groups, min_size=0, max_size=3).map(tuple)),
    st.builds(LayOff, st.integers(0, 9), st.lists(cards, max_size=3).map(tuple)),
    st.builds(ExchangeWild, st.integers(0, 9), cards, cards),
    st.builds(Declare, st.lists(groups, max_size=5).map(tuple), st.none() | cards),
)


def snapshot(state):
    return (copy.deepcopy(state.hands), list(state.stock), list(state.discards), zone_cards(state), state.turn,
            state.phase, [(m.id, m.cards) for m in state.melds])


@pytest.mark.parametrize("name", [v.name for v in all_variants()])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), steps=st.integers(0, 40), action=garbage)
def test_any_action_at_any_point_is_applied_or_refused_with_a_rule(name, seed, steps, action):
    v = next(x for x in all_variants() if x.name == name)
    seats = 4 if v.team_play else v.min_seats
    rules = v.configure({}, seats)
    teams = default_teams(v.team_play, seats)
    state = v.new_hand(rules, Table(seats, 0, 1, teams, (True,) * seats, (0,) * seats),
                       shuffled(v.deck(rules, seats), seed), f"bad:{seed}")
    rng = random.Random(seed)
    for _ in range(steps):
        d = v.decision(state)
        if d is None:
            return
        v.apply(state, d.seat, rng.choice(v.legal_actions(state, d.seat)))
    d = v.decision(state)
    if d is None:
        return
    for seat in {d.seat, (d.seat + 1) % seats}:
        before = snapshot(state)
        probe = copy.deepcopy(state)
        try:
            v.apply(probe, seat, action)
        except (IllegalAction, InvalidAction) as exc:
            assert re.fullmatch(r"[A-Z][A-Z0-9_]+", exc.code), exc.code
            assert CLAUSE.search(exc.message), f"{name}: {exc.code}: {exc.message!r} names no rule"
            assert snapshot(probe) == before, f"{name}: a refused {action} changed the state"
        else:
            assert seat == d.seat, f"{name}: seat {seat} acted out of turn with {action}"
            assert zone_cards(probe) == zone_cards(state), f"{name}: {action} made cards appear or vanish"

