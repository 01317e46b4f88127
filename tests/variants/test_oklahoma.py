"""Fortune rummy (FOR) and Arlington / Oklahoma rummy (ARL): the rules as tests."""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.cards import JOKER, Card, Rank, Suit, parse_card, parse_cards
from referee.rules.errors import IllegalAction, InvalidOption
from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.melds import ACE_HIGH, MeldKind
from referee.rules.policies import greedy_policy, random_policy
from referee.rules.variants import find
from referee.rules.variants.base import (
    Action,
    Discard,
    DrawStock,
    ExchangeWild,
    GameState,
    Group,
    LayOff,
    Meld,
    Phase,
    PileView,
    SeatView,
    Table,
    TakeDiscards,
)
from referee.rules.variants.oklahoma import (
    ARLINGTON,
    FORTUNE,
    QUEEN_OF_SPADES,
    Arlington,
    Fortune,
    OklahomaState,
    in_hand_value,
    meld_points,
    read_group,
)
from referee.tools.testing import random_hand, zone_cards

C = parse_card
FILL = parse_cards("3C 6C 9C QC 4D 7D TD KD 5H 8H JH AS 4S")  # no two of these meld together without wilds
STOCK = "3H 6S 9D QH 4C 7S TH KS 5D 8C JS AD"


def deal(name: str, hands: Sequence[str], up: str = "7H", stock: str = STOCK,
         options: dict[str, str] | None = None) -> tuple[Fortune | Arlington, OklahomaState]:
    """A stacked deal: seat 0 plays first; each hand is padded with FILL to the variant's size."""
    variant = find(name)
    n = len(hands)
    rules = variant.configure(options or {}, n)
    hs = [parse_cards(h) for h in hands]
    hs = [h + FILL[: rules.hand - len(h)] for h in hs]
    deck = [hs[s][i] for i in range(rules.hand) for s in range(n)] + parse_cards(up) + parse_cards(stock)
    table = Table(n, n - 1, 1, tuple(range(n)), (True,) * n, (0,) * n)
    state = variant.new_hand(rules, table, deck, "t")
    assert isinstance(state, OklahomaState)
    return variant, state  # type: ignore[return-value]


def refused(variant: Fortune | Arlington, state: OklahomaState, seat: int, action: Action) -> IllegalAction:
    """Apply an action that must be refused, and check the state did not change."""
    before = (Counter(zone_cards(state)), [list(h) for h in state.hands], list(state.discards), state.phase, state.turn)
    with pytest.raises(IllegalAction) as info:
        variant.apply(state, seat, action)
    assert (Counter(zone_cards(state)), [list(h) for h in state.hands], list(state.discards), state.phase, state.turn) == before
    return info.value


def to_play(variant: Fortune | Arlington, state: OklahomaState, hand: str | None = None) -> None:
    """Seat 0 draws from the stock; then, if given, its hand is replaced (a test arrangement)."""
    variant.apply(state, 0, DrawStock())
    if hand is not None:
        state.hands[0] = parse_cards(hand)


# ---------------------------------------------------------------- the registry and options


def test_names_and_aliases_find_the_two_variants() -> None:
    """Fortune answers to fortune and fortune-rummy; Arlington to arlington, oklahoma, oklahoma-rummy, arlington-rummy."""
    assert isinstance(find("fortune"), Fortune) and isinstance(find("Fortune Rummy"), Fortune)
    for alias in ("arlington", "oklahoma", "oklahoma-rummy", "arlington-rummy"):
        assert isinstance(find(alias), Arlington)
    assert not find("fortune").lower_is_better and not find("oklahoma").lower_is_better


def test_unknown_option_and_bad_option_value_are_refused() -> None:
    """An option the variant lacks, or a value not listed, is an InvalidOption naming it."""
    with pytest.raises(InvalidOption) as bad:
        find("fortune").configure({"max_set": "5"}, 2)
    assert bad.value.code == "BAD_OPTION_VALUE" and "FOR-3" in bad.value.message
    with pytest.raises(InvalidOption) as unknown:
        find("arlington").configure({"queen_of_spades_discard": "allowed"}, 2)
    assert unknown.value.code == "UNKNOWN_OPTION"


# ---------------------------------------------------------------- FOR-1 .. FOR-11


def test_FOR_1_two_to_eight_players_two_packs_eleven_cards_and_one_upcard() -> None:
    """FOR-1: 2 to 8 players, 104 cards, 11 each, one card face up starts the pile, the rest is the stock."""
    v = find("fortune")
    for bad in (1, 9):
        with pytest.raises(InvalidOption) as info:
            v.configure({}, bad)
        assert info.value.code == "BAD_SEAT_COUNT" and "FOR-1" in info.value.message
    rules = v.configure({}, 8)
    deck = v.deck(rules, 8)
    assert len(deck) == 104 and Counter(deck)[C("QS")] == 2 and JOKER not in deck
    state = v.new_hand(rules, Table(8, 0, 1, tuple(range(8)), (True,) * 8, (0,) * 8), list(deck), "s")
    assert [len(h) for h in state.hands] == [11] * 8
    assert state.discards == [deck[88]] and len(state.stock) == 104 - 88 - 1
    assert state.turn == 1 and state.phase is Phase.DRAW  # left of the dealer (COM-4)


def test_FOR_2_deuces_are_wild_in_sets_and_runs() -> None:
    """FOR-2: a deuce stands for any card, in a set or in a run."""
    run = read_group(FORTUNE, parse_cards("7H 2C 9H"))
    assert run.kind is MeldKind.RUN and [(p.rank, p.suit) for p in run.cards][1] == (Rank.EIGHT, Suit.HEARTS)
    assert read_group(FORTUNE, parse_cards("KD 2S KC")).kind is MeldKind.SET


