"""500 Rum (FH-1..FH-12), 500 Partnership Rum (FHP-1) and Persian Rummy (PER-1..PER-3): the rules as tests,
the source's worked Persian figures, random conformance and whole games."""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.cards import JOKER, SUITS, Card, Rank, parse_card, parse_cards
from referee.rules.errors import IllegalAction, InvalidOption
from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.melds import MeldKind, readings
from referee.rules.policies import greedy_policy, random_policy
from referee.rules.variants import find
from referee.rules.variants.base import (
    Discard,
    DrawStock,
    EndTurn,
    GameState,
    Group,
    LayOff,
    Meld,
    Phase,
    PileView,
    Table,
    TakeDiscards,
    seat_order,
)
from referee.rules.variants.five_hundred import FiveHundredState, in_hand_value, melded_value
from referee.tools.testing import random_hand, zone_cards

RUM = find("500-rum")
PARTNERS = find("500-partnership")
PERSIAN = find("persian")


def cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_cards(text))


def stacked_deck(variant, hands: list[str], up: str, stock: str = "", dealer: int | None = None,
                 options: dict | None = None, fill: bool = True) -> list[Card]:
    """A deck that deals ``hands[s]`` to seat s (one card at a time from the dealer's left), then turns ``up``
    and leaves ``stock`` on top of the stock; the rest of the pack follows unless ``fill`` is False."""
    seats = len(hands)
    dealer = seats - 1 if dealer is None else dealer
    rules = variant.configure(options or {}, seats)
    dealt = [parse_cards(h) for h in hands]
    assert all(len(d) == rules.hand_size for d in dealt)
    deck = [dealt[s][k] for k in range(rules.hand_size) for s in seat_order(seats, dealer)]
    deck += [parse_card(up), *parse_cards(stock)]
    pack = Counter(variant.deck(rules, seats))
    assert not Counter(deck) - pack, "the stacked cards are not all in the pack"
    if fill:
        deck += sorted((pack - Counter(deck)).elements())
    return deck


def deal(variant, hands: list[str], up: str, stock: str = "", options: dict | None = None, fill: bool = True,
         totals: tuple[int, ...] | None = None) -> FiveHundredState:
    """A new hand from a stacked deck; the dealer is the last seat, so seat 0 plays first."""
    seats = len(hands)
    rules = variant.configure(options or {}, seats)
    deck = stacked_deck(variant, hands, up, stock, options=options, fill=fill)
    teams = tuple(s % 2 for s in range(seats)) if variant.team_play else tuple(range(seats))
    table = Table(seats, seats - 1, 1, teams, (True,) * seats, totals or (0,) * seats)
    return variant.new_hand(rules, table, deck, "test")


def hand_value(variant, state, seat: int) -> int:
    return sum(in_hand_value(c, state.rules) for c in state.hands[seat])


def draw_and_discard(variant, state, seat: int) -> None:
    variant.apply(state, seat, DrawStock())
    variant.apply(state, seat, Discard(state.drawn))


def reject(variant, state, seat, action, code: str) -> None:
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction) as exc:
        variant.apply(state, seat, action)
    assert exc.value.code == code, exc.value.message
    assert state == before, "a rejected action must leave the state untouched"


# three seats, seven cards each: a table where seat 0 can take the pile several ways
THREE = ["7S 7D 8H 9H KC 2C 3D", "4S 5S 6S JD QD KD 9C", "AS AH 2S 3S TD TH TC"]


def pile_of_four():
    """The pile reads 7H 4C 5C 6C (bottom to top) when seat 0 is to draw again."""
    state = deal(RUM, THREE, "7H", "4C 5C 6C")
    for seat in range(3):
        draw_and_discard(RUM, state, seat)
    assert state.discards == list(cards("7H 4C 5C 6C")) and state.turn == 0
    return state


# ---------------------------------------------------------------- FH-1 packs, deal, seats


@pytest.mark.parametrize("seats,packs,size", [(2, 1, 13), (3, 1, 7), (4, 1, 7), (5, 2, 7), (6, 2, 7)])
def test_FH_1_packs_and_hand_size_by_seat_count(seats, packs, size):
    """FH-1: one pack for 2 to 4 players, two for 5 or 6; 13 cards each for two, 7 for more; one card up."""
    rules = RUM.configure({}, seats)
    deck = RUM.deck(rules, seats)
    assert len(deck) == 52 * packs
    table = Table(seats, 0, 1, tuple(range(seats)), (True,) * seats, (0,) * seats)
    state = RUM.new_hand(rules, table, list(deck), "s")
    assert [len(h) for h in state.hands] == [size] * seats
    assert len(state.discards) == 1
    assert len(state.stock) == 52 * packs - size * seats - 1
    assert state.turn == 1 and state.phase is Phase.DRAW  # left of the dealer (COM-4)


@pytest.mark.parametrize("variant,bad", [(RUM, 1), (RUM, 7), (PARTNERS, 3), (PARTNERS, 5), (PERSIAN, 2)])
def test_FH_1_seat_counts_outside_the_game_are_refused(variant, bad):
    """FH-1, FHP-1: 500 Rum is for 2 to 6 players, the partnership games for exactly four."""
    with pytest.raises(InvalidOption) as exc:
        variant.configure({}, bad)
    assert exc.value.code == "BAD_SEAT_COUNT"


def test_FH_1_the_dealt_cards_go_one_at_a_time_from_the_dealers_left():
    """FH-1: a stacked deck deals the hands asked for, turns the next card up and leaves the rest as stock."""
    state = deal(RUM, THREE, "7H", "4C 5C 6C")
    assert [sorted(h) for h in state.hands] == [sorted(cards(h)) for h in THREE]
    assert state.discards == [parse_card("7H")] and state.stock[:3] == list(cards("4C 5C 6C"))


# ---------------------------------------------------------------- FH-2 the fanned pile


def test_FH_2_every_card_of_the_pile_is_shown_to_every_seat():
    """FH-2: the discard pile is fanned: every seat's view shows the whole pile, bottom to top."""
    state = pile_of_four()
    assert state.pile_view is PileView.FANNED
    for seat in range(3):
        view = RUM.observe(state, seat)
        assert view.discard_pile == cards("7H 4C 5C 6C") and view.discard_size == 4


