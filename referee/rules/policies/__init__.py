"""Bot policies: pure functions ``policy(view, legal, rng) -> Action`` over the referee's domain types.

``random_policy`` plays any variant (a uniformly random legal action). Greedy policies are per variant family,
each module exposing ``POLICIES = {variant_name: policy}``.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
from collections.abc import Callable, Sequence
from functools import cache

from referee.rules.variants.base import Action, SeatView

__all__ = ["Policy", "random_policy", "greedy_policy"]

Policy = Callable[[SeatView, Sequence[Action], random.Random], Action]

_MODULES = ("indian", "five_hundred", "oklahoma", "skarney", "iceberg")


def random_policy(view: SeatView, legal: Sequence[Action], rng: random.Random) -> Action:
    """Any legal action, uniformly."""
    return rng.choice(list(legal))


@cache
def _greedy_table() -> dict[str, Policy]:
    table: dict[str, Policy] = {}
    for name in _MODULES:
        qualified = f"referee.rules.policies.{name}"
        if importlib.util.find_spec(qualified) is not None:
            table.update(importlib.import_module(qualified).POLICIES)
    return table


def greedy_policy(variant: str) -> Policy:
    """The greedy policy of ``variant`` (its canonical name)."""
    return _greedy_table()[variant]
