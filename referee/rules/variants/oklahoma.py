"""Fortune rummy (FOR) and Arlington / Oklahoma rummy (ARL): one engine, one rules record per variant.

Both games: two packs, deuces wild, a squared discard pile that is taken whole by melding its top card at once,
melds and lay-offs on one's own melds only, and a score per deal of melded cards minus cards in hand
(FOR-1..FOR-11). Arlington is Fortune with 13 cards, a game to 1000, deuce-only sets, a deuce as the queen of
spades only in an otherwise natural meld, heavier penalties, a going-out bonus and an optional joker (ARL-1..8).
Every difference is a field of ``OklahomaRules``; the two variant classes only read their options into it.

Turn: DRAW (``DrawStock`` or ``TakeDiscards(count=0, meld=Group(hand cards))``, or in Arlington's ``any-meld``
``TakeDiscards(count=0, lay_off_on=meld_id)``), then PLAY (``Meld``, ``LayOff``, ``ExchangeWild`` for the
joker, repeated) ending with ``Discard``, or going out by emptying the hand (a final discard is optional).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar

from referee.rules.cards import JOKER, Card, Rank, Suit, build_deck, contains_cards, format_cards, remove_cards, shuffle
from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption
from referee.rules.melds import (
    _CARD_OF,
    _CODE_OF,
    ACE_HIGH,
    MeldKind,
    MeldReading,
    MeldRules,
    Placed,
    WildOnly,
    _order_key,
    _rank_bits,
    _valid_run,
    _valid_set,
    extend_meld,
    find_melds,
    read_meld,
    readings,
)
from referee.rules.variants.base import (
    Action,
    Decision,
    Discard,
    DrawStock,
    Evaluation,
    Event,
    ExchangeWild,
    GameOutcome,
    GameState,
    Group,
    GroupVerdict,
    HandScore,
    HandState,
    LayOff,
    Meld,
    OptionSpec,
    PerRules,
    Phase,
    PileView,
    SeatView,
    Table,
    TableMeld,
    TakeDiscards,
    deal_round_robin,
    not_held,
    parse_options,
    private_event,
    rank_by_totals,
    relaid,
    require,
    seat_order,
    zone_view,
)

__all__ = [
    "OklahomaRules",
    "OklahomaState",
    "FORTUNE",
    "ARLINGTON",
    "Fortune",
    "Arlington",
    "VARIANTS",
    "QUEEN_OF_SPADES",
    "melded_value",
    "meld_points",
    "in_hand_value",
    "read_group",
]

QUEEN_OF_SPADES = Card(Rank.QUEEN, Suit.SPADES)
TURN_OVER, SHUFFLE = "turn-over", "shuffle"
TWO_FROM_HAND, ANY_MELD = "two-from-hand", "any-meld"
MAX_LISTED = 60  # legal-action lists stay small: every simple action, then a sample of melds and lay-offs
MAX_MELDS_LISTED = 20
MAX_TAKES_LISTED = 3


@dataclass(frozen=True, slots=True)
class OklahomaRules:
    """One variant's rules. ``FORTUNE`` and ``ARLINGTON`` are the defaults; options replace fields."""

    variant: str
    hand: int  # cards dealt to each player (FOR-1: 11, ARL-1: 13)
    target: int  # game score (FOR-8: 500, ARL-1: 1000)
    packs: int = 2  # FOR-1
    max_set: int | None = 4  # FOR-3 option max_set = 4 | unlimited
    restock: str = TURN_OVER  # FOR-9 option restock = turn-over | shuffle
    queen_of_spades_discard_forbidden: bool = True  # FOR-10 option (default forbidden); ARL-4 always
    deuce_sets: bool = False  # ARL-2: a set of deuces alone may be melded
    deuce_set_value: int = 25  # ARL-2: each deuce in a deuce-only set
    deuce_queen_natural_only: bool = False  # ARL-3
    going_out_bonus: int = 0  # FOR-7 none; ARL-6 100
    queen_of_spades_in_hand: int = -50  # FOR-11; ARL-5 -100
    deuce_in_hand: int = -10  # FOR-11; ARL-5 -20
    joker: bool = False  # ARL-7 option joker = off | on
    joker_retrieval: str = "melder"  # ARL-7 option joker_retrieval = melder | anyone
    pile_take: str = TWO_FROM_HAND  # ARL-8 option pile_take = two-from-hand | any-meld
    queen_clause: str = "FOR-10"  # the clause a refused queen-of-spades discard names
    pile_clause: str = "FOR-4"  # the clause a refused pile take names

    @property
    def wilds(self) -> frozenset[Rank]:
        """Deuces (FOR-2) and, with ARL-7's option, the joker."""
        return _DEUCES_AND_JOKER if self.joker else _DEUCES

    @property
    def meld_rules(self) -> MeldRules:
        """FOR-2, FOR-3, ARL-2 in the shared engine's terms: runs of any length, ace high or low. One record per
        set limit and wild-only rule, made once: it is asked for on every meld read while actions are listed."""
        key = (self.max_set, self.deuce_sets)
        found = _MELD_RULES.get(key)
        if found is None:
            found = _MELD_RULES[key] = MeldRules(
                max_set=self.max_set,
                wild_only=WildOnly.SPECIAL if self.deuce_sets else WildOnly.FORBIDDEN,
                min_wild_only=3,
            )
        return found


_DEUCES: frozenset[Rank] = frozenset({Rank.TWO})
_DEUCES_AND_JOKER: frozenset[Rank] = frozenset({Rank.TWO, Rank.JOKER})
_MELD_RULES: dict[tuple[int | None, bool], MeldRules] = {}


FORTUNE = OklahomaRules("fortune", hand=11, target=500)
ARLINGTON = OklahomaRules(
    "arlington",
    hand=13,
    target=1000,
    deuce_sets=True,
    deuce_queen_natural_only=True,
    going_out_bonus=100,
    queen_of_spades_in_hand=-100,
    deuce_in_hand=-20,
    queen_clause="ARL-4",
    pile_clause="ARL-8",
)


@dataclass
class OklahomaState(HandState):
    """A Fortune or Arlington hand: the shared zones plus the rules, the totals so far and the card drawn."""

    rules: OklahomaRules = FORTUNE
    totals: tuple[int, ...] = ()
    drawn: Card | None = None  # the card drawn from the stock this turn (the default discard)


# ---------------------------------------------------------------- values (FOR-11, ARL-2, ARL-5, ARL-7)


