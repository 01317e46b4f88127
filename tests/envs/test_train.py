"""Train, then play: a policy learned from the greedy bot's ids, saved, loaded, and played over gRPC as a bot.

The smoke version: a few greedy games, one epoch, a two-deal tournament against the random bot. It checks the
pipeline (every move the trained bot sends is legal, it never forfeits, the tournament rates it), not strength:
the full run (``python -m rummy_env.train --minutes 10 --tournament 100``) is on demand."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from rummy_env.game import RummyGame
from rummy_env.train import MlpPolicy, collect, fit, tournament


def test_examples_are_the_greedy_bots_ids_under_their_masks() -> None:
    x, m, y = collect("fortune", 2, games=2, seed=3, max_examples=400)
    assert len(x) == len(m) == len(y) > 50
    assert all(m[i, y[i]] for i in range(len(y)))  # the id taken was allowed
    assert x.shape[1] == MlpPolicy.new("fortune", 2).w1.shape[0]


def test_fitting_lowers_the_loss_and_a_saved_policy_loads_the_same(tmp_path: Path) -> None:
    x, m, y = collect("fortune", 2, games=3, seed=1, max_examples=1500)
    policy = MlpPolicy.new("fortune", 2, hidden=32)
    losses = fit(policy, x, m, y, epochs=3, batch=128)
    assert losses[-1] < losses[0]
    policy.save(tmp_path / "p.npz")
    back = MlpPolicy.load(tmp_path / "p.npz")
    assert back.variant == "fortune" and back.seats == 2
    obs, mask = x[0].astype(np.float32), m[0].astype(np.float32)
    assert back.act(obs, mask) == policy.act(obs, mask)


def test_the_policy_only_ever_chooses_a_legal_action() -> None:
    policy = MlpPolicy.new("arlington", 2, hidden=16, seed=5)  # untrained: its choices are anywhere in the mask
    rng = random.Random(0)
    g = RummyGame("arlington", 2, seed="legal", max_hands=1)
    moves = 0
    while not g.over and moves < 200:
        legal = g.chooser().actions
        action = policy.choose(g.view(g.current_seat), legal, rng)
        assert action in legal
        g.submit(action)
        moves += 1
    assert moves > 20


@pytest.mark.timeout(120)
def test_a_trained_bot_plays_a_tournament_over_grpc(tmp_path: Path) -> None:
    x, m, y = collect("fortune", 2, games=4, seed=0, max_examples=2000)
    policy = MlpPolicy.new("fortune", 2, hidden=32)
    fit(policy, x, m, y, epochs=2)
    policy.save(tmp_path / "p.npz")
    result = tournament(tmp_path / "p.npz", "fortune", 2, deals=2, output=tmp_path / "t")
    assert result["games"] == 4  # two deals, each at both seat rotations
    assert result["trained_forfeits"] == 0 and result["trained_faults"] == 0
    assert (tmp_path / "t" / "bots" / "trained-0.log").exists()