# ---------------------------------------------------------------- FH-3 the draw


def test_FH_3_drawing_the_stock_is_seen_only_by_the_drawer():
    """FH-3: draw the top of the stock; others are told a card was drawn, not which."""
    state = deal(RUM, THREE, "7H", "4C 5C 6C")
    events = RUM.apply(state, 0, DrawStock())
    assert parse_card("4C") in state.hands[0] and state.phase is Phase.PLAY
    mine = [e for e in events if e.visible_to(0)]
    theirs = [e for e in events if e.visible_to(1)]
    assert mine[0].cards == cards("4C") and theirs[0].cards == () and "4C" not in theirs[0].text


def test_FH_3_taking_from_the_pile_melds_the_bottom_card_and_takes_the_rest_into_hand():
    """FH-3: take four: the bottom card 7H is melded at once with 7S 7D; 4C 5C 6C go into hand."""
    state = pile_of_four()
    events = RUM.apply(state, 0, TakeDiscards(4, meld=Group(cards("7S 7D"))))
    assert state.discards == []
    assert [sorted(p.card for p in m.cards) for m in state.melds] == [sorted(cards("7S 7D 7H"))]
    assert Counter(state.hands[0]) == Counter(cards("8H 9H KC 2C 3D 4C 5C 6C"))
    assert [e.kind for e in events] == ["TOOK_DISCARDS", "MELDED"] and state.phase is Phase.PLAY


def test_FH_3_the_bottom_card_may_be_melded_with_cards_taken_above_it():
    """FH-3: take three: the bottom card 4C makes a run with 5C and 6C, taken with it."""
    state = pile_of_four()
    RUM.apply(state, 0, TakeDiscards(3, meld=Group(cards("5C 6C"))))
    assert state.discards == list(cards("7H"))
    assert state.melds[0].reading.kind is MeldKind.RUN and Counter(state.hands[0]) == Counter(cards(THREE[0]))


def test_FH_3_count_zero_takes_the_whole_pile():
    """FH-3: ``count = 0`` takes the whole pile, its bottom card melded."""
    state = pile_of_four()
    RUM.apply(state, 0, TakeDiscards(0, meld=Group(cards("8H 9H"))))
    assert state.discards == [] and state.melds[0].reading.kind is MeldKind.RUN


def test_FH_3_the_bottom_card_may_be_laid_off_instead():
    """FH-3: the bottom card taken may be laid off on a meld on the table (here an opponent's)."""
    state = deal(RUM, ["5H 6H 7H 8H 2D 3C KC", "9S JD QS 4S 6C TC 2S", "AS AH 3D 4D 9D JC QD"], "KD", "5S")
    RUM.apply(state, 0, DrawStock())
    RUM.apply(state, 0, Meld((Group(cards("5H 6H 7H")),)))
    RUM.apply(state, 0, Discard(parse_card("8H")))
    events = RUM.apply(state, 1, TakeDiscards(1, lay_off_on=1))
    assert state.discards == list(cards("KD")) and Counter(state.hands[1]) == Counter(cards("9S JD QS 4S 6C TC 2S"))
    meld = state.meld(1)
    assert [p.card for p in meld.cards] == list(cards("5H 6H 7H 8H")) and meld.laid_by == (0, 0, 0, 1)
    assert [e.kind for e in events] == ["TOOK_DISCARDS", "LAID_OFF"]


def test_FH_3_a_take_whose_bottom_card_is_not_melded_is_refused():
    """FH-3: taking without melding the bottom card, or with cards that do not meld it, is refused."""
    state = pile_of_four()
    reject(RUM, state, 0, TakeDiscards(4), "MUST_MELD_BOTTOM_DISCARD")
    reject(RUM, state, 0, TakeDiscards(4, meld=Group(cards("KC 2C"))), "MUST_MELD_BOTTOM_DISCARD")
    reject(RUM, state, 0, TakeDiscards(2, meld=Group(cards("6C 7D"))), "MUST_MELD_BOTTOM_DISCARD")
    reject(RUM, state, 0, TakeDiscards(4, meld=Group(cards("7S 7D")), lay_off_on=1), "MUST_MELD_BOTTOM_DISCARD")
    reject(RUM, state, 0, TakeDiscards(5, meld=Group(cards("7S 7D"))), "BAD_TAKE_COUNT")
    reject(RUM, state, 0, TakeDiscards(4, meld=Group(cards("7S 7C"))), "CARD_NOT_IN_HAND")
    reject(RUM, state, 0, TakeDiscards(4, lay_off_on=9), "NO_SUCH_MELD")


def test_FH_3_refusals_say_what_was_wrong_once_in_plain_words():
    """#31: "give a meld or a meld to lay it off on, not both" when neither was given; "(FH-3) (FH-3, FH-5)";
    "AS are not all in your hand" for one card."""
    state = pile_of_four()

    def message(action) -> str:
        with pytest.raises(IllegalAction) as exc:
            RUM.apply(state, 0, action)
        return exc.value.message

    neither = message(TakeDiscards(4))
    assert "not both" not in neither and "give the cards to meld it with, or a meld to lay it off on" in neither
    assert "not both" in message(TakeDiscards(4, meld=Group(cards("7S 7D")), lay_off_on=1))
    bad_meld = message(TakeDiscards(4, meld=Group(cards("KC 2C"))))
    assert bad_meld.endswith("(FH-3, FH-5)") and bad_meld.count("FH-3") == 1, bad_meld
    assert message(TakeDiscards(4, meld=Group(cards("7S 7C")))) == \
        "7C is not in your hand or among the cards taken (FH-3)"
    RUM.apply(state, 0, DrawStock())  # seat 0 to play: 7S 7D 8H 9H KC 2C 3D and the card drawn
    assert message(Meld((Group(cards("4S 5S 6S")),))) == "4S 5S 6S are not in your hand (FH-4)"  # seat 1's
    assert message(Meld((Group(cards("7S 7D 7C")),))) == "7C is not in your hand (FH-4)"
    assert message(Meld((Group(cards("7S 7S 7D")),))) == "only 1 7S is in your hand, not 2 (FH-4)"
    assert message(LayOff(1, cards("4S"))) == "4S is not in your hand (FH-6)"