def test_FOR_2_no_melds_of_deuces_only() -> None:
    """FOR-2: three deuces are not a meld in Fortune."""
    v, state = deal("fortune", ["2H 2D 2C", ""])
    to_play(v, state)
    err = refused(v, state, 0, Meld((Group(tuple(parse_cards("2H 2D 2C"))),)))
    assert err.code == "DEUCES_ONLY_MELD" and "FOR-2" in err.message
    assert not any(isinstance(a, Meld) and all(c.rank is Rank.TWO for c in a.groups[0].cards)
                   for a in v.legal_actions(state, 0))


def test_FOR_3_sets_of_three_or_four_by_default() -> None:
    """FOR-3 max_set = 4: a set has 3 or 4 cards; five (two packs) is refused."""
    assert read_group(FORTUNE, parse_cards("9S 9H 9D 9C")).kind is MeldKind.SET
    with pytest.raises(IllegalAction) as info:
        read_group(FORTUNE, parse_cards("9S 9H 9D 9C 9S"))
    assert info.value.code == "INVALID_MELD"
    with pytest.raises(IllegalAction):
        read_group(FORTUNE, parse_cards("9S 9H 9D 2C 2D"))


def test_FOR_3_option_max_set_unlimited_allows_longer_sets() -> None:
    """FOR-3 max_set = unlimited: five or more of a rank make a set."""
    rules = find("fortune").configure({"max_set": "unlimited"}, 2)
    assert rules.max_set is None
    assert read_group(rules, parse_cards("9S 9H 9D 9C 9S 2H")).kind is MeldKind.SET
    v, state = deal("fortune", ["9S 9H 9D 9C 9S", ""], options={"max_set": "unlimited"})
    to_play(v, state)
    assert any(isinstance(a, Meld) and len(a.groups[0].cards) >= 5 and {c.rank for c in a.groups[0].cards} == {Rank.NINE}
               for a in v.legal_actions(state, 0))


def test_FOR_3_runs_of_any_length_ace_high_or_low_never_around_the_corner() -> None:
    """FOR-3: runs of 3 or more, any length; A-2-3 and Q-K-A are runs; K-A-2 is not."""
    whole = read_group(FORTUNE, parse_cards("AH 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 2S"))
    assert whole.kind is MeldKind.RUN and len(whole.cards) == 13
    low = read_group(FORTUNE, parse_cards("AD 2D 3D"))
    high = read_group(FORTUNE, parse_cards("QD KD AD"))
    assert (low.low, high.high) == (1, ACE_HIGH)
    for corner in ("KH AH 3H", "KS AS 2S 3S", "QC KC AC 3C"):
        with pytest.raises(IllegalAction):
            read_group(FORTUNE, parse_cards(corner))


def test_FOR_4_draw_the_top_card_of_the_stock() -> None:
    """FOR-4: drawing takes the top of the stock; only the drawer is told which card."""
    v, state = deal("fortune", ["", ""], stock="KS 4C 9D")
    events = v.apply(state, 0, DrawStock())
    assert state.hands[0][-1] == C("KS") and state.stock == parse_cards("4C 9D") and state.phase is Phase.PLAY
    mine, theirs = events
    assert mine.to == frozenset({0}) and mine.cards == (C("KS"),)
    assert theirs.cards == () and theirs.visible_to(1) and not theirs.visible_to(0)


def test_FOR_4_take_the_pile_by_melding_the_top_card_with_two_from_hand() -> None:
    """FOR-4: the top discard is melded with two hand cards first; then the rest of the pile goes into hand."""
    v, state = deal("fortune", ["7C 7D", ""])
    state.discards = parse_cards("3H 9D 7H")
    assert any(isinstance(a, TakeDiscards) and a.meld and sorted(a.meld.cards) == sorted(parse_cards("7C 7D"))
               for a in v.legal_actions(state, 0))
    events = v.apply(state, 0, TakeDiscards(0, Group(tuple(parse_cards("7C 7D")))))
    assert [e.kind for e in events] == ["MELDED", "TOOK_DISCARDS", "TOOK_DISCARDS"]
    meld = state.melds[0]
    assert meld.owner == 0 and sorted(meld.reading.raw) == sorted(parse_cards("7H 7C 7D"))
    assert state.discards == [] and Counter(state.hands[0]) >= Counter(parse_cards("3H 9D"))
    assert len(state.hands[0]) == 11 - 2 + 2 and state.phase is Phase.PLAY
    private, public = events[1], events[2]
    assert private.to == frozenset({0}) and private.cards == tuple(parse_cards("3H 9D"))
    assert public.cards == () and public.count == 2


def test_FOR_4_the_pile_cannot_be_taken_without_melding_its_top_card() -> None:
    """FOR-4: without two hand cards that meld with the top card the take is refused, the state untouched."""
    v, state = deal("fortune", ["7C 7D", ""])
    state.discards = parse_cards("3H 9D 7H")
    err = refused(v, state, 0, TakeDiscards(0, Group((C("7C"),))))
    assert err.code == "MUST_MELD_TOP_DISCARD"
    assert err.message == "cannot take the pile: the top card 7H must be melded with at least two cards from your hand (FOR-4)"
    assert refused(v, state, 0, TakeDiscards(0)).code == "MUST_MELD_TOP_DISCARD"
    bad = refused(v, state, 0, TakeDiscards(0, Group(tuple(parse_cards("9C KD")))))
    assert bad.code == "MUST_MELD_TOP_DISCARD" and "not a valid set or run" in bad.message
    assert refused(v, state, 0, TakeDiscards(1, Group(tuple(parse_cards("7C 7D"))))).code == "BAD_TAKE_COUNT"
    missing = refused(v, state, 0, TakeDiscards(0, Group(tuple(parse_cards("7S 7D")))))
    assert missing.code == "CARD_NOT_IN_HAND" and " is not in your hand (FOR-4)" in missing.message, missing.message
    assert refused(v, state, 1, DrawStock()).code == "NOT_YOUR_TURN"


