"""Every name the environments take from the referee, in one place.

The environments are a client of the rules core, never a copy of it: the match engine steps hands, the variants
list legal actions, build each seat's ``SeatView`` and score; the search service says what a seat knows of the
cards it cannot see and deals samples consistent with it. Importing through this one module keeps the coupling
visible (and a move of the referee's modules is one edit here).
"""

from __future__ import annotations

from referee.rules.cards import JOKER, NATURAL_RANKS, SUITS, Card, Rank, Suit, format_cards, tally
from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption, RefereeError
from referee.rules.match import Match, MatchConfig, MatchOutcome
from referee.rules.variants import all_variants, find
from referee.rules.variants.base import (
    AcceptOffer,
    Action,
    Declare,
    DeclineOffer,
    Discard,
    DrawStock,
    Drop,
    EndTurn,
    Event,
    ExchangeWild,
    Group,
    HandState,
    LayOff,
    Meld,
    Offer,
    OptionSpec,
    Phase,
    PileView,
    SeatView,
    TableMeld,
    TakeDiscards,
    Variant,
)
from referee.search import (
    KnowledgeMismatch,
    KnowledgeTracker,
    NotSearchable,
    SeatRecord,
    know,
    sample_states,
    seat_record,
)

__all__ = [
    "JOKER", "NATURAL_RANKS", "SUITS", "Card", "Rank", "Suit", "format_cards", "tally",
    "IllegalAction", "InvalidAction", "InvalidOption", "RefereeError",
    "Match", "MatchConfig", "MatchOutcome",
    "KnowledgeMismatch", "KnowledgeTracker", "NotSearchable", "SeatRecord", "know", "sample_states", "seat_record",
    "all_variants", "find",
    "AcceptOffer", "Action", "Declare", "DeclineOffer", "Discard", "DrawStock", "Drop", "EndTurn", "Event",
    "ExchangeWild", "Group", "HandState", "LayOff", "Meld", "OptionSpec", "Offer", "Phase", "PileView", "SeatView", "TableMeld", "TakeDiscards",
    "Variant",
]