def melded_value(rules: OklahomaRules, kind: MeldKind, placed: Placed) -> int:
    """What one card scores on the table (FOR-11): a wild counts as the card it stands for (10 for the queen of
    spades), a natural queen of spades 50, an ace 10 high or 5 low in a run, a deuce in a deuce-only set 25
    (ARL-2), the joker 100 (ARL-7). An ace in a set counts 10, and a deuce read as a natural two 5."""
    if placed.card.is_joker:
        return 100
    if kind is MeldKind.WILD_SET:
        return rules.deuce_set_value
    if not placed.is_wild and placed.card == QUEEN_OF_SPADES:
        return 50
    if placed.rank is Rank.ACE:
        return 5 if kind is MeldKind.RUN and placed.pos == 1 else 10
    return 10 if placed.rank >= Rank.EIGHT else 5


def meld_points(rules: OklahomaRules, reading: MeldReading) -> int:
    """The value of a whole meld (FOR-11)."""
    return sum(melded_value(rules, reading.kind, p) for p in reading.cards)


def in_hand_value(rules: OklahomaRules, card: Card) -> int:
    """What a card caught in hand costs (negative; FOR-11, ARL-5, ARL-7)."""
    if card.is_joker:
        return -200
    if card == QUEEN_OF_SPADES:
        return rules.queen_of_spades_in_hand
    if card.rank is Rank.TWO:
        return rules.deuce_in_hand
    if card.rank is Rank.ACE or card.rank >= Rank.EIGHT:
        return -10
    return -5


# ---------------------------------------------------------------- reading melds (FOR-2, FOR-3, ARL-2, ARL-3)


def _deuce_queen_ok(rules: OklahomaRules, reading: MeldReading) -> bool:
    """ARL-3: a deuce may stand for the queen of spades only in a meld that is otherwise wholly natural."""
    if not rules.deuce_queen_natural_only:
        return True
    as_queen = any(
        p.is_wild and p.card.rank is Rank.TWO and p.rank is Rank.QUEEN and p.suit is Suit.SPADES for p in reading.cards
    )
    return not as_queen or reading.wilds_used == 1


def _explain_refusal(rules: OklahomaRules, exc: IllegalAction, what: str, unfiltered: Any) -> None:
    """Re-raise a refused reading as ARL-3 when ARL-3 alone refused it."""
    if not rules.deuce_queen_natural_only or exc.code == "AMBIGUOUS_WILD":
        return
    try:
        unfiltered()
    except IllegalAction as other:
        if other.code != "AMBIGUOUS_WILD":
            return
    raise IllegalAction(
        "DEUCE_AS_QUEEN_OF_SPADES",
        f"{what}: a deuce may stand for the queen of spades only in a meld that is otherwise wholly natural (ARL-3)",
    ) from exc


def read_group(rules: OklahomaRules, cards: Sequence[Card], stands_for: Sequence[tuple[Card, Card]] = ()) -> MeldReading:
    """The reading of a new meld under FOR-2, FOR-3, ARL-2 and ARL-3.

    :raises IllegalAction: ``DEUCES_ONLY_MELD`` (FOR-2), ``INVALID_MELD``, ``AMBIGUOUS_WILD``,
        ``WILD_CANNOT_STAND_THERE``, ``DEUCE_AS_QUEEN_OF_SPADES`` (ARL-3).
    """
    if not cards:
        raise InvalidAction("EMPTY_MELD", "a meld needs cards (FOR-3)")
    mr = rules.meld_rules
    if not rules.deuce_sets and all(c.rank in rules.wilds for c in cards):
        raise IllegalAction("DEUCES_ONLY_MELD", f"{format_cards(cards)}: deuces may not be melded by themselves (FOR-2)")
    try:
        return read_meld(cards, mr, rules.wilds, stands_for, "FOR-3", accept=partial(_deuce_queen_ok, rules))
    except IllegalAction as exc:
        _explain_refusal(rules, exc, format_cards(cards), lambda: read_meld(cards, mr, rules.wilds, stands_for, "FOR-3"))
        raise


def group_reads(rules: OklahomaRules, cards: Sequence[Card]) -> bool:
    """Whether ``read_group(rules, cards)`` takes the cards (no wild named): the same tests, without building a
    refusal (messages that describe every reading) for each group that is refused while actions are listed."""
    if not cards or (not rules.deuce_sets and all(c.rank in rules.wilds for c in cards)):
        return False
    kinds = {r.kind for r in readings(cards, rules.meld_rules, rules.wilds) if _deuce_queen_ok(rules, r)}
    return len(kinds) == 1  # none: INVALID_MELD; more: AMBIGUOUS_WILD


def group_extends(rules: OklahomaRules, meld: MeldReading, cards: Sequence[Card]) -> bool:
    """Whether ``extend_group(rules, meld, cards)`` takes the cards (no wild named), without building a refusal."""
    if not cards:
        return False
    return any(r.kind == meld.kind and _deuce_queen_ok(rules, r)
               for r in readings(cards, rules.meld_rules, rules.wilds, fixed=meld.cards))


def extend_group(
    rules: OklahomaRules, meld: MeldReading, cards: Sequence[Card], stands_for: Sequence[tuple[Card, Card]] = ()
) -> MeldReading:
    """The reading of ``meld`` with ``cards`` laid off on it (FOR-3, ARL-3). :raises IllegalAction:"""
    if not cards:
        raise InvalidAction("EMPTY_LAY_OFF", "a lay-off needs cards (FOR-5)")
    mr = rules.meld_rules
    try:
        return extend_meld(meld, cards, mr, rules.wilds, stands_for, "FOR-3", accept=partial(_deuce_queen_ok, rules))
    except IllegalAction as exc:
        _explain_refusal(rules, exc, f"{meld.describe()} + {format_cards(cards)}",
                         lambda: extend_meld(meld, cards, mr, rules.wilds, stands_for, "FOR-3"))
        raise


# ---------------------------------------------------------------- verification (one code path for apply and legal)


@dataclass(frozen=True, slots=True)
class _Take:
    hand_cards: tuple[Card, ...]
    reading: MeldReading
    meld_id: int | None  # laid off on this meld (ARL-8 any-meld), else a new meld


def _check_turn(state: OklahomaState, seat: int, phase: Phase, what: str, clause: str) -> None:
    # ``if not ...: raise`` rather than ``require``: legal-action listing runs these checks thousands of times,
    # and a message is worth formatting only when the check fails
    if state.over:
        raise IllegalAction("HAND_OVER", f"the hand is over ({state.end_reason}; FOR-7)")
    if seat != state.turn:
        raise IllegalAction("NOT_YOUR_TURN", f"seat {state.turn} is to act, not seat {seat} (COM-4)")
    if state.phase is not phase:
        raise IllegalAction("WRONG_PHASE", f"{what} is a {phase.value} move and seat {seat} is in {state.phase.value} ({clause})")


