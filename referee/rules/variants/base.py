"""The rules core's shared vocabulary: actions, events, views, hand state, and the ``Variant`` protocol.

A variant is pure: no I/O, clocks or threads. The match engine (``referee.rules.match``) asks it who must decide
what (``decision``), applies actions (``apply``, which raises ``IllegalAction`` and leaves the state unchanged),
builds what each seat may see (``observe``), scores hands (``score``) and says when the game is over.
"""

from __future__ import annotations

import enum
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from referee.rules.cards import Card, Rank, format_cards
from referee.rules.errors import IllegalAction, InvalidOption
from referee.rules.melds import MeldKind, MeldReading, Placed

__all__ = [
    "Phase",
    "PileView",
    "Group",
    "DrawStock",
    "TakeDiscards",
    "Meld",
    "LayOff",
    "ExchangeWild",
    "Discard",
    "Declare",
    "Drop",
    "EndTurn",
    "Offer",
    "AcceptOffer",
    "DeclineOffer",
    "Action",
    "Event",
    "TableMeld",
    "HandState",
    "Table",
    "Decision",
    "SeatView",
    "HandScore",
    "GameState",
    "GameOutcome",
    "OptionSpec",
    "Evaluation",
    "GroupVerdict",
    "Variant",
    "deal_round_robin",
    "require",
    "parse_options",
    "private_event",
    "seat_order",
    "rank_by_totals",
    "zone_view",
    "default_teams",
]


class Phase(enum.Enum):
    """Where a turn stands (DESIGN: DRAW -> PLAY repeated -> DISCARD; OFFER: answer a Skarney offer)."""

    DRAW = "DRAW"
    PLAY = "PLAY"
    DISCARD = "DISCARD"
    OFFER = "OFFER"


class PileView(enum.Enum):
    """How much of the discard pile the table sees."""

    FANNED = "FANNED"  # every card (FH-2)
    TOP = "TOP"  # the top card only (FOR-6, IND open deck)
    NONE = "NONE"  # no pile at all (Skarney, Iceberg)


# ---------------------------------------------------------------- actions (frozen: they are the record)

# The records made on every decision (actions, events, decisions, melds) write their own ``__init__``: mypyc
# compiles a written one, while the one ``dataclass`` generates runs as plain Python, some 15x slower to build a
# record. tests/test_records.py checks that each written ``__init__`` takes exactly its fields and defaults.
# Actions also write ``__hash__`` and ``__eq__`` (the wire looks each legal action up by value, and legality checks
# compare them): the same values the generated ones give (the hash of the fields' tuple, so sets keep their order),
# some 4x faster compiled; tests/test_records.py checks them against the fields.

_NO_FIELDS_HASH = hash(())


@dataclass(frozen=True, slots=True)
class Group:
    """Cards meant as one meld, with what some wilds stand for: ``stands_for=((wild, as_card), ...)``."""

    cards: tuple[Card, ...]
    stands_for: tuple[tuple[Card, Card], ...] = ()

    def __init__(self, cards: tuple[Card, ...], stands_for: tuple[tuple[Card, Card], ...] = ()) -> None:
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "stands_for", stands_for)

    def __hash__(self) -> int:
        return hash((self.cards, self.stands_for))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Group):
            return NotImplemented
        return self.cards == other.cards and self.stands_for == other.stands_for


@dataclass(frozen=True, slots=True)
class DrawStock:
    """Draw the top card of the stock (closed deck)."""

    def __hash__(self) -> int:
        return _NO_FIELDS_HASH

    def __eq__(self, other: object) -> bool:
        return True if isinstance(other, DrawStock) else NotImplemented


@dataclass(frozen=True, slots=True)
class TakeDiscards:
    """Take the top ``count`` cards of the discard pile (0 = the whole pile). Where the variant demands it, the
    bottom-most card taken is melded at once: with ``meld`` (other cards from hand or among those taken) or laid
    off on meld ``lay_off_on`` (FH-3, FOR-4, ARL-8)."""

    count: int = 1
    meld: Group | None = None
    lay_off_on: int | None = None

    def __init__(self, count: int = 1, meld: Group | None = None, lay_off_on: int | None = None) -> None:
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "meld", meld)
        object.__setattr__(self, "lay_off_on", lay_off_on)

    def __hash__(self) -> int:
        return hash((self.count, self.meld, self.lay_off_on))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TakeDiscards):
            return NotImplemented
        return self.count == other.count and self.meld == other.meld and self.lay_off_on == other.lay_off_on