def test_FH_3_the_listed_takes_all_apply_and_meld_the_bottom_card():
    """FH-3: the legal list offers one way for each depth whose bottom card can be melded, and each applies."""
    state = pile_of_four()
    takes = [a for a in RUM.legal_actions(state, 0) if isinstance(a, TakeDiscards)]
    assert sorted(a.count for a in takes) == [3, 4]  # 6C, 5C alone cannot be melded; 4C and 7H can
    for a in takes:
        trial = copy.deepcopy(state)
        RUM.apply(trial, 0, a)
        assert trial.melds and trial.phase is Phase.PLAY


# ---------------------------------------------------------------- FH-4 the rest of the turn


def test_FH_4_meld_and_lay_off_any_number_then_discard_to_pass_the_turn():
    """FH-4: after drawing, meld and lay off as often as wished; the discard ends the turn."""
    state = deal(RUM, ["5H 6H 7H 8H 9S 9D KD", "9H JD QS 4S 6C TC 2S", "AS AH 3D 4D 2D JC QD"], "KC", "4H")
    RUM.apply(state, 0, DrawStock())
    RUM.apply(state, 0, Meld((Group(cards("5H 6H 7H")),)))
    RUM.apply(state, 0, LayOff(1, cards("8H")))
    RUM.apply(state, 0, LayOff(1, cards("4H")))
    assert len(state.meld(1).cards) == 5 and state.turn == 0 and state.phase is Phase.PLAY
    RUM.apply(state, 0, Discard(parse_card("KD")))
    assert state.turn == 1 and state.phase is Phase.DRAW and state.turns == 1 and state.discards[-1] == parse_card("KD")


def test_FH_4_moves_out_of_phase_are_refused():
    """FH-4: no meld before the draw, no second draw, and a turn that goes on ends with a discard."""
    state = deal(RUM, ["5H 6H 7H 9S 9D 9C KD", "8H JD QS 4S 6C TC 2S", "AS AH 3D 4D 2D JC QD"], "KC", "4H")
    reject(RUM, state, 0, Meld((Group(cards("5H 6H 7H")),)), "WRONG_PHASE")
    reject(RUM, state, 0, Discard(parse_card("KD")), "WRONG_PHASE")
    reject(RUM, state, 1, DrawStock(), "NOT_YOUR_TURN")
    RUM.apply(state, 0, DrawStock())
    reject(RUM, state, 0, DrawStock(), "WRONG_PHASE")
    reject(RUM, state, 0, EndTurn(), "MUST_DISCARD")
    reject(RUM, state, 0, Discard(parse_card("AS")), "CARD_NOT_IN_HAND")
    reject(RUM, state, 0, Meld((Group(cards("9S 9D KD")),)), "INVALID_MELD")


# ---------------------------------------------------------------- FH-5 melds


R = RUM.configure({}, 3).meld_rules


@pytest.mark.parametrize("text,ok", [
    ("7S 7H 7D", True), ("7S 7H 7D 7C", True), ("7S 7H", False), ("7S 7H 8D", False),
    ("AH 2H 3H", True), ("QH KH AH", True), ("KH AH 2H", False), ("QH KH AH 2H", False),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", True), ("7H 8H 9S", False), ("7H 8H TH", False),
])
def test_FH_5_sets_of_three_or_four_runs_of_any_length_ace_high_or_low_not_around_the_corner(text, ok):
    """FH-5: sets of 3 or 4, runs of 3 or more in one suit; ace high or low, never around the corner."""
    assert bool(readings(cards(text), R)) is ok


def test_FH_5_no_set_of_five_even_with_two_packs():
    """FH-5: a set is at most four cards, even when two packs are shuffled together."""
    rules5 = RUM.configure({}, 5)
    assert not readings(cards("7S 7H 7D 7C 7S"), rules5.meld_rules)
    assert readings(cards("7S 7H 7S"), rules5.meld_rules)


def test_FH_5_there_are_no_wild_cards_without_the_jokers_option():
    """FH-5: no wilds: a joker is not in the pack and no card stands for another."""
    rules = RUM.configure({}, 2)
    assert JOKER not in RUM.deck(rules, 2) and rules.wilds == frozenset()
    assert not readings(cards("2H 7H 8H"), rules.meld_rules, rules.wilds)


# ---------------------------------------------------------------- FH-6 lay-offs credited to the layer


def test_FH_6_a_lay_off_on_an_opponents_meld_scores_for_the_layer():
    """FH-6: seat 1 lays 8H off on seat 0's run; the 8H is credited to seat 1."""
    state = deal(RUM, ["5H 6H 7H 9S 2D 3C KC", "8H JD QS 4S 6C TC 2S", "AS AH 3D 4D 9D JC QD"], "KD", "5S 7C")
    RUM.apply(state, 0, DrawStock())
    RUM.apply(state, 0, Meld((Group(cards("5H 6H 7H")),)))
    RUM.apply(state, 0, Discard(parse_card("KC")))
    RUM.apply(state, 1, DrawStock())
    events = RUM.apply(state, 1, LayOff(1, cards("8H")))
    meld = state.meld(1)
    assert meld.owner == 0 and dict(zip((p.card for p in meld.cards), meld.laid_by, strict=True))[parse_card("8H")] == 1
    assert events[0].kind == "LAID_OFF" and events[0].points == 5
    state.over, state.end_reason = True, "turn cap (test)"
    score = RUM.score(state)
    assert score.points[1] == 5 - hand_value(RUM, state, 1)
    assert score.points[0] == 15 - hand_value(RUM, state, 0)


def test_FH_6_a_card_that_does_not_fit_cannot_be_laid_off():
    """FH-6: a lay-off must extend the meld it is laid on."""
    state = deal(RUM, ["5H 6H 7H 9S 2D 3C KC", "8H JD QS 4S 6C TC 2S", "AS AH 3D 4D 9D JC QD"], "KD", "5S 7C")
    RUM.apply(state, 0, DrawStock())
    RUM.apply(state, 0, Meld((Group(cards("5H 6H 7H")),)))
    reject(RUM, state, 0, LayOff(1, cards("9S")), "CANNOT_LAY_OFF")
    reject(RUM, state, 0, LayOff(7, cards("9S")), "NO_SUCH_MELD")


# ---------------------------------------------------------------- FH-7 going out


