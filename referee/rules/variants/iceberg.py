"""Iceberg (ICE): Gordon Bower's meld-scoring rummy where a meld grows in value as it grows in length.

Seven cards each from one pack (2-3 players) or two (4-5), no discard pile (ICE-1). A turn (ICE-2): the variant
itself picks up the card passed face down to the player, draws the stock's top card for him and lays every ace
in his hand face up in front of him; then the player melds pairs, sets and runs (ICE-3) and special melds
(ICE-4) and lays off on anyone's melds, and passes one card face down to his right-hand opponent (ICE-9), who
picks it up at his next turn. The hand ends when a player goes out or when the last ace is exposed and its
holder has finished his turn (ICE-5). Cards left in hand count against their holder (ICE-6) and aces multiply
the hand's score (ICE-7). The game goes on to 5000 points (ICE-8).

Choices where RULES.md is silent (also in the project notes):

- A meld laid at once scores as if its cards past the third were added one at a time: a pair 10, three cards 30,
  four 30+40, five 30+40+50, and so on (ICE-3); a lay-off of several cards scores each card by its position.
- ``special_values`` lists, in RULES.md's order, the values of evens in one suit, odds in one colour and evens
  in one colour; odds in one suit is always 700 (ICE-4). The default ``700-350-350`` is RULES.md's; the
  alternative ``500-300-200`` is the table of the inventor's own (archived) page. A colour meld mixes suits (six
  cards of one suit are the suit meld).
- The multiplier applies to a negative hand score too, making it worse: the seed scores player C
  ``(20+40-20-50)x2 = -20`` (ICE-7). With ``aces=bonus`` each ace adds 20 to the hand score instead.
- The ICE-6 lay-off penalty is judged card by card against the melds on the table when the hand ends, as the
  seed does ("only two queens actually got played"); cards that could only meld among themselves count -10 only;
  a card passed face down and not yet picked up counts for nobody.
- The passed card is shown, while it lies face down, in the ``received`` of both the passer and the receiver
  (both know it, ICE-2), never to anyone else; once picked up it is in the receiver's hand.
- A stock that runs out (only possible with a stacked deck) ends the hand after that turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from referee.rules.cards import JOKER, Card, Rank, Suit, build_deck, contains_cards, remove_cards
from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption
from referee.rules.melds import (
    NATURAL_CARDS,
    MeldKind,
    MeldReading,
    MeldRules,
    Placed,
    extend_meld,
    extension,
    find_melds,
    read_meld,
)
from referee.rules.variants.base import (
    Action,
    Decision,
    Discard,
    DrawStock,
    Evaluation,
    Event,
    GameOutcome,
    GameState,
    Group,
    GroupVerdict,
    HandScore,
    HandState,
    LayOff,
    Meld,
    OptionSpec,
    Phase,
    PileView,
    SeatView,
    Table,
    TableMeld,
    deal_round_robin,
    parse_options,
    private_event,
    rank_by_totals,
    require,
    seat_order,
    zone_view,
)

__all__ = [
    "VARIANTS",
    "Iceberg",
    "IcebergRules",
    "IcebergState",
    "ICEBERG_MELDS",
    "HAND_SIZE",
    "ODDS_SUIT",
    "EVENS_SUIT",
    "ODDS_COLOUR",
    "EVENS_COLOUR",
    "meld_points",
    "card_points",
    "layoff_points",
    "special_label",
    "find_specials",
    "fits",
    "next_card_points",
]

HAND_SIZE = 7  # ICE-1
MAX_LEGAL = 60  # keep a request small; every discard is always listed
ACE_BONUS = 20  # ICE-7 aces=bonus
LEFT_IN_HAND = -10  # ICE-6

# ICE-3: pairs (two of a rank), sets of up to four, runs of one suit from 2 to K; all suits different; no aces.
ICEBERG_MELDS = MeldRules(
    min_set=2, max_set=4, set_distinct_suits=True, min_run=3, ace_low=False, ace_high=False, aces_meld=False
)

ODDS_SUIT = "odds in one suit"
EVENS_SUIT = "evens in one suit"
ODDS_COLOUR = "odds in one colour"
EVENS_COLOUR = "evens in one colour"
_ODDS = frozenset({Rank.THREE, Rank.FIVE, Rank.SEVEN, Rank.NINE, Rank.JACK, Rank.KING})
_EVENS = frozenset({Rank.TWO, Rank.FOUR, Rank.SIX, Rank.EIGHT, Rank.TEN, Rank.QUEEN})
_RED = frozenset({Suit.HEARTS, Suit.DIAMONDS})
_BLACK = frozenset({Suit.SPADES, Suit.CLUBS})
ODDS_SUIT_VALUE = 700  # ICE-4: the one value the source gives


# ---------------------------------------------------------------- scoring helpers (shared with the bots)


def card_points(position: int) -> int:
    """What the card at ``position`` (1-based) of a set or run scores (ICE-3): the third card added to a pair
    20, the 4th 40, the 5th 50, ... 10 times its position up to the 12th (120)."""
    if position <= 2:
        return 0
    return 20 if position == 3 else 10 * position


def meld_points(size: int) -> int:
    """What a pair, set or run of ``size`` cards scores laid at once (ICE-3): a pair 10, three cards 30, and each
    card past the third its position's value (four cards 30+40)."""
    if size < 2:
        return 0
    if size == 2:
        return 10
    return 30 + sum(10 * k for k in range(4, size + 1))


