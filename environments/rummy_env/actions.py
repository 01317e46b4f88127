"""A fixed action space per variant: every legal action of the rules core is one sequence of fixed ids.

A simple move (draw, discard a card, take k pile cards, drop, end the turn, offer, accept, decline) is one id. A
compound move (a meld of one or more groups, a lay-off, a wild exchange, a pile take that melds its bottom card, an
Indian declaration) is a few steps: the id that opens it, then the cards picked one by one in id order (a wild
that stands for a named card as a WILD id then an AS id), ``NEXT_GROUP`` between groups, and ``COMMIT``. Listing
the compound moves themselves would need one id per meld, lay-off and wild assignment: with two packs, jokers and a
fanned 500 Rum pile there are millions, most never legal. Steps keep the space small (a few hundred ids) and the
mask exact: at every step the mask allows exactly the next ids of the legal actions that begin with the steps
taken so far, so every prefix the mask allows ends in at least one legal action, and ``COMMIT`` applies the one
action the steps spell.

The ids are the same for every seat count and option of a variant; only how many pile cards a take may count and
how many melds the table may hold depend on the variant (its largest deck). ``ActionSpace.names`` documents them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from rummy_env._core import (
    JOKER,
    NATURAL_RANKS,
    SUITS,
    AcceptOffer,
    Action,
    Card,
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
    TakeDiscards,
    find,
)

__all__ = ["NUM_CARDS", "CARD_INDEX", "card_index", "index_card", "ActionSpace", "action_space", "Chooser", "ActionCodeError",
           "action_text", "CARDS", "slots_of"]

NUM_CARDS = 53  # the 52 naturals in COM-1 order (spades A..K, hearts, diamonds, clubs), then the joker
CARDS: tuple[Card, ...] = tuple(Card(r, s) for s in SUITS for r in NATURAL_RANKS) + (JOKER,)
_INDEX = {c: i for i, c in enumerate(CARDS)}
CARD_INDEX: dict[Card, int] = _INDEX  # read-only: a card's column (copies share it)

# The one-id moves and the markers of compound ones, at fixed ids 0..8 in every variant.
SINGLE = ("DRAW_STOCK", "DROP", "END_TURN", "ACCEPT_OFFER", "DECLINE_OFFER", "COMMIT", "NEXT_GROUP", "MELD", "DECLARE")


def card_index(card: Card) -> int:
    """The card's place in ``CARDS`` (two copies of a card share it: copies are equal values, COM-1)."""
    return _INDEX[card]


def index_card(i: int) -> Card:
    return CARDS[i]


class ActionCodeError(Exception):
    """The rules core listed an action the ids cannot spell, or two actions with one spelling (a bug, never input)."""