def test_FH_7_going_out_by_melding_every_card_needs_no_discard():
    """FH-7: a player whose hand is empty after melding has gone out: the deal ends, no bonus."""
    state = deal(RUM, ["5H 6H 7H 8H 9S 9D 9C", "JD QS 4S 6C TC 2S 3H", "AS AH 3D 4D 2D JC QD"], "KC", "9H")
    RUM.apply(state, 0, DrawStock())
    RUM.apply(state, 0, Meld((Group(cards("5H 6H 7H 8H")),)))
    events = RUM.apply(state, 0, Meld((Group(cards("9S 9D 9C 9H")),)))
    assert state.over and state.went_out == 0 and events[-1].kind == "WENT_OUT"
    assert RUM.decision(state) is None
    score = RUM.score(state)
    assert score.points[0] == 40 and score.winner == 0  # 4 x 5 + 4 x 5, and no bonus for going out


def test_FH_7_going_out_by_discarding_the_last_card():
    """FH-7: a player may go out with a final discard instead."""
    state = deal(RUM, ["5H 6H 7H 9S 9D 9C KD", "JD QS 4S 6C TC 2S 3H", "AS AH 3D 4D 2D JC QD"], "KC", "8H")
    RUM.apply(state, 0, DrawStock())
    RUM.apply(state, 0, Meld((Group(cards("5H 6H 7H 8H")), Group(cards("9S 9D 9C")))))
    assert not state.over
    RUM.apply(state, 0, Discard(parse_card("KD")))
    assert state.over and state.went_out == 0 and "FH-7" in state.end_reason
    assert RUM.score(state).points == (35, -hand_value(RUM, state, 1), -hand_value(RUM, state, 2))


# ---------------------------------------------------------------- FH-8 card values


@pytest.mark.parametrize("scoring,low_run,face_run,ace_high,sevens,hand", [
    ("simplified", 15, 30, 35, 15, 15 + 10 + 5 + 5),
    ("traditional", 6, 37, 35, 21, 15 + 10 + 9 + 2),
])
def test_FH_8_card_values_simplified_and_traditional(scoring, low_run, face_run, ace_high, sevens, hand):
    """FH-8: simplified: ace 15 high or in hand, 5 low, tens and faces 10, 9 to 2 five; traditional: 9 to 2 at
    face value and a low ace 1."""
    rules = RUM.configure({"scoring": scoring}, 2)
    ev = RUM.evaluate(rules, frozenset(), [cards("AH 2H 3H"), cards("8S 9S TS JS"), cards("QH KH AH"), cards("7S 7H 7D")])
    assert [g.points for g in ev.groups] == [low_run, face_run, ace_high, sevens]
    assert sum(in_hand_value(c, rules) for c in cards("AS KD 9C 2H")) == hand
    assert RUM.evaluate(rules, frozenset(), [cards("AS AH AD")]).melded_points == 45  # aces in a set are high


# ---------------------------------------------------------------- FH-9 score per deal


def test_FH_9_each_seat_scores_what_it_melded_minus_what_it_holds():
    """FH-9: a deal stopped with cards in hand scores melded and laid-off cards minus the cards held."""
    state = deal(RUM, ["5H 6H 7H 9S 2D 3C KC", "8H JD QS 4S 6C TC 2S", "AS AH 3D 4D 9D JC QD"], "KD", "5S 7C")
    RUM.apply(state, 0, DrawStock())
    RUM.apply(state, 0, Meld((Group(cards("5H 6H 7H")),)))
    RUM.apply(state, 0, Discard(parse_card("KC")))
    state.over, state.end_reason = True, "turn cap (400 turns)"
    score = RUM.score(state)
    assert score.points[0] == 15 - 5 * 4  # 9S 2D 3C 5S left
    assert score.points[2] == -(15 + 15 + 5 + 5 + 5 + 10 + 10)
    assert score.winner is None and "turn cap" in score.reason


# ---------------------------------------------------------------- FH-10 the end of the game


def game(totals, teams=None) -> GameState:
    n = len(totals)
    return GameState(n, teams or tuple(range(n)), list(totals), hands_played=5, eliminated=[False] * n)


def test_FH_10_the_game_ends_when_a_player_reaches_500_and_the_highest_wins():
    """FH-10: over at 500 or more; with several over 500 in one deal the highest total wins."""
    rules = RUM.configure({}, 3)
    assert RUM.game_outcome(rules, game((480, 300, 10)), 100) is None
    out = RUM.game_outcome(rules, game((510, 300, 10)), 100)
    assert out is not None and out.ranking[0] == (0,) and "target" in out.reason and "FH-10" in out.reason
    out = RUM.game_outcome(rules, game((510, 530, 10)), 100)
    assert out is not None and out.ranking == ((1,), (0,), (2,))


def test_FH_10_a_tie_for_the_highest_total_plays_on():
    """FH-10: when the highest totals over 500 are equal, deals go on."""
    assert RUM.game_outcome(RUM.configure({}, 2), game((520, 520)), 100) is None
    assert RUM.game_outcome(RUM.configure({}, 3), game((520, 520, 530)), 100) is not None


# ---------------------------------------------------------------- FH-11 an empty stock


def short_stock(hands_1: str):
    """Three seats and a one-card stock (5C): after seat 0 draws and discards it, the stock is empty."""
    return deal(RUM, ["5H 6H 7H 9S 2D 3C KC", hands_1, "AS AH 3D 4D 9D JC QD"], "KD", "5C", fill=False)


def test_FH_11_an_empty_stock_offers_the_pile_or_the_end_of_the_deal():
    """FH-11: a player facing an empty stock may take from the pile or end the turn, which ends the deal."""
    state = short_stock("6C 4C JH QS 4S 2C TC")  # seat 1 holds 4C and 6C: the 5C discarded would make a run
    draw_and_discard(RUM, state, 0)
    assert not state.stock and not state.over
    legal = RUM.legal_actions(state, 1)
    assert not any(isinstance(a, DrawStock) for a in legal)
    assert EndTurn() in legal and any(isinstance(a, TakeDiscards) for a in legal)
    assert RUM.default_action(state, 1, 1) == EndTurn()
    reject(RUM, state, 1, DrawStock(), "STOCK_EMPTY")
    events = RUM.apply(state, 1, EndTurn())
    assert state.over and state.went_out is None and "FH-11" in state.end_reason
    assert events[0].kind == "STOCK_EXHAUSTED" and RUM.decision(state) is None
    assert RUM.score(state).points[1] == -hand_value(RUM, state, 1)


