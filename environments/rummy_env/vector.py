"""Batched self-play: many games stepped in one call, observations and masks written into preallocated arrays.

``BatchEnv("fortune", num_envs=64, num_players=4)``: ``reset()`` and ``step(ids)`` return the observation and mask of
the seat to act in each game (``obs[B, size]``, ``mask[B, actions]``, ``seat[B]``), the points each seat got
(``rewards[B, seats]``) and which games ended (a game that ends starts afresh in the same call, as Gymnasium's vector
envs do). For more than one core, run one ``BatchEnv`` per process.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_env.game import RummyGame
from rummy_env.observation import layout, observation_tensor

__all__ = ["BatchEnv"]


class BatchEnv:
    def __init__(self, variant: str, num_envs: int, num_players: int, max_hands: int = 1, known_cards: bool = True,
                 seed: int = 0, **options: Any) -> None:
        self.variant = variant
        self.num_envs = num_envs
        self.num_players = num_players
        self.options = options
        self.max_hands = max_hands
        self.known = known_cards
        self._next_seed = seed
        self.layout = layout(variant, num_players)
        self.games: list[RummyGame] = []
        n_actions = self.layout.space.size
        self.obs = np.zeros((num_envs, self.layout.size), dtype=np.float32)
        self.mask = np.zeros((num_envs, n_actions), dtype=np.int8)
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.rewards = np.zeros((num_envs, num_players), dtype=np.float32)
        self.dones = np.zeros(num_envs, dtype=bool)

    def _new(self) -> RummyGame:
        self._next_seed += 1
        return RummyGame(self.variant, self.num_players, self.options, seed=f"batch:{self._next_seed}",
                         max_hands=self.max_hands)

    def _write(self, b: int) -> None:
        g = self.games[b]
        s = g.current_seat
        self.seat[b] = s
        known = g.known_cards(s) if self.known else []
        observation_tensor(g.view(s), known, g.chooser().prefix, out=self.obs[b])
        self.mask[b] = g.mask()

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.games = [self._new() for _ in range(self.num_envs)]
        for b in range(self.num_envs):
            self._write(b)
        return self.obs, self.mask, self.seat

    def step(self, ids: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One id per game. :raises ActionCodeError: for an id its game's mask does not allow."""
        self.rewards.fill(0.0)
        self.dones.fill(False)
        for b, action_id in enumerate(ids):
            g = self.games[b]
            result = g.step(int(action_id))
            if result.action is not None:
                self.rewards[b] = result.rewards
            if result.game_over:
                self.dones[b] = True
                self.games[b] = self._new()
            self._write(b)
        return self.obs, self.mask, self.seat, self.rewards, self.dones

    def random_ids(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random allowed id for every game (a baseline policy, and the benchmark's)."""
        noise = rng.random(self.mask.shape) * self.mask
        return np.asarray(noise.argmax(axis=1))