@dataclass(frozen=True)
class ActionSpace:
    """The ids of one variant: ``SINGLE`` at 0..8, then ranges of 53 cards, pile counts and meld slots."""

    variant: str
    max_pile: int  # the largest count a pile take may name (the deck's size)
    max_melds: int  # meld slots: the table's melds in the order the view lists them
    ranges: dict[str, tuple[int, int]] = field(init=False, repr=False, compare=False)
    size: int = field(init=False)
    base: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        at = len(SINGLE)
        ranges: dict[str, tuple[int, int]] = {}
        for name, size in (("DISCARD", NUM_CARDS), ("OFFER", NUM_CARDS), ("PICK", NUM_CARDS), ("WILD", NUM_CARDS),
                           ("AS", NUM_CARDS), ("TAKE", self.max_pile + 1), ("TAKE_MELD", self.max_pile + 1),
                           ("TAKE_LAYOFF", self.max_pile + 1), ("LAYOFF", self.max_melds),
                           ("EXCHANGE", self.max_melds), ("ON_MELD", self.max_melds)):
            ranges[name] = (at, size)
            at += size
        object.__setattr__(self, "ranges", ranges)
        object.__setattr__(self, "size", at)
        # each range's first id, read by the encoder at every legal action of every decision (no name look-ups)
        object.__setattr__(self, "base", {name: start for name, (start, _) in ranges.items()})

    def id(self, kind: str, k: int = 0) -> int:
        """The id of ``kind`` (a ``SINGLE`` name) or of item ``k`` of range ``kind``."""
        if kind in SINGLE:
            return SINGLE.index(kind)
        start, size = self.ranges[kind]
        if not 0 <= k < size:
            raise ActionCodeError(f"{self.variant}: {kind} {k} is outside 0..{size - 1}")
        return start + k

    def split(self, action_id: int) -> tuple[str, int]:
        """``(kind, k)`` of an id: the inverse of ``id``."""
        if 0 <= action_id < len(SINGLE):
            return SINGLE[action_id], 0
        for name, (start, size) in self.ranges.items():
            if start <= action_id < start + size:
                return name, action_id - start
        raise ActionCodeError(f"{self.variant} has no action id {action_id} (0..{self.size - 1})")

    def name(self, action_id: int) -> str:
        """The id as text: ``DISCARD QS``, ``TAKE 3``, ``LAYOFF #2`` (a meld slot), ``COMMIT``."""
        kind, k = self.split(action_id)
        if kind in SINGLE:
            return kind
        if kind in ("DISCARD", "OFFER", "PICK", "WILD", "AS"):
            return f"{kind} {CARDS[k]}"
        if kind.startswith("TAKE"):
            return f"{kind} {'all' if k == 0 else k}"
        return f"{kind} #{k}"

    @property
    def names(self) -> list[str]:
        return [self.name(i) for i in range(self.size)]

    # ------------------------------------------------------------ encoding

    def _at(self, kind: str, k: int) -> int:
        """The id of item ``k`` of a range whose size depends on the deal (pile counts, meld slots), checked."""
        start, size = self.ranges[kind]
        if not 0 <= k < size:
            raise ActionCodeError(f"{self.variant}: {kind} {k} is outside 0..{size - 1}")
        return start + k

    def _group(self, g: Group) -> list[int]:
        pick = self.base["PICK"]
        out = sorted(pick + _INDEX[c] for c in g.cards)  # card ids ascend as the cards sort (COM-1 order is theirs)
        if g.stands_for:
            wild, as_ = self.base["WILD"], self.base["AS"]
            for w, a in sorted(g.stands_for):
                out += (wild + _INDEX[w], as_ + _INDEX[a])
        return out

    def _groups(self, groups: Sequence[Group]) -> list[int]:
        if len(groups) == 1:
            return self._group(groups[0])
        spelled = sorted(self._group(g) for g in groups)
        out: list[int] = []
        for i, s in enumerate(spelled):
            if i:
                out.append(_NEXT_GROUP)
            out += s
        return out

    def first(self, action: Action, slots: dict[int, int]) -> int:
        """The first id of ``action``'s spelling (what the mask shows before any step): ``encode(...)[0]``."""
        if isinstance(action, Discard):
            return self.base["DISCARD"] + _INDEX[action.card]
        if isinstance(action, Meld):
            return _MELD
        if isinstance(action, DrawStock):
            return _DRAW_STOCK
        if isinstance(action, TakeDiscards):
            if action.meld is None and action.lay_off_on is None:
                return self._at("TAKE", action.count)
            return self._at("TAKE_MELD" if action.meld is not None else "TAKE_LAYOFF", action.count)
        if isinstance(action, LayOff):
            return self._at("LAYOFF", slots[action.meld_id])
        if isinstance(action, ExchangeWild):
            return self._at("EXCHANGE", slots[action.meld_id])
        if isinstance(action, Offer):
            return self.base["OFFER"] + _INDEX[action.card]
        if isinstance(action, Declare):
            return _DECLARE
        return self.encode(action, slots)[0]

    def encode(self, action: Action, slots: dict[int, int]) -> tuple[int, ...]:
        """The ids that spell ``action``; ``slots`` maps a table meld's id to its slot (its place in the view)."""
        if isinstance(action, DrawStock):
            return (_DRAW_STOCK,)
        if isinstance(action, Discard):
            return (self.base["DISCARD"] + _INDEX[action.card],)
        if isinstance(action, TakeDiscards):
            if action.meld is None and action.lay_off_on is None:
                return (self._at("TAKE", action.count),)
            if action.meld is not None:
                seq = [self._at("TAKE_MELD", action.count), *self._group(action.meld)]
            else:
                seq = [self._at("TAKE_LAYOFF", action.count)]
            if action.lay_off_on is not None:
                seq.append(self._at("ON_MELD", slots[action.lay_off_on]))
            return (*seq, _COMMIT)
        if isinstance(action, Meld):
            return (_MELD, *self._groups(action.groups), _COMMIT)
        if isinstance(action, LayOff):
            return (self._at("LAYOFF", slots[action.meld_id]), *self._group(Group(action.cards, action.stands_for)),
                    _COMMIT)
        if isinstance(action, ExchangeWild):
            return (self._at("EXCHANGE", slots[action.meld_id]), self.base["PICK"] + _INDEX[action.natural],
                    self.base["WILD"] + _INDEX[action.wild], _COMMIT)
        if isinstance(action, Declare):
            head = [_DECLARE]
            if action.discard is not None:
                head.append(self.base["DISCARD"] + _INDEX[action.discard])
            return (*head, *self._groups(action.groups), _COMMIT)
        if isinstance(action, Offer):
            return (self.base["OFFER"] + _INDEX[action.card],)
        if type(action) in _SINGLE_OF:
            return (_SINGLE_OF[type(action)],)
        raise ActionCodeError(f"{self.variant}: no spelling for {action!r}")


