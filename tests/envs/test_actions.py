"""The fixed action space: every legal action of the rules core is exactly one id sequence, and back."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.variants.base import Discard, DrawStock
from rummy_env.actions import CARDS, SINGLE, ActionCodeError, action_space, card_index
from tests.envs.helpers import VARIANTS, option_choices, reach, seat_counts, spellings


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_id_has_one_name_and_back(variant: str) -> None:
    space = action_space(variant)
    names = space.names
    assert len(set(names)) == space.size  # no two ids share a name
    for i in range(space.size):
        kind, k = space.split(i)
        assert space.id(kind, k) == i
    assert [space.id(s) for s in SINGLE] == list(range(len(SINGLE)))
    assert all(card_index(c) == i for i, c in enumerate(CARDS))


def test_the_space_is_sized_by_the_variants_largest_deck() -> None:
    # Arlington: two packs and its optional joker (ARL-7) is 105 cards; Indian's six seats use two packs and jokers
    assert action_space("arlington").max_pile == 105
    assert action_space("500-partnership").max_pile == 54  # one pack and up to two jokers (FH-12)
    assert action_space("oklahoma") is action_space("arlington")


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mask_walks_spell_exactly_the_legal_actions(variant: str, data: st.DataObject) -> None:
    seats = data.draw(st.sampled_from(seat_counts(variant)), label="seats")
    seed = data.draw(st.integers(0, 10_000), label="seed")
    steps = data.draw(st.integers(0, 250), label="steps")
    options = option_choices(variant, random.Random(seed))
    g = reach(variant, seats, seed, steps, options)
    if g.over:
        return
    ch = g.chooser()
    legal = g.match.legal_actions(g.current_seat)
    walked = spellings(ch)
    assert len(legal) == len(set(legal))  # the rules core lists each action once (the chooser takes them as listed)
    # one to one: as many whole spellings as legal actions, each decoding to its own action
    assert len(walked) == len(set(walked)) == len(legal)
    decoded = []
    for seq in walked:
        c = copy.copy(ch)
        c.prefix = []
        got = [c.step(i) for i in seq]
        assert all(x is None for x in got[:-1]) and got[-1] is not None
        decoded.append(got[-1])
    assert set(decoded) == set(legal)
    # and applying the ids applies that action: the same views for every seat as submitting it directly
    seq = walked[data.draw(st.integers(0, len(walked) - 1), label="which")]
    direct = copy.deepcopy(g)
    action = direct.chooser().actions[direct.chooser().spelled.index(seq)]
    direct.submit(action)
    for i in seq:
        result = g.step(i)
    assert result.action == action
    for s in range(seats):
        if not g.over:
            assert g.view(s) == direct.view(s)
    assert g.match.game.totals == direct.match.game.totals


def test_an_id_the_mask_refuses_changes_nothing() -> None:
    g = reach("fortune", 3, seed=4, steps=0)
    mask = g.mask()
    refused = int(np.flatnonzero(mask == 0)[0])
    before = g.view(g.current_seat)
    with pytest.raises(ActionCodeError):
        g.step(refused)
    with pytest.raises(ActionCodeError):
        g.step(10_000)
    assert g.view(g.current_seat) == before and g.chooser().prefix == []


def test_simple_moves_are_one_id() -> None:
    g = reach("fortune", 2, seed=1, steps=0)
    space = g.space
    assert g.chooser().ids_of(DrawStock()) == (space.id("DRAW_STOCK"),)
    g.step(space.id("DRAW_STOCK"))
    card = g.view(g.current_seat).hand[0]
    assert g.chooser().ids_of(Discard(card)) == (space.id("DISCARD", card_index(card)),)


def test_a_meld_is_picked_card_by_card_then_committed() -> None:
    """Walk games until a seat may meld: MELD, then PICK ids ascending, then COMMIT lays exactly that meld."""
    for seed in range(40):
        g = reach("arlington", 2, seed=seed, steps=0, max_hands=1)
        rng = random.Random(seed)
        while not g.over:
            ch = g.chooser()
            melds = [(a, s) for a, s in zip(ch.actions, ch.spelled, strict=True) if type(a).__name__ == "Meld"]
            if melds:
                action, seq = melds[0]
                space = g.space
                assert seq[0] == space.id("MELD") and seq[-1] == space.id("COMMIT")
                picks = [space.split(i)[1] for i in seq[1:-1] if space.split(i)[0] == "PICK"]
                assert picks == sorted(picks)
                for i in seq[:-1]:
                    assert g.mask()[i] == 1
                    assert g.step(i).action is None
                assert g.mask().sum() >= 1 and g.mask()[space.id("COMMIT")] == 1
                melds_before = len(g.view(0).melds)
                assert g.step(space.id("COMMIT")).action == action
                assert len(g.view(0).melds) == melds_before + len(action.groups)
                return
            g.step(rng.choice(g.legal_ids()))
    pytest.fail("no meld in 40 games")
