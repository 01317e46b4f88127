"""Greedy, but one decision in three is random: a bot of middle strength for tournaments."""

from __future__ import annotations

import random
from collections.abc import Sequence

from referee.rules.policies import greedy_policy, random_policy
from referee.rules.variants.base import Action, SeatView
from rummybot.bots.base import PolicyBot
from rummybot.sdk import main

MISTAKE_RATE = 1 / 3


def noisy_policy(variant: str):  # type: ignore[no-untyped-def]
    greedy = greedy_policy(variant)

    def choose(view: SeatView, legal: Sequence[Action], rng: random.Random) -> Action:
        if rng.random() < MISTAKE_RATE:
            return random_policy(view, legal, rng)
        return greedy(view, legal, rng)

    return choose


if __name__ == "__main__":
    main(PolicyBot("noisy", noisy_policy))