@dataclass(frozen=True, slots=True)
class Meld:
    """Lay one or more new melds at once (a Skarney contract is laid in one action, SKA-3)."""

    groups: tuple[Group, ...]

    def __init__(self, groups: tuple[Group, ...]) -> None:
        object.__setattr__(self, "groups", groups)

    def __hash__(self) -> int:
        return hash((self.groups,))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Meld):
            return NotImplemented
        return self.groups == other.groups


@dataclass(frozen=True, slots=True)
class LayOff:
    """Add cards to meld ``meld_id`` on the table."""

    meld_id: int
    cards: tuple[Card, ...]
    stands_for: tuple[tuple[Card, Card], ...] = ()

    def __init__(self, meld_id: int, cards: tuple[Card, ...], stands_for: tuple[tuple[Card, Card], ...] = ()) -> None:
        object.__setattr__(self, "meld_id", meld_id)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "stands_for", stands_for)

    def __hash__(self) -> int:
        return hash((self.meld_id, self.cards, self.stands_for))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LayOff):
            return NotImplemented
        return self.meld_id == other.meld_id and self.cards == other.cards and self.stands_for == other.stands_for


@dataclass(frozen=True, slots=True)
class ExchangeWild:
    """Replace the wild ``wild`` in meld ``meld_id`` with the natural card ``natural`` it stands for, taking the
    wild into hand (SKA-5, ARL-7)."""

    meld_id: int
    natural: Card
    wild: Card

    def __init__(self, meld_id: int, natural: Card, wild: Card) -> None:
        object.__setattr__(self, "meld_id", meld_id)
        object.__setattr__(self, "natural", natural)
        object.__setattr__(self, "wild", wild)

    def __hash__(self) -> int:
        return hash((self.meld_id, self.natural, self.wild))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExchangeWild):
            return NotImplemented
        return self.meld_id == other.meld_id and self.natural == other.natural and self.wild == other.wild


@dataclass(frozen=True, slots=True)
class Discard:
    """Discard one card, ending the turn (face up, or face down to one seat in Iceberg)."""

    card: Card

    def __init__(self, card: Card) -> None:
        object.__setattr__(self, "card", card)

    def __hash__(self) -> int:
        return hash((self.card,))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Discard):
            return NotImplemented
        return self.card == other.card


@dataclass(frozen=True, slots=True)
class Declare:
    """Declare (Indian rummy): the hand arranged in ``groups``, with ``discard`` the card put away (IND-7)."""

    groups: tuple[Group, ...]
    discard: Card | None = None

    def __init__(self, groups: tuple[Group, ...], discard: Card | None = None) -> None:
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "discard", discard)

    def __hash__(self) -> int:
        return hash((self.groups, self.discard))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Declare):
            return NotImplemented
        return self.groups == other.groups and self.discard == other.discard


@dataclass(frozen=True, slots=True)
class Drop:
    """Drop out of the deal (IND-10)."""

    def __hash__(self) -> int:
        return _NO_FIELDS_HASH

    def __eq__(self, other: object) -> bool:
        return True if isinstance(other, Drop) else NotImplemented


@dataclass(frozen=True, slots=True)
class EndTurn:
    """End the turn without discarding or offering, where the rules allow it (SKA-7 "one card")."""

    def __hash__(self) -> int:
        return _NO_FIELDS_HASH

    def __eq__(self, other: object) -> bool:
        return True if isinstance(other, EndTurn) else NotImplemented


@dataclass(frozen=True, slots=True)
class Offer:
    """Offer a card to the other seats in turn (SKA-7)."""

    card: Card

    def __init__(self, card: Card) -> None:
        object.__setattr__(self, "card", card)

    def __hash__(self) -> int:
        return hash((self.card,))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Offer):
            return NotImplemented
        return self.card == other.card


@dataclass(frozen=True, slots=True)
class AcceptOffer:
    """Accept the card on offer."""

    def __hash__(self) -> int:
        return _NO_FIELDS_HASH

    def __eq__(self, other: object) -> bool:
        return True if isinstance(other, AcceptOffer) else NotImplemented


