"""The observation's memo (the table melds' entries kept from step to step, ``RummyGame.memo``) never changes a
tensor: at every step of random games of every variant, each seat's tensor built with its kept memo equals the
tensor built from scratch, through new melds, lay-offs, exchanges, taken melds and new hands."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rummy_env.game import RummyGame
from rummy_env.observation import observation_tensor
from tests.envs.helpers import VARIANTS, seat_counts


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_kept_memo_gives_the_tensor_built_afresh(variant: str) -> None:
    seats = seat_counts(variant)
    for n in (seats[0], seats[-1]):
        rng = random.Random(n)
        g = RummyGame(variant, n, seed=f"memo:{n}", max_hands=2)
        drop = g.space.id("DROP")
        melds_seen = 0
        for _ in range(400):
            if g.over:
                break
            for s in range(n):
                view = g.view(s)
                known = g.known_cards(s)
                prefix = g.chooser().prefix if g.current_seat == s else []
                kept = observation_tensor(view, known, prefix, memo=g.memo(s))
                assert np.array_equal(kept, observation_tensor(view, known, prefix)), (variant, n, s)
                melds_seen = max(melds_seen, len(view.melds))
            ids = g.legal_ids()
            g.step(rng.choice([i for i in ids if i != drop] or ids))
        assert melds_seen > 0 or variant == "indian"  # (Indian melds only in its declaration)


@pytest.mark.parametrize("variant", ["500-rum", "persian", "skarney", "iceberg"])
def test_a_batch_row_is_the_tensor_built_afresh(variant: str) -> None:
    """BatchEnv starts each row from the seat's kept melds tensor and writes the rest over it: every row, at every
    step, equals the acting seat's tensor built from scratch (a row never keeps another seat's or game's melds)."""
    from rummy_env.vector import BatchEnv

    n = seat_counts(variant)[0]
    env = BatchEnv(variant, 3, n, seed=7)
    env.reset()
    rng = np.random.default_rng(7)
    for _ in range(250):
        for b, g in enumerate(env.games):
            s = g.current_seat
            expected = observation_tensor(g.view(s), g.known_cards(s), g.chooser().prefix)
            assert np.array_equal(env.obs[b], expected), (variant, b)
        env.step(env.random_ids(rng))
