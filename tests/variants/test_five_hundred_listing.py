"""The 500 Rum family's legal-action listing is the old one, action for action and in order (bots and environments
pick from the list by index with seeded generators, so a faster listing must not reorder it), on random reachable
states of 500 Rum (2 to 6 seats), 500 Partnership and Persian, every option, under random play and under melders
that leave the pile deep and fill the table with melds to lay off on."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.variants import find
from referee.rules.variants.base import (
    Action,
    Discard,
    DrawStock,
    EndTurn,
    LayOff,
    Meld,
    TakeDiscards,
)
from referee.rules.variants.five_hundred import FiveHundredState
from tests.variants import five_hundred_listing_reference as old
from tests.variants.listing_oracle import assert_listed_as_before, deal

_OPTIONS = {
    "500-rum": {"scoring": ("simplified", "traditional"), "jokers": ("0", "1", "2")},
    "500-partnership": {"scoring": ("simplified", "traditional"), "jokers": ("0", "1", "2")},
    "persian": {"target": ("500", "deals-2"), "aces": ("both", "high"), "out_bonus": ("0", "25")},
}


def _pick(rng: random.Random, legal: list[Action], take: float, rich: float) -> Action:
    """``take``: how often a pile take is chosen when one is listed (rarely: the pile grows deep); ``rich``: how
    often a meld or lay-off is chosen when one is listed (often: the table fills). 1.0 and 1.0 with ``uniform``
    would be any action; ``take`` < 0 means uniform over the whole list (random play)."""
    if take < 0:
        return rng.choice(legal)
    takes = [a for a in legal if isinstance(a, TakeDiscards)]
    if takes:
        if rng.random() < take:
            return rng.choice(takes)
        return next(a for a in legal if isinstance(a, DrawStock | EndTurn))
    plays = [a for a in legal if isinstance(a, Meld | LayOff)]
    if plays and rng.random() < rich:
        return rng.choice(plays)
    return rng.choice([a for a in legal if isinstance(a, Discard)] or legal)


def _compare_along_a_hand(name: str, seats: int, options: dict[str, str], seed: int, take: float, rich: float,
                          steps: int, seen: Counter[str] | None = None) -> int:
    """Play one deal; at each decision the listing equals the reference's for every seat. Returns the deepest
    pile seen at a draw; counts the kinds of action listed in ``seen``."""
    variant, state = deal(name, seats, options, seed, 1 + seed % 3)
    assert isinstance(state, FiveHundredState)
    rng = random.Random(seed)
    deepest = 0
    for _ in range(steps):
        d = variant.decision(state)
        if d is None:
            break
        assert_listed_as_before(variant, state, seats, old.legal_actions,
                                f"{name} {options} seed {seed} (pile {len(state.discards)}, {d.phase})")
        deepest = max(deepest, len(state.discards))
        legal = variant.legal_actions(state, d.seat)
        if seen is not None:
            seen.update({type(a).__name__ for a in legal})
            seen["lay-off take"] += any(isinstance(a, TakeDiscards) and a.lay_off_on is not None for a in legal)
        variant.apply(state, d.seat, _pick(rng, legal, take, rich))
    return deepest


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(tuple(_OPTIONS)),
    seats=st.integers(2, 6),
    choice=st.data(),
    seed=st.integers(0, 10**6),
    take=st.sampled_from((-1.0, 0.02, 0.1, 0.4)),
    rich=st.sampled_from((0.1, 0.5, 0.9)),
)
def test_listing_is_the_reference_on_random_play(name: str, seats: int, choice: st.DataObject, seed: int,
                                                 take: float, rich: float) -> None:
    options = {opt: choice.draw(st.sampled_from(values), label=opt) for opt, values in _OPTIONS[name].items()}
    _compare_along_a_hand(name, seats if name == "500-rum" else 4, options, seed, take, rich, steps=400)


@pytest.mark.parametrize(("name", "seats", "options"), [
    ("500-rum", 2, {"jokers": "2"}), ("500-rum", 3, {}), ("500-rum", 6, {"jokers": "1", "scoring": "traditional"}),
    ("500-partnership", 4, {"jokers": "2"}), ("persian", 4, {"aces": "high"}), ("persian", 4, {}),
])
def test_listing_is_the_reference_on_deep_piles_and_full_tables(name: str, seats: int, options: dict[str, str]) -> None:
    """Melders who seldom take from the pile: the pile grows deep (takes of many depths, the cap of 24 takes),
    the table fills with melds, and bottom cards are laid off instead of melded."""
    seen: Counter[str] = Counter()
    deepest = max(_compare_along_a_hand(name, seats, options, seed, 0.03, 0.9, 600, seen) for seed in range(3))
    assert deepest >= 15, deepest
    for kind in ("Meld", "LayOff", "TakeDiscards", "Discard", "DrawStock", "lay-off take"):
        assert seen[kind] > 0, seen


def test_every_option_is_covered() -> None:
    """The random states above draw every option the variants document (a new option must be added there)."""
    for name, values in _OPTIONS.items():
        assert {o.name: set(o.choices) for o in find(name).options} == {k: set(v) for k, v in values.items()}
