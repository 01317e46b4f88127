"""Iceberg (ICE-1..ICE-9): the rules as tests, the inventor's worked hand, hidden passes, whole games."""

from __future__ import annotations

import copy
import random
import statistics
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules.cards import Card, Rank, Suit, build_deck, parse_card, parse_cards
from referee.rules.errors import IllegalAction, InvalidOption
from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.melds import MeldKind
from referee.rules.policies import greedy_policy, random_policy
from referee.rules.variants import find
from referee.rules.variants.base import Discard as Pass
from referee.rules.variants.base import DrawStock, Group, LayOff, Meld, Phase, PileView, Table, TakeDiscards, seat_order
from referee.rules.variants.iceberg import (
    EVENS_COLOUR,
    EVENS_SUIT,
    ODDS_COLOUR,
    ODDS_SUIT,
    Iceberg,
    card_points,
    find_specials,
    layoff_points,
    meld_points,
    special_label,
)
from referee.tools.testing import cards_named, random_hand

V: Iceberg = find("iceberg")  # type: ignore[assignment]
GREEDY = greedy_policy("iceberg")


def cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_cards(text))


def stacked(hands: list[str], stock: str = "", dealer: int | None = None, options: dict | None = None):
    """A hand dealt from a stacked deck: ``hands[s]`` are seat s's 7 cards, ``stock`` the top of the stock; the
    rest of the pack follows, aces last (so a test hand is not ended early by the last ace, ICE-5)."""
    seats = len(hands)
    dealer = seats - 1 if dealer is None else dealer
    rules = V.configure(options or {}, seats)
    dealt = [parse_cards(h) for h in hands]
    deck: list[Card] = []
    for k in range(7):
        for s in seat_order(seats, dealer):
            deck.append(dealt[s][k])
    deck += parse_cards(stock)
    pool = Counter(build_deck(rules.packs))
    assert not Counter(deck) - pool, "the stacked cards are not all in the pack"
    rest = sorted((pool - Counter(deck)).elements(), key=lambda c: (c.rank is Rank.ACE, c))
    deck += rest
    table = Table(seats, dealer, 1, tuple(range(seats)), (True,) * seats, (0,) * seats)
    return V.new_hand(rules, table, deck, "test"), deck


def meld(state, seat, text):
    return V.apply(state, seat, Meld((Group(cards(text)),)))


def lay(state, seat, meld_id, text):
    return V.apply(state, seat, LayOff(meld_id, cards(text)))


def pass_card(state, seat, text):
    return V.apply(state, seat, Pass(parse_card(text)))


def rejected(state, seat, action, code):
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction) as err:
        V.apply(state, seat, action)
    assert err.value.code == code, err.value
    assert state == before, "an illegal action changed the state"
    return err.value


# Two seats, dealer seat 1: seat 0 plays first. Seat 0 draws 6S, seat 1 draws 2C.
TWO = ["9S 8S 7S JD JC 4H 5D", "KH QH 3C 3D 9H 8C JH"]


# ---------------------------------------------------------------- ICE-1


@pytest.mark.parametrize("seats,packs", [(2, 1), (3, 1), (4, 2), (5, 2)])
def test_ICE_1_seven_cards_each_one_pack_for_two_or_three_two_for_four_or_five(seats, packs):
    """ICE-1: 2-3 players one pack, 4-5 two packs; 7 cards each; the rest face down as the stock, no pile."""
    rules = V.configure({}, seats)
    assert rules.packs == packs and len(V.deck(rules, seats)) == 52 * packs
    run = random_hand("iceberg", seats, 5, max_steps=0)
    state = run.state
    first = state.turn
    assert first == seat_order(seats, state.dealer)[0]
    assert all(len(state.hands[s]) == 7 for s in range(seats) if s != first)
    assert len(state.hands[first]) + len(state.in_front[first]) == 8, "the first player has drawn one card"
    assert len(state.stock) == 52 * packs - 7 * seats - 1
    assert state.pile_view is PileView.NONE and not state.discards
    assert V.observe(state, first).discard_pile == ()


@pytest.mark.parametrize("seats", [1, 6])
def test_ICE_1_two_to_five_players_only(seats):
    """ICE-1: Iceberg is for 2 to 5 players."""
    with pytest.raises(InvalidOption) as err:
        V.configure({}, seats)
    assert err.value.code == "BAD_SEAT_COUNT" and "ICE-1" in err.value.message