def test_FOR_5_lay_off_only_on_ones_own_melds() -> None:
    """FOR-5: a seat lays off on its own meld, never on an opponent's."""
    v, state = deal("fortune", ["", ""])
    to_play(v, state, "8H 9H TH JH 5S 6D")
    v.apply(state, 0, Meld((Group(tuple(parse_cards("8H 9H TH"))),)))
    v.apply(state, 0, LayOff(1, (C("JH"),)))
    assert sorted(state.melds[0].reading.raw) == sorted(parse_cards("8H 9H TH JH"))
    v.apply(state, 0, Discard(C("5S")))
    v.apply(state, 1, DrawStock())
    state.hands[1] = parse_cards("QH 7H 4C")
    err = refused(v, state, 1, LayOff(1, (C("QH"),)))
    assert err.code == "NOT_YOUR_MELD" and "FOR-5" in err.message
    assert not any(isinstance(a, LayOff) for a in v.legal_actions(state, 1))


def test_FOR_6_discard_face_up_and_the_pile_is_squared() -> None:
    """FOR-6: one card is discarded face up; every view shows only the top card and the pile's size."""
    v, state = deal("fortune", ["", ""])
    assert state.pile_view is PileView.TOP
    to_play(v, state)
    assert refused(v, state, 0, Discard(C("QD"))).code == "CARD_NOT_IN_HAND"
    v.apply(state, 0, Discard(C("9C")))
    assert state.discards == parse_cards("7H 9C") and state.turn == 1 and state.turns == 1
    for seat in (0, 1):
        view = v.observe(state, seat)
        assert view.discard_pile == (C("9C"),) and view.discard_size == 2
    assert refused(v, state, 1, Discard(C("9C"))).code == "WRONG_PHASE"


def test_FOR_7_the_deal_ends_when_a_player_goes_out_with_or_without_a_discard() -> None:
    """FOR-7: melding the last cards ends the deal; so does discarding the last card; Fortune adds no bonus."""
    v, state = deal("fortune", ["", ""])
    to_play(v, state, "8H 9H TH JH")
    events = v.apply(state, 0, Meld((Group(tuple(parse_cards("8H 9H TH JH"))),)))
    assert state.over and state.went_out == 0 and events[-1].kind == "WENT_OUT" and v.decision(state) is None
    assert v.score(state).points[0] == 40 and v.score(state).winner == 0
    v, state = deal("fortune", ["", ""])
    to_play(v, state, "8H 9H TH 4C")
    v.apply(state, 0, Meld((Group(tuple(parse_cards("8H 9H TH"))),)))
    assert not state.over
    v.apply(state, 0, Discard(C("4C")))
    assert state.over and state.went_out == 0 and v.score(state).points[0] == 30


def test_FOR_8_score_melded_minus_in_hand_and_game_to_500() -> None:
    """FOR-8: each seat scores its melds minus its hand; the game ends once a total reaches 500."""
    v, state = deal("fortune", ["", ""])
    to_play(v, state, "KH KD KC 5S 5D")
    v.apply(state, 0, Meld((Group(tuple(parse_cards("KH KD KC"))),)))
    state.hands[1] = parse_cards("QS 2D AC 4H")
    v.apply(state, 0, Discard(C("5S")))
    state.over, state.end_reason = True, "test"
    assert v.score(state).points == (30 - 5, -50 - 10 - 10 - 5)
    rules = v.configure({}, 2)
    assert v.game_outcome(rules, GameState(2, (0, 1), [499, 300]), 100) is None
    done = v.game_outcome(rules, GameState(2, (0, 1), [320, 505]), 100)
    assert done is not None and done.ranking == ((1,), (0,)) and done.reason.startswith("target reached")


def test_FOR_9_restock_turn_over_keeps_the_pile_order() -> None:
    """FOR-9 restock = turn-over: the pile except its top card, turned over unshuffled, is the new stock."""
    v, state = deal("fortune", ["", ""], stock="KS")
    to_play(v, state)
    state.discards = parse_cards("4H 5H 6H 7H")
    events = v.apply(state, 0, Discard(C("9C")))
    assert state.stock == parse_cards("4H 5H 6H 7H") and state.discards == [C("9C")]
    assert state.restocks == 1 and events[-1].kind == "RESTOCKED" and events[-1].count == 4


def test_FOR_9_restock_shuffle_uses_the_hands_restock_random_source() -> None:
    """FOR-9 restock = shuffle: the rebuilt stock is shuffled with the state's seeded restock random source."""
    v, state = deal("fortune", ["", ""], stock="KS", options={"restock": "shuffle"})
    to_play(v, state)
    state.discards = parse_cards("4H 5H 6H 7H 8H 9H TH")
    expected = parse_cards("4H 5H 6H 7H 8H 9H TH")
    state.rng("restock").shuffle(expected)
    v.apply(state, 0, Discard(C("9C")))
    assert state.stock == expected and state.restocks == 1


def test_FOR_9_with_nothing_to_restock_the_hand_ends_and_is_scored() -> None:
    """FOR-9: an empty stock and a pile of one card end the hand, scored as FOR-8."""
    v, state = deal("fortune", ["", ""], stock="KS")
    to_play(v, state, "8H 9H TH 4C 5D")
    state.discards = []
    v.apply(state, 0, Meld((Group(tuple(parse_cards("8H 9H TH"))),)))
    events = v.apply(state, 0, Discard(C("4C")))
    assert state.over and state.end_reason == "stock exhausted" and events[-1].kind == "STOCK_EXHAUSTED"
    assert v.score(state).points == (30 - 5, sum(in_hand_value(FORTUNE, c) for c in state.hands[1]))