def test_FH_11_the_deal_ends_by_itself_when_the_player_cannot_take():
    """FH-11: with the stock empty and no legal take from the pile, the deal ends at once and is scored."""
    state = short_stock("8H JD QS 4S 6S TC 2S")
    events = RUM.apply(state, 0, DrawStock())
    events = RUM.apply(state, 0, Discard(parse_card("5C")))
    assert state.over and events[-1].kind == "STOCK_EXHAUSTED" and "FH-11" in state.end_reason
    score = RUM.score(state)
    assert score.points == tuple(-hand_value(RUM, state, s) for s in range(3))


def test_FH_11_a_player_with_the_stock_still_full_may_not_end_the_deal():
    """FH-11: ending the turn instead of drawing is only for an empty stock."""
    state = deal(RUM, THREE, "7H", "4C 5C 6C")
    reject(RUM, state, 0, EndTurn(), "MUST_DRAW")


# ---------------------------------------------------------------- FH-12 jokers


@pytest.mark.parametrize("jokers", ["0", "1", "2"])
def test_FH_12_jokers_option_adds_wild_jokers_to_the_pack(jokers):
    """FH-12: jokers = 0 | 1 | 2 printed jokers in the pack, wild when there are any."""
    rules = RUM.configure({"jokers": jokers}, 2)
    deck = RUM.deck(rules, 2)
    assert deck.count(JOKER) == int(jokers) and len(deck) == 52 + int(jokers)
    assert (Rank.JOKER in rules.wilds) is (jokers != "0")


def test_FH_12_a_joker_is_wild_and_counts_15_melded_and_in_hand():
    """FH-12: a joker stands in any meld, scores 15 melded and counts 15 in hand; jokers alone never meld."""
    rules = RUM.configure({"jokers": "2"}, 2)
    ev = RUM.evaluate(rules, rules.wilds, [cards("JK 7H 8H"), cards("JK 9S 9D"), cards("JK JK"), cards("JK JK 4C")])
    assert [(g.valid, g.kind) for g in ev.groups[:3]] == [(True, "RUN"), (True, "SET"), (False, "")]
    assert ev.groups[0].points == 25 and ev.groups[1].points == 25
    assert ev.groups[3].reason == "AMBIGUOUS_WILD"  # JK JK 4C could be a set of fours or a run
    assert in_hand_value(JOKER, rules) == 15


def test_FH_12_an_ambiguous_wild_meld_is_laid_when_the_player_names_the_stand_ins():
    """FH-12: a joker meld readable two ways needs what the jokers stand for."""
    state = deal(RUM, ["JK JK 4C 9S 2D 3H KC", "8H JD QS 4S 6C TC 2S", "AS AH 3D 4D 9D JC QD"], "KD", "5S",
                 options={"jokers": "2"})
    RUM.apply(state, 0, DrawStock())
    reject(RUM, state, 0, Meld((Group(cards("JK JK 4C")),)), "AMBIGUOUS_WILD")
    RUM.apply(state, 0, Meld((Group(cards("JK JK 4C"), ((JOKER, parse_card("5C")), (JOKER, parse_card("6C")))),)))
    assert state.melds[0].reading.kind is MeldKind.RUN


# ---------------------------------------------------------------- FHP-1 partnership


def test_FHP_1_partners_sit_opposite_and_the_deal_stops_when_anyone_goes_out():
    """FHP-1: four players, partners opposite; seat 1 goes out on its first turn and the deal stops at once;
    each side scores jointly: both partners' melds minus both partners' hands."""
    hands = ["AS 2D 4C 6S 8D TC QS", "5H 6H 7H 9S 9D 9C KD", "3S 5S 7S 9H JH KS 2H", "AD 3D 5D 7D JD KC 2C"]
    deck = stacked_deck(PARTNERS, hands, "QC", "8H", dealer=0)
    match = Match(MatchConfig("500-partnership", 4, decks=(tuple(deck),), max_hands=1))
    assert PARTNERS.team_play and match.teams == (0, 1, 0, 1)
    script = iter([DrawStock(), Meld((Group(cards("5H 6H 7H 8H")), Group(cards("9S 9D 9C")))), Discard(parse_card("KD"))])
    out = play_seats(match, lambda seat, view, legal: next(script))
    assert out.hands[0].winner == 1
    side_a = -(15 + 5 + 5 + 5 + 5 + 10 + 10) - (5 + 5 + 5 + 5 + 10 + 10 + 5)  # seats 0 and 2 hold everything
    side_b = 35 - (15 + 5 + 5 + 5 + 10 + 10 + 5)  # seat 1 melded 35, seat 3 holds 55
    assert out.totals[0] + out.totals[2] == side_a and out.totals[1] + out.totals[3] == side_b
    assert out.ranking == ((1, 3), (0, 2))


def test_FHP_1_a_partner_may_lay_off_on_any_meld_and_the_side_target_is_joint():
    """FHP-1: lay-offs on any meld as in 500 Rum; the game ends when a side's joint total reaches 500."""
    state = deal(PARTNERS, ["5H 6H 7H 9S 2D 3C KC", "8H JD QS 4S 6C TC 2S", "4H AS 3D 4D 9D JC QD",
                            "AD 5D 7D JH KS 2C 3H"], "KD", "5S 7C 8C")
    PARTNERS.apply(state, 0, DrawStock())
    PARTNERS.apply(state, 0, Meld((Group(cards("5H 6H 7H")),)))
    PARTNERS.apply(state, 0, Discard(parse_card("KC")))
    PARTNERS.apply(state, 1, DrawStock())
    PARTNERS.apply(state, 1, LayOff(1, cards("8H")))  # an opponent's meld
    PARTNERS.apply(state, 1, Discard(parse_card("2S")))
    PARTNERS.apply(state, 2, DrawStock())
    PARTNERS.apply(state, 2, LayOff(1, cards("4H")))  # the partner's meld
    assert state.meld(1).laid_by == (2, 0, 0, 0, 1)
    rules = PARTNERS.configure({}, 4)
    assert PARTNERS.game_outcome(rules, game((300, 200, 150, 299), (0, 1, 0, 1)), 100) is None
    out = PARTNERS.game_outcome(rules, game((300, 200, 250, 100), (0, 1, 0, 1)), 100)
    assert out is not None and out.ranking == ((0, 2), (1, 3))
    assert PARTNERS.game_outcome(rules, game((300, 300, 200, 200), (0, 1, 0, 1)), 100) is None  # 500 each: tie


