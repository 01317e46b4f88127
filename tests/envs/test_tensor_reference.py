"""The observation tensor's fast builder gives exactly the tensor of the builder it replaced (kept word for word in
tests/envs/reference_tensor.py) on random reachable states of every variant at every seat count, for every seat:
the acting one with a compound move part taken, the others, with and without the seat's kept memo, the known
cards of other hands included; and batched at an offset as singly."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rummy_env.game import RummyGame
from rummy_env.observation import as_positions, as_values, layout, observation_entries, observation_tensor
from tests.envs.helpers import SEATINGS, option_choices
from tests.envs.reference_tensor import reference_tensor


@pytest.mark.parametrize(("variant", "seats"), SEATINGS)
def test_the_fast_tensor_is_the_reference_tensor(variant: str, seats: int) -> None:
    checked = opened = 0
    for game in range(2):
        rng = random.Random(f"{variant}:{seats}:{game}")
        g = RummyGame(variant, seats, option_choices(variant, rng) if game else {}, seed=f"ref:{seats}:{game}",
                      max_hands=2)
        drop = g.space.id("DROP")
        for _ in range(300):
            if g.over:
                break
            for s in range(seats):
                view = g.view(s)
                known = g.known_cards(s)
                prefix = g.chooser().prefix if g.current_seat == s else []
                expected = reference_tensor(view, known, prefix)
                assert np.array_equal(observation_tensor(view, known, prefix, memo=g.memo(s)), expected), (s, view)
                assert np.array_equal(observation_tensor(view, known, prefix), expected)
                opened += len(prefix) > 1
                checked += 1
            ids = g.legal_ids()
            g.step(rng.choice([i for i in ids if i != drop] or ids))
    assert checked > 200
    assert opened > 0 or variant in ("indian",)  # compound moves with cards picked were observed


def test_entries_at_an_offset_are_the_tensor_shifted() -> None:
    g = RummyGame("500-rum", 3, seed="offset", max_hands=1)
    rng = random.Random(3)
    for _ in range(80):
        g.step(rng.choice(g.legal_ids()))
    s = g.current_seat
    size = layout("500-rum", 3).size
    idx, val = observation_entries(g.view(s), g.known_cards(s), g.chooser().prefix, offset=size)
    both = np.zeros(2 * size, np.float32)
    both[as_positions(idx)] = as_values(val)
    assert not both[:size].any()
    assert np.array_equal(both[size:], reference_tensor(g.view(s), g.known_cards(s), g.chooser().prefix))