_DRAW_STOCK, _COMMIT, _NEXT_GROUP, _MELD, _DECLARE = (SINGLE.index(k) for k in
                                                       ("DRAW_STOCK", "COMMIT", "NEXT_GROUP", "MELD", "DECLARE"))
_SINGLE_OF: dict[type, int] = {Drop: SINGLE.index("DROP"), EndTurn: SINGLE.index("END_TURN"),
                               AcceptOffer: SINGLE.index("ACCEPT_OFFER"), DeclineOffer: SINGLE.index("DECLINE_OFFER")}


def _option_sets(variant: str) -> list[dict[str, str]]:
    v = find(variant)
    choices = [[c for c in o.choices if c != "<int>"] for o in v.options]
    return [dict(zip((o.name for o in v.options), combo, strict=True)) for combo in itertools.product(*choices)]


def action_space(variant: str) -> ActionSpace:
    """The action space of ``variant`` (a name or alias): sized by its largest deck over every seat count and option,
    so one space serves them all. A meld holds at least three cards, so a table holds at most a third of the deck."""
    return _action_space(find(variant).name)


@cache
def _action_space(variant: str) -> ActionSpace:
    v = find(variant)
    largest = 0
    for seats in range(v.min_seats, v.max_seats + 1):
        for opts in _option_sets(v.name):
            largest = max(largest, len(v.deck(v.configure(opts, seats), seats)))
    return ActionSpace(v.name, largest, largest // 3)


def action_text(action: Action, slots: dict[int, int] | None = None) -> str:
    """A legal action in the referee's card notation: ``discard QS``, ``meld 5H 6H 7H | 9C 9D 9S``, ``lay off 8H on
    #2`` (meld slots when ``slots`` is given, else the table's meld ids)."""
    def at(meld_id: int) -> str:
        return f"#{slots[meld_id] if slots is not None else meld_id}"

    def group(g: Group) -> str:
        text = " ".join(str(c) for c in sorted(g.cards))
        return text + "".join(f" ({w}={a})" for w, a in sorted(g.stands_for))

    if isinstance(action, DrawStock):
        return "draw stock"
    if isinstance(action, Discard):
        return f"discard {action.card}"
    if isinstance(action, TakeDiscards):
        text = f"take {'all' if action.count == 0 else action.count}"
        if action.meld is not None:
            text += f" meld {group(action.meld)}"
        if action.lay_off_on is not None:
            text += f" on {at(action.lay_off_on)}"
        return text
    if isinstance(action, Meld):
        return "meld " + " | ".join(sorted(group(g) for g in action.groups))
    if isinstance(action, LayOff):
        return f"lay off {group(Group(action.cards, action.stands_for))} on {at(action.meld_id)}"
    if isinstance(action, ExchangeWild):
        return f"exchange {action.natural} for {action.wild} on {at(action.meld_id)}"
    if isinstance(action, Declare):
        away = f" discard {action.discard}" if action.discard is not None else ""
        return "declare " + " | ".join(sorted(group(g) for g in action.groups)) + away
    if isinstance(action, Offer):
        return f"offer {action.card}"
    return {Drop: "drop", EndTurn: "end turn", AcceptOffer: "accept", DeclineOffer: "decline"}[type(action)]


def slots_of(melds: Sequence[Any]) -> dict[int, int]:
    """Each table meld's id to its slot (its place in the view's list: the ids' meld slots)."""
    return {m.id: i for i, m in enumerate(melds)}


class Chooser:
    """One decision: the legal actions as id sequences, and the steps taken so far.

    ``mask()`` allows exactly the next ids of the actions that begin with the steps taken; ``step(id)`` takes one
    and returns the rules core's action once the steps spell one whole (``None`` while a compound move is open).
    Spelling is lazy: a decision first needs only each action's first id (one look-up); the rest of a compound
    move is spelled when a step opens it, for the actions it opens only (most decisions never open most)."""

    __slots__ = ("space", "actions", "first", "prefix", "_spelled", "_alive", "_slots", "_root")

    def __init__(self, space: ActionSpace, legal: Sequence[Action], slots: dict[int, int]) -> None:
        self.space = space
        # the rules core lists each action once (tests/envs/test_actions.py): not deduplicated here, which hashed
        # every action of every decision (a meld's hash is its groups' and cards', a twentieth of an Iceberg step)
        self.actions: list[Action] = list(legal)
        self._slots = slots
        self.first: list[int] = [space.first(a, slots) for a in self.actions]
        self._spelled: list[tuple[int, ...] | None] = [None] * len(self.actions)
        self.prefix: list[int] = []
        self._alive: list[int] | None = None  # None: every action (at the root)
        self._root: list[int] | None = None  # the root's allowed ids, ascending

    def __deepcopy__(self, memo: dict[int, object]) -> Chooser:
        return self.__copy__()

    def __copy__(self) -> Chooser:
        """Shares the legal actions and their spellings (never changed: lists replaced, not altered, but for the
        spellings' cache, which holds the same spelling whoever fills it), copies the steps taken. Built by the
        constructor on no actions: a compiled class has no ``__dict__`` for ``copy.copy`` to fill."""
        new = Chooser(self.space, (), self._slots)
        new.actions, new.first, new._spelled = self.actions, self.first, self._spelled
        new._alive, new._root = self._alive, self._root
        new.prefix = list(self.prefix)
        return new

    def _spell(self, i: int) -> tuple[int, ...]:
        seq = self._spelled[i]
        if seq is None:
            seq = self._spelled[i] = self.space.encode(self.actions[i], self._slots)
        return seq

    @property
    def spelled(self) -> list[tuple[int, ...]]:
        """Every legal action's whole spelling, in ``actions`` order."""
        return [self._spell(i) for i in range(len(self.actions))]

    def legal_ids(self) -> list[int]:
        """The ids the mask allows now, ascending."""
        if self._alive is None:
            if self._root is None:
                self._root = sorted(set(self.first))
            return list(self._root)
        depth = len(self.prefix)
        return sorted({self._spell(i)[depth] for i in self._alive})

    def mask(self) -> np.ndarray:
        m = np.zeros(self.space.size, dtype=np.int8)
        ids = self.legal_ids()
        m[np.fromiter(ids, np.intp, len(ids))] = 1  # (see observation.as_positions)
        return m

    def step(self, action_id: int) -> Action | None:
        """Take one id. :raises ActionCodeError: for an id the mask does not allow, or two legal actions spelled
        alike (nothing changes)."""
        depth = len(self.prefix)
        if self._alive is None:
            alive = [i for i, f in enumerate(self.first) if f == action_id]
        else:
            alive = [i for i in self._alive if self._spell(i)[depth] == action_id]
        if not alive:
            raise ActionCodeError(f"{self.space.variant}: id {action_id} ({self._name(action_id)}) is not allowed "
                                  f"after {[self.space.name(p) for p in self.prefix]}")
        if depth == 0 and len(alive) > 1:  # a compound move opens (a one-id move is one action): no two alike
            seen: dict[tuple[int, ...], int] = {}
            for i in alive:
                if (other := seen.setdefault(self._spell(i), i)) != i and self.actions[other] != self.actions[i]:
                    raise ActionCodeError(f"{self.space.variant}: {self.actions[other]!r} and {self.actions[i]!r} "
                                          f"have one spelling {self._spell(i)}")
        self.prefix.append(action_id)
        self._alive = alive
        done = [i for i in alive if len(self._spell(i)) == depth + 1]
        if done:  # the spellings are prefix-free (every compound one ends in COMMIT): the move is whole
            return self.actions[done[0]]
        return None

    def ids_of(self, action: Action) -> tuple[int, ...]:
        """The spelling of one of this decision's legal actions. :raises ActionCodeError: if it is not legal here."""
        for i, a in enumerate(self.actions):
            if a == action:
                return self._spell(i)
        raise ActionCodeError(f"{self.space.variant}: {action!r} is not a legal action here")

    @property
    def open(self) -> bool:
        """True while a compound move is part taken."""
        return bool(self.prefix)

    def _name(self, action_id: int) -> str:
        try:
            return self.space.name(action_id)
        except ActionCodeError:
            return "no such id"
