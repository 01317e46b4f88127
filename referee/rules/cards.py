"""Cards, packs and the text notation used in logs, records and the CLI.

Notation (COM-1): rank then suit, ``"QS"`` (queen of spades), ``"TH"`` (ten of hearts; ``"10H"`` is read too),
``"2C"``, ``"AD"``; ``"JK"`` is a printed joker. Suits: S H D C. Identical cards from several packs are equal
values: a hand is a list, so duplicates are kept, and any copy may be played for another.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from referee.rules.errors import InvalidAction

__all__ = [
    "Card",
    "Rank",
    "Suit",
    "JOKER",
    "build_deck",
    "shuffled",
    "parse_card",
    "parse_cards",
    "format_cards",
    "remove_cards",
    "contains_cards",
]


class Rank(enum.IntEnum):
    """Card ranks; their numbers order cards (jokers first). The wire's ``Rank`` numbers are these but for the joker
    (``RANK_JOKER`` = 14: zero is ``RANK_UNSPECIFIED``), translated in ``rummy.wire.protocodec``."""

    JOKER = 0
    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13


class Suit(enum.IntEnum):
    """Suits; ``NONE`` is the suit of a printed joker."""

    NONE = 0
    SPADES = 1
    HEARTS = 2
    DIAMONDS = 3
    CLUBS = 4


SUITS: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
NATURAL_RANKS: tuple[Rank, ...] = tuple(r for r in Rank if r is not Rank.JOKER)

_RANK_TEXT = {Rank.ACE: "A", Rank.TEN: "T", Rank.JACK: "J", Rank.QUEEN: "Q", Rank.KING: "K"}
_TEXT_RANK = {"A": Rank.ACE, "T": Rank.TEN, "10": Rank.TEN, "J": Rank.JACK, "Q": Rank.QUEEN, "K": Rank.KING}
_TEXT_RANK.update({str(n): Rank(n) for n in range(2, 10)})
_SUIT_TEXT = {Suit.SPADES: "S", Suit.HEARTS: "H", Suit.DIAMONDS: "D", Suit.CLUBS: "C"}
_CARD_TEXT: dict[int, str] = {}  # by card code (rank and suit)
_TEXT_SUIT = {v: k for k, v in _SUIT_TEXT.items()}


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card. Ordered by rank then suit, so sorted hands read naturally.

    Hashing, equality and order read one small integer (rank and suit together) computed once: cards are
    hashed and compared millions of times in meld search, and enum members hash by name in Python."""

    rank: Rank
    suit: Suit
    _code: int = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)  # the (rank, suit) tuple's: sets keep their order

    def __post_init__(self) -> None:
        if (self.rank is Rank.JOKER) != (self.suit is Suit.NONE):
            raise InvalidAction("BAD_CARD", f"a joker has no suit and every other card has one: not {self.rank.name}/{self.suit.name}")
        object.__setattr__(self, "_code", int(self.rank) * 8 + int(self.suit))
        object.__setattr__(self, "_hash", hash((int(self.rank), int(self.suit))))

    def __hash__(self) -> int:
        return self._hash

    @property
    def code(self) -> int:
        """``rank * 8 + suit``: a small integer naming the card (copies share it), for tables indexed by card."""
        return self._code

    def __eq__(self, other: object) -> bool:
        return self._code == other._code if isinstance(other, Card) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return self._code != other._code if isinstance(other, Card) else NotImplemented

    def __lt__(self, other: Card) -> bool:
        return self._code < other._code if isinstance(other, Card) else NotImplemented

    def __le__(self, other: Card) -> bool:
        return self._code <= other._code if isinstance(other, Card) else NotImplemented

    def __gt__(self, other: Card) -> bool:
        return self._code > other._code if isinstance(other, Card) else NotImplemented

    def __ge__(self, other: Card) -> bool:
        return self._code >= other._code if isinstance(other, Card) else NotImplemented

    @property
    def is_joker(self) -> bool:
        return self.rank is Rank.JOKER

    def __str__(self) -> str:
        text = _CARD_TEXT.get(self._code)
        if text is None:  # each card's text is made once: records and the stdio bridge write cards on every move
            text = "JK" if self.rank is Rank.JOKER else _RANK_TEXT.get(self.rank, str(int(self.rank))) + _SUIT_TEXT[self.suit]
            _CARD_TEXT[self._code] = text
        return text

    def __repr__(self) -> str:
        return f"Card({self})"