@dataclass(frozen=True, slots=True)
class DeclineOffer:
    """Decline the card on offer."""

    def __hash__(self) -> int:
        return _NO_FIELDS_HASH

    def __eq__(self, other: object) -> bool:
        return True if isinstance(other, DeclineOffer) else NotImplemented


Action = (
    DrawStock
    | TakeDiscards
    | Meld
    | LayOff
    | ExchangeWild
    | Discard
    | Declare
    | Drop
    | EndTurn
    | Offer
    | AcceptOffer
    | DeclineOffer
)


# ---------------------------------------------------------------- events

_NOBODY: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened. ``to=None`` is public; otherwise only the seats in ``to`` receive it.
    ``not_to`` lists seats that get a private twin instead (the drawer sees "you drew 7H", others "drew")."""

    kind: str
    seat: int | None = None
    cards: tuple[Card, ...] = ()
    meld_id: int | None = None
    count: int = 0
    points: int = 0
    text: str = ""
    to: frozenset[int] | None = None
    not_to: frozenset[int] = _NOBODY

    def __init__(
        self, kind: str, seat: int | None = None, cards: tuple[Card, ...] = (), meld_id: int | None = None, count: int = 0,
        points: int = 0, text: str = "", to: frozenset[int] | None = None, not_to: frozenset[int] = _NOBODY,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "meld_id", meld_id)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "not_to", not_to)

    def visible_to(self, seat: int) -> bool:
        if self.to is not None:
            return seat in self.to
        return seat not in self.not_to

    @property
    def public(self) -> bool:
        return self.to is None


def private_event(full: Event, seats: frozenset[int] | set[int], redacted: Event | None = None) -> list[Event]:
    """``full`` for ``seats`` only, and for everyone else ``redacted`` (default: the same event without cards)."""
    seats = frozenset(seats)
    # each field of ``Event`` named (``dataclasses.replace`` costs several times more, on every draw of every game)
    if redacted is None:
        redacted = Event(kind=full.kind, seat=full.seat, cards=(), meld_id=full.meld_id, count=full.count,
                         points=full.points, text=full.text.split(":")[0], to=full.to, not_to=full.not_to)
    return [
        Event(kind=full.kind, seat=full.seat, cards=full.cards, meld_id=full.meld_id, count=full.count,
              points=full.points, text=full.text, to=seats, not_to=full.not_to),
        Event(kind=redacted.kind, seat=redacted.seat, cards=redacted.cards, meld_id=redacted.meld_id,
              count=redacted.count, points=redacted.points, text=redacted.text, to=None, not_to=seats),
    ]


# ---------------------------------------------------------------- state


@dataclass(frozen=True)
class TableMeld:
    """A meld on the table: its reading, its owner, and who laid each card (FH-6 credits the layer).

    Immutable: a lay-off or an exchange puts a new record in the old one's place (``HandState.relay``), so a
    seat's view holds the table's melds as they are, with no copy, and is never changed under it."""

    id: int
    owner: int
    reading: MeldReading
    laid_by: tuple[int, ...]
    kind: MeldKind | None = None  # overrides the reading's kind (e.g. ICE-4 special melds)
    label: str = ""  # a variant's name for a special meld
    laid_at_once: int = 0  # how many cards the first lay-down had

    def __init__(self, id: int, owner: int, reading: MeldReading, laid_by: tuple[int, ...], kind: MeldKind | None = None,
                 label: str = "", laid_at_once: int = 0) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "owner", owner)
        object.__setattr__(self, "reading", reading)
        object.__setattr__(self, "laid_by", laid_by)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "laid_at_once", laid_at_once)

    @property
    def meld_kind(self) -> MeldKind:
        return self.kind if self.kind is not None else self.reading.kind

    @property
    def cards(self) -> tuple[Placed, ...]:
        return self.reading.cards


def relaid(meld: TableMeld, reading: MeldReading, seat: int) -> tuple[list[int], list[Placed]]:
    """Who laid each card of ``reading``, the meld's new reading, and which of its cards are new: the meld's
    cards keep their layer (the first alike for twins), the new ones are ``seat``'s (FH-6 credits the layer)."""
    earlier: dict[Placed, list[int]] = {}
    for p, who in zip(meld.cards, meld.laid_by, strict=True):
        earlier.setdefault(p, []).append(who)
    layers: list[int] = []
    added: list[Placed] = []
    for p in reading.cards:
        left = earlier.get(p)
        if left:
            layers.append(left.pop(0))
        else:
            layers.append(seat)
            added.append(p)
    return layers, added