# ---------------------------------------------------------------- ICE-2 / ICE-9


def test_ICE_2_draw_and_aces_are_done_for_the_player_whose_first_choice_is_play():
    """ICE-2: the draw and the ace placement are forced steps; the bot's first decision is PLAY."""
    state, _ = stacked(["AS 8S 7S JD JC 4H AD", TWO[1]], "6S 2C")
    assert V.decision(state).phase is Phase.PLAY and V.decision(state).seat == 0
    assert Counter(state.hands[0]) == Counter(cards("8S 7S JD JC 4H 6S"))
    assert state.in_front[0] == list(cards("AS AD"))
    kinds = [e.kind for e in state.opening_events]
    assert kinds == ["DREW_STOCK", "DREW_STOCK", "ACES_PLACED"]
    assert all(not isinstance(a, (DrawStock, TakeDiscards)) for a in V.legal_actions(state, 0))
    err = rejected(state, 0, DrawStock(), "DRAW_IS_AUTOMATIC")
    assert "ICE-2" in err.message
    rejected(state, 1, Pass(parse_card("KH")), "NOT_YOUR_TURN")


def test_ICE_2_the_passed_card_is_picked_up_at_the_receivers_next_turn_then_he_draws():
    """ICE-2: a turn starts by picking up the card passed face down, then drawing; the pass is not a pile."""
    state, _ = stacked(TWO, "6S 2C TC")
    pass_card(state, 0, "4H")
    assert Counter(state.hands[1]) == Counter(cards("KH QH 3C 3D 9H 8C JH 4H 2C"))
    assert state.face_down == [] and state.discards == []
    assert state.turn == 1 and state.turns == 1
    pass_card(state, 1, "KH")
    assert parse_card("KH") in state.hands[0] and parse_card("TC") in state.hands[0]


def test_ICE_2_aces_drawn_later_go_face_up_at_once_and_never_meld():
    """ICE-2, ICE-3: an ace drawn goes in front of its holder at once; aces never meld."""
    state, _ = stacked(TWO, "6S AH 2C")
    pass_card(state, 0, "4H")
    assert parse_card("AH") in state.in_front[1] and parse_card("AH") not in state.hands[1]
    v = V.evaluate(state.rules, frozenset(), [cards("AH 2H 3H")])
    assert not v.groups[0].valid and v.groups[0].reason == "ACES_NEVER_MELD"


def test_ICE_9_the_pass_goes_to_the_right_hand_opponent_who_played_just_before():
    """ICE-9: with three players A's card goes to C (the player before him), who picks it up at his next turn."""
    hands = ["9S 8S 7S JH 3H QD AD", "KS JS 3S QH JD 8D JC", "6S TD 9D 4D 2D KC QC"]
    state, _ = stacked(hands, "3C 6C AC QS", dealer=2)
    assert state.right_of(0) == 2 and state.right_of(1) == 0 and state.right_of(2) == 1
    events = pass_card(state, 0, "JH")
    passed = [e for e in events if e.kind == "PASSED"]
    full = next(e for e in passed if e.cards)
    redacted = next(e for e in passed if not e.cards)
    assert full.to == frozenset({0, 2}) and redacted.visible_to(1) and not redacted.visible_to(0)
    assert parse_card("JH") not in state.hands[1], "the next player (B) does not get it"
    pass_card(state, 1, "8D")
    assert parse_card("JH") in state.hands[2], "C picks it up at the start of his turn"


def test_ICE_9_two_players_pass_to_each_other():
    """ICE-9: with two players the right-hand opponent is the other player."""
    state, _ = stacked(TWO, "6S 2C")
    assert state.right_of(0) == 1 and state.right_of(1) == 0


