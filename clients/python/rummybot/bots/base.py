"""A bot made of a policy function: ``policy(view, legal, rng) -> Action``."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from referee.rules.variants.base import Action, SeatView
from rummybot.sdk import Bot, Request

__all__ = ["PolicyBot"]


class PolicyBot(Bot):
    """Plays ``choose(variant)`` for each decision; the variant comes with the view."""

    def __init__(self, name: str, choose: Callable[[str], Callable[[SeatView, Sequence[Action], random.Random], Action]],
                 seed: int | None = None) -> None:
        self.name = name
        self.choose = choose
        self.rng = random.Random(seed)

    def decide(self, view: SeatView, legal: Sequence[Action], request: Request) -> Action:
        return self.choose(view.variant)(view, legal, self.rng)