def layoff_points(meld_size: int, added: int) -> int:
    """What ``added`` cards laid off on a meld of ``meld_size`` cards score, each by its position (ICE-3)."""
    return sum(card_points(k) for k in range(meld_size + 1, meld_size + added + 1))


def special_label(cards: Sequence[Card]) -> str | None:
    """The ICE-4 special meld ``cards`` make, or None: the six odd cards (K-J-9-7-5-3) or the six even cards
    (Q-10-8-6-4-2) of one suit, or of one colour in mixed suits."""
    if len(cards) != 6 or len({c.rank for c in cards}) != 6:
        return None
    ranks = {c.rank for c in cards}
    parity = "odds" if ranks == _ODDS else "evens" if ranks == _EVENS else None
    if parity is None:
        return None
    suits = {c.suit for c in cards}
    if len(suits) == 1:
        return ODDS_SUIT if parity == "odds" else EVENS_SUIT
    if suits <= _RED or suits <= _BLACK:
        return ODDS_COLOUR if parity == "odds" else EVENS_COLOUR
    return None


_CARD_AT: dict[tuple[Rank, Suit], Card] = {(r, s): Card(r, s) for r in Rank if r is not Rank.JOKER
                                           for s in Suit if s is not Suit.NONE}
_ONE_SUIT_SPECIAL: dict[tuple[frozenset[Rank], Suit], tuple[Card, ...]] = {
    (ranks, s): tuple(sorted(_CARD_AT[r, s] for r in ranks)) for ranks in (_ODDS, _EVENS) for s in Suit if s is not Suit.NONE}


def find_specials(hand: Sequence[Card]) -> list[tuple[Card, ...]]:
    """One group of ``hand`` for each ICE-4 special meld it holds (per suit or colour and parity)."""
    out: list[tuple[Card, ...]] = []
    if len(hand) < 6:
        return out
    have = set(hand)
    held_ranks = {c.rank for c in have}
    for ranks in (_ODDS, _EVENS):
        if not ranks <= held_ranks:
            continue  # a special meld needs every rank of its parity
        for colour in (_BLACK, _RED):
            suits = sorted(colour)
            for s in suits:
                group = _ONE_SUIT_SPECIAL[ranks, s]
                if all(c in have for c in group):
                    out.append(group)
            # a mixed-suit colour meld: one card per rank, swapping one suit if the first picks are all alike
            options = {r: [s for s in suits if _CARD_AT[r, s] in have] for r in ranks}
            if not all(options.values()):
                continue
            pick = {r: v[0] for r, v in options.items()}
            if len(set(pick.values())) == 1:
                spare = [r for r, v in options.items() if len(v) == 2]
                if not spare:
                    continue
                pick[spare[0]] = options[spare[0]][1]
            out.append(tuple(sorted(_CARD_AT[r, s] for r, s in pick.items())))
    return out


