"""Every variant is an OpenSpiel Python game: OpenSpiel's own random simulation test (with serialization) passes on
all nine, the deal is chance nodes, and OpenSpiel's IS-MCTS plays a hand with the search service's resampling."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from rummy_env.openspiel_game import game_name, register_all  # noqa: E402
from tests.envs.helpers import VARIANTS  # noqa: E402

SEATS = {"indian": 3, "500-rum": 2, "500-partnership": 4, "persian": 4, "fortune": 3, "arlington": 2, "skarney": 4,
         "skarney-singles": 2, "iceberg": 2}


def test_every_variant_is_registered() -> None:
    names = register_all()
    assert names == [game_name(v) for v in VARIANTS]
    assert "python_rummy_indian" in names and "python_rummy_500_rum" in names
    registered = set(pyspiel.registered_names())
    assert set(names) <= registered


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_sim_test_with_serialization(variant: str) -> None:
    # a short turn cap keeps the hands short (a capped hand ends and is scored, as in a match)
    game = pyspiel.load_game(game_name(variant), {"players": SEATS[variant], "max_turns": 24})
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_options_are_game_parameters_and_survive_the_game_string() -> None:
    game = pyspiel.load_game("python_rummy_fortune", {"players": 3, "max_set": "unlimited", "restock": "shuffle"})
    again = pyspiel.load_game(str(game))
    assert again.get_parameters()["max_set"] == "unlimited"
    four = pyspiel.load_game("python_rummy_fortune", {"players": 2, "max_set": "n4"})
    assert "max_set=n4" in str(four)
    with pytest.raises(Exception, match="max_set"):
        pyspiel.load_game("python_rummy_fortune", {"max_set": "seven"})


def test_the_deal_is_chance_nodes_over_the_cards_left() -> None:
    game = pyspiel.load_game("python_rummy_500_rum", {"players": 2})
    state = game.new_initial_state()
    assert state.is_chance_node()
    outcomes = dict(state.chance_outcomes())
    assert len(outcomes) == 52 and abs(sum(outcomes.values()) - 1) < 1e-9
    dealt = 0
    while state.is_chance_node():
        state.apply_action(min(a for a, _ in state.chance_outcomes()))  # a stacked deck: spades A..K first
        dealt += 1
    assert dealt == 52 and state.current_player() == 1  # the dealer's left opens (COM-4)
    obs = np.array(state.observation_tensor(1))
    assert obs.shape == tuple(game.observation_tensor_shape())
    assert "hand:" in state.observation_string(1) and "history:" in state.information_state_string(1)


def _deal(state, rng):  # type: ignore[no-untyped-def]
    while state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(actions, p=probs)))


def test_resampling_keeps_what_the_player_knows() -> None:
    game = pyspiel.load_game("python_rummy_arlington", {"players": 3})
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    _deal(state, rng)
    for _ in range(40):
        state.apply_action(int(rng.choice(state.legal_actions())))
    p = state.current_player()
    differs = 0
    for _ in range(3):
        other = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(7, 0.0, 1.0))
        assert other.observation_string(p) == state.observation_string(p)
        assert other.information_state_string(p) == state.information_state_string(p)
        assert other.legal_actions() == state.legal_actions()
        differs += other.observation_string((p + 1) % 3) != state.observation_string((p + 1) % 3)
    assert differs  # the other hands were dealt afresh


@pytest.mark.parametrize("variant", ["iceberg", "fortune"])
def test_a_resample_in_the_middle_of_a_compound_move_keeps_its_steps(variant: str) -> None:
    """A meld spelled id by id is part of what the player knows: a resample keeps the steps taken so far (it lost
    them when the copy's record changed before they were read: ISMCTS then found another information state)."""
    game = pyspiel.load_game(game_name(variant), {"players": 2, "max_turns": 40})
    rng = np.random.default_rng(3)
    mid_move = 0
    for _ in range(6):
        state = game.new_initial_state()
        _deal(state, rng)
        for _ in range(60):
            if state.is_terminal():
                break
            p = state.current_player()
            mid_move += "move so far: " in state.information_state_string(p)
            other = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(int(rng.integers(1 << 30)),
                                                                                          0.0, 1.0))
            assert other.information_state_string(p) == state.information_state_string(p)
            assert other.legal_actions() == state.legal_actions()
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert mid_move  # the case was reached


def test_ismcts_plays_a_hand_of_iceberg() -> None:
    game = pyspiel.load_game("python_rummy_iceberg", {"players": 2, "max_turns": 40})
    rng = np.random.RandomState(1)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=6, random_state=rng,
                           allow_inconsistent_action_sets=True)
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            searched += 1
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert searched >= 2
    assert len(state.returns()) == 2