def test_FOR_10_queen_of_spades_discard_forbidden_unless_last_card() -> None:
    """FOR-10 queen_of_spades_discard = forbidden: QS may be discarded only as one's last card."""
    v, state = deal("fortune", ["QS", ""])
    to_play(v, state)
    err = refused(v, state, 0, Discard(QUEEN_OF_SPADES))
    assert err.code == "QUEEN_OF_SPADES_DISCARD" and "FOR-10" in err.message
    assert Discard(QUEEN_OF_SPADES) not in v.legal_actions(state, 0)
    state.hands[0] = [QUEEN_OF_SPADES]
    v.apply(state, 0, Discard(QUEEN_OF_SPADES))
    assert state.over and state.went_out == 0


def test_FOR_10_queen_of_spades_discard_allowed_option() -> None:
    """FOR-10 queen_of_spades_discard = allowed: QS is discarded like any card."""
    v, state = deal("fortune", ["QS", ""], options={"queen_of_spades_discard": "allowed"})
    to_play(v, state)
    assert Discard(QUEEN_OF_SPADES) in v.legal_actions(state, 0)
    v.apply(state, 0, Discard(QUEEN_OF_SPADES))
    assert state.discards[-1] == QUEEN_OF_SPADES


@pytest.mark.parametrize(("cards", "points"), [
    ("8H 9H TH JH QH KH", 60),  # 8 to K: 10 each
    ("3C 4C 5C 6C 7C", 25),  # 3 to 7: 5 each
    ("QD KD AD", 30),  # ace high: 10
    ("AD 3D 4D 2S", 20),  # ace low: 5, the deuce as 2D: 5
    ("AS AH AD", 30),  # aces in a set: 10 each
    ("JS QS KS", 70),  # the natural queen of spades: 50
    ("JS 2H KS", 30),  # a deuce standing for the queen of spades: 10
    ("9H 9D 2C", 30),  # a deuce counts as the card it stands for
])
def test_FOR_11_melded_values(cards: str, points: int) -> None:
    """FOR-11: melded values from the table; a deuce counts as the card it stands for."""
    assert meld_points(FORTUNE, read_group(FORTUNE, parse_cards(cards))) == points


@pytest.mark.parametrize(("card", "fortune", "arlington"), [
    ("KD", -10, -10), ("8C", -10, -10), ("7H", -5, -5), ("3S", -5, -5), ("AH", -10, -10),
    ("2C", -10, -20), ("QS", -50, -100), ("QH", -10, -10), ("JK", -200, -200),
])
def test_FOR_11_ARL_5_in_hand_values(card: str, fortune: int, arlington: int) -> None:
    """FOR-11, ARL-5: what a card costs caught in hand (ARL: QS -100, deuces -20; ARL-7 joker -200)."""
    assert (in_hand_value(FORTUNE, C(card)), in_hand_value(ARLINGTON, C(card))) == (fortune, arlington)


def test_melded_value_depends_on_what_the_deuces_stand_for() -> None:
    """FOR-11: 9H 2C 2D as a set of nines scores 30, as the run 7H-8H-9H 25; the player says which (stands_for)."""
    cards = tuple(parse_cards("9H 2C 2D"))
    with pytest.raises(IllegalAction) as info:
        read_group(FORTUNE, cards)
    assert info.value.code == "AMBIGUOUS_WILD"
    as_set = read_group(FORTUNE, cards, ((C("2C"), C("9S")),))
    as_run = read_group(FORTUNE, cards, ((C("2C"), C("7H")), (C("2D"), C("8H"))))
    assert (as_set.kind, meld_points(FORTUNE, as_set)) == (MeldKind.SET, 30)
    assert (as_run.kind, meld_points(FORTUNE, as_run)) == (MeldKind.RUN, 25)
    v, state = deal("fortune", ["9H 2C 2D", ""])
    to_play(v, state)
    v.apply(state, 0, Meld((Group(cards, ((C("2C"), C("7H")), (C("2D"), C("8H")))),)))
    assert state.melds[0].reading.kind is MeldKind.RUN and state.melds[0].reading.low == 7


def test_evaluate_reports_validity_kind_points_and_hand_cost() -> None:
    """evaluate(): each group's validity, kind, reason and melded points, and the cards' cost in hand."""
    v = find("fortune")
    ev = v.evaluate(FORTUNE, FORTUNE.wilds, [parse_cards("JS QS KS"), parse_cards("2H 2D 2C"), parse_cards("9H 2C 2D")])
    good, deuces, either = ev.groups
    assert (good.valid, good.kind, good.points, good.pure) == (True, "RUN", 70, True)
    assert (deuces.valid, deuces.reason) == (False, "DEUCES_ONLY_MELD")
    assert either.valid and either.points == 30 and either.reason == "AMBIGUOUS_WILD"
    assert not ev.declaration_valid and ev.melded_points == 100
    assert ev.hand_points == -10 - 50 - 10 - 10 * 3 - 10 - 10 - 10
    arl = find("arlington").evaluate(ARLINGTON, ARLINGTON.wilds, [parse_cards("2H 2D 2C")])
    assert arl.groups[0].valid and arl.groups[0].kind == "WILD_SET" and arl.groups[0].points == 75


def test_FOR_3_evaluate_calls_an_empty_group_no_meld() -> None:
    """FOR-3: a meld needs cards. (Compiled, the empty group's verdict was a TypeError: mypyc typed the second
    ``except`` clause's name from the first.)"""
    ev = find("fortune").evaluate(FORTUNE, FORTUNE.wilds, [(), parse_cards("5H 6H 7H")])
    assert (ev.groups[0].valid, ev.groups[0].reason) == (False, "EMPTY_MELD") and ev.groups[1].valid
    assert ev.declaration_reason == "EMPTY_MELD"


# ---------------------------------------------------------------- ARL-1 .. ARL-8