@pytest.mark.parametrize("options", [{"scoring": "simplified"}, {"scoring": "traditional"}, {"jokers": "0"},
                                     {"jokers": "1"}, {"jokers": "2"}])
def test_FHP_1_the_partnership_game_takes_the_500_rum_options(options):
    """FHP-1: same rules as 500 Rum, so the same options; random deals keep every invariant."""
    for seed in range(2):
        run = random_hand("500-partnership", 4, seed, options)
        assert run.state.over


# ---------------------------------------------------------------- PER-1 Persian jokers


def test_PER_1_persian_adds_four_jokers_that_meld_only_together():
    """PER-1: 56 cards; jokers are not wild and meld only in groups of jokers; 20 melded, 20 in hand."""
    rules = PERSIAN.configure({}, 4)
    deck = PERSIAN.deck(rules, 4)
    assert len(deck) == 56 and deck.count(JOKER) == 4 and rules.wilds == frozenset()
    ev = PERSIAN.evaluate(rules, frozenset(), [cards("JK JK JK"), cards("JK 7H 7S"), cards("JK 7H 8H"), cards("JK JK")])
    assert [(g.valid, g.kind) for g in ev.groups] == [(True, "JOKERS"), (False, ""), (False, ""), (False, "")]
    assert ev.groups[0].points == 60 and in_hand_value(JOKER, rules) == 20


def test_PER_1_a_joker_cannot_be_laid_off_on_a_natural_meld():
    """PER-1: a joker goes only on a meld of jokers."""
    state = deal(PERSIAN, ["5H 6H 7H JK 2D 3C KC", "8H JD QS 4S 6C TC 2S", "4H AS 3D 4D 9D JC QD",
                           "AD 5D 7D JH KS 2C 3H"], "KD", "5S")
    PERSIAN.apply(state, 0, DrawStock())
    PERSIAN.apply(state, 0, Meld((Group(cards("5H 6H 7H")),)))
    reject(PERSIAN, state, 0, LayOff(1, (JOKER,)), "CANNOT_LAY_OFF")
    state.over, state.end_reason = True, "turn cap (test)"
    assert PERSIAN.score(state).points[0] == 15 - (20 + 5 + 5 + 10 + 5)  # the joker counts -20 in hand


# ---------------------------------------------------------------- PER-2 four at once counts double

PER_OTHERS = ["3S 4D 6H 8C TS QD KH", "3H 4S 6D 8D TD QH KS", "3D 4H 6S 8S TH QS KD"]


def persian(first: str, stock: str, options: dict | None = None) -> FiveHundredState:
    return deal(PERSIAN, [first, *PER_OTHERS], "9C", stock, options=options)


def test_PER_2_four_jokers_at_once_score_160_and_three_2s_at_once_15():
    """PER-2: the source's figures: four jokers laid down at once (4 x 20) x 2 = 160; three 2s at once 15."""
    state = persian("JK JK JK JK 2S 2H 2D", "5C")
    PERSIAN.apply(state, 0, DrawStock())
    ev_jokers = PERSIAN.apply(state, 0, Meld((Group(cards("JK JK JK JK")),)))
    ev_twos = PERSIAN.apply(state, 0, Meld((Group(cards("2S 2H 2D")),)))
    assert ev_jokers[0].points == 160 and ev_twos[0].points == 15
    assert state.melds[0].laid_at_once == 4 and state.melds[1].laid_at_once == 3
    PERSIAN.apply(state, 0, Discard(parse_card("5C")))
    assert state.over and PERSIAN.score(state).points[0] == 175


def test_PER_2_four_2s_at_once_score_40():
    """PER-2: the source's figure: four 2s laid down at once score 40."""
    state = persian("2S 2H 2D 2C JK 5S 7D", "5C")
    PERSIAN.apply(state, 0, DrawStock())
    events = PERSIAN.apply(state, 0, Meld((Group(cards("2S 2H 2D 2C")),)))
    assert events[0].points == 40
    state.over, state.end_reason = True, "turn cap (test)"
    assert PERSIAN.score(state).points[0] == 40 - (20 + 5 + 5 + 5)


def test_PER_2_three_jokers_then_a_fourth_score_80():
    """PER-2: the source's figure: three jokers score 60; the fourth added later scores 20 more, 80 in all."""
    state = persian("JK JK JK 5S 7D 8H TC", "7C AC AH AD JK")
    PERSIAN.apply(state, 0, DrawStock())
    assert PERSIAN.apply(state, 0, Meld((Group(cards("JK JK JK")),)))[0].points == 60
    PERSIAN.apply(state, 0, Discard(parse_card("7C")))
    for seat in (1, 2, 3):
        draw_and_discard(PERSIAN, state, seat)
    PERSIAN.apply(state, 0, DrawStock())
    events = PERSIAN.apply(state, 0, LayOff(1, (JOKER,)))
    assert events[0].points == 20 and state.melds[0].laid_at_once == 3
    state.over, state.end_reason = True, "turn cap (test)"
    assert PERSIAN.score(state).points[0] == 80 - (5 + 5 + 5 + 10)


def test_PER_2_a_four_card_run_laid_at_once_doubles_and_a_later_card_counts_single():
    """PER-2: a first lay-down of exactly four cards counts those four double; a fifth added later counts once."""
    state = persian("JC QC KC AC 2H 5H TC", "9S")
    PERSIAN.apply(state, 0, DrawStock())
    assert PERSIAN.apply(state, 0, Meld((Group(cards("JC QC KC AC")),)))[0].points == 90
    PERSIAN.apply(state, 0, LayOff(1, cards("TC")))
    state.over, state.end_reason = True, "turn cap (test)"
    assert PERSIAN.score(state).points[0] == 100 - (5 + 5 + 5)


# ---------------------------------------------------------------- PER-3 options


