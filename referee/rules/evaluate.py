"""The rules check for bot authors (``Evaluate`` RPC and ``referee evaluate``): meld validity, declaration
validity and what the cards count, for any variant and its options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from referee.rules.cards import Card, Rank, parse_card, parse_cards, tally
from referee.rules.errors import InvalidAction
from referee.rules.variants import find
from referee.rules.variants.base import Evaluation

__all__ = ["evaluate", "parse_groups", "evaluation_json"]


def parse_groups(text: str) -> list[list[Card]]:
    """``"AH 2H 3H | 5S 6S 7D 8S"`` -> groups of cards."""
    return [parse_cards(part) for part in text.split("|") if part.strip()]


def evaluate(variant: str, options: Mapping[str, str], wild_ranks: Sequence[Rank],
             groups: Sequence[Sequence[Card]], seats: int | None = None) -> Evaluation:
    """:raises InvalidOption: for an unknown variant or option. :raises InvalidAction: ``NOT_IN_THE_DECK`` for
    cards the game's deck cannot hold (a joker in Fortune, a third ace of spades): no hand of the game holds them,
    so no rule speaks of them. Printed jokers are wild where the variant says."""
    v = find(variant)
    seats = seats or v.min_seats
    rules = v.configure(options, seats)
    deck = v.deck(rules, seats)
    in_deck = tally(deck)
    for card, given in tally(c for g in groups for c in g).items():
        if given > in_deck.get(card, 0):
            raise InvalidAction("NOT_IN_THE_DECK", f"{card}: the {v.name} deck for {seats} seats with these options "
                                f"({len(deck)} cards) holds {in_deck.get(card, 0)}, not {given}")
    return v.evaluate(rules, frozenset(wild_ranks), [tuple(g) for g in groups])


def wild_ranks_from_text(text: str) -> list[Rank]:
    """A wild rank given as a card ("7H": sevens are wild) or a rank letter ("7", "A")."""
    t = text.strip().upper()
    if not t:
        return []
    if t == "JK":
        return [Rank.JOKER]
    card = parse_card(t if len(t) >= 2 and t[-1] in "SHDC" else t + "S")
    return [card.rank]


def evaluation_json(e: Evaluation) -> dict[str, Any]:
    """The evaluation with cards in the text notation."""
    d = asdict(e)
    for g, verdict in zip(d["groups"], e.groups, strict=True):
        g["cards"] = [str(c) for c in verdict.cards]
    return d