def fits(meld: TableMeld, card: Card) -> bool:
    """Whether ``card`` alone can be laid off on ``meld`` (ICE-3; never on a special meld, ICE-4)."""
    return card in fitting(meld)


_FITS_LIMIT = 1 << 14  # meld readings whose lay-off cards are remembered before the memory is cleared
_EVERY_CARD = (*NATURAL_CARDS, JOKER)
# by the reading's identity: a reading is immutable and is held here, so its id names it while remembered
_fits_memory: dict[int, tuple[MeldReading, frozenset[Card]]] = {}


def fitting(meld: TableMeld) -> frozenset[Card]:
    """The cards that can be laid off alone on ``meld`` (``fits``): none on a special meld; otherwise a pure
    function of its reading, remembered, as listing legal actions asks it of every meld turn after turn."""
    if meld.meld_kind is MeldKind.SPECIAL:
        return frozenset()
    r = meld.reading
    seen = _fits_memory.get(id(r))
    if seen is None or seen[0] is not r:
        if len(_fits_memory) > _FITS_LIMIT:
            _fits_memory.clear()
        seen = _fits_memory[id(r)] = (r, frozenset(c for c in _EVERY_CARD if _lays_off(r, c)))
    return seen[1]


def _lays_off(r: MeldReading, card: Card) -> bool:
    if card.rank is Rank.ACE:
        return False
    if r.kind is MeldKind.SET:
        if card.rank != r.rank or len(r.cards) >= 4 or any(p.card.suit == card.suit for p in r.cards):
            return False
    elif card.suit != r.suit or int(card.rank) not in (r.low - 1, r.high + 1):
        return False
    return extension(r, [card], ICEBERG_MELDS) is not None  # ``extend_meld`` takes it (no refusal built)


def next_card_points(melds: Sequence[TableMeld], card: Card) -> int:
    """What ``card`` would score as the next card of the best meld it fits on the table, 0 if none (ICE-6)."""
    return max((card_points(len(m.cards) + 1) for m in melds if fits(m, card)), default=0)


# ---------------------------------------------------------------- rules record and state


@dataclass(frozen=True, slots=True)
class IcebergRules:
    """The options of a match (ICE-4, ICE-7, ICE-8) and the packs its seat count needs (ICE-1)."""

    seats: int = 2
    packs: int = 1
    special_values: tuple[tuple[str, int], ...] = (
        (ODDS_SUIT, ODDS_SUIT_VALUE), (EVENS_SUIT, 700), (ODDS_COLOUR, 350), (EVENS_COLOUR, 350),
    )
    aces: str = "multiplier"
    target: int = 5000

    def special_value(self, label: str) -> int:
        return dict(self.special_values)[label]


@dataclass
class IcebergState(HandState):
    """One hand of Iceberg. ``passes[i]`` is ``(passer, receiver)`` of the card ``face_down[i]``; ``earned`` the
    meld points each seat has scored this hand; ``last_ace_seat`` who exposed the last ace (ICE-5);
    ``opening_events`` the forced steps of the first turn, done while dealing."""

    rules: IcebergRules = field(default_factory=IcebergRules)
    passes: list[tuple[int, int]] = field(default_factory=list)
    earned: list[int] = field(default_factory=list)
    aces_in_pack: int = 4
    last_ace_seat: int | None = None
    opening_events: list[Event] = field(default_factory=list)
    totals: tuple[int, ...] = ()  # the game totals before this hand

    def right_of(self, seat: int) -> int:
        """The right-hand opponent: the seat that plays just before ``seat`` (ICE-9)."""
        for step in range(1, self.seats + 1):
            s = (seat - step) % self.seats
            if self.active[s]:
                return s
        return seat