def test_PER_3_target_500_or_two_deals():
    """PER-3: target = 500 ends at 500 like 500 Rum; target = deals-2 ends after two deals, highest side first."""
    teams = (0, 1, 0, 1)
    at_500 = PERSIAN.configure({"target": "500"}, 4)
    two = PERSIAN.configure({"target": "deals-2"}, 4)
    one_deal = GameState(4, teams, [100, 20, 50, 0], hands_played=1, eliminated=[False] * 4)
    assert PERSIAN.game_outcome(two, one_deal, 100) is None
    one_deal.hands_played = 2
    out = PERSIAN.game_outcome(two, one_deal, 100)
    assert out is not None and out.ranking == ((0, 2), (1, 3)) and "2 deals" in out.reason
    assert PERSIAN.game_outcome(at_500, one_deal, 100) is None
    assert PERSIAN.game_outcome(at_500, game((300, 0, 200, 0), teams), 100) is not None


@pytest.mark.parametrize("aces,low_ok", [("both", True), ("high", False)])
def test_PER_3_aces_both_or_only_high(aces, low_ok):
    """PER-3: aces = both (high or low, as 500 Rum) or high (Q-K-A only)."""
    rules = PERSIAN.configure({"aces": aces}, 4)
    ev = PERSIAN.evaluate(rules, frozenset(), [cards("AH 2H 3H"), cards("QH KH AH")])
    assert ev.groups[0].valid is low_ok and ev.groups[1].valid


@pytest.mark.parametrize("bonus", ["0", "25"])
def test_PER_3_out_bonus_for_the_player_who_goes_out(bonus):
    """PER-3: out_bonus = 0 or 25 for the player who goes out."""
    state = persian("JK JK JK JK 2S 2H 2D", "5C", {"out_bonus": bonus})
    PERSIAN.apply(state, 0, DrawStock())
    PERSIAN.apply(state, 0, Meld((Group(cards("JK JK JK JK")), Group(cards("2S 2H 2D")))))
    PERSIAN.apply(state, 0, Discard(parse_card("5C")))
    assert PERSIAN.score(state).points[0] == 175 + int(bonus)


# ---------------------------------------------------------------- options, registry, views, defaults


def test_options_outside_their_choices_are_refused():
    """FH-8, FH-12, PER-3: an unknown option or value names the option and its choices."""
    for variant, opts in [(RUM, {"jokers": "3"}), (RUM, {"scoring": "face"}), (PERSIAN, {"target": "1000"}),
                          (PERSIAN, {"aces": "low"}), (PERSIAN, {"out_bonus": "50"})]:
        with pytest.raises(InvalidOption) as exc:
            variant.configure(opts, 4)
        assert exc.value.code == "BAD_OPTION_VALUE"
    with pytest.raises(InvalidOption):
        PERSIAN.configure({"jokers": "1"}, 4)


def test_the_three_games_are_found_by_name_and_alias():
    """The registry knows each game by its name and aliases."""
    for alias in ("500", "five-hundred", "500rum", "rummy-500", "500-rum"):
        assert find(alias) is RUM
    assert find("partnership-500") is PARTNERS and find("persian-rummy") is PERSIAN
    assert not RUM.lower_is_better and PARTNERS.team_play and PERSIAN.team_play and not RUM.team_play


def test_default_actions_draw_then_discard_the_drawn_card():
    """FH-3, FH-4: a missed turn draws from the stock and discards the card drawn."""
    state = deal(RUM, THREE, "7H", "4C 5C 6C")
    assert RUM.default_action(state, 0, 1) == DrawStock()
    RUM.apply(state, 0, DrawStock())
    assert RUM.default_action(state, 0, 1) == Discard(parse_card("4C"))
    RUM.apply(state, 0, Discard(parse_card("4C")))
    RUM.apply(state, 1, DrawStock())
    state.drawn = None
    assert RUM.default_action(state, 1, 99) == Discard(parse_card("KD"))  # the costliest card, KD over QD, JD


def test_the_view_carries_the_options_and_the_legal_list_stays_small():
    """COM-6: the view names the options; legal lists stay near 60 actions and list every distinct discard."""
    state = deal(RUM, THREE, "7H", "4C 5C 6C", options={"scoring": "traditional"})
    view = RUM.observe(state, 0)
    assert view.hand == tuple(state.hands[0]) and view.hand_sizes == (7, 7, 7) and view.stock_size == len(state.stock)
    assert dict(view.notes)["options"] == "jokers=0;scoring=traditional"
    for seed in range(3):
        run = random_hand("500-rum", 2, seed)
        assert run.state.over
    RUM.apply(state, 0, DrawStock())
    legal = RUM.legal_actions(state, 0)
    assert len(legal) <= 60 and {a.card for a in legal if isinstance(a, Discard)} == set(state.hands[0])
    assert RUM.legal_actions(state, 1) == []


def test_evaluate_reports_validity_kind_points_and_the_count_in_hand():
    """FH-5, FH-8: evaluate gives each group's verdict and points, and what the cards count in hand."""
    rules = RUM.configure({}, 2)
    ev = RUM.evaluate(rules, frozenset(), [cards("QH KH AH"), cards("7S 8D 9C")])
    assert ev.groups[0].valid and ev.groups[0].kind == "RUN" and ev.groups[0].points == 35
    assert not ev.groups[1].valid and ev.groups[1].reason == "INVALID_MELD"
    assert not ev.declaration_valid and ev.melded_points == 35 and ev.hand_points == 35 + 15


# ---------------------------------------------------------------- hypothesis: meld validation and scoring

SUIT = st.sampled_from(SUITS)


@given(suit=SUIT, length=st.integers(3, 12), shift=st.integers(0, 9))
def test_FH_5_runs_around_the_corner_are_never_valid(suit, length, shift):
    """FH-5: any same-suit window of 3 to 12 cards that turns the corner (K-A-2) never reads as a meld; 13 cards
    would be the whole suit, a straight run A to K."""
    start = 16 - length + shift % (length - 2)  # start <= K and end >= 2 after the ace: the window covers K, A, 2
    ranks = [((start + i - 1) % 13) + 1 for i in range(length)]
    assert Rank.KING in ranks and Rank.ACE in ranks and Rank.TWO in ranks
    assert not readings([Card(Rank(r), suit) for r in ranks], R)