@dataclass(frozen=True, slots=True)
class Table:
    """What a new hand needs from the game: seats, dealer, hand number, teams and who is dealt in."""

    seats: int
    dealer: int
    hand_number: int
    teams: tuple[int, ...]
    active: tuple[bool, ...]
    totals: tuple[int, ...]


@dataclass
class HandState:
    """The whole truth of one hand. Variants subclass it for their own fields. Zones are shared so that the
    hidden-information test can read any variant: ``hands``, ``stock``, ``discards`` (bottom to top, shown per
    ``pile_view``), ``melds``, ``face_up`` (e.g. the wild-joker card), ``in_front`` (cards face up before a
    seat, e.g. Iceberg aces) and ``face_down`` (cards on the table known only to some seats)."""

    seats: int
    dealer: int
    hand_number: int
    teams: tuple[int, ...]
    active: list[bool]
    hands: list[list[Card]]
    stock: list[Card]
    turn: int
    phase: Phase
    seed: str
    pile_view: PileView = PileView.TOP
    discards: list[Card] = field(default_factory=list)
    melds: list[TableMeld] = field(default_factory=list)
    face_up: list[Card] = field(default_factory=list)
    in_front: list[list[Card]] = field(default_factory=list)
    face_down: list[tuple[Card, frozenset[int]]] = field(default_factory=list)
    wild_ranks: frozenset[Rank] = frozenset()
    turns: int = 0
    over: bool = False
    end_reason: str = ""
    went_out: int | None = None
    next_meld_id: int = 1
    restocks: int = 0
    opening_events: list[Event] = field(default_factory=list)  # forced steps done while dealing (ICE-2)

    def rng(self, purpose: str) -> random.Random:
        """A deterministic random source for chance inside a hand (a reshuffled stock, IND-14)."""
        return random.Random(f"{self.seed}:{purpose}:{self.restocks}")

    def meld(self, meld_id: int) -> TableMeld:
        for m in self.melds:
            if m.id == meld_id:
                return m
        raise IllegalAction("NO_SUCH_MELD", f"there is no meld {meld_id} on the table (COM-6: the melds are in your view)")

    def add_meld(self, owner: int, reading: MeldReading, kind: MeldKind | None = None, label: str = "") -> TableMeld:
        m = TableMeld(self.next_meld_id, owner, reading, (owner,) * len(reading.cards), kind, label, len(reading.cards))
        self.next_meld_id += 1
        self.melds.append(m)
        return m

    def relay(self, meld: TableMeld, reading: MeldReading, laid_by: Sequence[int]) -> TableMeld:
        """Put meld ``meld`` back on the table as it now reads (after a lay-off or an exchange), each card
        credited to ``laid_by``: a new record in the old one's place, which a view may still hold."""
        new = TableMeld(meld.id, meld.owner, reading, tuple(laid_by), meld.kind, meld.label, meld.laid_at_once)
        for i, m in enumerate(self.melds):
            if m.id == meld.id:
                self.melds[i] = new
                return new
        raise IllegalAction("NO_SUCH_MELD", f"there is no meld {meld.id} on the table (COM-6: the melds are in your view)")

    def partners(self, seat: int) -> list[int]:
        return [s for s in range(self.seats) if self.teams[s] == self.teams[seat]]

    def next_seat(self, seat: int) -> int:
        """The next seat clockwise (to the left, COM-4) still in the hand."""
        for step in range(1, self.seats + 1):
            s = (seat + step) % self.seats
            if self.active[s]:
                return s
        return seat