def _must_meld_message(rules: OklahomaRules, top: Card, why: str = "") -> str:
    how = ("melded at once, with cards from your hand or laid off on one of your melds" if rules.pile_take == ANY_MELD
           else "melded with at least two cards from your hand")
    return f"cannot take the pile: the top card {top} must be {how}{why} ({rules.pile_clause})"


def _own_meld(state: OklahomaState, seat: int, meld_id: int) -> TableMeld:
    meld = state.meld(meld_id)
    if meld.owner != seat:
        raise IllegalAction("NOT_YOUR_MELD", f"meld {meld_id} belongs to seat {meld.owner}: lay off only on your own melds (FOR-5)")
    return meld


def _in_hand(state: OklahomaState, seat: int, cards: Sequence[Card], what: str, clause: str) -> None:
    if not contains_cards(state.hands[seat], cards):
        raise IllegalAction("CARD_NOT_IN_HAND", f"{what}: {not_held(cards, state.hands[seat])} ({clause})")


def verify_take(state: OklahomaState, seat: int, action: TakeDiscards) -> _Take:
    """FOR-4 / ARL-8: the whole pile, its top card melded first with ``meld`` (cards from hand; the top card is
    added to them) or, in Arlington's ``any-meld``, laid off on one's own meld ``lay_off_on``.

    :raises IllegalAction: ``DISCARD_PILE_EMPTY``, ``BAD_TAKE_COUNT``, ``MUST_MELD_TOP_DISCARD``, ``CARD_NOT_IN_HAND``,
        ``NOT_YOUR_MELD`` and the meld engine's codes.
    """
    rules = state.rules
    _check_turn(state, seat, Phase.DRAW, "taking the pile", rules.pile_clause)
    require(bool(state.discards), "DISCARD_PILE_EMPTY", f"there is no discard pile to take ({rules.pile_clause})")
    n = len(state.discards)
    require(
        action.count in (0, n),
        "BAD_TAKE_COUNT",
        f"the pile is taken whole: count 0 (or {n}), not {action.count} ({rules.pile_clause})",
    )
    top = state.discards[-1]
    hand_cards = action.meld.cards if action.meld else ()
    stands_for = action.meld.stands_for if action.meld else ()
    _in_hand(state, seat, hand_cards, f"the meld lists cards from your hand (the top card {top} is added to them)", "FOR-4")
    if action.lay_off_on is not None:
        require(rules.pile_take == ANY_MELD, "MUST_MELD_TOP_DISCARD",
                _must_meld_message(rules, top, ", not laid off" + (" (pile_take = two-from-hand)" if rules.variant == "arlington" else "")))
        meld = _own_meld(state, seat, action.lay_off_on)
        try:
            reading = extend_group(rules, meld.reading, (top, *hand_cards), stands_for)
        except IllegalAction as exc:
            if exc.code != "CANNOT_LAY_OFF":
                raise
            raise IllegalAction("MUST_MELD_TOP_DISCARD",
                                _must_meld_message(rules, top, f": {exc.message.split(' (')[0]}")) from exc
        return _Take(tuple(hand_cards), reading, meld.id)
    require(len(hand_cards) >= 2, "MUST_MELD_TOP_DISCARD", _must_meld_message(rules, top))
    try:
        reading = read_group(rules, (top, *hand_cards), stands_for)
    except IllegalAction as exc:
        if exc.code != "INVALID_MELD":
            raise
        raise IllegalAction(
            "MUST_MELD_TOP_DISCARD",
            _must_meld_message(rules, top, f": {format_cards((top, *hand_cards))} is not a valid set or run"),
        ) from exc
    return _Take(tuple(hand_cards), reading, None)


def verify_meld(state: OklahomaState, seat: int, action: Meld) -> list[MeldReading]:
    """New melds from hand (FOR-3, FOR-5). :raises IllegalAction:"""
    _check_turn(state, seat, Phase.PLAY, "melding", "FOR-5")
    if not action.groups:
        raise InvalidAction("EMPTY_MELD", "a meld action needs at least one group (FOR-3)")
    _in_hand(state, seat, [c for g in action.groups for c in g.cards], "cannot meld", "FOR-3")
    return [read_group(state.rules, g.cards, g.stands_for) for g in action.groups]


def verify_lay_off(state: OklahomaState, seat: int, action: LayOff) -> tuple[TableMeld, MeldReading]:
    """Cards from hand added to one's own meld (FOR-5). :raises IllegalAction:"""
    _check_turn(state, seat, Phase.PLAY, "laying off", "FOR-5")
    meld = _own_meld(state, seat, action.meld_id)
    _in_hand(state, seat, action.cards, "cannot lay off", "FOR-5")
    return meld, extend_group(state.rules, meld.reading, action.cards, action.stands_for)


def verify_exchange(state: OklahomaState, seat: int, action: ExchangeWild) -> tuple[TableMeld, int, MeldReading]:
    """ARL-7: the joker taken back from a meld by replacing it with the natural card it stands for; by its
    melder only (``joker_retrieval = melder``) or by anyone. :raises IllegalAction:"""
    rules = state.rules
    _check_turn(state, seat, Phase.PLAY, "taking back the joker", "ARL-7")
    require(rules.joker, "NO_JOKER", "no card may be taken back from a meld: this game has no joker (ARL-7 joker = off)")
    require(action.wild.is_joker, "ONLY_JOKER_EXCHANGES",
            f"only the joker may be taken back from a meld, not {action.wild} (ARL-7)")
    meld = state.meld(action.meld_id)
    spot = next((i for i, p in enumerate(meld.cards) if p.card.is_joker), None)
    require(spot is not None, "WILD_NOT_THERE", f"meld {meld.id} holds no joker (ARL-7)")
    assert spot is not None
    if rules.joker_retrieval == "melder":
        require(meld.laid_by[spot] == seat, "NOT_THE_MELDER",
                f"only seat {meld.laid_by[spot]}, who melded the joker, may take it back (ARL-7 joker_retrieval = melder)")
    _in_hand(state, seat, [action.natural], "cannot take back the joker", "ARL-7")
    joker = meld.cards[spot]
    fits = not action.natural.is_joker and action.natural.rank == joker.rank and (
        joker.suit is Suit.NONE or action.natural.suit == joker.suit
    )
    stands = str(Card(joker.rank, joker.suit)) if joker.suit is not Suit.NONE else "a " + str(Card(joker.rank, Suit.SPADES))[:-1]
    require(fits, "WRONG_NATURAL",
            f"the joker in meld {meld.id} stands for {stands}: replace it with that card, not {action.natural} (ARL-7)")
    suit = joker.suit if joker.suit is not Suit.NONE else action.natural.suit
    cards = list(meld.cards)
    cards[spot] = Placed(joker.pos, action.natural, joker.rank, suit)
    return meld, spot, MeldReading(meld.reading.kind, tuple(cards))