def test_ICE_2_the_third_seat_never_sees_the_passed_card_the_passer_and_receiver_do():
    """ICE-2: only the passer and the receiver know the passed card; the receiver sees it in ``received`` from
    the pass, and once picked up it is in his hand."""
    hands = ["9S 8S 7S JH 3H QD AD", "KS JS 3S QH JD 8D JC", "6S TD 9D 4D 2D KC QC"]
    state, _ = stacked(hands, "3C 6C AC QS", dealer=2)
    jh = parse_card("JH")
    pass_card(state, 0, "JH")
    for seat, knows in ((0, True), (1, False), (2, True)):
        view = V.observe(state, seat)
        assert (jh in cards_named(view)) is knows
        assert ("JH" in repr(view.notes)) is knows
        assert view.received == ((jh,) if knows else ())
    assert ("passed_to_you", "JH from seat 0") in V.observe(state, 2).notes
    assert ("you_passed", "JH to seat 2") in V.observe(state, 0).notes
    events = pass_card(state, 1, "8D")  # C's turn starts: he picks the jack up
    assert jh not in cards_named(V.observe(state, 1))
    for e in events:
        if e.visible_to(1):
            assert jh not in e.cards
    pick = next(e for e in events if e.kind == "PICKED_UP" and e.cards)
    assert pick.to == frozenset({0, 2})
    assert V.observe(state, 2).received == () and jh in V.observe(state, 2).hand


@pytest.mark.parametrize("seats", [3, 5])
@pytest.mark.parametrize("seed", range(4))
def test_ICE_2_random_hands_keep_every_pass_hidden_from_the_other_seats(seats, seed):
    """ICE-2: random playouts with 3 and 5 seats never show a passed card to a seat outside the pass."""
    run = random_hand("iceberg", seats, seed)
    assert run.state.over
    assert any(e.kind == "PASSED" and e.to is not None for e in run.events)


# ---------------------------------------------------------------- ICE-3


def test_ICE_3_seed_examples_run_30_its_fourth_card_40_third_jack_20_fourth_jack_40():
    """ICE-3: 9-8-7 of spades 30; the 6 added 40; the third jack on a pair 20; a fourth jack 40."""
    state, _ = stacked(TWO, "6S 2C JS TC")
    assert meld(state, 0, "9S 8S 7S")[0].points == 30
    assert lay(state, 0, 1, "6S")[0].points == 40
    assert meld(state, 0, "JD JC")[0].points == 10
    pass_card(state, 0, "4H")
    assert lay(state, 1, 2, "JH")[0].points == 20, "scores go to whoever plays the card"
    assert state.earned == [80, 20]
    pass_card(state, 1, "KH")
    assert lay(state, 0, 2, "JS")[0].points == 40
    assert state.melds[1].laid_by == (0, 0, 1, 0)


def test_ICE_3_points_by_position_up_to_the_twelfth_card():
    """ICE-3: pair 10, three at once 30, the nth card 10n from the 4th to the 12th (120)."""
    assert [meld_points(n) for n in (2, 3, 4, 5)] == [10, 30, 70, 120]
    assert card_points(3) == 20 and card_points(4) == 40 and card_points(12) == 120
    assert layoff_points(2, 2) == 60 and layoff_points(11, 1) == 120


def test_ICE_3_a_run_two_to_king_is_twelve_cards_and_its_twelfth_scores_120():
    """ICE-3: runs go 2 to K (aces never meld); the 12th card of a run scores 120."""
    state, _ = stacked(["2H 3H 4H 5H 6H 7H 5C", "8H 9H TH JH QH KH 2C"], "9C 4C")
    assert meld(state, 0, "2H 3H 4H 5H 6H 7H")[0].points == 30 + 40 + 50 + 60
    pass_card(state, 0, "9C")
    ids = state.melds[0].id
    pts = [lay(state, 1, ids, t)[0].points for t in ("8H", "9H", "TH", "JH", "QH", "KH")]
    assert pts == [70, 80, 90, 100, 110, 120]
    assert V.evaluate(state.rules, frozenset(), [cards("QH KH AH")]).groups[0].valid is False


@pytest.mark.parametrize("group,valid", [
    ("7H 7S", True), ("7H 7S 7D 7C", True), ("7H 7H", False), ("7H 8H", False), ("7H 8H 9H", True),
    ("7H 8S 9H", False), ("KH AH 2H", False), ("2S 3S 4S 5S", True), ("7H 9H JH", False),
])
def test_ICE_3_pairs_sets_of_different_suits_and_runs_of_one_suit(group, valid):
    """ICE-3: pairs and sets of one rank in different suits (up to four), runs of one suit; no aces."""
    rules = V.configure({}, 4)  # two packs, so 7H 7H exists
    assert V.evaluate(rules, frozenset(), [cards(group)]).groups[0].valid is valid