# ---------------------------------------------------------------- the variant


class Iceberg:
    """Iceberg for 2 to 5 players (ICE-1..ICE-9)."""

    name: ClassVar[str] = "iceberg"
    aliases: ClassVar[tuple[str, ...]] = ("iceberg-rummy",)
    title: ClassVar[str] = "Iceberg"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 5
    team_play: ClassVar[bool] = False
    lower_is_better: ClassVar[bool] = False
    forfeit_after_misses: ClassVar[int] = 3
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "special_values",
            ("700-350-350", "500-300-200"),
            "values of evens in one suit, odds in one colour, evens in one colour (odds in one suit is 700)",
            "ICE-4",
        ),
        OptionSpec("aces", ("multiplier", "bonus"), "each ace multiplies the hand score (x2, x3, ...) or adds 20", "ICE-7"),
        OptionSpec("target", ("5000", "<int>"), "the game ends when a player reaches this total", "ICE-8"),
    )

    # ------------------------------------------------------------ set-up

    def configure(self, options: Mapping[str, str], seats: int) -> IcebergRules:
        """Read the options (ICE-4, ICE-7, ICE-8); two packs for 4 or 5 players (ICE-1).

        :raises InvalidOption: ``BAD_SEAT_COUNT`` outside 2-5 players, or a bad option value.
        """
        if not self.min_seats <= seats <= self.max_seats:
            raise InvalidOption("BAD_SEAT_COUNT", f"iceberg is for 2 to 5 players, not {seats} (ICE-1)")
        opts = parse_options(self.options, options, self.name)
        evens_suit, odds_colour, evens_colour = (int(v) for v in opts["special_values"].split("-"))
        return IcebergRules(
            seats=seats,
            packs=1 if seats <= 3 else 2,
            special_values=(
                (ODDS_SUIT, ODDS_SUIT_VALUE), (EVENS_SUIT, evens_suit), (ODDS_COLOUR, odds_colour),
                (EVENS_COLOUR, evens_colour),
            ),
            aces=opts["aces"],
            target=int(opts["target"]),
        )

    def deck(self, rules: IcebergRules, seats: int) -> list[Card]:
        """One pack for 2 or 3 players, two for 4 or 5, no jokers (ICE-1)."""
        return build_deck(rules.packs)

    def new_hand(self, rules: IcebergRules, table: Table, deck: list[Card], seed: str) -> IcebergState:
        """Deal 7 cards each from the dealer's left, the rest is the stock (ICE-1), then do the first player's
        forced steps (ICE-2)."""
        cards = list(deck)
        order = seat_order(table.seats, table.dealer, table.active)
        hands = deal_round_robin(cards, order, HAND_SIZE, table.seats)
        state = IcebergState(
            seats=table.seats,
            dealer=table.dealer,
            hand_number=table.hand_number,
            teams=table.teams,
            active=list(table.active),
            hands=hands,
            stock=cards,
            turn=order[0],
            phase=Phase.PLAY,
            seed=seed,
            pile_view=PileView.NONE,
            in_front=[[] for _ in range(table.seats)],
            rules=rules,
            earned=[0] * table.seats,
            aces_in_pack=sum(1 for c in deck if c.rank is Rank.ACE),
            totals=tuple(table.totals),
        )
        state.opening_events = self._start_turn(state, order[0])
        return state

    # ------------------------------------------------------------ turn structure

    def decision(self, state: IcebergState) -> Decision | None:
        """The player to move is always in PLAY: the pick-up, draw and ace placement are done for him (ICE-2)."""
        if state.over:
            return None
        return Decision(state.turn, Phase.PLAY)

    def _start_turn(self, state: IcebergState, seat: int) -> list[Event]:
        """The forced steps of a turn (ICE-2): pick up the card passed face down, draw, lay out every ace."""
        events: list[Event] = []
        state.turn = seat
        state.phase = Phase.PLAY
        hand = state.hands[seat]
        for i in reversed(range(len(state.passes))):
            passer, receiver = state.passes[i]
            if receiver != seat:
                continue
            card, _ = state.face_down.pop(i)
            del state.passes[i]
            hand.append(card)
            events += private_event(
                Event("PICKED_UP", seat, (card,), text=f"seat {seat} picked up the card passed by seat {passer}: {card}"),
                {seat, passer},
            )
        if state.stock:
            card = state.stock.pop(0)
            hand.append(card)
            events += private_event(Event("DREW_STOCK", seat, (card,), text=f"seat {seat} drew: {card}"), {seat})
        aces = [c for c in hand if c.rank is Rank.ACE]
        if aces:
            remove_cards(hand, aces)
            state.in_front[seat].extend(aces)
            events.append(Event("ACES_PLACED", seat, tuple(aces), count=len(state.in_front[seat]),
                                text=f"seat {seat} lays {len(aces)} ace(s) face up (ICE-2)"))
            exposed = sum(len(f) for f in state.in_front)
            if exposed >= state.aces_in_pack and state.last_ace_seat is None:
                state.last_ace_seat = seat
                events.append(Event("LAST_ACE", seat, text=f"seat {seat} exposed the last ace: the hand ends after this turn (ICE-5)"))
        if not hand:
            events += self._go_out(state, seat, "with no card left after laying out the aces")
        return events

    def _go_out(self, state: IcebergState, seat: int, how: str) -> list[Event]:
        state.over = True
        state.went_out = seat
        state.end_reason = f"seat {seat} went out"
        return [Event("WENT_OUT", seat, text=f"seat {seat} goes out {how} (ICE-5)")]

    def _end_turn(self, state: IcebergState, seat: int) -> list[Event]:
        if state.last_ace_seat == seat:
            state.over = True
            state.end_reason = f"the last ace was exposed by seat {seat}"
            return [Event("HAND_OVER", seat, text=f"seat {seat} finished the turn in which the last ace came out (ICE-5)")]
        if not state.stock:
            state.over = True
            state.end_reason = "the stock ran out"
            return [Event("HAND_OVER", seat, text="the stock ran out")]
        state.turns += 1
        return self._start_turn(state, state.next_seat(seat))

    # ------------------------------------------------------------ actions

    def _read_group(self, rules: IcebergRules, group: Group) -> tuple[MeldReading, str]:
        """The reading of a new meld and its special label ("" for a pair, set or run).

        :raises IllegalAction: ``INVALID_MELD`` (ICE-3, ICE-4), ``ACES_NEVER_MELD`` (ICE-3), ``NO_WILDS``.
        """
        cards = list(group.cards)
        require(not group.stands_for, "NO_WILDS", "Iceberg has no wild cards (ICE-3)")
        require(all(c.rank is not Rank.ACE for c in cards), "ACES_NEVER_MELD", "aces never meld (ICE-3)")
        label = special_label(cards)
        if label is not None:
            placed = tuple(Placed(int(c.rank), c, c.rank, c.suit) for c in sorted(cards))
            return MeldReading(MeldKind.SPECIAL, placed), label
        require(len(cards) >= 2, "INVALID_MELD", "a meld is at least a pair (ICE-3)")
        reading = read_meld(cards, ICEBERG_MELDS, rule="ICE-3: a pair or set of different suits, or a run 2 to K of one suit")
        return reading, ""

    def _group_points(self, rules: IcebergRules, reading: MeldReading, label: str) -> int:
        return rules.special_value(label) if label else meld_points(len(reading.cards))

    def apply(self, state: IcebergState, seat: int, action: Action) -> list[Event]:
        """Meld, lay off or pass a card face down (ICE-2..ICE-4, ICE-9).

        :raises IllegalAction: ``HAND_OVER``, ``NOT_YOUR_TURN``, ``DRAW_IS_AUTOMATIC`` and ``NOT_IN_VARIANT``
            (anything but a meld, a lay-off or a discard: the pick-up, draw and aces are done for the player, ICE-2),
            ``CARD_NOT_IN_HAND``, ``INVALID_MELD``, ``ACES_NEVER_MELD``, ``NO_WILDS``, ``NO_SUCH_MELD``,
            ``SPECIAL_MELD_CLOSED`` (ICE-4), ``CANNOT_LAY_OFF``. :raises InvalidAction: ``EMPTY_MELD``,
            ``EMPTY_LAY_OFF``.
        """
        require(not state.over, "HAND_OVER", "the hand is over (ICE-5)")
        if seat != state.turn:
            raise IllegalAction("NOT_YOUR_TURN", f"seat {state.turn} is to play, not seat {seat} (COM-4)")
        match action:
            case Meld(groups):
                return self._meld(state, seat, groups)
            case LayOff(meld_id, cards, stands_for):
                return self._lay_off(state, seat, meld_id, cards, stands_for)
            case Discard(card):
                return self._discard(state, seat, card)
        raise IllegalAction(
            "DRAW_IS_AUTOMATIC" if isinstance(action, DrawStock) else "NOT_IN_VARIANT",
            f"{type(action).__name__} is not a move in Iceberg: the pick-up, the draw and the aces are done for you; "
            "meld, lay off or pass a card face down (ICE-2)",
        )

    def _meld(self, state: IcebergState, seat: int, groups: Sequence[Group]) -> list[Event]:
        hand = state.hands[seat]
        if not groups:
            raise InvalidAction("EMPTY_MELD", "a meld action needs at least one group (ICE-3)")
        everything = [c for g in groups for c in g.cards]
        if not contains_cards(hand, everything):
            raise IllegalAction("CARD_NOT_IN_HAND", f"you do not hold {' '.join(map(str, everything))} (ICE-2: meld from your hand)")
        read = [self._read_group(state.rules, g) for g in groups]
        events: list[Event] = []
        for reading, label in read:
            remove_cards(hand, reading.raw)
            points = self._group_points(state.rules, reading, label)
            state.earned[seat] += points
            m = state.add_meld(seat, reading, MeldKind.SPECIAL if label else None, label)
            what = label or ("pair" if len(reading.cards) == 2 else reading.kind.value.lower())
            events.append(Event("MELDED", seat, tuple(reading.raw), meld_id=m.id, points=points,
                                text=f"seat {seat} melds {what} {' '.join(map(str, reading.raw))} for {points}"))
        if not hand:
            events += self._go_out(state, seat, "without a final discard")
        return events

    def _lay_off(self, state: IcebergState, seat: int, meld_id: int, cards: Sequence[Card],
                 stands_for: Sequence[tuple[Card, Card]]) -> list[Event]:
        hand = state.hands[seat]
        m = state.meld(meld_id)
        require(not stands_for, "NO_WILDS", "Iceberg has no wild cards (ICE-3)")
        if not cards:
            raise InvalidAction("EMPTY_LAY_OFF", "a lay-off needs at least one card (ICE-3)")
        if not contains_cards(hand, cards):
            raise IllegalAction("CARD_NOT_IN_HAND", f"you do not hold {' '.join(map(str, cards))} (ICE-2: lay off from your hand)")
        require(m.meld_kind is not MeldKind.SPECIAL, "SPECIAL_MELD_CLOSED",
                f"{m.label} is laid all at once and never built by lay-offs (ICE-4)")
        require(all(c.rank is not Rank.ACE for c in cards), "ACES_NEVER_MELD", "aces never meld (ICE-3)")
        reading = extend_meld(m.reading, list(cards), ICEBERG_MELDS, rule="ICE-3")
        points = layoff_points(len(m.cards), len(cards))
        remove_cards(hand, cards)
        state.relay(m, reading, (*m.laid_by, *[seat] * len(cards)))
        state.earned[seat] += points
        events = [Event("LAID_OFF", seat, tuple(cards), meld_id=meld_id, points=points,
                        text=f"seat {seat} lays off {' '.join(map(str, cards))} on meld {meld_id} for {points}")]
        if not hand:
            events += self._go_out(state, seat, "without a final discard")
        return events

    def _discard(self, state: IcebergState, seat: int, card: Card) -> list[Event]:
        hand = state.hands[seat]
        if card not in hand:
            raise IllegalAction("CARD_NOT_IN_HAND", f"you do not hold {card} (ICE-2: discard from your hand)")
        receiver = state.right_of(seat)
        hand.remove(card)
        state.face_down.append((card, frozenset({seat, receiver})))
        state.passes.append((seat, receiver))
        events = private_event(
            Event("PASSED", seat, (card,), text=f"seat {seat} passes a card face down to seat {receiver}: {card}"),
            {seat, receiver},
        )
        if not hand:
            return events + self._go_out(state, seat, "with a final discard")
        return events + self._end_turn(state, seat)

    # ------------------------------------------------------------ choices for bots

    def legal_actions(self, state: IcebergState, seat: int) -> list[Action]:
        """Every distinct discard, then the best melds (pairs, sets, runs, special melds) and single-card lay-offs
        up to 60 actions in all, each one checked to apply."""
        if state.over or seat != state.turn:
            return []
        hand = state.hands[seat]
        distinct = sorted(set(hand))
        discards: list[Action] = [Discard(c) for c in reversed(distinct)]
        scored: list[tuple[int, int, Action]] = []
        for g in find_specials(hand):
            label = special_label(g)
            assert label is not None
            scored.append((state.rules.special_value(label), len(g), Meld((Group(g),))))
        for g in find_melds(hand, ICEBERG_MELDS):
            scored.append((meld_points(len(g)), len(g), Meld((Group(g),))))
        for m in state.melds:
            can = fitting(m)
            for c in distinct:
                if c in can:
                    scored.append((card_points(len(m.cards) + 1), 1, LayOff(m.id, (c,))))
        scored.sort(key=lambda t: (-t[0], -t[1]))
        room = max(0, MAX_LEGAL - len(discards))
        return [a for _, _, a in scored[:room]] + discards

    def default_action(self, state: IcebergState, seat: int, missed_turns: int) -> Action:
        """A missed turn passes the highest card face down (ICE-2)."""
        return Discard(max(state.hands[seat]))

    # ------------------------------------------------------------ views

    def observe(self, state: IcebergState, seat: int) -> SeatView:
        """The seat's own hand, the table, the aces in front of everyone, the hand sizes, and the card passed face
        down by or to this seat (ICE-2); others' passed cards only as "a card lies there"."""
        r = state.rules
        notes: list[tuple[str, str]] = [
            ("meld_points", ",".join(str(p) for p in state.earned)),
            ("aces", r.aces),
            ("target", str(r.target)),
            ("special_values", ";".join(f"{k}={v}" for k, v in r.special_values)),
            ("aces_left", str(state.aces_in_pack - sum(len(f) for f in state.in_front))),
            ("face_down", ";".join(f"{p}>{q}" for p, q in state.passes)),
        ]
        for (card, _), (passer, receiver) in zip(state.face_down, state.passes, strict=True):
            if receiver == seat:
                notes.append(("passed_to_you", f"{card} from seat {passer}"))
            elif passer == seat:
                notes.append(("you_passed", f"{card} to seat {receiver}"))
        if state.last_ace_seat is not None:
            notes.append(("last_ace", f"seat {state.last_ace_seat}: the hand ends after that turn"))
        return zone_view(state, seat, self.name, state.totals, notes)

    # ------------------------------------------------------------ scoring

    def seat_score(self, state: IcebergState, seat: int) -> tuple[int, str]:
        """One seat's points for the hand and how they were counted (ICE-6, ICE-7)."""
        hand = state.hands[seat]
        earned = state.earned[seat]
        left = LEFT_IN_HAND * len(hand)
        playable = [(c, next_card_points(state.melds, c)) for c in sorted(hand)]
        penalty = sum(p for _, p in playable)
        raw = earned + left - penalty
        aces = len(state.in_front[seat])
        if state.rules.aces == "multiplier":
            total = raw * (1 + aces)
            ace_text = f"x{1 + aces} for {aces} ace(s)"
        else:
            total = raw + ACE_BONUS * aces
            ace_text = f"+{ACE_BONUS * aces} for {aces} ace(s)"
        extra = ", ".join(f"{c} -{p}" for c, p in playable if p)
        detail = (f"seat {seat}: melds {earned}, {len(hand)} card(s) {left}"
                  + (f", playable {extra}" if extra else "") + f" = {raw}, {ace_text} = {total}")
        return total, detail

    def score(self, state: IcebergState) -> HandScore:
        """Meld points, minus 10 per card left and the lay-off value of each playable card (ICE-6), times one
        plus the aces in front (or plus 20 an ace, ICE-7). A turn-capped hand is scored the same way."""
        scored = [self.seat_score(state, s) for s in range(state.seats)]
        points = tuple(p for p, _ in scored)
        best = max(points)
        top = [s for s, p in enumerate(points) if p == best]
        reason = state.end_reason or "hand over"
        return HandScore(points, top[0] if len(top) == 1 else None, reason, tuple(d for _, d in scored))

    def game_outcome(self, rules: IcebergRules, game: GameState, max_hands: int) -> GameOutcome | None:
        """The game ends when a player reaches the target, 5000 by default (ICE-8)."""
        best = max(game.totals)
        if best < rules.target:
            return None
        leaders = [s for s, t in enumerate(game.totals) if t == best]
        return GameOutcome(rank_by_totals(game, False),
                           f"target {rules.target} reached by seat {leaders[0]} with {best} (ICE-8)")

    def evaluate(self, rules: IcebergRules, wild_ranks: frozenset[Rank], groups: Sequence[Sequence[Card]]) -> Evaluation:
        """Each group's validity as a pair, set, run or special meld and what it scores laid at once (ICE-3,
        ICE-4); ``hand_points`` is what the cards would count left in hand, -10 each before lay-off penalties
        (ICE-6; aces are never held, ICE-2)."""
        verdicts: list[GroupVerdict] = []
        for g in groups:
            cards = tuple(g)
            try:
                reading, label = self._read_group(rules, Group(cards))
            except IllegalAction as exc:
                verdicts.append(GroupVerdict(cards, False, "", True, exc.code, 0, exc.message))
                continue
            kind = "SPECIAL" if label else ("PAIR" if len(cards) == 2 else reading.kind.value)
            points = self._group_points(rules, reading, label)
            verdicts.append(GroupVerdict(cards, True, kind, True, "", points, label or reading.describe()))
        bad = [v for v in verdicts if not v.valid]
        held = Counter(c for g in groups for c in g if c.rank is not Rank.ACE)
        return Evaluation(
            groups=tuple(verdicts),
            declaration_valid=not bad,
            declaration_reason=bad[0].reason if bad else "",
            hand_points=LEFT_IN_HAND * sum(held.values()),
            melded_points=sum(v.points for v in verdicts),
            detail="Iceberg has no declaration: the groups are checked one by one (ICE-3, ICE-4)",
        )


VARIANTS = (Iceberg(),)