def verify_discard(state: OklahomaState, seat: int, action: Discard) -> None:
    """FOR-6, FOR-10, ARL-4: one card face up; the queen of spades only when no other card is left. The rule
    reads "unless it is one's last/only card": a hand of queens of spades alone may shed them.

    :raises IllegalAction: ``CARD_NOT_IN_HAND``, ``QUEEN_OF_SPADES_DISCARD``.
    """
    rules = state.rules
    _check_turn(state, seat, Phase.PLAY, "discarding", "FOR-6")
    _in_hand(state, seat, [action.card], "cannot discard", "FOR-6")
    hand = state.hands[seat]
    if action.card == QUEEN_OF_SPADES and rules.queen_of_spades_discard_forbidden and any(c != QUEEN_OF_SPADES for c in hand):
        raise IllegalAction("QUEEN_OF_SPADES_DISCARD",
                            f"the queen of spades may not be discarded while you hold another card ({rules.queen_clause})")


# ---------------------------------------------------------------- the engine


def _went_out(state: OklahomaState, seat: int) -> list[Event]:
    """FOR-7: the deal ends when a player's hand is empty."""
    state.over = True
    state.went_out = seat
    state.end_reason = f"seat {seat} went out"
    bonus = state.rules.going_out_bonus
    extra = f", scoring a bonus of {bonus} (ARL-6)" if bonus else ""
    return [Event("WENT_OUT", seat, points=bonus, text=f"seat {seat} went out{extra} (FOR-7)")]


def _begin_turn(state: OklahomaState) -> list[Event]:
    """FOR-9: before a seat draws, an empty stock is rebuilt from the pile except its top card (turned over, or
    shuffled); with nothing to rebuild it from, the hand ends and is scored."""
    if state.stock or state.over:
        return []
    if len(state.discards) <= 1:
        state.over = True
        state.end_reason = "stock exhausted"
        return [Event("STOCK_EXHAUSTED", text="the stock is empty and the pile has no card under its top: the hand ends (FOR-9)")]
    cards = state.discards[:-1]  # bottom to top: turned over, the bottom card becomes the top of the stock
    if state.rules.restock == SHUFFLE:
        shuffle(state.rng("restock"), cards)
    state.stock = cards
    state.discards = state.discards[-1:]
    state.restocks += 1
    how = "shuffled" if state.rules.restock == SHUFFLE else "turned over"
    return [Event("RESTOCKED", count=len(cards),
                  text=f"the pile except its top card, {len(cards)} cards, {how} as the new stock (FOR-9)")]


def _after_play(state: OklahomaState, seat: int) -> list[Event]:
    return _went_out(state, seat) if not state.hands[seat] else []