def test_ICE_3_a_set_takes_at_most_four_and_only_new_suits():
    """ICE-3: a set holds at most four cards, all of different suits."""
    state, _ = stacked(["7H 7S 7D 7C 2S 3S 4S", "KH QH 3C 3D 9H 8C JH"], "TD 2C", options=None)
    meld(state, 0, "7H 7S 7D")
    rejected(state, 0, LayOff(1, cards("4S")), "CANNOT_LAY_OFF")
    assert lay(state, 0, 1, "7C")[0].points == 40
    err = rejected(state, 0, Meld((Group(cards("2S 4S")),)), "INVALID_MELD")
    assert "ICE-3" in err.message
    rejected(state, 0, Meld((Group(cards("KH QH")),)), "CARD_NOT_IN_HAND")
    rejected(state, 0, LayOff(9, cards("2S")), "NO_SUCH_MELD")


def test_ICE_3_lay_offs_are_allowed_on_anyones_melds():
    """ICE-3: a player may lay off on an opponent's meld, and the points are his."""
    state, _ = stacked(["9S 8S 7S JD JC 4H 5D", "TS QH 3C 3D 9H 8C JH"], "KH 2C")
    meld(state, 0, "9S 8S 7S")
    pass_card(state, 0, "4H")
    assert lay(state, 1, 1, "TS")[0].points == 40 and state.earned == [30, 40]
    assert state.melds[0].owner == 0 and state.melds[0].laid_by == (0, 0, 0, 1)


# ---------------------------------------------------------------- ICE-4


@pytest.mark.parametrize("option,values", [
    ("700-350-350", {ODDS_SUIT: 700, EVENS_SUIT: 700, ODDS_COLOUR: 350, EVENS_COLOUR: 350}),
    ("500-300-200", {ODDS_SUIT: 700, EVENS_SUIT: 500, ODDS_COLOUR: 300, EVENS_COLOUR: 200}),
])
def test_ICE_4_special_melds_and_their_values(option, values):
    """ICE-4: odds or evens in one suit or one colour score the special_values (odds in one suit 700)."""
    rules = V.configure({"special_values": option} if option != "700-350-350" else {}, 2)
    groups = {
        ODDS_SUIT: "KH JH 9H 7H 5H 3H", EVENS_SUIT: "QC TC 8C 6C 4C 2C",
        ODDS_COLOUR: "KH JD 9H 7D 5H 3H", EVENS_COLOUR: "QS TC 8S 6S 4C 2S",
    }
    for label, text in groups.items():
        verdict = V.evaluate(rules, frozenset(), [cards(text)]).groups[0]
        assert verdict.valid and verdict.kind == "SPECIAL" and verdict.description == label
        assert verdict.points == values[label]
    assert special_label(cards("KH JS 9H 7D 5H 3H")) is None, "mixed colours are not a special meld"
    assert special_label(cards("KH JH 9H 7H 5H")) is None


def test_ICE_4_a_special_meld_is_laid_at_once_and_never_built_by_lay_offs():
    """ICE-4: a special meld goes down all at once as a SPECIAL meld and takes no lay-off."""
    state, _ = stacked(["KH JH 9H 7H 5H 3H 2C", "QH 8H 3C 3D 9C 8C JC"], "TH 4C")
    offered = [a for a in V.legal_actions(state, 0) if isinstance(a, Meld) and len(a.groups[0].cards) == 6]
    assert offered, "the special meld is among the legal actions"
    events = V.apply(state, 0, offered[0])
    assert events[0].points == 700 and state.earned[0] == 700
    m = state.melds[0]
    assert m.meld_kind is MeldKind.SPECIAL and m.label == ODDS_SUIT
    pass_card(state, 0, "2C")
    err = rejected(state, 1, LayOff(m.id, cards("8H")), "SPECIAL_MELD_CLOSED")
    assert "ICE-4" in err.message
    assert not any(isinstance(a, LayOff) for a in V.legal_actions(state, 1))