def test_ARL_1_thirteen_cards_and_game_to_1000() -> None:
    """ARL-1: as Fortune with 13 cards each and a game to 1000; seven seats at most with two packs."""
    v = find("oklahoma")
    rules = v.configure({}, 4)
    assert rules.hand == 13 and rules.target == 1000
    _, state = deal("arlington", ["", "", "", ""])
    assert [len(h) for h in state.hands] == [13] * 4 and len(state.discards) == 1
    assert v.game_outcome(rules, GameState(2, (0, 1), [990, 600]), 100) is None
    assert v.game_outcome(rules, GameState(2, (0, 1), [1000, 600]), 100) is not None
    with pytest.raises(InvalidOption) as info:
        v.configure({}, 8)
    assert "ARL-1" in info.value.message


def test_ARL_2_a_set_of_deuces_alone_scores_25_each() -> None:
    """ARL-2: deuces alone may be melded in Arlington, each scoring 25, and more deuces laid off on them."""
    v, state = deal("arlington", ["2H 2D 2C 2S", ""])
    to_play(v, state)
    v.apply(state, 0, Meld((Group(tuple(parse_cards("2H 2D 2C"))),)))
    assert state.melds[0].meld_kind is MeldKind.WILD_SET
    v.apply(state, 0, LayOff(1, (C("2S"),)))
    assert meld_points(ARLINGTON, state.melds[0].reading) == 100
    assert refused(v, state, 0, LayOff(1, (C("3C"),))).code == "CANNOT_LAY_OFF"


def test_ARL_3_a_deuce_stands_for_the_queen_of_spades_only_in_an_otherwise_natural_meld() -> None:
    """ARL-3: J-2-K of spades is a run; with a second wild the deuce may not be the queen of spades."""
    assert meld_points(ARLINGTON, read_group(ARLINGTON, parse_cards("JS 2H KS"))) == 30
    with pytest.raises(IllegalAction) as info:
        read_group(ARLINGTON, parse_cards("JS 2H KS 2D"))
    assert info.value.code == "DEUCE_AS_QUEEN_OF_SPADES" and "ARL-3" in info.value.message
    assert read_group(FORTUNE, parse_cards("JS 2H KS 2D")).kind is MeldKind.RUN  # Fortune has no such rule
    cards = parse_cards("9S JS 2H 2D")  # 9-Q with a deuce as QS in Fortune; ARL-3 leaves only 8-J
    assert read_group(FORTUNE, cards).high == 12 and read_group(ARLINGTON, cards).high == 11
    v, state = deal("arlington", ["JS 2H KS 2D", ""])
    to_play(v, state)
    v.apply(state, 0, Meld((Group(tuple(parse_cards("JS 2H KS"))),)))
    err = refused(v, state, 0, LayOff(1, (C("2D"),)))
    assert err.code == "DEUCE_AS_QUEEN_OF_SPADES"


def test_ARL_4_queen_of_spades_discarded_only_as_ones_only_card() -> None:
    """ARL-4: in Arlington the queen of spades may not be discarded while another card is held."""
    v, state = deal("arlington", ["QS", ""])
    to_play(v, state)
    err = refused(v, state, 0, Discard(QUEEN_OF_SPADES))
    assert err.code == "QUEEN_OF_SPADES_DISCARD" and "ARL-4" in err.message
    state.hands[0] = [QUEEN_OF_SPADES]
    assert v.legal_actions(state, 0) == [Discard(QUEEN_OF_SPADES)]


def test_ARL_5_ARL_6_in_hand_penalties_and_going_out_bonus() -> None:
    """ARL-5: QS -100 and deuces -20 in hand; ARL-6: going out adds 100."""
    v, state = deal("arlington", ["", ""])
    to_play(v, state, "8H 9H TH JH")
    state.hands[1] = parse_cards("QS 2D 5C")
    v.apply(state, 0, Meld((Group(tuple(parse_cards("8H 9H TH JH"))),)))
    assert state.over and v.score(state).points == (40 + 100, -100 - 20 - 5)


def test_ARL_5_a_turn_cap_hand_scores_melded_minus_in_hand_without_bonus() -> None:
    """A hand stopped by the engine's turn cap scores as FOR-8: melded minus in hand, nobody's bonus."""
    v, state = deal("arlington", ["", ""])
    to_play(v, state, "8H 9H TH JH 2C")
    v.apply(state, 0, Meld((Group(tuple(parse_cards("8H 9H TH JH"))),)))
    state.over, state.end_reason = True, "turn cap (400 turns)"
    score = v.score(state)
    assert score.points[0] == 40 - 20 and score.winner is None
    assert score.points[1] == sum(in_hand_value(ARLINGTON, c) for c in state.hands[1])


def test_ARL_7_joker_off_by_default() -> None:
    """ARL-7 joker = off: 104 cards, and nothing can be taken back from a meld."""
    v, state = deal("arlington", ["7H 8H 9H", ""])
    assert len(v.deck(v.configure({}, 2), 2)) == 104
    to_play(v, state)
    v.apply(state, 0, Meld((Group(tuple(parse_cards("7H 8H 9H"))),)))
    assert refused(v, state, 0, ExchangeWild(1, C("8H"), C("2H"))).code == "NO_JOKER"