@dataclass(frozen=True, slots=True)
class Decision:
    """Who must choose now, in which phase; ``offer`` is the card on offer in an OFFER decision."""

    seat: int
    phase: Phase
    offer: Card | None = None
    note: str = ""

    def __init__(self, seat: int, phase: Phase, offer: Card | None = None, note: str = "") -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "offer", offer)
        object.__setattr__(self, "note", note)


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything one seat may know (COM-6), and nothing more."""

    variant: str
    seat: int
    hand_number: int
    dealer: int
    turn: int
    phase: Phase
    hand: tuple[Card, ...]
    hand_sizes: tuple[int, ...]
    stock_size: int
    discard_pile: tuple[Card, ...]
    discard_size: int
    melds: tuple[TableMeld, ...]
    face_up: tuple[Card, ...]
    wild_ranks: tuple[Rank, ...]
    in_front: tuple[tuple[Card, ...], ...]
    received: tuple[Card, ...]  # face-down cards this seat knows (passed to it or by it)
    teams: tuple[int, ...]
    active: tuple[bool, ...]
    totals: tuple[int, ...]
    notes: tuple[tuple[str, str], ...] = ()  # variant facts: ("contract", "3 sets of 3"), ("offer", "7H")
    offer: Card | None = None

    def __init__(
        self, variant: str, seat: int, hand_number: int, dealer: int, turn: int, phase: Phase, hand: tuple[Card, ...],
        hand_sizes: tuple[int, ...], stock_size: int, discard_pile: tuple[Card, ...], discard_size: int,
        melds: tuple[TableMeld, ...], face_up: tuple[Card, ...], wild_ranks: tuple[Rank, ...],
        in_front: tuple[tuple[Card, ...], ...], received: tuple[Card, ...], teams: tuple[int, ...],
        active: tuple[bool, ...], totals: tuple[int, ...], notes: tuple[tuple[str, str], ...] = (),
        offer: Card | None = None,
    ) -> None:
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "hand_number", hand_number)
        object.__setattr__(self, "dealer", dealer)
        object.__setattr__(self, "turn", turn)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "hand", hand)
        object.__setattr__(self, "hand_sizes", hand_sizes)
        object.__setattr__(self, "stock_size", stock_size)
        object.__setattr__(self, "discard_pile", discard_pile)
        object.__setattr__(self, "discard_size", discard_size)
        object.__setattr__(self, "melds", melds)
        object.__setattr__(self, "face_up", face_up)
        object.__setattr__(self, "wild_ranks", wild_ranks)
        object.__setattr__(self, "in_front", in_front)
        object.__setattr__(self, "received", received)
        object.__setattr__(self, "teams", teams)
        object.__setattr__(self, "active", active)
        object.__setattr__(self, "totals", totals)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "offer", offer)


@dataclass(frozen=True, slots=True)
class HandScore:
    """Points each seat adds to its total for the hand (penalties for lower-is-better variants)."""

    points: tuple[int, ...]
    winner: int | None
    reason: str
    details: tuple[str, ...] = ()


@dataclass
class GameState:
    """Between hands: totals, hands played, who is eliminated (IND-13 pools)."""

    seats: int
    teams: tuple[int, ...]
    totals: list[int]
    hands_played: int = 0
    eliminated: list[bool] = field(default_factory=list)
    history: list[HandScore] = field(default_factory=list)

    def team_totals(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for seat, team in enumerate(self.teams):
            out[team] = out.get(team, 0) + self.totals[seat]
        return out


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """The final ranking: groups of tied seats, best first, and why the game ended."""

    ranking: tuple[tuple[int, ...], ...]
    reason: str


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One documented rule variation (the first choice is the default)."""

    name: str
    choices: tuple[str, ...]
    doc: str
    clause: str

    @property
    def default(self) -> str:
        return self.choices[0]


@dataclass(frozen=True, slots=True)
class GroupVerdict:
    cards: tuple[Card, ...]
    valid: bool
    kind: str
    pure: bool
    reason: str
    points: int
    description: str = ""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The rules check for bot authors: each group's verdict, the whole as a declaration, the count."""

    groups: tuple[GroupVerdict, ...]
    declaration_valid: bool
    declaration_reason: str
    hand_points: int
    melded_points: int
    detail: str = ""


