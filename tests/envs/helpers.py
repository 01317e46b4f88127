"""Reaching random states of every variant for the environment tests."""

from __future__ import annotations

import copy
import random

from referee.rules.variants import all_variants
from rummy_env.actions import Chooser
from rummy_env.game import RummyGame

# every variant at every seat count it supports
SEATINGS = [(v.name, n) for v in all_variants() for n in range(v.min_seats, v.max_seats + 1)]
VARIANTS = [v.name for v in all_variants()]


def seat_counts(variant: str) -> list[int]:
    v = next(x for x in all_variants() if x.name == variant)
    return list(range(v.min_seats, v.max_seats + 1))


def option_choices(variant: str, rng: random.Random) -> dict[str, str]:
    """One random choice for each of the variant's options (an integer option keeps its default)."""
    v = next(x for x in all_variants() if x.name == variant)
    return {o.name: rng.choice([c for c in o.choices if c != "<int>"]) for o in v.options}


def reach(variant: str, seats: int, seed: int, steps: int, options: dict[str, str] | None = None,
          max_hands: int = 2) -> RummyGame:
    """A game played ``steps`` ids at random (uniform over the mask), stopping early at the game's end or between
    moves: the state returned has no compound move open."""
    rng = random.Random(seed)
    g = RummyGame(variant, seats, options or {}, seed=str(seed), max_hands=max_hands)
    drop = g.space.id("DROP")  # an Indian seat dropping at random ends most deals at once: played only when alone

    def pick() -> int:
        ids = g.legal_ids()
        return rng.choice([i for i in ids if i != drop] or ids)

    for _ in range(steps):
        if g.over:
            break
        g.step(pick())
    while not g.over and g.chooser().open:
        g.step(pick())
    return g


def spellings(ch: Chooser) -> list[tuple[int, ...]]:
    """Every whole id sequence the mask lets one spell from ``ch``'s state, found by walking the mask alone."""
    out: list[tuple[int, ...]] = []

    def walk(c: Chooser) -> None:
        for i in c.legal_ids():
            nxt = copy.copy(c)
            nxt.prefix = list(c.prefix)
            done = nxt.step(i)
            if done is not None:
                out.append(tuple(nxt.prefix))
            else:
                walk(nxt)

    walk(ch)
    return out
