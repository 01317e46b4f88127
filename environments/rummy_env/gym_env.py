"""Gymnasium single-agent env: one seat learns, the other seats are played by policies.

A policy is a ``rummybot`` policy, ``policy(view, legal_actions, rng) -> Action`` over the rules core's own types
(the bundled bots are ``"random"`` and ``"greedy"``, the variant's greedy bot), or an id policy made by
``id_policy(fn)`` with ``fn(observation, action_mask) -> id``, which plays one id at a time like the learner, or a
bot process over gRPC, ``GrpcBot(("python", "-m", "rummybot.bots.greedy"))`` (any SDK's bot command): the match is
then hosted by an embedded referee (``rummy_env.hosted``), the bot plays its seat as in a tournament, and
``close()`` ends its process. The learner's reward is what its seat scores (``RummyAEC``'s reward modes), summed
over the other seats' moves.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from rummy_env._core import Action, SeatView
from rummy_env.game import RummyGame
from rummy_env.observation import observation_tensor
from rummy_env.pettingzoo_env import rank_rewards

__all__ = ["RummyGymEnv", "id_policy", "bundled_policy", "Policy", "GrpcBot"]

Policy = Callable[[SeatView, Sequence[Action], random.Random], Action]


@dataclass(frozen=True)
class IdPolicy:
    """Plays the ids one at a time, as a learner does: ``fn(observation, action_mask) -> id``."""

    fn: Callable[[np.ndarray, np.ndarray], int]


@dataclass(frozen=True)
class GrpcBot:
    """An opponent that is a bot process over gRPC: ``command`` is run with ``--referee ADDRESS`` appended and its
    bot token in ``RUMMY_BOT_TOKEN`` (a command starting with ``python`` runs on this interpreter). One process per
    seat, started when the env is made and kept for every episode; ``env`` is added to its environment."""

    command: tuple[str, ...]
    name: str = "bot"
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)


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


Opponent = str | Policy | IdPolicy | GrpcBot


class RummyGymEnv(gym.Env[Any, Any]):
    """``RummyGymEnv("arlington", num_players=3, seat=0, opponents="greedy")``; ``opponents`` is one policy for every
    other seat or one per seat (``None`` at the learner's). With a ``GrpcBot`` among them the match is hosted by an
    embedded referee (``per_move_ms``, ``connect_ms``: the bots' time control); call ``close()`` to end the bots."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, variant: str, num_players: int = 2, seat: int = 0,
                 opponents: Opponent | Sequence[Opponent | None] = "random",
                 max_hands: int = 1, max_turns_per_hand: int = 400, reward: str = "points", known_cards: bool = True,
                 reward_scale: float = 1.0, per_move_ms: int = 5000, connect_ms: int = 15000,
                 **options: Any) -> None:
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
        given: list[Opponent | None] = (
            list(opponents) if isinstance(opponents, list | tuple) else [opponents] * num_players)  # type: ignore[list-item]
        if len(given) != num_players or not 0 <= seat < num_players:
            raise ValueError(f"{num_players} seats: give one opponent per seat (None at the learner's seat {seat})")
        self.policies: list[Policy | IdPolicy | None] = []
        bots: dict[int, GrpcBot] = {}
        for s, p in enumerate(given):
            if s != seat and p is None:
                raise ValueError(f"seat {s} has no opponent: None goes only at the learner's seat {seat}")
            if s != seat and isinstance(p, GrpcBot):
                bots[s] = p
            self.policies.append(None if s == seat or p is None or isinstance(p, GrpcBot) else
                                 bundled_policy(p, self.variant) if isinstance(p, str) else p)
        self._host: Any = None  # rummy_env.hosted.Host when a seat is a bot over gRPC
        self._session: Any = None
        self._learner: Any = None
        if bots:
            from rummy_env.hosted import Host

            self._host = Host(bots, per_move_ms=per_move_ms, connect_ms=connect_ms)
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
        return {"observation": observation_tensor(g.view(seat), known, prefix, memo=g.memo(seat)), "action_mask": mask}

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
        if self._host is not None:
            return self._hosted_reset(), {}
        self.game = RummyGame(self.variant, self.num_players, self.options, seed=f"gym:{self._episode}",
                              max_hands=self.max_hands, max_turns_per_hand=self.max_turns_per_hand)
        self._play_others()
        return self._obs(self.seat), {}

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._host is not None:
            obs, reward, done = self._host.call(self._hosted_step(int(action)))
            if done:
                reward += self._final()
            return obs, reward * self.reward_scale, done, False, {}
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

    # ------------------------------------------------------------ hosted: bots over gRPC (rummy_env.hosted)

    def _hosted_reset(self) -> dict[str, np.ndarray]:
        host = self._host
        old = self._session
        if old is not None:
            async def abort() -> None:
                old.abort("the env was reset")

            host.call(abort())
        session = host.create(self.variant, self.num_players, self.game.options, f"gym:{self._episode}",
                              self.max_hands, self.max_turns_per_hand)
        self._session = session

        async def seat() -> dict[str, np.ndarray]:
            self.game = RummyGame(self.variant, self.num_players, self.options, match=session.match)
            for s, policy in enumerate(self.policies):
                if policy is not None:
                    conn = host.seat(session, s)
                    conn._on_decision = self._answerer(session, conn, s, policy)
            self._learner = host.seat(session, self.seat, learner=True)
            await host.until_turn(self._learner)
            return self._obs(self.seat)

        return host.call(seat())  # type: ignore[no-any-return]

    def _answerer(self, session: Any, conn: Any, seat: int, policy: Policy | IdPolicy) -> Callable[[int], None]:
        """An in-process policy's seat in a hosted match: answers each request (on the loop) with the policy's move."""
        host = self._host

        def answer(_request: int) -> None:
            g = self.game
            try:
                if isinstance(policy, IdPolicy):
                    action = None
                    while action is None:
                        obs = self._obs(seat)
                        action = g.spell(int(policy.fn(obs["observation"], obs["action_mask"])))
                else:
                    action = policy(g.view(seat), g.chooser().actions, self._rng)
                host.answer(session, conn, action)
            except Exception as exc:  # raised to the env at its next wait; the seat's deadline plays on meanwhile
                host.error = exc
                if self._learner is not None:
                    self._learner.turn.set()

        return answer

    async def _hosted_step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool]:
        g, host, learner = self.game, self._host, self._learner
        if learner.result is not None:
            raise RuntimeError("the episode is over: call reset()")
        done_action = g.spell(action)
        reward = 0.0
        if done_action is not None:
            before = g.match.game.hands_played
            host.answer(self._session, learner, done_action)
            await host.until_turn(learner)
            if self.reward_mode == "points":
                reward = g.rewards_since(before)[self.seat]
        over = learner.result is not None  # finished, or ended early by the referee (its time limit)
        obs = self._obs(self.seat)
        if over:
            obs["action_mask"][:] = 0
        return obs, reward, over

    def close(self) -> None:
        """Ends the bot processes and the embedded referee of a hosted env (nothing to do otherwise)."""
        if self._host is not None:
            self._host.close()  # (a step or reset after it raises HostError REFEREE_GONE)

    def render(self) -> str:
        from rummy_env.observation import observation_string

        return observation_string(self.game.view(self.seat), [], [])
