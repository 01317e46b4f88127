"""PettingZoo AEC environment: ``make("fortune", num_players=4, max_set="unlimited")``.

Agents are ``player_0`` .. ``player_{n-1}`` (the referee's seats). Each observation is ``{"observation": float32
tensor, "action_mask": int8 mask}`` (``rummy_env.observation``, ``rummy_env.actions``); an agent not to act gets
an all-zero mask. Rewards are the points each hand scores (``reward="points"``, negated where the variant counts
penalties), paid when the hand ends, or the game's ranking at its end (``reward="rank"``: +1 first .. -1 last).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from rummy_env._core import Card, find
from rummy_env.actions import action_space, action_text, slots_of
from rummy_env.game import RummyGame, StepResult
from rummy_env.observation import information_state_string, layout, observation_string

__all__ = ["RummyAEC", "make", "ENV_OPTIONS"]

ENV_OPTIONS = ("max_hands", "max_turns_per_hand", "reward", "render_mode", "known_cards")


def rank_rewards(ranking: tuple[tuple[int, ...], ...], seats: int) -> list[float]:
    """+1 for the first group, -1 for the last, evenly between (0 for all when everyone ties)."""
    out = [0.0] * seats
    groups = len(ranking)
    if groups > 1:
        for place, group in enumerate(ranking):
            for s in group:
                out[s] = (groups - 1 - 2 * place) / (groups - 1)
    return out


class RummyAEC(AECEnv):  # type: ignore[misc]
    metadata = {"render_modes": ["ansi", "human"], "name": "rummy_v0", "is_parallelizable": False}

    def __init__(self, variant: str, num_players: int | None = None, max_hands: int = 1, max_turns_per_hand: int = 400,
                 reward: str = "points", render_mode: str | None = None, known_cards: bool = True,
                 **options: Any) -> None:
        super().__init__()
        v = find(variant)
        self.variant = v.name
        self.num_players = num_players if num_players is not None else v.min_seats
        if reward not in ("points", "rank"):
            raise ValueError(f"reward is 'points' or 'rank', not {reward!r}")
        self.reward_mode = reward
        self.options = {k: str(val) for k, val in options.items()}
        self.max_hands = max_hands
        self.max_turns_per_hand = max_turns_per_hand
        self.render_mode = render_mode
        self.known = known_cards
        self.space = action_space(v.name)
        self.layout = layout(v.name, self.num_players)
        self.possible_agents = [f"player_{s}" for s in range(self.num_players)]
        self._seats = {a: s for s, a in enumerate(self.possible_agents)}
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(-np.inf, np.inf, (self.layout.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (self.space.size,), np.int8),
        })
        self._act_space = spaces.Discrete(self.space.size)
        self._seed = 0
        self.game: RummyGame | None = None
        RummyGame(v.name, self.num_players, self.options, max_hands=1)  # bad options or seats fail here, typed

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._act_space

    def seat(self, agent: str) -> int:
        return self._seats[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seed = seed
        else:
            self._seed += 1
        self.game = RummyGame(self.variant, self.num_players, self.options, seed=f"env:{self._seed}",
                              max_hands=self.max_hands, max_turns_per_hand=self.max_turns_per_hand)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_seat]
        self._paid = False  # some reward of the last step was not 0 (the next one's are then all set to 0)

    def _known(self, seat: int) -> list[dict[Card, int]]:
        assert self.game is not None
        if not self.known or self.game.over:
            return []
        return self.game.known_cards(seat)

    def _prefix(self, seat: int) -> list[int]:
        assert self.game is not None
        if self.game.over or self.game.current_seat != seat:
            return []
        return self.game.chooser().prefix

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.game is not None
        return self.game.observation(self._seats[agent], self.known)

    def observation_string(self, agent: str) -> str:
        assert self.game is not None
        s = self.seat(agent)
        return observation_string(self.game.view(s), self._known(s), self._prefix(s))

    def information_state_string(self, agent: str) -> str:
        assert self.game is not None
        s = self.seat(agent)
        return information_state_string(self.game.view(s), self._known(s), self._prefix(s), self.game.events(s))

    def legal_action_strings(self) -> list[str]:
        """The rules core's legal actions of the decision in play, in card notation (whole moves)."""
        assert self.game is not None
        ch = self.game.chooser()
        slots = slots_of(self.game.view(self.game.current_seat).melds)
        return [action_text(a, slots) for a in ch.actions]

    def legal_id_strings(self) -> list[str]:
        """The ids the mask allows now, as text (``PICK 7H``, ``COMMIT``)."""
        assert self.game is not None
        return [self.space.name(i) for i in self.game.legal_ids()]

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        assert self.game is not None
        agent = self.agent_selection
        self._cumulative_rewards[agent] = 0.0
        if action is None:
            raise ValueError("a live agent must act: pass an id its action_mask allows")
        result = self.game.step(int(action))
        if result.hands_ended or result.game_over or self._paid:  # else every reward is 0 already, as is the sum
            self._pay(result)  # of each agent's but the actor's (reset above)
        else:
            self.agent_selection = self.possible_agents[self.game.current_seat]
        if self.render_mode == "human":
            self.render()

    def _pay(self, result: StepResult) -> None:
        assert self.game is not None
        self.rewards = {a: 0.0 for a in self.agents}
        if self.reward_mode == "points":
            for s, r in enumerate(result.rewards):
                self.rewards[self.possible_agents[s]] = r
        if result.game_over:
            outcome = self.game.match.outcome
            if self.reward_mode == "rank" and outcome is not None:
                for s, r in enumerate(rank_rewards(outcome.ranking, self.num_players)):
                    self.rewards[self.possible_agents[s]] = r
            for a in self.agents:
                self.terminations[a] = True
        else:
            self.agent_selection = self.possible_agents[self.game.current_seat]
        self._paid = any(self.rewards.values())
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.game is None or self.game.over:
            return None
        text = self.observation_string(self.agent_selection)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.game = None


def make(variant: str, num_players: int | None = None, **kwargs: Any) -> RummyAEC:
    """The AEC env of ``variant``; keyword arguments other than ``ENV_OPTIONS`` are the variant's options."""
    return RummyAEC(variant, num_players, **kwargs)
