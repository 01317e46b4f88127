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

OPENERS = {"MELD", "DECLARE", "TAKE_MELD", "TAKE_LAYOFF", "LAYOFF", "EXCHANGE"}  # ids that open a compound move


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


@pytest.mark.parametrize("variant", VARIANTS)
def test_within_a_compound_move_the_kept_tensor_plus_the_move_is_the_tensor_built_afresh(variant: str) -> None:
    """``RummyGame.observation`` keeps the acting seat's tensor of a decision's first step and writes only the
    move's entries over a copy at its further steps: at every step of random games, every seat's observation equals
    the tensor built from scratch, with and without known cards, and the kept one is never handed out to be changed."""
    n = seat_counts(variant)[-1]
    rng = random.Random(3)
    g = RummyGame(variant, n, seed="moves", max_hands=2)
    drop = g.space.id("DROP")
    further_steps = 0
    for _ in range(500):
        if g.over:
            break
        to_act = g.current_seat
        for s in range(n):
            for known in (True, False):
                got = g.observation(s, known)
                prefix = g.chooser().prefix if s == to_act else []
                expected = observation_tensor(g.view(s), g.known_cards(s) if known else [], prefix)
                assert np.array_equal(got["observation"], expected), (variant, s, known, prefix)
                assert got["action_mask"].any() == (s == to_act)
                got["observation"][:] = -1.0  # a learner may write over what it was given
        further_steps += bool(g.chooser().prefix)
        ids = [i for i in g.legal_ids() if i != drop]
        opening = [i for i in ids if g.space.split(i)[0] in OPENERS]
        g.step(rng.choice(opening if opening and rng.random() < 0.5 else ids))
    assert further_steps > 0 or variant == "indian"  # (Indian melds only in its declaration)