def test_ICE_4_colour_specials_are_found_in_hand():
    """ICE-4: the finder offers a colour special meld of mixed suits."""
    found = find_specials(cards("KH JD 9H 7D 5H 3H 2C"))
    assert [special_label(g) for g in found] == [ODDS_COLOUR]
    assert find_specials(cards("KH JH 9H 7H 5H 3H 3D")) and len(find_specials(cards("KH JH 9H 7H 5H 3H 3D"))) == 2


# ---------------------------------------------------------------- ICE-5


def test_ICE_5_going_out_with_a_final_discard_ends_the_hand():
    """ICE-5: a player goes out by passing his last card, which stays face down."""
    state, _ = stacked(["9S 8S 7S 6S JD JC 4H", TWO[1]], "5S 2C")
    meld(state, 0, "9S 8S 7S 6S 5S")
    meld(state, 0, "JD JC")
    events = pass_card(state, 0, "4H")
    assert state.over and state.went_out == 0 and V.decision(state) is None
    assert any(e.kind == "WENT_OUT" for e in events)
    assert state.face_down == [(parse_card("4H"), frozenset({0, 1}))], "the last pass is never picked up"
    assert len(state.hands[1]) == 7


def test_ICE_5_going_out_without_a_final_discard_ends_the_hand():
    """ICE-5: a player who melds his last card goes out with no discard."""
    state, _ = stacked(["9S 8S 7S JD JC 5S 4S", TWO[1]], "6S 2C")
    meld(state, 0, "JD JC")
    events = meld(state, 0, "9S 8S 7S 6S 5S 4S")
    assert state.over and state.went_out == 0 and events[-1].kind == "WENT_OUT"
    assert "went out" in V.score(state).reason


def test_ICE_5_the_last_ace_ends_the_hand_after_its_holder_finishes_his_turn():
    """ICE-5: when the last ace is exposed its holder still plays his turn, then the hand ends."""
    state, _ = stacked(["AS AH AD 9S 8S 7S 2C", "KH QH 3C 3D 9H 8C JH"], "4H AC 6S")
    assert state.last_ace_seat is None and state.in_front[0] == list(cards("AS AH AD"))
    pass_card(state, 0, "4H")
    assert state.last_ace_seat == 1 and not state.over, "the holder of the last ace finishes his turn"
    assert ("last_ace", "seat 1: the hand ends after that turn") in V.observe(state, 0).notes
    assert meld(state, 1, "3C 3D")[0].points == 10
    pass_card(state, 1, "KH")
    assert state.over and state.went_out is None and "last ace" in state.end_reason
    assert V.decision(state) is None


# ---------------------------------------------------------------- ICE-6 / ICE-7


def test_ICE_6_cards_left_count_minus_ten_and_playable_ones_minus_their_best_lay_off():
    """ICE-6: -10 a card, and a card that fits a meld also minus what it would score there (best meld)."""
    state, _ = stacked(["9S 8S 7S JD JC 4H 5D", "KH QH 3C 3D 9H 8C JH"], "6S 2C", options={"aces": "bonus"})
    meld(state, 0, "9S 8S 7S 6S")  # 70
    meld(state, 0, "JD JC")  # 10
    state.over = True
    points, detail = V.seat_score(state, 1)
    # B: 7 cards -70; JH fits the jack pair (20); nothing else fits
    assert points == -70 - 20 and "JH -20" in detail
    state.hands[1].append(parse_card("TS"))  # fits the run: the 5th card would score 50
    assert V.seat_score(state, 1)[0] == -80 - 20 - 50
    assert V.seat_score(state, 0)[0] == 80 - 20, "A keeps 4H 5D, which fit nothing"


@pytest.mark.parametrize("aces,a_points,c_points", [("multiplier", 100, -20), ("bonus", 70, 10)])
def test_ICE_7_aces_multiply_or_add_twenty(aces, a_points, c_points):
    """ICE-7: one ace doubles the hand score, a negative one too (the seed's C: -10 x2 = -20); bonus adds 20."""
    score = seed_hand({} if aces == "multiplier" else {"aces": "bonus"})
    assert score.points[0] == a_points and score.points[2] == c_points


def test_ICE_7_two_aces_triple_the_score():
    """ICE-7: two aces triple the hand score, three quadruple it."""
    state, _ = stacked(["AS AH 9S 8S 7S 2C 4D", "KH QH 3C 3D 9H 8C JH"], "TD 6C")
    meld(state, 0, "9S 8S 7S")
    state.over = True
    assert V.seat_score(state, 0)[0] == (30 - 30) * 3
    state.earned[0] = 60
    assert V.seat_score(state, 0)[0] == 90
    state.in_front[0].append(state.stock.pop(state.stock.index(parse_card("AD"))))
    assert V.seat_score(state, 0)[0] == 120