JOKER = Card(Rank.JOKER, Suit.NONE)


def parse_card(text: str) -> Card:
    """Read one card in the text notation; raise ``InvalidAction(BAD_CARD)`` on anything else."""
    t = text.strip().upper()
    if t in ("JK", "JO", "*"):
        return JOKER
    if len(t) < 2 or t[:-1] not in _TEXT_RANK or t[-1] not in _TEXT_SUIT:
        raise InvalidAction("BAD_CARD", f"not a card: {text!r} (write rank then suit, e.g. QS, TH, 2C, or JK)")
    return Card(_TEXT_RANK[t[:-1]], _TEXT_SUIT[t[-1]])


def parse_cards(text: str) -> list[Card]:
    """Read cards separated by spaces or commas: ``"AH 2H 3H"``."""
    return [parse_card(tok) for tok in text.replace(",", " ").split()]


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)


_PACK: tuple[Card, ...] = tuple(Card(r, s) for s in SUITS for r in NATURAL_RANKS)  # one pack, in COM-1 order


def build_deck(packs: int = 1, jokers: int = 0) -> list[Card]:
    """``packs`` standard 52-card packs plus ``jokers`` printed jokers, in a fixed order (COM-1)."""
    return list(_PACK) * packs + [JOKER] * jokers


def shuffled(cards: Sequence[Card], seed: int | str) -> list[Card]:
    """A seeded shuffle (COM-5): the same seed always gives the same order."""
    out = list(cards)
    shuffle(random.Random(str(seed)), out)
    return out


def shuffle(rng: random.Random, items: list[Card]) -> None:
    """``rng.shuffle(items)``, step for step (Fisher-Yates from the end, each index drawn by ``getrandbits`` and
    redrawn while out of range, as CPython's ``Random.shuffle`` and ``_randbelow`` do), so every seed gives the
    order it always gave; written out so the compiled core runs it without the interpreter's two calls per card
    (a deal was a tenth of an environment's step where hands end fast). tests/test_cards.py checks it against
    ``Random.shuffle``."""
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]


_T = TypeVar("_T")


def tally(items: Iterable[_T]) -> dict[_T, int]:
    """How many of each card (or rank), in first-seen order: a ``collections.Counter`` that mypyc compiles
    (``Counter`` itself is plain Python, and legal-action listing counts a hand on every decision). A card not
    held is absent: read with ``.get``."""
    counts: dict[_T, int] = {}
    for x in items:
        counts[x] = counts.get(x, 0) + 1
    return counts


def contains_cards(hand: Sequence[Card], cards: Iterable[Card]) -> bool:
    """Whether ``hand`` holds all of ``cards``, counting duplicates (a few cards against a hand: striking them
    from a copy is several times cheaper than counting both)."""
    rest = list(hand)
    for c in cards:
        if c not in rest:
            return False
        rest.remove(c)
    return True


def holds_all(counts: dict[Card, int], cards: Iterable[Card]) -> bool:
    """``contains_cards`` against a hand counted once (``tally(hand)``): for many checks against one long hand
    (Skarney's hands grow past 40 cards), where striking from a copy compares card by card each time."""
    need: dict[Card, int] = {}
    for c in cards:
        k = need.get(c, 0) + 1
        if k > counts.get(c, 0):
            return False
        need[c] = k
    return True


def remove_cards(hand: list[Card], cards: Iterable[Card]) -> None:
    """Remove ``cards`` from ``hand`` in place (one copy each); the caller has checked ``contains_cards``."""
    for c in cards:
        hand.remove(c)