class _Oklahoma:
    """The engine shared by Fortune and Arlington; subclasses name themselves, list options and read them."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]]
    title: ClassVar[str]
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int]
    team_play: ClassVar[bool] = False
    lower_is_better: ClassVar[bool] = False
    options: ClassVar[tuple[OptionSpec, ...]]
    base: ClassVar[OklahomaRules]
    seats_clause: ClassVar[str]

    # ------------------------------------------------------------ setup

    def _read_options(self, opts: Mapping[str, str]) -> dict[str, Any]:
        """The rules-record fields this variant's own options set."""
        return {}

    def configure(self, options: Mapping[str, str], seats: int) -> OklahomaRules:
        """Read the options (FOR-3, FOR-9, FOR-10, ARL-7, ARL-8). :raises InvalidOption:"""
        if not self.min_seats <= seats <= self.max_seats:
            raise InvalidOption("BAD_SEAT_COUNT", f"{self.name} is for {self.min_seats} to {self.max_seats} players, "
                                                  f"not {seats} ({self.seats_clause})")
        opts = parse_options(self.options, options, self.name)
        return replace(self.base, max_set=None if opts["max_set"] == "unlimited" else 4, restock=opts["restock"],
                       **self._read_options(opts))

    def deck(self, rules: OklahomaRules, seats: int) -> list[Card]:
        """Two packs (FOR-1), and the joker where ARL-7's option adds it."""
        return build_deck(rules.packs, 1 if rules.joker else 0)

    def new_hand(self, rules: OklahomaRules, table: Table, deck: list[Card], seed: str) -> OklahomaState:
        """FOR-1 / ARL-1: deal one at a time from the dealer's left, then one card face up starts the pile."""
        cards = list(deck)
        order = seat_order(table.seats, table.dealer, table.active)
        hands = deal_round_robin(cards, order, rules.hand, table.seats)
        upcard = [cards.pop(0)] if cards else []
        state = OklahomaState(
            seats=table.seats, dealer=table.dealer, hand_number=table.hand_number, teams=table.teams,
            active=list(table.active), hands=hands, stock=cards, turn=order[0], phase=Phase.DRAW, seed=seed,
            pile_view=PileView.TOP, discards=upcard, wild_ranks=rules.wilds, rules=rules, totals=table.totals,
        )
        _begin_turn(state)
        return state

    # ------------------------------------------------------------ queries

    def decision(self, state: HandState) -> Decision | None:
        if state.over:
            return None
        return Decision(state.turn, state.phase)

    def legal_actions(self, state: HandState, seat: int) -> list[Action]:
        """DRAW: the stock and up to a few ways to take the pile. PLAY: every distinct legal discard, then a
        sample of melds (from ``melds.find_melds``), single-card lay-offs and joker exchanges; all of them apply."""
        assert isinstance(state, OklahomaState)
        if state.over or seat != state.turn:
            return []
        rules, hand = state.rules, state.hands[seat]
        verdicts = _verdicts_for(rules)
        if state.phase is Phase.DRAW:
            return ([DrawStock()] if state.stock else []) + self._pile_takes(state, seat, verdicts)
        held = set(hand)
        distinct = sorted(held)
        # what verify_discard refuses of a card in hand: the queen of spades while another card is held (FOR-10)
        queen_kept = rules.queen_of_spades_discard_forbidden and QUEEN_OF_SPADES in held and len(held) > 1
        discard_of = _DISCARD_OF
        discards: list[Action] = []
        for c in distinct:
            if queen_kept and c == QUEEN_OF_SPADES:
                continue
            d = discard_of.get(c)
            if d is None:
                d = discard_of[c] = Discard(c)
            discards.append(d)
        room = max(MAX_MELDS_LISTED, MAX_LISTED - len(discards))
        plays: list[Action] = []
        most = min(room, MAX_MELDS_LISTED)
        for group in find_melds(hand, verdicts.meld_rules, verdicts.wilds):
            if len(plays) >= most:
                break
            if verdicts.reads_as_meld(group) and verdicts.held(hand, group):
                plays.append(Meld((Group(group),)))
        for meld in state.melds:
            if meld.owner != seat:
                continue
            # the cards that may lay off on the meld, in card order: those held, in the order of ``distinct``
            entry = verdicts.lay_off_entry(meld.reading)
            for card in entry.candidates:
                if card in held and verdicts.lays_off_known(entry, card):
                    plays.append(LayOff(meld.id, (card,)))
        if rules.joker:
            plays.extend(self._exchanges(state, seat))
        return discards + plays[:room]

    def _pile_takes(self, state: OklahomaState, seat: int, verdicts: _Verdicts) -> list[Action]:
        if not state.discards:
            return []
        top, wilds = state.discards[-1], state.wild_ranks
        hand = state.hands[seat]
        if wilds == verdicts.wilds and verdicts.meld_rules.max_wilds is None and top.rank not in wilds:
            out = verdicts.takes(hand, top)
        else:
            out = self._pile_takes_found(hand, top, wilds, verdicts)
        if state.rules.pile_take == ANY_MELD:
            for meld in state.melds:
                if meld.owner == seat and verdicts.extends(meld.reading, top):
                    out.append(TakeDiscards(0, lay_off_on=meld.id))
                    break
        return out

    def _pile_takes_found(self, hand: list[Card], top: Card, wilds: frozenset[Rank], verdicts: _Verdicts) -> list[Action]:
        """The pile takes that meld the top card with cards from hand, from ``find_melds`` (a wild on top, or wild
        ranks other than the rules')."""
        # only cards of the top card's rank or suit, and wilds, can meld with it
        near = [c for c in hand if c.rank in wilds or c.rank == top.rank or c.suit == top.suit]
        out: list[Action] = []
        for group in find_melds([*near, top], verdicts.meld_rules, wilds):
            if len(out) >= MAX_TAKES_LISTED:
                break
            if top not in group:
                continue
            rest = list(group)
            rest.remove(top)
            # what verify_take checks of a take listed in the DRAW phase: two cards or more from hand, melding
            if len(rest) >= 2 and contains_cards(hand, rest) and verdicts.reads_as_meld((top, *rest)):
                out.append(TakeDiscards(0, Group(tuple(rest))))
        return out

    def _exchanges(self, state: OklahomaState, seat: int) -> list[Action]:
        if not state.rules.joker:
            return []
        out: list[Action] = []
        for meld in state.melds:
            for p in meld.cards:
                if not p.card.is_joker:
                    continue
                natural = next((c for c in state.hands[seat] if not c.is_joker and c.rank == p.rank
                                and (p.suit is Suit.NONE or c.suit == p.suit)), None)
                action = ExchangeWild(meld.id, natural, JOKER) if natural else None
                if action and _applies(verify_exchange, state, seat, action):
                    out.append(action)
        return out

    # ------------------------------------------------------------ moves

    def apply(self, state: HandState, seat: int, action: Action) -> list[Event]:
        """Validate, then change the state and return what happened. :raises IllegalAction: :raises InvalidAction:"""
        assert isinstance(state, OklahomaState)
        match action:
            case DrawStock():
                return self._draw(state, seat)
            case TakeDiscards():
                return self._take(state, seat, verify_take(state, seat, action))
            case Meld():
                found = verify_meld(state, seat, action)
                events = []
                for group, reading in zip(action.groups, found, strict=True):
                    remove_cards(state.hands[seat], group.cards)
                    m = state.add_meld(seat, reading)
                    events.append(Event("MELDED", seat, tuple(reading.raw), m.id, points=meld_points(state.rules, reading),
                                        text=f"seat {seat} melded {reading.describe()}"))
                return events + _after_play(state, seat)
            case LayOff():
                meld, reading = verify_lay_off(state, seat, action)
                remove_cards(state.hands[seat], action.cards)
                state.relay(meld, reading, relaid(meld, reading, seat)[0])
                return [Event("LAID_OFF", seat, action.cards, meld.id, points=meld_points(state.rules, reading),
                              text=f"seat {seat} laid off {format_cards(action.cards)} on meld {meld.id}")] + _after_play(state, seat)
            case ExchangeWild():
                meld, spot, reading = verify_exchange(state, seat, action)
                state.hands[seat].remove(action.natural)
                state.hands[seat].append(JOKER)
                state.relay(meld, reading, [seat if i == spot else who for i, who in enumerate(meld.laid_by)])
                return [Event("EXCHANGED_WILD", seat, (action.natural, JOKER), meld.id,
                              text=f"seat {seat} took the joker back from meld {meld.id}, putting {action.natural} in its place (ARL-7)")]
            case Discard():
                verify_discard(state, seat, action)
                state.hands[seat].remove(action.card)
                state.discards.append(action.card)
                events = [Event("DISCARDED", seat, (action.card,), text=f"seat {seat} discarded {action.card}")]
                if not state.hands[seat]:
                    return events + _went_out(state, seat)
                state.turn = state.next_seat(seat)
                state.phase = Phase.DRAW
                state.drawn = None
                state.turns += 1
                return events + _begin_turn(state)
        _check_turn(state, seat, state.phase, type(action).__name__, "FOR-4")
        raise IllegalAction("NOT_IN_VARIANT", f"{type(action).__name__} is not a move in {self.title} (FOR-4, FOR-6: draw or take the pile, meld, discard)")

    def _draw(self, state: OklahomaState, seat: int) -> list[Event]:
        _check_turn(state, seat, Phase.DRAW, "drawing", "FOR-4")
        require(bool(state.stock), "STOCK_EMPTY", "the stock is empty (FOR-9)")
        card = state.stock.pop(0)
        state.hands[seat].append(card)
        state.drawn = card
        state.phase = Phase.PLAY
        return private_event(Event("DREW_STOCK", seat, (card,), text=f"seat {seat} drew from the stock: {card}"), {seat})

    def _take(self, state: OklahomaState, seat: int, take: _Take) -> list[Event]:
        """FOR-4: meld the top card first, then the rest of the pile goes into hand (hidden from the others)."""
        hand = state.hands[seat]
        remove_cards(hand, take.hand_cards)
        top = state.discards.pop()
        points = meld_points(state.rules, take.reading)
        if take.meld_id is None:
            m = state.add_meld(seat, take.reading)
            events = [Event("MELDED", seat, tuple(take.reading.raw), m.id, points=points,
                            text=f"seat {seat} melded the top card {top}: {take.reading.describe()}")]
        else:
            m = state.meld(take.meld_id)
            state.relay(m, take.reading, relaid(m, take.reading, seat)[0])
            events = [Event("LAID_OFF", seat, (top, *take.hand_cards), m.id, points=points,
                            text=f"seat {seat} laid off the top card {top} on meld {m.id}")]
        rest = tuple(state.discards)
        state.discards.clear()
        hand.extend(rest)
        state.phase = Phase.PLAY
        state.drawn = None
        events += private_event(Event("TOOK_DISCARDS", seat, rest, count=len(rest),
                                      text=f"seat {seat} took the rest of the pile, {len(rest)} cards: {format_cards(rest)}"), {seat})
        return events + _after_play(state, seat)

    def default_action(self, state: HandState, seat: int, missed_turns: int) -> Action:
        """Draw from the stock; then discard the drawn card, or else the legal card that costs most in hand."""
        assert isinstance(state, OklahomaState)
        if state.phase is Phase.DRAW:
            return DrawStock() if state.stock else self.legal_actions(state, seat)[0]
        if state.drawn is not None and _applies(verify_discard, state, seat, Discard(state.drawn)):
            return Discard(state.drawn)
        legal = [c for c in state.hands[seat] if _applies(verify_discard, state, seat, Discard(c))]
        return Discard(min(legal, key=lambda c: (in_hand_value(state.rules, c), -c.rank, c.suit)))

    def observe(self, state: HandState, seat: int) -> SeatView:
        """COM-6, FOR-6: the own hand, the melds, hand and stock sizes, the top card of the squared pile and its size."""
        assert isinstance(state, OklahomaState)
        notes = self._notes(state.rules) + (("restocks", str(state.restocks)),)
        if seat == state.turn and state.drawn is not None:
            notes += (("drawn", str(state.drawn)),)
        return zone_view(state, seat, self.name, state.totals, notes)

    def _notes(self, rules: OklahomaRules) -> tuple[tuple[str, str], ...]:
        return (
            ("target", str(rules.target)),
            ("max_set", "unlimited" if rules.max_set is None else str(rules.max_set)),
            ("restock", rules.restock),
            ("queen_of_spades_discard", "forbidden" if rules.queen_of_spades_discard_forbidden else "allowed"),
            ("pile_take", rules.pile_take),
        )

    # ------------------------------------------------------------ scoring

    def score(self, state: HandState) -> HandScore:
        """FOR-8: each seat scores its melded cards minus the cards left in its hand; the seat that went out adds
        ARL-6's bonus. A hand stopped by the stock (FOR-9) or the engine's turn cap scores the same, no bonus."""
        assert isinstance(state, OklahomaState)
        rules = state.rules
        points, details = [], []
        for s in range(state.seats):
            melded = sum(melded_value(rules, m.meld_kind, p)
                         for m in state.melds for p, layer in zip(m.cards, m.laid_by, strict=True) if layer == s)
            in_hand = sum(in_hand_value(rules, c) for c in state.hands[s])
            bonus = rules.going_out_bonus if state.went_out == s else 0
            points.append(melded + in_hand + bonus)
            details.append(f"seat {s}: melded {melded}, in hand {in_hand}" + (f", going out {bonus}" if bonus else ""))
        return HandScore(tuple(points), state.went_out, state.end_reason or "hand over", tuple(details))

    def game_outcome(self, rules: OklahomaRules, game: GameState, max_hands: int) -> GameOutcome | None:
        """FOR-8 / ARL-1: the game ends after the hand in which a seat reaches the target; highest total first."""
        if any(t >= rules.target for t in game.totals):
            return GameOutcome(rank_by_totals(game, False), f"target reached ({rules.target} points)")
        return None

    def evaluate(self, rules: OklahomaRules, wild_ranks: frozenset[Rank], groups: Sequence[Sequence[Card]]) -> Evaluation:
        """Each group as a new meld under FOR-2, FOR-3, ARL-2, ARL-3 with its melded value (FOR-11), and what all the
        cards would cost caught in hand. A group that reads several ways is valid: its best reading is scored."""
        verdicts = []
        for cards in groups:
            try:
                reading = read_group(rules, cards)
                verdicts.append(GroupVerdict(tuple(cards), True, reading.kind.value, reading.pure, "",
                                             meld_points(rules, reading), reading.describe()))
            except IllegalAction as exc:
                if exc.code == "AMBIGUOUS_WILD":
                    found = [r for r in readings(cards, rules.meld_rules, rules.wilds) if _deuce_queen_ok(rules, r)]
                    best = max(found, key=lambda r: meld_points(rules, r))
                    verdicts.append(GroupVerdict(tuple(cards), True, best.kind.value, best.pure, exc.code,
                                                 meld_points(rules, best), exc.message))
                else:
                    verdicts.append(GroupVerdict(tuple(cards), False, "", False, exc.code, 0, exc.message))
            except InvalidAction as unread:  # a name of its own: mypyc types ``exc`` from the first clause
                verdicts.append(GroupVerdict(tuple(cards), False, "", False, unread.code, 0, unread.message))
        bad = next((v for v in verdicts if not v.valid), None)
        hand_points = sum(in_hand_value(rules, c) for cards in groups for c in cards)
        melded = sum(v.points for v in verdicts if v.valid)
        return Evaluation(tuple(verdicts), bad is None, bad.reason if bad else "", hand_points, melded,
                          f"melded {melded}, caught in hand {hand_points} (FOR-11)")