# ---------------------------------------------------------------- the inventor's example hand


def seed_hand(options=None):
    """Replay the inventor's three-player hand (seed text, ICE-3/ICE-6/ICE-7/ICE-9): A, B, C are seats 0, 1, 2,
    the dealer is C so the deal starts with A."""
    hands = ["9S 8S 7S JH 3H QD AD", "KS JS 3S QH JD 8D JC", "6S TD 9D 4D 2D KC QC"]
    state, _ = stacked(hands, "3C 6C AC QS", dealer=2, options=options)
    assert state.in_front[0] == [parse_card("AD")]
    assert meld(state, 0, "9S 8S 7S")[0].points == 30
    pass_card(state, 0, "JH")  # to C (ICE-9)
    assert meld(state, 1, "JD JC")[0].points == 10
    pass_card(state, 1, "8D")  # to A
    assert parse_card("JH") in state.hands[2] and state.in_front[2] == [parse_card("AC")]
    assert lay(state, 2, 2, "JH")[0].points == 20
    assert lay(state, 2, 1, "6S")[0].points == 40
    pass_card(state, 2, "2D")  # to B, who never picks it up
    assert Counter(state.hands[0]) == Counter(cards("3H QD 3C 8D QS"))
    assert meld(state, 0, "3H 3C")[0].points == 10
    assert meld(state, 0, "QD QS")[0].points == 10
    pass_card(state, 0, "8D")  # A goes out by passing the 8D
    assert state.over and state.went_out == 0
    assert Counter(state.hands[1]) == Counter(cards("KS JS 3S QH 6C"))
    assert Counter(state.hands[2]) == Counter(cards("TD 9D 4D KC QC"))
    return V.score(state)


def test_ICE_6_ICE_7_the_inventors_example_hand_scores_a_100_c_minus_20_and_b_as_the_rules_say():
    """ICE-6, ICE-7: A 50 x2 = +100; C (20+40-20-50) x2 = -20; B's stated -100 omits his 3S, which fits A's pair of
    threes exactly as his QH fits the queens, so the rules give B 10 - 50 - 40 - 20 - 20 = -120."""
    score = seed_hand()
    a, b, c = score.points
    assert a == 100 and c == -20
    assert "JS -40" in score.details[1] and "QH -20" in score.details[1] and "3S -20" in score.details[1]
    assert b == -120
    assert b + 20 == -100, "the example's figure is the rules' one without the overlooked 3S"
    assert score.winner == 0 and "went out" in score.reason


# ---------------------------------------------------------------- ICE-8 and whole games


@pytest.mark.parametrize("value,target", [(None, 5000), ("5000", 5000), ("1200", 1200)])
def test_ICE_8_the_game_goes_on_to_the_target(value, target):
    """ICE-8: the game ends when a player reaches 5000, or the ``target`` option."""
    rules = V.configure({} if value is None else {"target": value}, 2)
    assert rules.target == target
    from referee.rules.variants.base import GameState

    game = GameState(2, (0, 1), [target - 1, 10], eliminated=[False, False])
    assert V.game_outcome(rules, game, 100) is None
    game.totals[1] = target
    outcome = V.game_outcome(rules, game, 100)
    assert outcome is not None and outcome.ranking[0] == (1,) and "ICE-8" in outcome.reason


@pytest.mark.parametrize("option,value", [("target", "0"), ("target", "many"), ("aces", "triple"),
                                          ("special_values", "1-2-3")])
def test_ICE_8_bad_option_values_are_rejected(option, value):
    """ICE-4, ICE-7, ICE-8: an option value outside its choices is refused naming the clause."""
    with pytest.raises(InvalidOption) as err:
        V.configure({option: value}, 2)
    assert err.value.code == "BAD_OPTION_VALUE"


@pytest.mark.parametrize("seats,options", [(3, {}), (2, {"target": "1500", "aces": "bonus"}),
                                           (5, {"target": "2000", "special_values": "500-300-200"})])