class Variant(Protocol):
    """The rules of one game. Every method is pure; state is changed only by ``apply``."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]]
    title: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    team_play: ClassVar[bool]  # seats play in two partnerships sitting opposite
    lower_is_better: ClassVar[bool]
    options: ClassVar[tuple[OptionSpec, ...]]

    def configure(self, options: Mapping[str, str], seats: int) -> Any:
        """Read the options into the variant's rules record. :raises InvalidOption:"""

    def deck(self, rules: Any, seats: int) -> list[Card]:
        """The unshuffled cards of a deal for ``seats`` players."""

    def new_hand(self, rules: Any, table: Table, deck: list[Card], seed: str) -> HandState:
        """Deal ``deck`` (top card first) for a new hand; ``seed`` seeds chance inside the hand."""

    def decision(self, state: HandState) -> Decision | None:
        """Who must choose what now; None when the hand is over."""

    def legal_actions(self, state: HandState, seat: int) -> list[Action]:
        """Legal actions for the deciding seat: every simple one, and the melds found by the meld finder."""

    def apply(self, state: HandState, seat: int, action: Action) -> list[Event]:
        """Apply one action. :raises IllegalAction: (state unchanged) :raises InvalidAction:"""

    def default_action(self, state: HandState, seat: int, missed_turns: int) -> Action:
        """The move made for a seat that missed its deadline (``missed_turns`` consecutive turns so far)."""

    def observe(self, state: HandState, seat: int) -> SeatView:
        """What ``seat`` may see."""

    def score(self, state: HandState) -> HandScore:
        """Score the hand, including one stopped early (``state.end_reason`` says why)."""

    def game_outcome(self, rules: Any, game: GameState, max_hands: int) -> GameOutcome | None:
        """The final ranking if the game is over after ``game.hands_played`` hands, else None."""

    def evaluate(self, rules: Any, wild_ranks: frozenset[Rank], groups: Sequence[Sequence[Card]]) -> Evaluation:
        """Rules check: meld validity, declaration validity and card counts for ``groups``."""


# ---------------------------------------------------------------- helpers shared by variants


def default_teams(team_play: bool, seats: int) -> tuple[int, ...]:
    """Team per seat: partners sit opposite (seats 0, 2 against 1, 3; FHP-1, SKA-1), or each seat alone."""
    return tuple(s % 2 for s in range(seats)) if team_play else tuple(range(seats))


def seat_order(seats: int, dealer: int, active: Sequence[bool] | None = None) -> list[int]:
    """Seats from the dealer's left, clockwise (COM-4), skipping those not dealt in."""
    order = [(dealer + k) % seats for k in range(1, seats + 1)]
    return [s for s in order if active is None or active[s]]


def deal_round_robin(deck: list[Card], order: Sequence[int], per_seat: int, seats: int) -> list[list[Card]]:
    """Deal ``per_seat`` cards one at a time to ``order`` from the top of ``deck`` (removed from it)."""
    hands: list[list[Card]] = [[] for _ in range(seats)]
    for _ in range(per_seat):
        for s in order:
            hands[s].append(deck.pop(0))
    return hands


def not_held(cards: Sequence[Card], held: Sequence[Card], where: str = "your hand") -> str:
    """The message of a ``CARD_NOT_IN_HAND`` refusal, naming the cards ``held`` lacks with the verb for one or more
    ("AS is not in your hand", "AS 2S are not in your hand"), or, where copies fall short, how many there are."""
    rest = list(held)
    missing = []
    for c in cards:
        if c in rest:
            rest.remove(c)
        else:
            missing.append(c)
    missing = missing or list(cards)
    short = next((c for c in missing if c in held), None)
    if short is not None:
        n = list(held).count(short)
        return f"only {n} {short} {'is' if n == 1 else 'are'} in {where}, not {list(cards).count(short)}"
    return f"{format_cards(missing)} {'is' if len(missing) == 1 else 'are'} not in {where}"


_TRAILING_CLAUSES = re.compile(r"\s*\((?:[A-Z]+-\d+[a-z]?)(?:, ?[A-Z]+-\d+[a-z]?)*\)$")


def without_clause(message: str) -> str:
    """``message`` without its trailing clause ids, "... (FH-3)" -> "...": for a message quoted inside another
    that cites its own, so none is printed twice ("(FH-3) (FH-3, FH-5)")."""
    return _TRAILING_CLAUSES.sub("", message)


def require(condition: bool, code: str, message: str) -> None:
    """Raise ``IllegalAction(code, message)`` unless ``condition``; the message should name the rule."""
    if not condition:
        raise IllegalAction(code, message)


