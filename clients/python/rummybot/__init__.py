"""Rummy Referee's Python bot SDK.

``Bot`` + ``main`` make a bot; ``PolicyBot`` wraps a policy function. The action types and card helpers are
re-exported so a bot needs one import::

    from rummybot import Bot, Discard, main, parse_cards
"""

from referee.rules.cards import Card, Rank, Suit, format_cards, parse_card, parse_cards
from referee.rules.variants.base import (
    AcceptOffer,
    Action,
    Declare,
    DeclineOffer,
    Discard,
    DrawStock,
    Drop,
    EndTurn,
    ExchangeWild,
    Group,
    LayOff,
    Meld,
    Offer,
    Phase,
    SeatView,
    TakeDiscards,
)
from rummybot.bots.base import PolicyBot
from rummybot.sdk import Bot, Request, main, run_bot

__all__ = [
    "Bot", "Request", "PolicyBot", "main", "run_bot",
    "Card", "Rank", "Suit", "parse_card", "parse_cards", "format_cards",
    "Action", "AcceptOffer", "Declare", "DeclineOffer", "Discard", "DrawStock", "Drop", "EndTurn", "ExchangeWild",
    "Group", "LayOff", "Meld", "Offer", "TakeDiscards", "Phase", "SeatView",
]
