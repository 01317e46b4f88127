"""What the three listing oracle tests share (test_five_hundred_listing, test_oklahoma_listing,
test_skarney_listing): a hand dealt from a seed, and the check that a variant lists, for every seat, exactly what
its previous listing (kept word for word beside it) lists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.rules.cards import shuffled
from referee.rules.variants import find
from referee.rules.variants.base import Action, HandState, Table, Variant, default_teams


def deal(name: str, seats: int, options: dict[str, str], seed: int, hand_number: int = 1) -> tuple[Variant, Any]:
    """``name``'s variant and a hand of it dealt from ``seed`` (dealer ``seed % seats``)."""
    variant = find(name)
    rules = variant.configure(options, seats)
    table = Table(seats, seed % seats, hand_number, default_teams(variant.team_play, seats), (True,) * seats,
                  (0,) * seats)
    return variant, variant.new_hand(rules, table, shuffled(variant.deck(rules, seats), seed), f"listing:{seed}")


def assert_listed_as_before(variant: Variant, state: HandState, seats: int,
                            before: Callable[[HandState, int], list[Action]], where: str) -> None:
    """Every seat's listing equals the previous listing's: the same actions, in the same order."""
    for seat in range(seats):
        new = variant.legal_actions(state, seat)
        want = before(state, seat)
        assert new == want, f"{where} seat {seat} ({len(state.hands[seat])} cards): {new} != {want}"
