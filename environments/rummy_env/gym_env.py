"""Gymnasium single-agent env: one seat learns, the other seats are played by policies.

A policy is a ``rummybot`` policy, ``policy(view, legal_actions, rng) -> Action`` over the rules core's own types
(the bundled bots are ``"random"`` and ``"greedy"``, the variant's greedy bot), or an id policy made by
``id_policy(fn)`` with ``fn(observation, action_mask) -> id``, which plays one id at a time like the learner.
The learner's reward is what its seat scores (``RummyAEC``'s reward modes), summed over the other seats' moves.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from rummy_env._core import Action, SeatView
from rummy_env.game import RummyGame
from rummy_env.observation import observation_tensor
from rummy_env.pettingzoo_env import rank_rewards

__all__ = ["RummyGymEnv", "id_policy", "bundled_policy", "Policy"]

Policy = Callable[[SeatView, Sequence[Action], random.Random], Action]


@dataclass(frozen=True)
class IdPolicy:
    """Plays the ids one at a time, as a learner does: ``fn(observation, action_mask) -> id``."""

    fn: Callable[[np.ndarray, np.ndarray], int]


def id_policy(fn: Callable[[np.ndarray, np.ndarray], int]) -> IdPolicy:
    return IdPolicy(fn)


def bundled_policy(name: str, variant: str) -> Policy:
    """A bundled bot's policy: ``"random"`` or ``"greedy"`` (referee.rules.policies)."""
    from referee.rules.policies import greedy_policy, random_policy

    if name == "random":
        return random_policy
    if name == "greedy":
        return greedy_policy(variant)
    raise ValueError(f"no bundled policy {name!r}: 'random' or 'greedy'")


class RummyGymEnv(gym.Env[Any, Any]):
    """``RummyGymEnv("arlington", num_players=3, seat=0, opponents="greedy")``; ``opponents`` is one policy for every
    other seat or one per seat (``None`` at the learner's)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, variant: str, num_players: int = 2, seat: int = 0,
                 opponents: str | Policy | IdPolicy | Sequence[str | Policy | IdPolicy | None] = "random",
                 max_hands: int = 1, max_turns_per_hand: int = 400, reward: str = "points", known_cards: bool = True,
                 reward_scale: float = 1.0, **options: Any) -> None:
        self.game = RummyGame(variant, num_players, options, max_hands=1)
        self.variant = self.game.variant
        self.num_players = num_players
        self.seat = seat
        self.options = options
        self.max_hands = max_hands
        self.max_turns_per_hand = max_turns_per_hand
        self.reward_mode = reward
        self.reward_scale = reward_scale
        self.known = known_cards
        given: list[str | Policy | IdPolicy | None] = (
            list(opponents) if isinstance(opponents, list | tuple) else [opponents] * num_players)  # type: ignore[list-item]
        self.policies: list[Policy | IdPolicy | None] = []
        for s, p in enumerate(given):
            self.policies.append(None if s == seat else bundled_policy(p, self.variant) if isinstance(p, str) else p)
        from rummy_env.observation import layout

        size = layout(self.variant, num_players).size
        self.observation_space = gym.spaces.Dict({
            "observation": gym.spaces.Box(-np.inf, np.inf, (size,), np.float32),
            "action_mask": gym.spaces.Box(0, 1, (self.game.space.size,), np.int8),
        })
        self.action_space = gym.spaces.Discrete(self.game.space.size)
        self._rng = random.Random(0)
        self._episode = 0

    def _obs(self, seat: int) -> dict[str, np.ndarray]:
        g = self.game
        over = g.over
        known = g.known_cards(seat) if self.known and not over else []
        prefix = g.chooser().prefix if not over and g.current_seat == seat else []
        mask = g.mask() if not over and g.current_seat == seat else np.zeros(g.space.size, dtype=np.int8)
        return {"observation": observation_tensor(g.view(seat), known, prefix), "action_mask": mask}

    def _play_others(self) -> float:
        """The other seats' moves until the learner is to act or the game ends; the learner's reward meanwhile."""
        g = self.game
        got = 0.0
        while not g.over and g.current_seat != self.seat:
            s = g.current_seat
            policy = self.policies[s]
            if isinstance(policy, IdPolicy):
                obs = self._obs(s)
                result = g.step(int(policy.fn(obs["observation"], obs["action_mask"])))
            else:
                assert policy is not None
                result = g.submit(policy(g.view(s), g.chooser().actions, self._rng))
            got += result.rewards[self.seat]
        return got

    def _final(self) -> float:
        outcome = self.game.match.outcome
        if self.reward_mode == "rank" and outcome is not None:
            return rank_rewards(outcome.ranking, self.num_players)[self.seat]
        return 0.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._episode = seed
            self._rng = random.Random(seed)
        else:
            self._episode += 1
        self.game = RummyGame(self.variant, self.num_players, self.options, seed=f"gym:{self._episode}",
                              max_hands=self.max_hands, max_turns_per_hand=self.max_turns_per_hand)
        self._play_others()
        return self._obs(self.seat), {}

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        g = self.game
        result = g.step(int(action))
        reward = result.rewards[self.seat] if self.reward_mode == "points" else 0.0
        if result.action is not None:
            more = self._play_others()
            reward += more if self.reward_mode == "points" else 0.0
        done = g.over
        if done:
            reward += self._final()
        return self._obs(self.seat), reward * self.reward_scale, done, False, {}

    def render(self) -> str:
        from rummy_env.observation import observation_string

        return observation_string(self.game.view(self.seat), [], [])