@given(suit=SUIT, low=st.integers(1, 12), length=st.integers(3, 13))
def test_FH_5_every_straight_window_is_a_run_scored_card_by_card(suit, low, length):
    """FH-5, FH-8: any 3+ consecutive cards of one suit (A low to A high) read as a run worth its cards; a whole
    suit may read either way and is read with the ace high, the better count."""
    high = min(low + length - 1, 14)
    if high - low + 1 < 3:
        return
    run = [Card(Rank.ACE if p == 14 else Rank(p), suit) for p in range(low, high + 1)]
    rules = RUM.configure({}, 2)
    ev = RUM.evaluate(rules, frozenset(), [tuple(run)])
    ace_low = low == 1 and high < 13
    want = sum(5 if c.rank is Rank.ACE and ace_low else in_hand_value(c, rules) for c in run)
    assert ev.groups[0].valid and ev.groups[0].kind == "RUN" and ev.groups[0].points == want


@given(rank=st.sampled_from([r for r in Rank if r is not Rank.JOKER]), suits=st.lists(SUIT, min_size=1, max_size=4,
                                                                                        unique=True))
def test_FH_5_sets_are_three_or_four_of_a_rank(rank, suits):
    """FH-5: cards of one rank in different suits are a set exactly when there are three or four."""
    assert bool(readings([Card(rank, s) for s in suits], R)) is (len(suits) >= 3)


VALUE = {Rank.ACE: 15, Rank.TEN: 10, Rank.JACK: 10, Rank.QUEEN: 10, Rank.KING: 10, Rank.JOKER: 15}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), seats=st.sampled_from([2, 3, 4]))
def test_FH_9_score_is_melded_minus_in_hand_for_every_seat(seed, seats):
    """FH-9, FH-6: after any random deal, each seat scores its own laid cards (the table's value, by the layer)
    minus its hand, counted here from the simplified table independently of the engine."""
    run = random_hand("500-rum", seats, seed, {"jokers": "1"}, check_hidden=False)
    state = run.state
    score = RUM.score(state)
    for s in range(seats):
        laid = sum(5 if p.card.rank is Rank.ACE and m.meld_kind is MeldKind.RUN and p.pos == 1
                   else VALUE.get(p.card.rank, 5)
                   for m in state.melds for p, who in zip(m.cards, m.laid_by, strict=True) if who == s)
        held = sum(VALUE.get(c.rank, 5) for c in state.hands[s])
        assert score.points[s] == laid - held
    table = sum(melded_value(p, m.meld_kind, state.rules) for m in state.melds for p in m.cards)
    assert sum(score.points) == table - sum(hand_value(RUM, state, s) for s in range(seats))


# ---------------------------------------------------------------- conformance


@pytest.mark.parametrize("seats,options", [
    (2, {}), (3, {"jokers": "1"}), (5, {"scoring": "traditional", "jokers": "2"}), (2, {"scoring": "traditional"}),
])
def test_FH_1_random_500_rum_deals_keep_every_invariant(seats, options):
    """FH-1..FH-12: random legal play for 2, 3 and 5 seats: cards conserved, listed actions apply, deals end,
    no hidden card shown (COM-6)."""
    for seed in range(3):
        run = random_hand("500-rum", seats, seed, options)
        assert run.state.over and run.state.end_reason
        assert sum(zone_cards(run.state).values()) == len(RUM.deck(RUM.configure(options, seats), seats))


@pytest.mark.parametrize("options", [{"target": "500"}, {"target": "deals-2"}, {"aces": "both"}, {"aces": "high"},
                                     {"out_bonus": "0"}, {"out_bonus": "25"}])
def test_PER_1_random_persian_deals_keep_every_invariant(options):
    """PER-1..PER-3: random legal Persian play keeps every invariant; jokers only ever meld with jokers."""
    for seed in range(2):
        run = random_hand("persian", 4, seed, options)
        assert run.state.over
        for m in run.state.melds:
            jokers = sum(p.card.is_joker for p in m.cards)
            assert jokers in (0, len(m.cards)) and (m.meld_kind is MeldKind.JOKERS) == (jokers > 0)


# ---------------------------------------------------------------- whole games


@pytest.mark.parametrize("name,seats,options", [
    ("500-rum", 2, {}), ("500-rum", 4, {"jokers": "2", "scoring": "traditional"}), ("500-partnership", 4, {}),
    ("persian", 4, {}), ("persian", 4, {"target": "deals-2", "aces": "high", "out_bonus": "25"}),
])
def test_FH_10_greedy_bots_play_a_whole_game_to_the_target(name, seats, options):
    """FH-10, PER-3: greedy bots on every seat finish the game by reaching the target (or the two deals)."""
    greedy = greedy_policy(name)
    rng = random.Random(3)
    match = Match(MatchConfig(name, seats, options, seed="whole"))
    out = play_seats(match, lambda seat, view, legal: greedy(view, legal, rng))
    assert out.reason.startswith("target reached") or out.reason.startswith("2 deals played")
    best = max(match.game.team_totals().values())
    assert best >= 500 or options.get("target") == "deals-2"


@pytest.mark.parametrize("name,seats", [("500-rum", 3), ("500-partnership", 4), ("persian", 4)])
def test_FH_10_random_bots_end_by_the_target_or_a_cap(name, seats):
    """FH-10: random bots' games end too, by the target or by the caps, with the reason recorded."""
    rng = random.Random(5)
    match = Match(MatchConfig(name, seats, seed="random", max_hands=6, max_turns_per_hand=150))
    out = play_seats(match, lambda seat, view, legal: random_policy(view, legal, rng))
    assert out.reason.startswith(("target reached", "hand cap"))
    assert all(h.reason for h in out.hands)


def test_greedy_beats_random_at_two_player_500_rum():
    """The greedy bot beats random play clearly over 100 seeded two-player games (seats alternate)."""
    greedy = greedy_policy("500-rum")
    wins = 0
    games = 100
    for i in range(games):
        rng = random.Random(i)
        me = i % 2
        match = Match(MatchConfig("500-rum", 2, seed=f"gvr:{i}"))
        out = play_seats(match, lambda seat, view, legal, me=me, rng=rng:
                         (greedy if seat == me else random_policy)(view, legal, rng))
        wins += out.ranking[0] == (me,)
    print(f"\ngreedy beat random in {wins}/{games} two-player 500 Rum games")
    assert wins >= 80