def _may_fit(meld: MeldReading, card: Card, wilds: frozenset[Rank]) -> bool:
    """A cheap first test for a one-card lay-off (the real test is ``verify_lay_off``): a wild, a card of the
    set's rank, or a card of the run's suit just below or above it."""
    if card.rank in wilds:
        return True
    if meld.kind is not MeldKind.RUN:
        return meld.kind is MeldKind.SET and card.rank == meld.rank
    if card.suit != meld.suit:
        return False
    below, above = meld.cards[0].pos - 1, meld.cards[-1].pos + 1  # a run's cards are placed low to high
    if card.rank is Rank.ACE:
        return below in (1, 14) or above in (1, 14)
    return int(card.rank) in (below, above)


def _applies(verify: Any, state: OklahomaState, seat: int, action: Action) -> bool:
    try:
        verify(state, seat, action)
    except (IllegalAction, InvalidAction):
        return False
    return True


_VERDICTS_LIMIT = 1 << 14  # verdicts remembered per rules record before the memory is cleared


class _Verdicts:
    """Whether cards read as a new meld (``read_group``) and which cards lay off alone on a meld (``extend_group``),
    remembered for one rules record. Both are pure functions of the rules and the cards, and listing legal
    actions asks them of the same groups and melds turn after turn; what depends on the state (turn, phase, the
    meld's owner, the cards being in hand) the caller checks, as ``verify_meld``, ``verify_lay_off`` and
    ``verify_take`` do."""

    __slots__ = ("rules", "meld_rules", "wilds", "wild_bits", "cards", "melds", "coded", "lay_offs", "fits")

    def __init__(self, rules: OklahomaRules) -> None:
        self.rules = rules
        self.meld_rules = rules.meld_rules
        self.wilds = rules.wilds  # the hand's ``wild_ranks`` (``new_hand``)
        self.wild_bits = _rank_bits(self.wilds)
        self.cards = _EVERY_CARD
        self.melds: dict[tuple[Card, ...], bool] = {}
        self.coded: dict[tuple[int, ...], bool] = {}  # the same verdicts by the cards' sorted codes (pile takes)
        # by the reading's identity: a reading is immutable and is held here, so its id names it while remembered
        self.lay_offs: dict[int, _LayOffs] = {}
        self.fits: dict[tuple[int, int, int, int], list[Card]] = {}  # may-fit cards by a meld's shape (a few hundred)

    def reads_as_meld(self, cards: tuple[Card, ...]) -> bool:
        ok = self.melds.get(cards)
        if ok is None:
            if len(self.melds) > _VERDICTS_LIMIT:
                self.melds.clear()
            ok = self.melds[cards] = self.group_reads(cards)
        return ok

    def group_reads(self, cards: tuple[Card, ...]) -> bool:
        """``group_reads(rules, cards)`` on card codes, without building a reading: a group with a natural card
        reads as a set (``_valid_set``) or a run (``_valid_run``), and is taken when it reads as exactly one of the
        two. ARL-3 refuses only runs in which a deuce stands for the queen of spades beside another wild, so a
        group that could be one (two wilds or more, its naturals all spades) and groups of wilds alone are read the
        slow way. tests/variants/test_oklahoma_listing.py holds the two to the same answer."""
        if not cards:
            return False
        wild_bits = self.wild_bits
        codes: list[int] = []
        naturals = nat_ranks = nat_suits = 0
        for card in cards:
            c = _CODE_OF[card]
            codes.append(c)
            if not wild_bits >> (c // 5) & 1:
                naturals += 1
                nat_ranks |= 1 << (c // 5)
                nat_suits |= 1 << (c % 5)
        if naturals == 0 or (self.rules.deuce_queen_natural_only and len(codes) - naturals >= 2
                             and nat_suits == _SPADES_BIT):
            return group_reads(self.rules, cards)
        codes.sort()
        g = tuple(codes)
        mr = self.meld_rules
        return _valid_set(g, mr, wild_bits, naturals, nat_ranks) != _valid_run(g, mr, wild_bits, naturals, nat_suits)

    def takes(self, hand: Sequence[Card], top: Card) -> list[Action]:
        """The first few pile takes that meld a natural top card with two cards or more from ``hand``, as
        ``_pile_takes_found`` lists them, without the meld finder: its candidates that hold the top card, made the
        finder's way (``melds._set_groups`` of the top card's rank, ``melds._run_groups`` of its suit, from the hand's
        cards near it and the top card), in its order (longest first, then by codes), each kept when it reads as a
        meld. A group that reads as a meld is valid, so the finder lists it; its cards other than the top card are
        the near cards, so the hand holds them."""
        mr = self.meld_rules
        wild_bits = self.wild_bits
        t = _CODE_OF[top]
        rank, suit = t // 5, t % 5
        rank_codes = [t]
        wild_codes: list[int] = []
        held = (1 << 1 | 1 << ACE_HIGH) if rank == 1 else 1 << rank  # the suit's run positions held (the top card's)
        ranks = 1 << rank  # the suit's natural ranks held
        near = 1
        for card in hand:
            c = _CODE_OF[card]
            r = c // 5
            if wild_bits >> r & 1:
                wild_codes.append(c)
                near += 1
                continue
            if r == rank:
                rank_codes.append(c)
            if c % 5 == suit:
                held |= (1 << 1 | 1 << ACE_HIGH) if r == 1 else 1 << r
                ranks |= 1 << r
            elif r != rank:
                continue
            near += 1
        wild_codes.sort()
        nw = len(wild_codes)
        found: dict[int, tuple[int, ...]] = {}
        if mr.sets and len(rank_codes) + nw >= mr.min_set:
            top_size = mr.max_set if mr.max_set is not None else near
            rank_codes.sort()
            kinds = sorted(set(rank_codes))
            most = min(len(rank_codes), top_size)
            for taken in itertools.product(*(range(rank_codes.count(c) + 1) for c in kinds)):
                size = sum(taken)
                if not 1 <= size <= most or size + nw < mr.min_set or taken[kinds.index(t)] == 0:
                    continue
                combo = [c for c, n in zip(kinds, taken, strict=True) for _ in range(n)]
                for k in range(max(0, mr.min_set - size), min(nw, top_size - size) + 1):
                    g = tuple(sorted(combo + wild_codes[:k]))
                    found[_order_key(g)] = g
        if mr.runs and bin(ranks).count("1") + nw >= mr.min_run:
            lo_min = 1 if (mr.ace_low and mr.aces_meld) else 2
            hi_max = ACE_HIGH if (mr.ace_high and mr.aces_meld) else 13
            for low in range(lo_min, hi_max + 1):
                group: list[int] = []
                missing = 0
                for high in range(low, hi_max + 1):
                    if held >> high & 1:
                        group.append((1 if high == ACE_HIGH else high) * 5 + suit)
                    else:
                        missing += 1
                    if high < low + mr.min_run - 1 or (low == 1 and high == ACE_HIGH):
                        continue
                    if missing > nw:
                        break
                    if t in group:
                        g = tuple(sorted(group + wild_codes[:missing]))
                        found[_order_key(g)] = g
        out: list[Action] = []
        for key in sorted(found, key=_finder_rank):
            if len(out) >= MAX_TAKES_LISTED:
                break
            g = found[key]
            if len(g) >= 3 and self.reads_codes(g):
                rest = list(g)
                rest.remove(t)
                out.append(TakeDiscards(0, Group(tuple([_CARD_OF[c] for c in rest]))))
        return out

    def reads_codes(self, g: tuple[int, ...]) -> bool:
        """``group_reads`` of the cards of sorted codes ``g``, remembered."""
        ok = self.coded.get(g)
        if ok is None:
            if len(self.coded) > _VERDICTS_LIMIT:
                self.coded.clear()
            ok = self.coded[g] = self.group_reads(tuple([_CARD_OF[c] for c in g]))
        return ok

    def held(self, hand: Sequence[Card], group: tuple[Card, ...]) -> bool:
        """Whether ``hand`` holds ``group``, one of ``find_melds(hand)``: always, save a group of wilds only, which
        the finder may list with a wild more often than it is held."""
        return not all(c.rank in self.wilds for c in group) or contains_cards(hand, group)

    def lay_off_entry(self, meld: MeldReading) -> _LayOffs:
        """What is remembered of ``meld`` for one-card lay-offs (made the first time the reading is seen)."""
        entry = self.lay_offs.get(id(meld))
        if entry is None or entry.meld is not meld:
            if len(self.lay_offs) > _VERDICTS_LIMIT:
                self.lay_offs.clear()
            # ``_may_fit`` reads only the kind and the set's rank or the run's suit and ends: its cards by those
            if meld.kind is MeldKind.SET:
                shape = (0, int(meld.rank), 0, 0)
            elif meld.kind is MeldKind.RUN:
                shape = (1, int(meld.suit), meld.cards[0].pos, meld.cards[-1].pos)
            else:
                shape = (2, 0, 0, 0)
            candidates = self.fits.get(shape)
            if candidates is None:
                candidates = self.fits[shape] = [c for c in self.cards if _may_fit(meld, c, self.wilds)]
            entry = self.lay_offs[id(meld)] = _LayOffs(meld, candidates)
        return entry

    def lays_off_known(self, entry: _LayOffs, card: Card) -> bool:
        """Whether ``card``, one of ``entry.candidates``, lays off alone on ``entry.meld``."""
        known = entry.known
        ok = known.get(card)
        if ok is None:
            meld = entry.meld
            if meld.kind is MeldKind.SET:
                # a set (FOR-3) takes a card of its rank or a wild, up to the set limit: what ``extends`` finds
                # for a candidate (``_set_readings`` with the meld's cards fixed; ARL-3 never refuses a set, whose
                # wilds stand for no suit)
                max_set = self.meld_rules.max_set
                ok = known[card] = max_set is None or len(meld.cards) < max_set
            else:
                ok = known[card] = self.extends(meld, card)
        return ok

    def lays_off(self, meld: MeldReading, card: Card) -> bool:
        """Whether ``card`` lays off alone on ``meld``: it may fit (``_may_fit``) and the meld extends with it."""
        entry = self.lay_off_entry(meld)
        return card in entry.candidates and self.lays_off_known(entry, card)

    def extends(self, meld: MeldReading, card: Card) -> bool:
        return group_extends(self.rules, meld, (card,))


class _LayOffs:
    """One meld reading's one-card lay-offs: the cards that may fit it (``_may_fit``), in card order, and the
    verdicts on those asked so far."""

    __slots__ = ("meld", "candidates", "known")

    def __init__(self, meld: MeldReading, candidates: list[Card]) -> None:
        self.meld = meld
        self.candidates = candidates
        self.known: dict[Card, bool] = {}


_SPADES_BIT = 1 << int(Suit.SPADES)


def _finder_rank(key: int) -> tuple[int, int]:
    """``find_melds``' order of a group by its ``_order_key``: longest first, then by codes."""
    return -key.bit_length(), key


_EVERY_CARD: list[Card] = sorted(set(build_deck(1, 1)))  # the 52 cards and the joker, in card order
_DISCARD_OF: dict[Card, Discard] = {}  # one Discard per card, shared by every listing (actions are immutable)

_verdicts_for: PerRules[OklahomaRules, _Verdicts] = PerRules(_Verdicts)


_MAX_SET = OptionSpec("max_set", ("4", "unlimited"), "largest set: 4 cards, or no limit", "FOR-3")
_RESTOCK = OptionSpec("restock", (TURN_OVER, SHUFFLE),
                      "an exhausted stock is rebuilt from the pile except its top card, turned over or shuffled", "FOR-9")


class Fortune(_Oklahoma):
    """Fortune rummy (FOR-1..FOR-11)."""

    name: ClassVar[str] = "fortune"
    aliases: ClassVar[tuple[str, ...]] = ("fortune-rummy",)
    title: ClassVar[str] = "Fortune Rummy"
    max_seats: ClassVar[int] = 8
    seats_clause: ClassVar[str] = "FOR-1"
    base: ClassVar[OklahomaRules] = FORTUNE
    options: ClassVar[tuple[OptionSpec, ...]] = (
        _MAX_SET,
        _RESTOCK,
        OptionSpec("queen_of_spades_discard", ("forbidden", "allowed"),
                   "whether the queen of spades may be discarded while other cards are held", "FOR-10"),
    )

    def _read_options(self, opts: Mapping[str, str]) -> dict[str, Any]:
        return {"queen_of_spades_discard_forbidden": opts["queen_of_spades_discard"] == "forbidden"}


class Arlington(_Oklahoma):
    """Arlington or Oklahoma rummy (ARL-1..ARL-8). Seven seats at most: two packs deal 13 cards to seven players
    with an up-card and a stock (eight would need all 104 cards)."""

    name: ClassVar[str] = "arlington"
    aliases: ClassVar[tuple[str, ...]] = ("oklahoma", "oklahoma-rummy", "arlington-rummy")
    title: ClassVar[str] = "Arlington (Oklahoma) Rummy"
    max_seats: ClassVar[int] = 7
    seats_clause: ClassVar[str] = "ARL-1"
    base: ClassVar[OklahomaRules] = ARLINGTON
    options: ClassVar[tuple[OptionSpec, ...]] = (
        _MAX_SET,
        _RESTOCK,
        OptionSpec("joker", ("off", "on"), "one joker: wild, 100 melded, -200 in hand", "ARL-7"),
        OptionSpec("joker_retrieval", ("melder", "anyone"),
                   "who may take the joker back by replacing it with the natural card it stands for", "ARL-7"),
        OptionSpec("pile_take", (TWO_FROM_HAND, ANY_MELD),
                   "the top discard melded with two cards from hand (Parlett), or melded at once in any way (Scarne)",
                   "ARL-8"),
    )

    def _read_options(self, opts: Mapping[str, str]) -> dict[str, Any]:
        return {"joker": opts["joker"] == "on", "joker_retrieval": opts["joker_retrieval"], "pile_take": opts["pile_take"]}

    def _notes(self, rules: OklahomaRules) -> tuple[tuple[str, str], ...]:
        notes = [(k, v) for k, v in super()._notes(rules) if k != "queen_of_spades_discard"]
        return (*notes, ("queen_of_spades_discard", "only-card"), ("joker", "on" if rules.joker else "off"),
                ("joker_retrieval", rules.joker_retrieval))


VARIANTS = (Fortune(), Arlington())