def test_ICE_8_greedy_bots_play_a_full_game_to_the_target(seats, options):
    """ICE-8: greedy bots on every seat finish a game by reaching the target (the default 5000 for 3 seats)."""
    match = Match(MatchConfig("iceberg", seats, options=options, seed=f"full{seats}"))
    rng = random.Random(1)
    outcome = play_seats(match, lambda s, v, legal: GREEDY(v, legal, rng))
    target = int(options.get("target", 5000))
    assert outcome.reason.startswith(f"target {target} reached"), outcome.reason
    assert max(outcome.totals) >= target


def test_random_bots_end_by_the_target_or_a_cap_with_a_reason():
    """ICE-8: a game of random bots ends, by the target or by the engine's caps, with a recorded reason."""
    match = Match(MatchConfig("iceberg", 3, options={"target": "1000"}, seed="rnd", max_hands=12))
    rng = random.Random(2)
    outcome = play_seats(match, lambda s, v, legal: random_policy(v, legal, rng))
    assert outcome.reason.startswith("target 1000") or outcome.reason.startswith("hand cap")
    assert len(outcome.hands) <= 12


def test_a_turn_capped_hand_is_scored_as_ICE_6_and_ICE_7():
    """ICE-6, ICE-7: a hand stopped by the turn cap scores cards left and aces for everyone."""
    match = Match(MatchConfig("iceberg", 2, seed="cap", max_turns_per_hand=2, max_hands=1))
    rng = random.Random(3)
    outcome = play_seats(match, lambda s, v, legal: GREEDY(v, legal, rng))
    hand = outcome.hands[0]
    assert hand.reason.startswith("turn cap")
    state = match.state
    assert hand.points == tuple(V.seat_score(state, s)[0] for s in range(2))
    assert all("card(s)" in d for d in hand.details)


@pytest.mark.parametrize("options", [{}, {"aces": "bonus"}, {"special_values": "500-300-200"}, {"target": "800"}])
@pytest.mark.parametrize("seats", [2, 4])
def test_random_hands_conserve_cards_and_every_listed_action_applies(options, seats):
    """ICE-1..ICE-5: random playouts under every option value keep every card and end the hand."""
    for seed in range(2):
        run = random_hand("iceberg", seats, seed, options)
        assert run.state.over and V.score(run.state).points


def test_greedy_beats_random_over_a_hundred_two_player_hands(capsys):
    """The greedy policy clearly beats the random one over 100 seeded two-player hands."""
    wins, g_pts, r_pts = 0, [], []
    for i in range(100):
        gseat = i % 2
        match = Match(MatchConfig("iceberg", 2, seed=f"gvr{i}", max_hands=1))
        policies = {gseat: GREEDY, 1 - gseat: random_policy}
        rng = random.Random(i)
        outcome = play_seats(match, lambda s, v, legal, p=policies, r=rng: p[s](v, legal, r))
        g, r = outcome.totals[gseat], outcome.totals[1 - gseat]
        wins += g > r
        g_pts.append(g)
        r_pts.append(r)
    with capsys.disabled():
        print(f"\niceberg greedy vs random, 100 hands: greedy wins {wins}, "
              f"mean {statistics.mean(g_pts):.1f} vs {statistics.mean(r_pts):.1f}")
    assert wins >= 80


# ---------------------------------------------------------------- legal actions, default move, evaluate


def test_ICE_2_legal_actions_list_every_discard_and_at_most_sixty_actions_that_all_apply():
    """ICE-2: every distinct discard is listed, with melds and lay-offs, at most 60 actions, each applying."""
    state, _ = stacked(TWO, "6S 2C")
    state.hands[0].extend(cards("2H 3H 5H 6H 7H 8H TH QS QD 5C 5S"))
    for c in cards("2H 3H 5H 6H 7H 8H TH QS QD 5C 5S"):
        state.stock.remove(c)
    legal = V.legal_actions(state, 0)
    assert len(legal) <= 60
    assert {a.card for a in legal if isinstance(a, Pass)} == set(state.hands[0])
    assert any(isinstance(a, Meld) and len(a.groups[0].cards) == 7 for a in legal)
    for a in legal:
        V.apply(copy.deepcopy(state), 0, a)
    assert V.legal_actions(state, 1) == []


