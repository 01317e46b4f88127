"""The Gymnasium wrapper's opponents as bot processes over gRPC (rummy_env.hosted): an embedded referee hosts the
match, the Python SDK's greedy bot plays its seats as in a tournament, and close() ends the processes.

The strongest check that the bot plays the very game the env steps: with the same seed and the same (deterministic)
learner, a match against the SDK's greedy bot over gRPC is move for move the match against the bundled greedy
policy in process (the bot decides from the view and legal actions the referee sends its seat alone)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from rummy.referee.v1 import referee_pb2 as pb
from rummy_env.actions import ActionCodeError
from rummy_env.gym_env import GrpcBot, RummyGymEnv, id_policy
from rummy_env.hosted import HostError

GREEDY = GrpcBot(("python", "-m", "rummybot.bots.greedy"), name="greedy")


def _last_allowed(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[-1])


def _episodes(env: RummyGymEnv, seeds: list[int]) -> list[tuple[list[int], list[float], list[int]]]:
    """Each episode's learner ids, rewards and final totals, the learner taking the last id its mask allows."""
    out = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        ids, rewards, done = [], [], False
        while not done:
            assert env.observation_space.contains(obs)
            a = _last_allowed(obs["observation"], obs["action_mask"])
            obs, reward, done, truncated, _ = env.step(a)
            assert not truncated
            ids.append(a)
            rewards.append(reward)
        assert not obs["action_mask"].any()
        out.append((ids, rewards, list(env.game.match.game.totals)))
    return out


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(("variant", "seats"), [("fortune", 3), ("indian", 2)])
def test_sdk_bots_over_grpc_play_the_game_the_bundled_greedy_plays(variant: str, seats: int) -> None:
    local = RummyGymEnv(variant, num_players=seats, opponents="greedy")
    hosted = RummyGymEnv(variant, num_players=seats, opponents=GREEDY)
    try:
        pids = hosted._host.alive()
        assert len(pids) == seats - 1  # one process per bot seat, started with the env
        got = _episodes(hosted, [1, 2])
        assert got == _episodes(local, [1, 2])
        for _ids, rewards, totals in got:
            # the learner's rewards are its seat's score (negated where the variant counts penalties: Indian)
            assert sum(rewards) == (-totals[0] if hosted.game.lower_is_better else totals[0])
        result = hosted._session.result
        assert result.status == pb.MATCH_STATUS_FINISHED
        assert list(result.forfeited) == []
        for f in result.faults[1:]:  # the bots answered every request in time, legally
            assert f.asked > 0
            assert (f.timed_out, dict(f.rejected), f.disconnects) == (0, {}, 0)
    finally:
        hosted.close()
    assert all(_gone(p) for p in pids)
    with pytest.raises(HostError, match="REFEREE_GONE"):
        hosted.step(0)  # a closed env's match is gone with its referee


def test_bots_in_process_policies_and_the_learner_share_a_hosted_match() -> None:
    opponents = [None, GREEDY, id_policy(_last_allowed)]
    local = RummyGymEnv("500-rum", num_players=3, opponents=[None, "greedy", id_policy(_last_allowed)])
    hosted = RummyGymEnv("500-rum", num_players=3, opponents=opponents)
    try:
        assert _episodes(hosted, [3]) == _episodes(local, [3])
    finally:
        hosted.close()


def test_a_refused_id_changes_nothing_and_an_ended_episode_takes_no_step() -> None:
    env = RummyGymEnv("indian", num_players=2, opponents=GREEDY)
    try:
        obs, _ = env.reset(seed=5)
        refused = int(np.flatnonzero(obs["action_mask"] == 0)[0])
        with pytest.raises(ActionCodeError):
            env.step(refused)
        again = env._host.call(_observe(env))
        assert np.array_equal(again["observation"], obs["observation"])
        assert np.array_equal(again["action_mask"], obs["action_mask"])
        done = False
        while not done:
            obs, _, done, _, _ = env.step(_last_allowed(obs["observation"], obs["action_mask"]))
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)
        env.reset(seed=6)  # the env plays on: a new match in the same referee, the same bot process
        assert env._session.result is None
    finally:
        env.close()


async def _observe(env: RummyGymEnv) -> dict[str, np.ndarray]:
    return env._obs(env.seat)


def test_a_bot_that_never_joins_forfeits_and_the_episode_still_ends() -> None:
    crashing = GrpcBot((sys.executable, "-c", "raise SystemExit(3)"), name="crash")
    env = RummyGymEnv("fortune", num_players=3, opponents=[None, GREEDY, crashing], connect_ms=500)
    try:
        _episodes(env, [4])
        result = env._session.result
        assert result.status == pb.MATCH_STATUS_FINISHED
        assert list(result.forfeited) == [2]  # the autopilot played its seat
    finally:
        env.close()
    assert env._host.alive() == []


def test_a_resign_mid_match_does_not_break_the_learner() -> None:
    """A hostile bot resigning while the learner is to act: the referee forfeits its seat to the autopilot on its
    loop, and the learner's next observation is read there too, after it."""
    env = RummyGymEnv("fortune", num_players=2, opponents=GREEDY)
    try:
        obs, _ = env.reset(seed=7)
        session = env._session

        async def resign() -> None:
            session.resign(session.seats[1].conn)

        env._host.call(resign())
        done = False
        while not done:
            obs, _, done, _, _ = env.step(_last_allowed(obs["observation"], obs["action_mask"]))
        assert list(env._session.result.forfeited) == [1]
    finally:
        env.close()


def test_a_bot_command_that_cannot_start_is_refused_before_anything_starts() -> None:
    with pytest.raises(HostError, match="BOT_CANNOT_START.*not on the PATH"):
        RummyGymEnv("indian", num_players=2, opponents=GrpcBot(("no-such-bot-program",)))
    with pytest.raises(HostError, match="BOT_CANNOT_START.*needs a command"):
        RummyGymEnv("indian", num_players=2, opponents=GrpcBot(()))


def test_an_opponent_is_named_for_every_other_seat() -> None:
    with pytest.raises(ValueError, match="seat 2 has no opponent"):
        RummyGymEnv("fortune", num_players=3, opponents=[None, GREEDY, None])