def test_ARL_7_joker_on_wild_100_melded_and_its_melder_takes_it_back() -> None:
    """ARL-7 joker = on, joker_retrieval = melder: one joker, wild, 100 melded; its melder swaps it for the
    natural card it stands for and uses it again; nobody else may."""
    options = {"joker": "on"}
    v = find("arlington")
    deck = v.deck(v.configure(options, 2), 2)
    assert len(deck) == 105 and Counter(deck)[JOKER] == 1
    v, state = deal("arlington", ["7H JK 9H 8H 4C 5C", "8H"], options=options)
    to_play(v, state)
    v.apply(state, 0, Meld((Group(tuple(parse_cards("7H JK 9H"))),)))
    assert meld_points(state.rules, state.melds[0].reading) == 5 + 100 + 10
    assert refused(v, state, 0, ExchangeWild(1, C("9C"), JOKER)).code == "WRONG_NATURAL"
    assert refused(v, state, 0, ExchangeWild(1, C("8H"), C("7H"))).code == "ONLY_JOKER_EXCHANGES"
    assert ExchangeWild(1, C("8H"), JOKER) in v.legal_actions(state, 0)
    v.apply(state, 0, ExchangeWild(1, C("8H"), JOKER))
    assert JOKER in state.hands[0] and sorted(state.melds[0].reading.raw) == sorted(parse_cards("7H 8H 9H"))
    v.apply(state, 0, Meld((Group(tuple(parse_cards("4C 5C JK"))),)))
    assert any(p.card.is_joker for p in state.melds[1].cards)
    v.apply(state, 0, Discard(C("9C")))
    v.apply(state, 1, DrawStock())
    stands = next(Card(p.rank, p.suit) for p in state.melds[1].cards if p.card.is_joker)
    state.hands[1] = [stands, C("KD")]
    assert refused(v, state, 1, ExchangeWild(state.melds[1].id, stands, JOKER)).code == "NOT_THE_MELDER"


def test_ARL_7_joker_retrieval_anyone() -> None:
    """ARL-7 joker_retrieval = anyone: another seat may take the joker by putting the natural card in its place."""
    options = {"joker": "on", "joker_retrieval": "anyone"}
    v, state = deal("arlington", ["7H JK 9H", "8H"], options=options)
    to_play(v, state)
    v.apply(state, 0, Meld((Group(tuple(parse_cards("7H JK 9H"))),)))
    v.apply(state, 0, Discard(C("9C")))
    v.apply(state, 1, DrawStock())
    assert ExchangeWild(1, C("8H"), JOKER) in v.legal_actions(state, 1)
    v.apply(state, 1, ExchangeWild(1, C("8H"), JOKER))
    assert JOKER in state.hands[1] and state.melds[0].laid_by == (0, 1, 0)
    state.over, state.end_reason = True, "test"
    assert v.score(state).points[1] == 10 + sum(in_hand_value(state.rules, c) for c in state.hands[1])


def test_ARL_8_pile_take_two_from_hand_by_default() -> None:
    """ARL-8 pile_take = two-from-hand: as FOR-4; laying the top card off on a meld does not take the pile."""
    v, state = deal("arlington", ["7H 8H 9H", ""])
    to_play(v, state)
    v.apply(state, 0, Meld((Group(tuple(parse_cards("7H 8H 9H"))),)))
    v.apply(state, 0, Discard(C("9C")))
    v.apply(state, 1, DrawStock())
    v.apply(state, 1, Discard(state.hands[1][-1]))
    state.discards.append(C("TH"))
    err = refused(v, state, 0, TakeDiscards(0, lay_off_on=1))
    assert err.code == "MUST_MELD_TOP_DISCARD" and "two cards from your hand" in err.message and "ARL-8" in err.message


def test_ARL_8_pile_take_any_meld_lays_the_top_card_off_on_ones_own_meld() -> None:
    """ARL-8 pile_take = any-meld: the top discard may be laid off on one's own meld to take the pile."""
    v, state = deal("arlington", ["7H 8H 9H", "4S 5S 6S"], options={"pile_take": "any-meld"})
    to_play(v, state)
    v.apply(state, 0, Meld((Group(tuple(parse_cards("7H 8H 9H"))),)))
    v.apply(state, 0, Discard(C("9C")))
    v.apply(state, 1, DrawStock())
    v.apply(state, 1, Meld((Group(tuple(parse_cards("4S 5S 6S"))),)))
    v.apply(state, 1, Discard(state.hands[1][-1]))
    state.discards += parse_cards("KC TH")
    assert refused(v, state, 0, TakeDiscards(0, lay_off_on=2)).code == "NOT_YOUR_MELD"
    assert TakeDiscards(0, lay_off_on=1) in v.legal_actions(state, 0)
    pile = list(state.discards[:-1])
    v.apply(state, 0, TakeDiscards(0, lay_off_on=1))
    assert sorted(state.melds[0].reading.raw) == sorted(parse_cards("7H 8H 9H TH"))
    assert Counter(state.hands[0]) >= Counter(pile) and state.discards == []


# ---------------------------------------------------------------- legal actions and defaults


def test_legal_actions_draw_phase_lists_the_stock_and_a_way_to_take_the_pile() -> None:
    """legal_actions in DRAW: DrawStock, and a TakeDiscards when the top card melds with hand cards."""
    v, state = deal("fortune", ["", ""])
    assert v.legal_actions(state, 0) == [DrawStock()]
    assert v.legal_actions(state, 1) == []
    state.hands[0] += parse_cards("7C 7D")
    takes = [a for a in v.legal_actions(state, 0) if isinstance(a, TakeDiscards)]
    assert takes and all(a.count == 0 and a.meld is not None for a in takes)


def test_legal_actions_are_capped_and_all_apply() -> None:
    """legal_actions in PLAY: at most about 60, every distinct legal discard, and every one applies."""
    v, state = deal("fortune", ["", ""])
    to_play(v, state)
    state.hands[0] = parse_cards("AH 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 2C 2D 2S 2H 9S 9D 9C QS QD QC KC KS")
    legal = v.legal_actions(state, 0)
    assert len(legal) <= 60
    discards = {a.card for a in legal if isinstance(a, Discard)}
    assert discards == set(state.hands[0]) - {QUEEN_OF_SPADES}
    for action in legal:
        trial = copy.deepcopy(state)
        v.apply(trial, 0, action)