def parse_options(specs: Sequence[OptionSpec], given: Mapping[str, str], variant: str) -> dict[str, str]:
    """Options with defaults filled in. :raises InvalidOption: naming the option and its allowed values."""
    known = {s.name: s for s in specs}
    out = {s.name: s.default for s in specs}
    for key, value in given.items():
        spec = known.get(key)
        if spec is None:
            raise InvalidOption("UNKNOWN_OPTION", f"{variant} has no option {key!r}; it has: {', '.join(known) or 'none'}")
        value = str(value).strip().lower()
        if spec.choices and not _choice_ok(spec, value):
            raise InvalidOption(
                "BAD_OPTION_VALUE", f"{variant} option {key} = {value!r} is not one of {', '.join(spec.choices)} ({spec.clause})"
            )
        out[key] = value
    return out


def _choice_ok(spec: OptionSpec, value: str) -> bool:
    if value in spec.choices:
        return True
    # an integer choice written as "<int>" accepts any positive integer
    return "<int>" in spec.choices and value.isdigit() and int(value) > 0


def rank_by_totals(game: GameState, lower_is_better: bool) -> tuple[tuple[int, ...], ...]:
    """Seats grouped by their team's total, best first; eliminated seats (IND-13 pools) after the rest."""
    team_total = game.team_totals()
    keyed: dict[tuple[bool, int], list[int]] = {}
    for s in range(game.seats):
        t = team_total[game.teams[s]]
        gone = game.eliminated[s] if game.eliminated else False
        keyed.setdefault((gone, t if lower_is_better else -t), []).append(s)
    return tuple(tuple(keyed[k]) for k in sorted(keyed))


def zone_view(
    state: HandState,
    seat: int,
    variant: str,
    totals: Sequence[int],
    notes: Sequence[tuple[str, str]] = (),
    phase: Phase | None = None,
    offer: Card | None = None,
) -> SeatView:
    """What ``seat`` sees of the shared zones (COM-6): its own hand, every hand's and the stock's size, the pile as
    ``pile_view`` shows it, the melds (copies), the face-up cards, and the face-down cards it was let in on."""
    if state.pile_view is PileView.FANNED:
        pile = tuple(state.discards)
    elif state.pile_view is PileView.TOP:
        pile = tuple(state.discards[-1:])
    else:
        pile = ()
    return SeatView(
        variant=variant, seat=seat, hand_number=state.hand_number, dealer=state.dealer, turn=state.turn,
        phase=phase if phase is not None else state.phase, hand=tuple(state.hands[seat]),
        hand_sizes=tuple(len(h) for h in state.hands), stock_size=len(state.stock), discard_pile=pile,
        discard_size=len(state.discards), melds=tuple(state.melds),
        face_up=tuple(state.face_up), wild_ranks=tuple(sorted(state.wild_ranks)),
        in_front=tuple(tuple(state.in_front[s]) if s < len(state.in_front) else () for s in range(state.seats)),
        received=tuple(c for c, who in state.face_down if seat in who), teams=state.teams,
        active=tuple(state.active), totals=tuple(totals), notes=tuple(notes), offer=offer,
    )


_Key = TypeVar("_Key")
_Value = TypeVar("_Value")


class PerRules(Generic[_Key, _Value]):
    """``make(rules)``, made once per rules record: found by the record's identity first (each match configures a
    record of its own, and hashing or comparing one, a dataclass of many fields, runs in Python even when compiled:
    more than the rest of a listing's look-ups), then by its value (equal records of other matches share one). Both
    memories are emptied past ``limit`` entries, so they stay small (a few rules records are in play at once: the
    options' combinations); the identity memory holds each record, so its id is not reused while remembered."""

    def __init__(self, make: Callable[[_Key], _Value], limit: int = 64) -> None:
        self._make = make
        self._limit = limit
        self._by_value: dict[_Key, _Value] = {}
        self._by_identity: dict[int, tuple[_Key, _Value]] = {}

    def __call__(self, rules: _Key) -> _Value:
        seen = self._by_identity.get(id(rules))
        if seen is not None and seen[0] is rules:
            return seen[1]
        got = self._by_value.get(rules)
        if got is None:
            if len(self._by_value) > self._limit:
                self._by_value.clear()
            got = self._by_value[rules] = self._make(rules)
        if len(self._by_identity) > self._limit:
            self._by_identity.clear()
        self._by_identity[id(rules)] = (rules, got)
        return got