def test_ICE_2_the_default_move_passes_the_highest_card():
    """ICE-2: a missed turn passes the highest card face down."""
    state, _ = stacked(TWO, "6S 2C")
    assert V.default_action(state, 0, 1) == Pass(parse_card("JC"))
    V.apply(state, 0, V.default_action(state, 0, 99))
    assert parse_card("JC") in state.hands[1], "passed to seat 1, who picked it up"


def test_ICE_3_ICE_4_evaluate_reports_each_group_its_points_and_the_hand_count():
    """ICE-3, ICE-4, ICE-6: evaluate checks each group, what it scores laid at once and the -10 a card in hand."""
    rules = V.configure({}, 2)
    ev = V.evaluate(rules, frozenset(), [cards("9S 8S 7S 6S"), cards("JD JC"), cards("KH JH 9H 7H 5H 3H"), cards("2C 4C")])
    assert [g.valid for g in ev.groups] == [True, True, True, False]
    assert [g.kind for g in ev.groups[:3]] == ["RUN", "PAIR", "SPECIAL"]
    assert [g.points for g in ev.groups] == [70, 10, 700, 0]
    assert ev.melded_points == 780 and ev.hand_points == -140
    assert not ev.declaration_valid and ev.declaration_reason == "INVALID_MELD"


# ---------------------------------------------------------------- properties

ONE_PACK = build_deck(1)
NON_ACES = [c for c in ONE_PACK if c.rank is not Rank.ACE]


def brute_valid(group: list[Card]) -> bool:
    """ICE-3/ICE-4 written out plainly, to check the engine against."""
    if any(c.rank is Rank.ACE for c in group) or len(group) < 2:
        return False
    if special_label(group):
        return True
    ranks = sorted(int(c.rank) for c in group)
    suits = [c.suit for c in group]
    if len(set(ranks)) == 1:
        return len(group) <= 4 and len(set(suits)) == len(suits)
    return len(group) >= 3 and len(set(suits)) == 1 and ranks == list(range(ranks[0], ranks[0] + len(ranks)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ONE_PACK), min_size=1, max_size=7, unique=True))
def test_ICE_3_property_meld_validation_matches_the_rules_written_out(group):
    """ICE-3, ICE-4: the engine accepts exactly the pairs, sets, runs and special melds the rules describe."""
    rules = V.configure({}, 2)
    assert V.evaluate(rules, frozenset(), [tuple(group)]).groups[0].valid is brute_valid(group)


@settings(max_examples=60, deadline=None)
@given(suit=st.sampled_from([Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS]),
       low=st.integers(2, 11), data=st.data())
def test_ICE_3_property_a_growing_run_scores_the_same_laid_at_once_or_card_by_card(suit, low, data):
    """ICE-3: a run scores the same however it grows, and each added card scores more than the one before."""
    length = data.draw(st.integers(3, 14 - low))
    first = data.draw(st.integers(3, length))
    run = [Card(Rank(r), suit) for r in range(low, low + length)]
    state, _ = stacked(TWO, "6S 2C")
    state.hands[0] = list(run)  # only the scores matter here, not where the other cards lie
    total = meld(state, 0, " ".join(map(str, run[:first])))[0].points
    steps = []
    for c in run[first:]:
        steps.append(lay(state, 0, state.melds[0].id, str(c))[0].points)
    assert total + sum(steps) == meld_points(length)
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    assert all(p == 10 * (first + i + 1) for i, p in enumerate(steps))


@settings(max_examples=40, deadline=None)
@given(rank=st.sampled_from([r for r in Rank if r not in (Rank.JOKER, Rank.ACE)]), k=st.integers(2, 4))
def test_ICE_3_property_a_set_grown_from_a_pair_scores_like_one_laid_at_once(rank, k):
    """ICE-3: a pair then the 3rd (20) and 4th (40) card scores what the set laid at once would."""
    assert meld_points(2) + layoff_points(2, k - 2) == meld_points(k)
    state, _ = stacked(TWO, "6S 2C")
    group = [Card(rank, s) for s in (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)]
    state.hands[0] = list(group)  # only the scores matter here
    got = meld(state, 0, " ".join(map(str, group[:2])))[0].points
    for c in group[2:k]:
        got += lay(state, 0, 1, str(c))[0].points
    assert got == meld_points(k)
