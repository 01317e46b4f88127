"""The PettingZoo AEC env passes PettingZoo's api_test for every variant and seat count; rewards are the variant's
scores; the Gymnasium wrapper plays the other seats with the bundled bots or any callable."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

import rummy_env
from referee.rules.errors import InvalidOption
from rummy_env.gym_env import RummyGymEnv, id_policy
from rummy_env.observation import observation_tensor
from tests.envs.helpers import SEATINGS


@pytest.mark.parametrize(("variant", "seats"), SEATINGS)
def test_api_test_passes(variant: str, seats: int) -> None:
    env = rummy_env.make(variant, num_players=seats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it advises a Box observation; ours is the usual {"observation", "action_mask"}
        api_test(env, num_cycles=8, verbose_progress=False)


def _play(env, rng: random.Random) -> dict[str, float]:  # type: ignore[no-untyped-def]
    got = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter(max_iter=100_000):
        obs, reward, term, trunc, _ = env.last()
        got[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
    return got


@pytest.mark.parametrize(("variant", "seats", "options"), [
    ("fortune", 4, {"max_set": "unlimited"}), ("indian", 3, {}), ("500-rum", 2, {"jokers": "2"}),
    ("skarney-singles", 3, {}), ("iceberg", 2, {}),
])
def test_rewards_are_the_variants_scores(variant: str, seats: int, options: dict[str, str]) -> None:
    env = rummy_env.make(variant, num_players=seats, max_hands=2, known_cards=False, **options)
    env.reset(seed=3)
    game = env.game
    got = _play(env, random.Random(3))
    sign = -1 if game.lower_is_better else 1
    totals = game.match.outcome.totals
    assert [got[a] for a in env.possible_agents] == [sign * t for t in totals]
    assert game.match.game.hands_played >= 1


def test_rank_rewards_pay_the_ranking_once_at_the_end() -> None:
    env = rummy_env.make("arlington", num_players=3, reward="rank", known_cards=False)
    env.reset(seed=5)
    game = env.game
    got = _play(env, random.Random(5))
    ranking = game.match.outcome.ranking
    first, last = ranking[0][0], ranking[-1][0]
    assert got[f"player_{first}"] == 1.0 and got[f"player_{last}"] == -1.0


def test_a_live_agent_sees_its_mask_and_others_see_none() -> None:
    env = rummy_env.make("fortune", num_players=3)
    env.reset(seed=1)
    me = env.agent_selection
    assert env.observe(me)["action_mask"].sum() > 0
    for other in env.agents:
        if other != me:
            assert env.observe(other)["action_mask"].sum() == 0
    assert env.legal_id_strings() == ["DRAW_STOCK", *[s for s in env.legal_id_strings() if s != "DRAW_STOCK"]]
    assert "draw stock" in env.legal_action_strings()
    assert env.observation_string(me).splitlines()[0].startswith("fortune seat")
    assert "history:" in env.information_state_string(me)


def test_bad_options_and_seats_are_refused_typed() -> None:
    with pytest.raises(InvalidOption) as bad:
        rummy_env.make("fortune", num_players=4, max_set="seven")
    assert bad.value.code == "BAD_OPTION_VALUE"
    with pytest.raises(InvalidOption) as seats:
        rummy_env.make("skarney", num_players=3)
    assert seats.value.code == "BAD_SEAT_COUNT"
    with pytest.raises(InvalidOption):
        rummy_env.make("no-such-game")


@pytest.mark.parametrize("opponents", ["random", "greedy"])
def test_gym_wrapper_plays_the_other_seats(opponents: str) -> None:
    env = RummyGymEnv("arlington", num_players=3, seat=1, opponents=opponents)
    obs, _ = env.reset(seed=2)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(2)
    total, done, steps = 0.0, False, 0
    while not done:
        assert env.game.current_seat == 1
        obs, reward, done, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        total += reward
        steps += 1
    assert total == env.game.match.outcome.totals[1]
    assert steps > 5


def test_gym_wrapper_takes_a_callable_over_ids() -> None:
    seen = []

    def first_legal(observation: np.ndarray, mask: np.ndarray) -> int:
        seen.append(observation.shape)
        return int(np.flatnonzero(mask)[0])

    env = RummyGymEnv("500-rum", num_players=2, opponents=id_policy(first_legal))
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert seen and all(s == obs["observation"].shape for s in seen)


def test_batch_env_steps_many_games_and_restarts_the_finished() -> None:
    from rummy_env.vector import BatchEnv

    env = BatchEnv("iceberg", num_envs=4, num_players=2, known_cards=False)
    obs, mask, seat = env.reset()
    assert obs.shape == (4, env.layout.size) and mask.shape == (4, env.layout.space.size)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(300):
        ids = env.random_ids(rng)
        assert all(mask[b, ids[b]] == 1 for b in range(4))
        obs, mask, seat, rewards, dones = env.step(ids)
        finished += int(dones.sum())
        assert all(mask[b].sum() > 0 for b in range(4))  # a finished game started afresh
        for b, g in enumerate(env.games):  # each row is that game's own tensor and mask, as one env makes them
            assert seat[b] == g.current_seat
            np.testing.assert_array_equal(obs[b], observation_tensor(g.view(g.current_seat), [], g.chooser().prefix))
            np.testing.assert_array_equal(mask[b], g.mask())
    assert finished >= 1


def test_batched_over_processes_plays_the_very_games_of_one_process() -> None:
    """Two workers step their halves of the batch in shared memory: the arrays are the ones a single ``BatchEnv``
    with the same seeds writes, step by step, and a bad id is the worker's error, told to the caller."""
    from rummy_env.vector import BatchEnv, ProcessBatchEnv, WorkerError

    here = [BatchEnv("fortune", num_envs=2, num_players=2, seed_prefix=f"batch{w}") for w in range(2)]
    rng = np.random.default_rng(1)
    with ProcessBatchEnv("fortune", num_envs=4, num_players=2, workers=2) as env:
        obs, mask, seat = env.reset()
        for h in here:
            h.reset()
        finished = 0
        for _ in range(150):
            ids = env.random_ids(rng)
            obs, mask, seat, rewards, dones = env.step(ids)
            for w, h in enumerate(here):
                h.step(ids[2 * w:2 * w + 2])
                part = slice(2 * w, 2 * w + 2)
                np.testing.assert_array_equal(obs[part], h.obs)
                np.testing.assert_array_equal(mask[part], h.mask)
                np.testing.assert_array_equal(rewards[part], h.rewards)
                np.testing.assert_array_equal(dones[part], h.dones)
            finished += int(dones.sum())
        refused = np.flatnonzero(mask[0] == 0)[0]
        with pytest.raises(WorkerError, match="not allowed"):
            env.step([refused, *env.random_ids(rng)[1:]])
    assert finished >= 1