def test_default_action_draws_then_discards_the_drawn_card_or_the_costliest_legal_card() -> None:
    """default_action: draw from the stock; discard the drawn card, or the legal card that costs most in hand."""
    v, state = deal("fortune", ["", ""], stock="KS 4C")
    assert v.default_action(state, 0, 1) == DrawStock()
    v.apply(state, 0, DrawStock())
    assert v.default_action(state, 0, 1) == Discard(C("KS"))
    v, state = deal("fortune", ["", ""], stock="QS 4C")
    v.apply(state, 0, DrawStock())
    assert v.default_action(state, 0, 99) in [Discard(c) for c in state.hands[0] if in_hand_value(FORTUNE, c) == -10]


def test_views_hide_other_hands_and_the_squared_pile() -> None:
    """COM-6, FOR-6: a view holds the seat's own hand, hand sizes, and only the top card of the pile."""
    v, state = deal("fortune", ["", "", ""])
    state.discards = parse_cards("3H 9D 7H")
    view = v.observe(state, 1)
    assert view.hand == tuple(state.hands[1]) and view.hand_sizes == (11, 11, 11)
    assert view.discard_pile == (C("7H"),) and view.discard_size == 3 and view.stock_size == len(state.stock)
    assert dict(view.notes)["queen_of_spades_discard"] == "forbidden"


# ---------------------------------------------------------------- conformance: random playouts


def _meld_first(rng: random.Random, view: SeatView, legal: Sequence[Action]) -> Action:
    """A random bot that usually melds or lays off when it can, so random hands end."""
    plays = [a for a in legal if isinstance(a, (Meld, LayOff, TakeDiscards, ExchangeWild))]
    return rng.choice(plays) if plays and rng.random() < 0.8 else rng.choice(list(legal))


FORTUNE_OPTIONS = [{}, {"max_set": "unlimited", "restock": "shuffle", "queen_of_spades_discard": "allowed"}]
ARLINGTON_OPTIONS = [{}, {"joker": "on", "joker_retrieval": "anyone", "pile_take": "any-meld", "restock": "shuffle"},
                     {"joker": "on", "max_set": "unlimited"}]


@pytest.mark.parametrize("seats", [2, 4, 8])
@pytest.mark.parametrize("options", FORTUNE_OPTIONS)
def test_FOR_conformance_random_hands(seats: int, options: dict[str, str]) -> None:
    """Random Fortune hands keep every card, apply every listed action, end, and leak nothing (COM-6)."""
    _conformance("fortune", seats, options, seeds=2 if seats >= 7 else 3)


@pytest.mark.parametrize("seats", [2, 4, 7])
@pytest.mark.parametrize("options", ARLINGTON_OPTIONS)
def test_ARL_conformance_random_hands(seats: int, options: dict[str, str]) -> None:
    """Random Arlington hands keep every card, apply every listed action, end, and leak nothing (COM-6)."""
    _conformance("arlington", seats, options, seeds=2 if seats >= 7 else 3)


def _conformance(name: str, seats: int, options: dict[str, str], seeds: int = 3, max_steps: int = 800) -> None:
    """Random hands end, or (a legal loop: the last few cards recycled through FOR-9 restocks) keep passing turns
    until the step budget, where a match's turn cap stops them; either way they score as FOR-8. Hidden information
    is checked on the first seed and the uniformly random hand (the check costs most of the time)."""
    v = find(name)
    ended = 0
    for seed in range(seeds):
        run = random_hand(name, seats, seed, options, max_steps=max_steps, choose=_meld_first, check_hidden=seed == 0)
        assert run.state.over or run.state.turns >= max_steps // 4, f"{name} {seats} seats seed {seed} stalled"
        ended += run.state.over
        _check_score(v, run.state)
    assert ended >= seeds - 1
    plain = random_hand(name, seats, 7, options, max_steps=100)  # uniformly random choices, checks only
    assert plain.steps > 0


def _table_value(kind: MeldKind, card: Card, rank: Rank, pos: int, arlington: bool) -> int:
    """The values table, written out again for the tests."""
    if card.is_joker:
        return 100
    if kind is MeldKind.WILD_SET:
        return 25
    if card == QUEEN_OF_SPADES and rank is Rank.QUEEN:
        return 50
    if rank is Rank.ACE:
        return 5 if kind is MeldKind.RUN and pos == 1 else 10
    return 10 if rank >= Rank.EIGHT else 5


def _check_score(v: Fortune | Arlington, state: OklahomaState) -> None:
    """FOR-8: each seat's hand score is its melded values minus its in-hand values (plus ARL-6's bonus)."""
    arl = state.rules.variant == "arlington"
    score = v.score(state)
    for s in range(state.seats):
        melded = sum(_table_value(m.meld_kind, p.card, p.rank, p.pos, arl)
                     for m in state.melds for p, layer in zip(m.cards, m.laid_by, strict=True) if layer == s)
        hand = sum(in_hand_value(state.rules, c) for c in state.hands[s])
        bonus = 100 if arl and state.went_out == s else 0
        assert score.points[s] == melded + hand + bonus


# ---------------------------------------------------------------- hypothesis properties


SUITS = [Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS]


@st.composite
def runs_with_deuces(draw: st.DrawFn) -> tuple[list[Card], list[tuple[Card, Card]], int, int, int]:
    """A run window (ace low or high) with deuces of any suit at some positions (always at the two), what each
    deuce stands for, and the value the table gives it."""
    suit = draw(st.sampled_from(SUITS))
    low = draw(st.integers(1, 12))
    high = draw(st.integers(low + 2, min(13 if low == 1 else ACE_HIGH, low + 11)))  # 13 cards: A-K or 2-A
    positions = list(range(low, high + 1))
    natural_spot = draw(st.sampled_from([p for p in positions if p != 2]))  # deuces alone are no meld (FOR-2)
    wild_at = draw(st.sets(st.sampled_from(positions))) - {natural_spot}
    cards, stands, points = [], [], 0
    for pos in positions:
        rank = Rank.ACE if pos == ACE_HIGH else Rank(pos)
        target = Card(rank, suit)
        if pos in wild_at or rank is Rank.TWO:
            # the two of the run's suit, where its place is in the run, is read as itself (the engine's choice)
            others = [x for x in SUITS if x != suit] if low <= 2 <= high else SUITS
            deuce = target if rank is Rank.TWO else Card(Rank.TWO, draw(st.sampled_from(others)))
            cards.append(deuce)
            stands.append((deuce, target))
            points += _table_value(MeldKind.RUN, deuce, rank, pos, False)
        else:
            cards.append(target)
            points += _table_value(MeldKind.RUN, target, rank, pos, False)
    order = draw(st.permutations(range(len(cards))))
    return [cards[i] for i in order], stands, low, high, points


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs_with_deuces())
def test_FOR_2_FOR_3_runs_with_deuces_and_either_ace_read_as_named(case: tuple) -> None:
    """FOR-2, FOR-3: any run, ace low or high, with deuces standing anywhere, reads as the run named and scores
    the values table (FOR-11)."""
    cards, stands, low, high, points = case
    reading = read_group(FORTUNE, cards, stands)
    assert reading.kind is MeldKind.RUN and (reading.low, reading.high) == (low, high)
    assert meld_points(FORTUNE, reading) == points


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([Rank.ACE, *[Rank(r) for r in range(3, 14)]]), st.integers(1, 6), st.integers(0, 3),
       st.sampled_from(["4", "unlimited"]))
def test_FOR_3_sets_with_deuces_respect_max_set(rank: Rank, naturals: int, deuces: int, max_set: str) -> None:
    """FOR-3: a natural rank plus deuces is a set of 3 or more, at most 4 unless max_set = unlimited."""
    cards = [Card(rank, SUITS[i % 4]) for i in range(naturals)] + [Card(Rank.TWO, SUITS[i]) for i in range(deuces)]
    rules = find("fortune").configure({"max_set": max_set}, 2)
    n = len(cards)
    ok = n >= 3 and (max_set == "unlimited" or n <= 4)
    stands = tuple((c, Card(rank, Suit.SPADES)) for c in cards if c.rank is Rank.TWO)
    try:
        reading = read_group(rules, cards, stands)
        assert ok and reading.kind is MeldKind.SET and reading.rank is rank
    except IllegalAction:
        assert not ok


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SUITS), st.integers(3, 6))
def test_FOR_3_never_around_the_corner(suit: Suit, top: int) -> None:
    """FOR-3: K-A-3.. of one suit (the deuce as a two) is never a run: the ace is high or low, not both."""
    cards = [Card(Rank.KING, suit), Card(Rank.ACE, suit)] + [Card(Rank(r), suit) for r in range(3, top + 1)]
    with pytest.raises(IllegalAction):
        read_group(FORTUNE, cards)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["fortune", "arlington"]))
def test_FOR_8_hand_score_is_melded_minus_in_hand(seed: int, name: str) -> None:
    """FOR-8: at the end of any hand each seat scores its melded values minus its in-hand values (ARL-6 bonus)."""
    options = {"joker": "on"} if name == "arlington" else {}
    run = random_hand(name, 2, seed, options, max_steps=800, choose=_meld_first, check_hidden=False)
    run.state.over = True
    run.state.end_reason = run.state.end_reason or "turn cap (test)"
    _check_score(find(name), run.state)


# ---------------------------------------------------------------- whole games


@pytest.mark.parametrize(("name", "options"), [("fortune", {}), ("arlington", {}),
                                               ("arlington", {"joker": "on", "pile_take": "any-meld"})])
def test_a_game_of_greedy_bots_ends_at_the_target(name: str, options: dict[str, str]) -> None:
    """FOR-8, ARL-1: greedy bots on every seat play until a total reaches the target."""
    match = Match(MatchConfig(name, 3, options, seed="game"))
    rng = random.Random(1)
    policy = greedy_policy(find(name).name)
    outcome = play_seats(match, lambda seat, view, legal: policy(view, legal, rng))
    target = match.rules.target
    assert outcome.reason.startswith("target reached") and max(outcome.totals) >= target
    assert outcome.ranking[0] == tuple(s for s, t in enumerate(outcome.totals) if t == max(outcome.totals))


@pytest.mark.parametrize("name", ["fortune", "arlington"])
def test_a_game_of_random_bots_ends_with_a_recorded_reason(name: str) -> None:
    """Random bots end by the target or by the caps, and the reason is recorded."""
    match = Match(MatchConfig(name, 2, seed="random", max_turns_per_hand=60, max_hands=4))
    rng = random.Random(2)
    outcome = play_seats(match, lambda seat, view, legal: random_policy(view, legal, rng))
    assert outcome.reason.startswith(("target reached", "hand cap"))
    assert len(outcome.hands) <= 4 and all(h.reason for h in outcome.hands)


def test_greedy_beats_random(capsys: pytest.CaptureFixture[str]) -> None:
    """The greedy bots win clearly against random_policy: 50 seeded 2-player games of each variant."""
    lines = []
    for name in ("fortune", "arlington"):
        wins = games = 0
        for seed in range(50):
            greedy_seat = seed % 2
            match = Match(MatchConfig(name, 2, seed=f"gvr:{seed}"))
            rngs = [random.Random(f"{seed}:{s}") for s in range(2)]
            policy = greedy_policy(name)

            def choose(seat: int, view: SeatView, legal: list[Action]) -> Action:
                return (policy if seat == greedy_seat else random_policy)(view, legal, rngs[seat])  # noqa: B023

            outcome = play_seats(match, choose)
            games += 1
            wins += outcome.ranking[0] == (greedy_seat,)
        lines.append(f"{name}: greedy beat random in {wins}/{games} games")
        assert wins >= 0.8 * games
    with capsys.disabled():
        print("\n" + "\n".join(lines))
