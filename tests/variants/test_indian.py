"""Indian rummy, 13 cards: the rules IND-1..IND-15 and the common clauses COM-1..COM-6 as they apply to it."""

from __future__ import annotations

import copy
import functools
import itertools
import random
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from referee.rules.cards import (
    JOKER,
    NATURAL_RANKS,
    SUITS,
    Card,
    Rank,
    Suit,
    build_deck,
    parse_card,
    parse_cards,
    shuffled,
)
from referee.rules.errors import IllegalAction, InvalidAction, InvalidOption
from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.policies import greedy_policy, random_policy
from referee.rules.variants import find
from referee.rules.variants.base import (
    Declare,
    Discard,
    DrawStock,
    Drop,
    GameState,
    Group,
    HandScore,
    Meld,
    Phase,
    PileView,
    Table,
    TakeDiscards,
    seat_order,
)
from referee.rules.variants.indian import (
    _SHARE_UNIT,
    FULL_COUNT,
    IndianRummy,
    _run_shares,
    _wild_shares,
    card_points,
    find_declaration,
    judge_group,
    least_count,
    least_count_after_discard,
    wild_ranks_for,
)
from referee.tools.testing import cards_named, random_hand, zone_cards

V = find("indian")
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# A two-player deal: seat 0 holds a valid declaration already, seat 1 two pure sequences and a set.
S0 = "AH 2H 3H 4H 5S 6S 7S 9D 9S 9C QS QD QC"
S1 = "2C 3C 4C 5D 6D 7D KH KS KD TH JH 2S 3S"
S2 = "AC 2D 3D 4S 6C 7C 8C 9H TC JC QH KC 5C"


def stacked(hands: list[str], wild: str, opening: str, stock: str = "", dealer: int | None = None) -> list[Card]:
    """A full deck dealing ``hands`` (by seat) from the dealer's left, then the wild joker, the open card, ``stock``
    and the rest of the packs in a fixed order."""
    seats = len(hands)
    dealer = seats - 1 if dealer is None else dealer
    full = V.deck(V.configure({}, seats), seats)
    by_seat = [parse_cards(h) for h in hands]
    deck = [by_seat[s][k] for k in range(13) for s in seat_order(seats, dealer)]
    deck += [parse_card(wild), parse_card(opening), *parse_cards(stock)]
    rest = Counter(full)
    rest.subtract(deck)
    assert min(rest.values()) >= 0, "the stacked cards are not all in the packs"
    return deck + sorted(rest.elements())


def new(hands=(S0, S1), wild="8H", opening="7C", stock="4D KC", options=None, dealer=None, seed="t"):
    hands = list(hands)
    seats = len(hands)
    dealer = seats - 1 if dealer is None else dealer
    rules = V.configure(options or {}, seats)
    table = Table(seats, dealer, 1, tuple(range(seats)), (True,) * seats, (0,) * seats)
    return V.new_hand(rules, table, stacked(hands, wild, opening, stock, dealer), seed)


def groups(text: str) -> tuple[Group, ...]:
    return tuple(Group(tuple(parse_cards(part))) for part in text.split("|"))


def illegal(state, seat, action) -> str:
    """Apply an illegal action: return its reason code and check that the state did not change."""
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction) as err:
        V.apply(state, seat, action)
    assert state == before
    assert "(" in err.value.message and "-" in err.value.message  # the message names a clause
    return err.value.code


def draw_discard(state, seat):
    V.apply(state, seat, DrawStock())
    V.apply(state, seat, Discard(state.drawn))


WILD5 = wild_ranks_for(parse_card("5H"))
NO_WILD_RANK = frozenset({Rank.JOKER})  # only printed jokers wild: natural examples


def kind(text: str, wilds=WILD5) -> str:
    return judge_group(parse_cards(text), wilds).kind


# ---------------------------------------------------------------- the registry and options


def test_the_variant_is_found_by_name_and_aliases():
    """The registry finds Indian rummy by its aliases; lower totals are better; misses never forfeit (IND-11)."""
    for alias in ("indian", "Indian-Rummy", "13-card", "indian_13"):
        assert find(alias) is V
    assert isinstance(V, IndianRummy) and V.lower_is_better and V.forfeit_after_misses == 0


@pytest.mark.parametrize("fmt", ["points", "pool-101", "pool-201", "deals-2", "deals-3", "deals-6", "deals-4"])
def test_IND_13_every_format_is_accepted(fmt):
    """IND-13: points, pool-101, pool-201 and deals-N for any N are formats."""
    rules = V.configure({"format": fmt}, 3)
    assert rules.format == fmt
    if fmt.startswith("deals-"):
        assert rules.deals == int(fmt.split("-")[1]) and rules.pool_limit is None
    if fmt.startswith("pool-"):
        assert rules.pool_limit == int(fmt.split("-")[1])


@pytest.mark.parametrize("bad", [{"format": "deals-0"}, {"format": "pool-50"}, {"take_discarded_joker": "maybe"},
                                 {"jokers": "2"}])
def test_IND_13_IND_15_bad_options_are_refused_naming_the_clause(bad):
    """IND-13, IND-15: an unknown format, option or value is refused with a message naming the clause."""
    with pytest.raises(InvalidOption) as err:
        V.configure(bad, 2)
    assert err.value.code in ("BAD_OPTION_VALUE", "UNKNOWN_OPTION")


# ---------------------------------------------------------------- COM-1..COM-3 through the variant


def test_COM_1_ranks_suits_jokers_and_identical_cards_from_two_packs():
    """COM-1: 13 ranks in 4 suits plus printed jokers; with two packs identical cards are interchangeable."""
    deck = V.deck(V.configure({}, 3), 3)
    counts = Counter(deck)
    assert {c.rank for c in deck} == set(Rank) and {c.suit for c in deck if not c.is_joker} == set(SUITS)
    assert all(n == 2 for n in counts.values())
    state = new([S0, S1, S2], opening="7H", stock="AH")
    draw_discard(state, 0)  # seat 0 drew a second AH and threw one: either copy
    assert state.hands[0].count(parse_card("AH")) == 1 and state.discards[-1] == parse_card("AH")


def test_COM_2_a_set_is_one_rank_and_a_sequence_one_suit_in_order():
    """COM-2: three or more of a rank make a set; three or more consecutive of a suit a sequence."""
    assert kind("7H 7S 7D", NO_WILD_RANK) == "SET"
    assert kind("5C 6C 7C", NO_WILD_RANK) == "PURE_SEQUENCE"
    assert kind("5C 6D 7C", NO_WILD_RANK) == "INVALID"
    assert kind("7H 7S", NO_WILD_RANK) == "INVALID"


def test_COM_3_ace_low_or_high_never_around_the_corner():
    """COM-3: A-2-3 and Q-K-A are sequences; K-A-2 is not."""
    assert kind("AS 2S 3S", NO_WILD_RANK) == "PURE_SEQUENCE"
    assert kind("QS KS AS", NO_WILD_RANK) == "PURE_SEQUENCE"
    assert kind("KS AS 2S", NO_WILD_RANK) == "INVALID"
    assert judge_group(parse_cards("KS AS 2S"), NO_WILD_RANK).reason == "NOT_CONSECUTIVE"


@st.composite
def runs_with_jokers(draw):
    suit = draw(st.sampled_from(SUITS))
    length = draw(st.integers(3, 13))
    low = draw(st.integers(1, 14 - length + (0 if length == 13 else 1)))
    assume(not (low == 1 and low + length - 1 == 14))
    cards = [Card(Rank.ACE if p == 14 else Rank(p), suit) for p in range(low, low + length)]
    k = draw(st.integers(0, length - 1))
    for i in draw(st.lists(st.integers(0, length - 1), min_size=k, max_size=k, unique=True)):
        cards[i] = JOKER
    wild = draw(st.sampled_from([*NATURAL_RANKS, Rank.JOKER]))
    return draw(st.permutations(cards)), k, wild


@FAST
@given(runs_with_jokers())
def test_IND_4_COM_3_any_window_of_a_suit_with_jokers_reads_as_a_sequence(case):
    """IND-4, COM-3: a window of one suit (ace low or high) with k cards replaced by jokers is a sequence, pure iff
    k = 0 (a wild-joker card in its own place is natural)."""
    cards, k, wild = case
    verdict = judge_group(cards, wild_ranks_for(Card(wild, Suit.SPADES) if wild is not Rank.JOKER else JOKER))
    assert verdict.kind in ("PURE_SEQUENCE", "SEQUENCE")
    assert verdict.pure == (k == 0)


@FAST
@given(st.sampled_from(SUITS), st.integers(0, 2), st.integers(0, 1))
def test_COM_3_around_the_corner_never_reads(suit, below, above):
    """COM-3, IND-4: K-A-2 in one suit, with or without the Q under it or the 3 over it, is never a sequence."""
    ranks = [Rank.QUEEN] * (below == 2) + [Rank.KING, Rank.ACE, Rank.TWO] + [Rank.THREE] * above
    cards = [Card(r, suit) for r in ranks]
    assert judge_group(cards, NO_WILD_RANK).kind == "INVALID"


# ---------------------------------------------------------------- IND-1, IND-2, IND-3: the deal and the cards


def test_IND_1_packs_by_seat_count():
    """IND-1: one pack plus one printed joker for 2 players, two packs plus two printed jokers for 3 to 6."""
    two = V.deck(V.configure({}, 2), 2)
    assert len(two) == 53 and two.count(JOKER) == 1
    for seats in range(3, 7):
        deck = V.deck(V.configure({}, seats), seats)
        assert len(deck) == 106 and deck.count(JOKER) == 2
    for seats in (1, 7):
        with pytest.raises(InvalidOption):
            V.configure({}, seats)


@pytest.mark.parametrize("seats", [2, 3, 6])
def test_IND_1_thirteen_each_a_closed_deck_and_an_open_deck(seats):
    """IND-1: 13 cards each; one card face up starts the open deck (top only shown); the rest is the closed deck."""
    rules = V.configure({}, seats)
    deck = shuffled(V.deck(rules, seats), 11)
    state = V.new_hand(rules, Table(seats, 0, 1, tuple(range(seats)), (True,) * seats, (0,) * seats), deck, "s")
    assert [len(h) for h in state.hands] == [13] * seats
    assert len(state.discards) == 1 and state.pile_view is PileView.TOP
    assert len(state.stock) == len(deck) - 13 * seats - 2
    assert zone_cards(state) == Counter(deck)


def test_IND_2_the_next_card_is_the_wild_joker_and_its_rank_is_wild():
    """IND-2: the card after the deal is the wild joker, face up; every card of its rank, and printed jokers, is wild."""
    state = new(wild="8H")
    assert state.face_up == [parse_card("8H")] and state.discards == [parse_card("7C")]
    assert state.wild_ranks == {Rank.EIGHT, Rank.JOKER}
    assert kind("4D 8S 6D", state.wild_ranks) == "SEQUENCE"  # the eight of spades stands for 5D
    assert V.observe(state, 1).face_up == (parse_card("8H"),)


def test_IND_2_a_printed_joker_as_the_wild_joker_makes_aces_wild():
    """IND-2: when the wild joker is a printed joker, aces are the wild jokers."""
    state = new(hands=(S0.replace("AH", "KC"), S1), wild="JK", stock="4D AH")
    assert state.wild_ranks == {Rank.ACE, Rank.JOKER}
    assert kind("4D AS 6D", state.wild_ranks) == "SEQUENCE"


def test_IND_3_card_points():
    """IND-3: J, Q, K, A 10 each; number cards face value; printed and wild jokers 0."""
    wilds = wild_ranks_for(parse_card("7D"))
    values = {str(c): card_points(c, wilds) for c in parse_cards("AS KH QD JC TS 9H 2C 7H JK")}
    assert values == {"AS": 10, "KH": 10, "QD": 10, "JC": 10, "TS": 10, "9H": 9, "2C": 2, "7H": 0, "JK": 0}


# ---------------------------------------------------------------- IND-4, IND-5: sequences and sets


def test_IND_4_pure_and_impure_sequences():
    """IND-4: a sequence with no joker standing in is pure (a wild-joker card as itself is natural); with one, impure."""
    assert kind("4H 5H 6H") == "PURE_SEQUENCE"  # fives are wild; 5H stands for itself
    assert kind("4H JK 6H") == "SEQUENCE"
    assert kind("4H 5S 6H") == "SEQUENCE"  # 5S stands for 5H
    assert kind("9C TC JC QC KC AC") == "PURE_SEQUENCE"
    assert kind("AD JK 3D 4D") == "SEQUENCE"


def test_IND_5_sets_of_three_or_four_distinct_suits():
    """IND-5: a set is 3 or 4 cards of one rank in different suits, jokers standing in; duplicates or a fifth card
    make it invalid."""
    assert kind("9S 9H 9D 9C") == "SET"
    assert kind("9S 9H JK") == "SET"
    assert kind("9S 9H 5C 5D") == "SET"
    dup = judge_group(parse_cards("9S 9S 9H"), WILD5)
    assert not dup.valid and dup.reason == "DUPLICATE_SUIT"
    assert judge_group(parse_cards("9S 9H 9D 9C JK"), WILD5).reason == "SET_TOO_LARGE"


@FAST
@given(st.sampled_from([r for r in NATURAL_RANKS if r is not Rank.FIVE]),
       st.lists(st.sampled_from(SUITS), min_size=3, max_size=4), st.integers(0, 1))
def test_IND_5_sets_with_a_duplicate_suit_are_invalid(rank, suits, jokers):
    """IND-5: two cards of the same rank and suit make a set invalid, whatever jokers are added."""
    assume(len(set(suits)) < len(suits))
    cards = [Card(rank, s) for s in suits] + [JOKER] * jokers
    assert not judge_group(cards, WILD5).valid


# ---------------------------------------------------------------- IND-6: the turn, and illegal moves


def test_IND_6_draw_then_discard_passes_the_turn():
    """IND-6: draw one card from the closed or open deck, then discard one to the open deck; the turn passes."""
    state = new()
    assert V.decision(state).seat == 0 and V.decision(state).phase is Phase.DRAW
    assert V.legal_actions(state, 0) == [DrawStock(), TakeDiscards(1), Drop()]
    V.apply(state, 0, TakeDiscards(1))
    assert parse_card("7C") in state.hands[0] and not state.discards and state.phase is Phase.PLAY
    V.apply(state, 0, Discard(parse_card("QC")))
    assert state.discards == [parse_card("QC")] and (state.turn, state.phase, state.turns) == (1, Phase.DRAW, 1)
    V.apply(state, 1, DrawStock())
    assert state.hands[1][-1] == parse_card("4D") and len(state.hands[1]) == 14


def test_IND_6_illegal_moves_have_reason_codes_and_change_nothing():
    """IND-6: out of turn, out of phase, unheld cards, bad takes and foreign moves are refused with stable codes."""
    state = new()
    assert illegal(state, 1, DrawStock()) == "NOT_YOUR_TURN"
    assert illegal(state, 0, Discard(parse_card("AH"))) == "WRONG_PHASE"
    assert illegal(state, 0, TakeDiscards(2)) == "BAD_TAKE_COUNT"
    assert illegal(state, 0, Meld(groups("AH 2H 3H"))) == "NOT_IN_VARIANT"
    V.apply(state, 0, TakeDiscards(1))
    assert illegal(state, 0, DrawStock()) == "WRONG_PHASE"
    assert illegal(state, 0, Drop()) == "WRONG_PHASE"
    assert illegal(state, 0, Discard(parse_card("KS"))) == "CARD_NOT_IN_HAND"
    V.apply(state, 0, Discard(parse_card("7C")))
    V.apply(state, 1, DrawStock())
    V.apply(state, 1, Declare(groups("2C 3C 4C | 5D 6D 7D | KH KS KD | TH JH 2S 3S"), parse_card("4D")))
    assert state.over and state.went_out == 0  # seat 1 declared wrongly; with two players seat 0 wins
    assert illegal(state, 0, DrawStock()) == "HAND_OVER"


def test_IND_6_the_open_deck_can_be_empty():
    """IND-6: with the open deck empty (its card taken, then a wrong declaration), taking from it is refused."""
    state = new([S0, S1, S2], opening="7H", stock="4D")
    V.apply(state, 0, TakeDiscards(1))
    V.apply(state, 0, Declare(groups("AH 2H 3H 4H | 5S 6S 7S | 9D 9S 9C | QS QD 7H"), parse_card("QC")))
    assert not state.discards and state.turn == 1
    assert V.legal_actions(state, 1) == [DrawStock(), Drop()]
    assert illegal(state, 1, TakeDiscards(1)) == "DISCARD_PILE_EMPTY"


# ---------------------------------------------------------------- IND-7, IND-8, IND-9: declarations and counts


def test_IND_7_a_valid_declaration_is_listed_scores_zero_and_wins():
    """IND-7: with 13 cards in sequences and sets, two sequences one pure, the declarer puts the 14th away and wins."""
    state = new()
    V.apply(state, 0, DrawStock())
    declare = next(a for a in V.legal_actions(state, 0) if isinstance(a, Declare))
    assert declare.discard == parse_card("4D")
    events = V.apply(state, 0, declare)
    assert state.over and state.went_out == 0
    assert state.face_down == [(parse_card("4D"), frozenset({0}))] and len(state.in_front[0]) == 13
    public = [e for e in events if e.kind == "DECLARED" and e.visible_to(1)]
    assert public and parse_card("4D") not in public[0].cards
    score = V.score(state)
    assert score.points == (0, 25) and score.winner == 0
    assert "valid declaration" in score.details[0] and "= 25 (IND-9)" in score.details[1]


def test_IND_7_a_declaration_arranges_exactly_thirteen_cards():
    """IND-7: a declaration must group 13 of the 14 cards; the card put away may be left implicit."""
    state = new()
    V.apply(state, 0, DrawStock())
    assert illegal(state, 0, Declare(groups("AH 2H 3H 4H | 5S 6S 7S | 9D 9S 9C | QS QD"), parse_card("QC"))) == (
        "BAD_DECLARATION_SIZE")
    assert illegal(state, 0, Declare(groups("AH 2H 3H 4H | 5S 6S 7S | 9D 9S 9C | QS QD KS"), parse_card("QC"))) == (
        "CARD_NOT_IN_HAND")
    V.apply(state, 0, Declare(groups("AH 2H 3H 4H | 5S 6S 7S | 9D 9S 9C | QS QD QC")))
    assert state.over and state.face_down[0][0] == parse_card("4D")


def test_IND_7_a_group_with_several_readings_counts_as_the_one_that_makes_the_declaration_valid():
    """IND-7: 5H 5S 5D with fives wild could be a set; read as a sequence it gives the second sequence."""
    hand = "AH 2H 3H 4H 5H 5S 5D 9D 9S 9C QS QD QC"
    state = new(hands=(hand, S1.replace("5D", "8D")), wild="5C", stock="KC")
    V.apply(state, 0, DrawStock())
    V.apply(state, 0, Declare(groups("AH 2H 3H 4H | 5H 5S 5D | 9D 9S 9C | QS QD QC"), parse_card("KC")))
    assert state.over and state.went_out == 0 and V.score(state).points[0] == 0


@pytest.mark.parametrize("arranged, reason", [
    ("AH 2H 3H 4H | 5S 6S 7S | 9D 9S 9C | QS QD 4D", "INVALID_GROUP"),
    ("AH 2H 3H 4H | 5S 6S 7S 9D | 9S 9C 4D | QS QD", "INVALID_GROUP"),
])
def test_IND_8_a_wrong_declaration_costs_80_and_with_two_players_the_other_wins(arranged, reason):
    """IND-8: a wrong declaration scores 80 for the declarer, who is out; with two players the other wins with 0."""
    state = new()
    V.apply(state, 0, DrawStock())
    events = V.apply(state, 0, Declare(groups(arranged), None))
    assert any(reason in e.text for e in events if e.kind == "DECLARED")
    assert state.over and state.went_out == 1 and not state.active[0]
    assert V.score(state).points == (FULL_COUNT, 0)


def test_IND_8_with_three_players_the_others_play_on():
    """IND-8: the wrong declarer is out of the deal; the turn passes and the other two play on."""
    state = new([S0, S1, S2], opening="7H", stock="4D")
    V.apply(state, 0, DrawStock())
    V.apply(state, 0, Declare(groups("AH 2H 3H 4H | 5S 6S 7S | 9D 9S 9C | QS QD 4D"), parse_card("QC")))
    assert not state.over and not state.active[0] and (state.turn, state.phase) == (1, Phase.DRAW)
    assert state.penalty[0] == 80 and len(state.in_front[0]) == 13  # the wrong show is on the table
    draw_discard(state, 1)
    assert state.turn == 2  # seat 0 is skipped from now on
    draw_discard(state, 2)
    assert state.turn == 1


@pytest.mark.parametrize("arranged, reason", [
    ("AH JK 3H | 5S 8H 7S | 9D 9S 9C | QS QD QC KC", "INVALID_GROUP"),
    ("AH JK 3H | 5S 8H 7S | 9D 9S 9C | QS QD QC", "WRONG_CARD_COUNT"),
    ("AH JK 3H 4H | 5S 8H 7S | 9D 9S 9C | QS QD QC", "NO_PURE_SEQUENCE"),
    ("AH 2H 3H 4H | 5S 5D 5C | 9D 9S 9C | QS QD QC", "TOO_FEW_SEQUENCES"),
    ("AH 2H 3H 4H | 5S 6S 7S | 9D 9S 9C | QS QD QC", "VALID"),
])
def test_IND_8_evaluate_gives_the_reason_a_declaration_is_wrong(arranged, reason):
    """IND-7, IND-8: evaluate judges each group and the whole declaration with a reason code."""
    rules = V.configure({}, 2)
    result = V.evaluate(rules, frozenset({Rank.EIGHT}), [parse_cards(g) for g in arranged.split("|")])
    assert result.declaration_reason == reason and result.declaration_valid == (reason == "VALID")
    assert len(result.groups) == len(arranged.split("|"))
    if reason == "VALID":
        assert result.hand_points == 0 and result.melded_points == 0 and all(g.valid for g in result.groups)


def test_IND_1_evaluate_counts_a_hand_of_at_most_14_cards():
    """IND-1: a hand holds 13 cards, 14 with the card drawn; evaluate refuses more (its least count searches the
    groupings, which grow exponentially with the cards: 46 cards took 30 s)."""
    rules = V.configure({}, 2)
    fourteen = parse_cards("AH 2H 3H 4H 5S 6S 7S 9D 9S 9C QS QD QC KC")
    assert V.evaluate(rules, frozenset({Rank.EIGHT}), [fourteen]).hand_points >= 0
    with pytest.raises(InvalidAction) as exc:
        V.evaluate(rules, frozenset({Rank.EIGHT}), [fourteen, parse_cards("2C")])
    assert exc.value.code == "HAND_TOO_LARGE" and "IND-1" in str(exc.value) and "15 given" in str(exc.value)


def test_IND_9_losers_with_two_sequences_count_only_cards_outside_groups():
    """IND-9: with two sequences incl. a pure one, only ungrouped cards count, in the grouping that counts least."""
    hand = parse_cards("4H 5H 6H 7H 7S 7D 2C 3C 4C JS QS KS 9D")
    best = least_count(hand, NO_WILD_RANK)
    assert best.qualifies and best.points == 9 and best.dead == (parse_card("9D"),)  # 7H goes with the sevens


def test_IND_9_without_two_sequences_all_cards_count_capped_at_80():
    """IND-9: without two sequences incl. a pure one every card counts, at most 80."""
    one_pure = parse_cards("2C 3C 4C KH KS KD TH JH 2S 3S 5D 6D 9S")
    assert least_count(one_pure, NO_WILD_RANK).points == FULL_COUNT  # 84 capped
    assert least_count(one_pure, NO_WILD_RANK).raw_points == 84
    small = parse_cards("2C 3C 4C 2H 2S 2D 3H 3S 3D 5H 5S 6D 6H")
    assert not least_count(small, NO_WILD_RANK).qualifies and least_count(small, NO_WILD_RANK).points == 46
    impure_only = parse_cards("2C JK 4C 5H 6H TS 9H 9S 9D KH KS KD 3D")  # tens wild: two impure sequences
    assert least_count(impure_only, wild_ranks_for(parse_card("TD"))).points == 77


def test_IND_9_a_deal_stopped_by_the_turn_cap_counts_as_if_nobody_declared():
    """IND-9 (turn cap): each seat in the deal counts its least-points grouping; a 14-card hand leaves one card out."""
    config = MatchConfig("indian", 2, seed="cap", max_turns_per_hand=3)
    match = Match(config)
    outcome = play_seats(match, lambda seat, view, legal: V.default_action(match.state, seat, 0))
    hand = outcome.hands[0]
    assert "turn cap" in hand.reason and "nobody had declared" in hand.reason and hand.winner is None
    for s in range(2):
        assert hand.points[s] == least_count(match.state.hands[s], match.state.wild_ranks).points
    state = new()
    V.apply(state, 0, DrawStock())
    state.over, state.end_reason = True, "turn cap (0 turns)"
    grouping, left_out = least_count_after_discard(state.hands[0], state.wild_ranks)
    assert grouping.points == 0 and left_out == parse_card("4D")
    assert V.score(state).points == (0, 25)


@st.composite
def thirteen(draw):
    deck = build_deck(2, 2)
    idx = draw(st.lists(st.integers(0, len(deck) - 1), min_size=13, max_size=13, unique=True))
    wild = draw(st.sampled_from(deck))
    return [deck[i] for i in idx], wild_ranks_for(wild)


@settings(max_examples=80, deadline=None)
@given(thirteen())
def test_IND_9_the_least_count_never_exceeds_the_naive_count_or_80(case):
    """IND-9: the referee's grouping never counts more than all the cards, never above 80, and its groups are valid."""
    hand, wilds = case
    best = least_count(hand, wilds)
    naive = sum(card_points(c, wilds) for c in hand)
    assert best.points <= min(naive, FULL_COUNT)
    assert Counter(c for g in best.groups for c in g) + Counter(best.dead) == Counter(hand)
    assert all(judge_group(g, wilds).valid for g in best.groups)
    if best.qualifies:
        assert best.points == min(sum(card_points(c, wilds) for c in best.dead), FULL_COUNT)


def _brute_count(cards, wilds):
    """The least count by trying every partition into valid groups (small hands only)."""
    n = len(cards)
    valid = {}
    for size in range(3, n + 1):
        for idx in itertools.combinations(range(n), size):
            v = judge_group([cards[i] for i in idx], wilds)
            if v.valid:
                valid[sum(1 << i for i in idx)] = (v.kind != "SET", v.pure)

    @functools.cache
    def best(mask):
        if not mask:
            return {(0, 0): 0}
        i = (mask & -mask).bit_length() - 1
        out: dict = {}

        def add(sub, s, p, v):
            for (a, b), x in sub.items():
                key = (min(a + s, 2), b | p)
                out[key] = min(out.get(key, 10**9), x + v)

        add(best(mask & ~(1 << i)), 0, 0, card_points(cards[i], wilds))
        for m, (seq, pure) in valid.items():
            if m & (1 << i) and m & mask == m:
                add(best(mask & ~m), int(seq), int(pure), 0)
        return out

    found = best((1 << n) - 1).get((2, 1))
    return min(sum(card_points(c, wilds) for c in cards) if found is None else found, FULL_COUNT)


@st.composite
def crowded_hand(draw):
    """A small hand from few ranks and suits (two packs, jokers), so groups overlap a lot."""
    suits = draw(st.lists(st.sampled_from(SUITS), min_size=1, max_size=3, unique=True))
    low = draw(st.integers(1, 10))
    ranks = [Rank(r) for r in range(low, min(low + 4, 14))] + draw(st.sampled_from([[], [Rank.ACE, Rank.KING]]))
    pool = [Card(r, s) for r in ranks for s in suits] * 2 + [JOKER, JOKER]
    idx = draw(st.lists(st.integers(0, len(pool) - 1), min_size=6, max_size=min(9, len(pool)), unique=True))
    return [pool[i] for i in idx], wild_ranks_for(draw(st.sampled_from(pool)))


@settings(max_examples=40, deadline=None)
@given(crowded_hand())
def test_IND_9_the_least_count_equals_an_exhaustive_search(case):
    """IND-9: on small crowded hands the referee's search finds exactly the least count of every partition."""
    hand, wilds = case
    assert least_count(hand, wilds).points == _brute_count(hand, wilds)


@st.composite
def declaration_hand(draw):
    """13 cards that form a valid declaration: a pure sequence, a second sequence (jokers allowed), sets or
    sequences for the rest; two packs and two printed jokers at most."""
    sizes = draw(st.sampled_from([(3, 3, 3, 4), (4, 3, 3, 3), (3, 4, 3, 3), (3, 3, 7), (5, 4, 4), (3, 10), (6, 7)]))
    cards: list[Card] = []
    for n, size in enumerate(sizes):
        as_set = n >= 2 and size <= 4 and draw(st.booleans())
        if as_set:
            rank = draw(st.sampled_from(NATURAL_RANKS))
            group = [Card(rank, s) for s in draw(st.permutations(SUITS))[:size]]
        else:
            suit = draw(st.sampled_from(SUITS))
            low = draw(st.integers(1, 15 - size))
            group = [Card(Rank.ACE if p == 14 else Rank(p), suit) for p in range(low, low + size)]
        if n >= 1:
            jokers = draw(st.integers(0, size - 1))
            for i in range(jokers):
                group[i] = JOKER
        cards += group
    counts = Counter(cards)
    assume(counts[JOKER] <= 2 and all(v <= 2 for v in counts.values()))
    return cards, wild_ranks_for(draw(st.sampled_from(build_deck(1, 1))))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(declaration_hand(), st.sampled_from(build_deck(1, 1)))
def test_IND_9_a_declarable_hand_counts_zero_and_its_declaration_is_found(case, extra):
    """IND-7, IND-9: a hand that makes a valid declaration counts 0, and with a 14th card a declaration is found."""
    hand, wilds = case
    assert least_count(hand, wilds).points == 0
    assume(Counter(hand)[extra] < 2 and not (extra.is_joker and Counter(hand)[JOKER] >= 2))
    found = find_declaration([*hand, extra], wilds)
    assert found is not None
    assert Counter(c for g in found.groups for c in g.cards) + Counter([found.discard]) == Counter([*hand, extra])
    ev = V.evaluate(V.configure({}, 3), wilds, [g.cards for g in found.groups])
    assert ev.declaration_valid


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(declaration_hand())
def test_IND_7_the_quick_test_never_rules_out_a_hand_that_declares(case):
    """IND-7: listing a declaration first sums each card's least share of wilds (a group of n naturals and k wilds
    costs each k/n); a hand that declares never needs more than the wilds it holds, so none is ruled out."""
    hand, wilds = case
    shares = _wild_shares(hand, wilds)
    assert sum(shares.get(c, 0) for c in hand) <= sum(c.rank in wilds for c in hand) * _SHARE_UNIT


def _every_run_share(masks: np.ndarray) -> np.ndarray:
    """IND-4 by definition, for many suit masks at once: for each held run position, the least share (L - n) / n
    over every sequence of length L (3 to 13, never around the corner) through it holding n of the positions."""
    best = np.full((len(masks), 15), 2 * _SHARE_UNIT, dtype=np.int64)
    held = [(masks >> p) & 1 for p in range(15)]
    for length in range(3, 14):
        for lo in range(1, 16 - length):
            n = sum(held[p] for p in range(lo, lo + length))
            share = np.where(n > 0, (length - n) * _SHARE_UNIT // np.maximum(n, 1), 2 * _SHARE_UNIT)
            for p in range(lo, lo + length):
                best[:, p] = np.where(held[p] == 1, np.minimum(best[:, p], share), best[:, p])
    return best


def test_IND_7_the_quick_tests_run_shares_are_those_of_every_sequence_for_every_suit_mask():
    """IND-7's quick test tries only the sequences from one held position to another; over all 2**14 masks of
    positions 1..14 (an ace holds 1 and 14) that gives each position the least share of every sequence."""
    masks = np.arange(0, 1 << 15, 2, dtype=np.int64)
    expected = _every_run_share(masks)
    for mask, want in zip(masks.tolist(), expected.tolist(), strict=True):
        assert list(_run_shares(mask)) == want, bin(mask)


def test_IND_7_a_hand_of_loose_cards_needs_more_wilds_than_it_holds():
    """IND-7: one wild and twelve cards that share no rank or nearby run position: no declaration, by the quick
    test alone (each loose card needs two wilds)."""
    wilds = frozenset({Rank.FIVE, Rank.JOKER})
    loose = [Card(Rank(r), s) for r, s in ((2, Suit.SPADES), (8, Suit.SPADES), (3, Suit.HEARTS), (9, Suit.HEARTS),
                                           (4, Suit.DIAMONDS), (10, Suit.DIAMONDS), (6, Suit.CLUBS), (12, Suit.CLUBS),
                                           (7, Suit.SPADES), (11, Suit.HEARTS), (13, Suit.DIAMONDS), (1, Suit.CLUBS))]
    hand = [*loose, JOKER, Card(Rank.SIX, Suit.HEARTS)]
    shares = _wild_shares(hand, wilds)
    assert sum(shares.values()) > 2 * _SHARE_UNIT
    assert find_declaration(hand, wilds) is None


# ---------------------------------------------------------------- IND-10, IND-11, IND-12: drops and missed turns


def test_IND_10_first_drop_20_middle_drop_40_and_the_last_seat_wins():
    """IND-10: a drop before one's first draw costs 20, a later one 40; the deal goes on; the last seat left wins."""
    state = new([S0, S1, S2], opening="7H", stock="4D")
    assert ("drop_now", "20") in V.observe(state, 0).notes
    V.apply(state, 0, Drop())
    assert not state.active[0] and state.penalty[0] == 20 and state.turn == 1
    draw_discard(state, 1)
    draw_discard(state, 2)
    assert ("drop_now", "40") in V.observe(state, 1).notes
    events = V.apply(state, 1, Drop())
    assert [e.points for e in events if e.kind == "DROPPED"] == [40]
    assert state.over and state.went_out == 2
    score = V.score(state)
    assert score.points == (20, 40, 0) and score.winner == 2 and "first drop" in score.details[0]


def test_IND_10_pool_201_drops_cost_25_and_50():
    """IND-10, IND-13: in pool-201 the first drop is 25 and the middle drop 50."""
    state = new(options={"format": "pool-201"})
    V.apply(state, 0, Drop())
    assert V.score(state).points == (25, 0)
    state = new(options={"format": "pool-201"})
    draw_discard(state, 0)
    draw_discard(state, 1)
    V.apply(state, 0, Drop())
    assert V.score(state).points == (50, 0)


def test_IND_11_default_moves_draw_and_discard_the_drawn_card_and_the_third_miss_drops():
    """IND-11: a missed turn draws from the closed deck and discards the drawn card; the third in a row is a drop."""
    state = new()
    assert V.default_action(state, 0, 1) == DrawStock()
    V.apply(state, 0, DrawStock())
    assert V.default_action(state, 0, 1) == Discard(parse_card("4D"))
    V.apply(state, 0, Discard(parse_card("4D")))
    assert V.default_action(state, 1, 3) == Drop()


def test_IND_11_three_missed_turns_in_a_match_are_a_middle_drop_of_40():
    """IND-11: three consecutive missed turns count as a middle drop (40); the seat is not forfeited."""
    match = Match(MatchConfig("indian", 2, seed="misses"))
    slow = match.pending().seat
    while not match.over:
        d = match.pending()
        if d.seat == slow:
            match.timeout(slow)
        else:
            match.submit(d.seat, V.default_action(match.state, d.seat, 0))
    assert match.outcome.hands[0].points[slow] == 40 and not match.forfeited
    assert match.outcome.ranking[0] == (1 - slow,)


@pytest.mark.parametrize("drawn, points", [(False, 20), (True, 40)])
def test_IND_12_leaving_the_table_is_a_drop_at_the_next_chance(drawn, points):
    """IND-12: a seat that leaves before seeing a drawn card drops for 20; after drawing, for 40."""
    match = Match(MatchConfig("indian", 2, seed="leave"))
    leaver = match.pending().seat
    if drawn:
        match.submit(leaver, DrawStock())
    match.forfeit(leaver, "left the table")
    outcome = play_seats(match, lambda seat, view, legal: V.default_action(match.state, seat, 0))
    assert outcome.hands[0].points[leaver] == points
    assert outcome.forfeited == (leaver,) and outcome.ranking[-1] == (leaver,)


# ---------------------------------------------------------------- IND-13: formats and the end of the game


def _game(seats, hands):
    history = [HandScore(tuple(p), None, "") for p in hands]
    totals = [sum(p[s] for p in hands) for s in range(seats)]
    return GameState(seats, tuple(range(seats)), totals, len(hands), [False] * seats, history)


def test_IND_13_pool_eliminates_at_the_limit_and_the_last_one_left_wins():
    """IND-13: in pool-101 a seat reaching 101 is eliminated; the last one left wins, later eliminations rank higher."""
    rules = V.configure({"format": "pool-101"}, 3)
    game = _game(3, [(0, 60, 30), (50, 0, 80)])
    assert V.game_outcome(rules, game, 100) is None and game.eliminated == [False, False, True]
    game = _game(3, [(0, 60, 30), (50, 0, 80), (0, 45, 0)])
    game.eliminated[2] = True
    outcome = V.game_outcome(rules, game, 100)
    assert outcome.ranking == ((0,), (1,), (2,)) and "last one left" in outcome.reason
    assert game.eliminated == [False, True, True]


def test_IND_13_points_is_one_deal_and_deals_n_is_n_deals():
    """IND-13: points ends after one deal; deals-N after N deals, lowest total first."""
    assert V.game_outcome(V.configure({}, 2), _game(2, [(0, 30)]), 100).ranking == ((0,), (1,))
    rules = V.configure({"format": "deals-3"}, 3)
    assert V.game_outcome(rules, _game(3, [(0, 30, 20), (40, 0, 20)]), 100) is None
    outcome = V.game_outcome(rules, _game(3, [(0, 30, 20), (40, 0, 20), (0, 0, 10)]), 100)
    assert outcome.ranking == ((1,), (0,), (2,)) and "3 deals" in outcome.reason
    tied = V.game_outcome(V.configure({"format": "deals-2"}, 3), _game(3, [(0, 30, 20), (30, 0, 20)]), 100)
    assert tied.ranking == ((0, 1), (2,))


@pytest.mark.parametrize("fmt, seats", [("points", 2), ("points", 4), ("pool-101", 2), ("pool-101", 3),
                                        ("pool-201", 2), ("deals-2", 3), ("deals-6", 2)])
def test_IND_13_greedy_games_end_by_their_format(fmt, seats):
    """IND-13: greedy bots play a whole game of each format to its end (not a cap)."""
    match = Match(MatchConfig("indian", seats, {"format": fmt}, seed=f"full:{fmt}:{seats}"))
    rng = random.Random(3)
    policy = greedy_policy("indian")
    outcome = play_seats(match, lambda seat, view, legal: policy(view, legal, rng))
    assert outcome.reason.startswith(fmt) and "cap" not in outcome.reason
    assert sum(len(g) for g in outcome.ranking) == seats
    if fmt.startswith("pool"):
        assert sum(match.game.eliminated) == seats - 1
        assert max(outcome.totals) >= int(fmt.split("-")[1])
    if fmt.startswith("deals"):
        assert len(outcome.hands) == int(fmt.split("-")[1])


def test_IND_13_random_bots_finish_a_pool_game_within_the_caps():
    """IND-13: random bots in pool-101 end the game by the pool or by the caps, with a recorded reason."""
    match = Match(MatchConfig("indian", 3, {"format": "pool-101"}, seed="rnd", max_turns_per_hand=60, max_hands=25))
    rng = random.Random(5)
    outcome = play_seats(match, lambda seat, view, legal: random_policy(view, legal, rng))
    assert outcome.reason and sum(len(g) for g in outcome.ranking) == 3


# ---------------------------------------------------------------- IND-14, IND-15


def _almost_empty_closed_deck():
    state = new()
    *rest, last = state.stock
    state.discards = rest + state.discards  # the open card stays on top
    state.stock = [last]
    return state, Counter(zone_cards(state))


def test_IND_14_an_empty_closed_deck_is_rebuilt_from_the_open_deck_but_its_top():
    """IND-14: when the closed deck runs out, the open deck except its top card is shuffled into a new closed deck."""
    state, before = _almost_empty_closed_deck()
    pile = list(state.discards)
    V.apply(state, 0, DrawStock())
    drawn = state.drawn
    events = V.apply(state, 0, Discard(drawn))
    assert [e.kind for e in events][-1] == "RESTOCKED" and state.restocks == 1
    assert state.discards == [drawn]
    assert Counter(state.stock) == Counter(pile) and state.stock != pile
    assert zone_cards(state) == before
    again, _ = _almost_empty_closed_deck()
    V.apply(again, 0, DrawStock())
    V.apply(again, 0, Discard(again.drawn))
    assert again.stock == state.stock  # the reshuffle is seeded (COM-5)


@pytest.mark.parametrize("opening", ["JK", "8S"])
def test_IND_15_a_joker_on_the_open_deck_may_be_forbidden(opening):
    """IND-15: with take_discarded_joker = forbidden a printed or wild joker on the open deck cannot be taken."""
    state = new(opening=opening, options={"take_discarded_joker": "forbidden"})
    assert TakeDiscards(1) not in V.legal_actions(state, 0)
    assert illegal(state, 0, TakeDiscards(1)) == "JOKER_PICKUP_FORBIDDEN"
    allowed = new(opening=opening, options={"take_discarded_joker": "allowed"})
    assert TakeDiscards(1) in V.legal_actions(allowed, 0)
    V.apply(allowed, 0, TakeDiscards(1))
    assert parse_card(opening) in allowed.hands[0]


def test_IND_15_a_natural_card_may_always_be_taken():
    """IND-15: the option only concerns jokers; any other open card may be taken."""
    state = new(opening="7C", options={"take_discarded_joker": "forbidden"})
    V.apply(state, 0, TakeDiscards(1))
    assert parse_card("7C") in state.hands[0]


# ---------------------------------------------------------------- COM-4, COM-5, COM-6


def test_COM_4_the_first_player_is_left_of_the_dealer_and_play_goes_clockwise():
    """COM-4: play starts left of the dealer and passes clockwise; the engine rotates the dealer every deal."""
    state = new([S0, S1, S2], opening="7H", stock="4D", dealer=1)
    assert state.turn == 2
    draw_discard(state, 2)
    assert state.turn == 0
    draw_discard(state, 0)
    assert state.turn == 1
    records: list[dict] = []
    match = Match(MatchConfig("indian", 3, {"format": "deals-3"}, seed="rot"), on_record=records.append)
    rng = random.Random(1)
    play_seats(match, lambda seat, view, legal: greedy_policy("indian")(view, legal, rng))
    assert [r["dealer"] for r in records if r["type"] == "hand"] == [0, 1, 2]


def test_COM_5_the_same_seed_and_actions_give_the_same_match():
    """COM-5: the shuffle is seeded per match: the same seed and moves replay identically, another seed differs."""
    def play(seed):
        records: list[dict] = []
        match = Match(MatchConfig("indian", 3, {"format": "deals-2"}, seed=seed), on_record=records.append)
        rng = random.Random(9)
        play_seats(match, lambda seat, view, legal: random_policy(view, legal, rng))
        return records

    assert play("same") == play("same")
    assert play("same")[1]["deck"] != play("other")[1]["deck"]


def test_COM_6_a_seat_sees_its_hand_the_table_and_sizes_only():
    """COM-6: a view shows one's own hand, the wild joker, the open deck's top, sizes; a stock draw is private."""
    state = new()
    view = V.observe(state, 1)
    assert view.hand == tuple(parse_cards(S1)) and view.discard_pile == (parse_card("7C"),)
    assert view.hand_sizes == (13, 13) and view.stock_size == len(state.stock)
    assert cards_named(view) <= set(parse_cards(S1)) | {parse_card("8H"), parse_card("7C")}
    events = V.apply(state, 0, DrawStock())
    assert [e.cards for e in events if e.visible_to(0)] == [(parse_card("4D"),)]
    assert [e.cards for e in events if e.visible_to(1)] == [()]
    V.apply(state, 0, Discard(parse_card("QC")))
    assert V.observe(state, 1).discard_pile == (parse_card("QC"),)  # only the top of the open deck


@pytest.mark.parametrize("seats", [2, 3, 6])
@pytest.mark.parametrize("options", [{}, {"take_discarded_joker": "forbidden"}, {"format": "pool-201"}])
def test_COM_6_conformance_random_hands_keep_every_card_and_secret(seats, options):
    """COM-6, IND-6: random hands conserve cards, every listed action applies and no seat sees a hidden card."""
    for seed in range(4):
        run = random_hand("indian", seats, seed, options)
        assert run.state.over and run.steps > 0


def test_IND_14_COM_6_long_random_hands_restock_and_keep_secrets():
    """IND-14, COM-6: random hands that never drop nor declare run through restocks without leaking a card."""
    def never_leave(rng, view, legal):
        return rng.choice([a for a in legal if not isinstance(a, (Drop, Declare))])

    for seed in range(2):
        run = random_hand("indian", 2, seed, max_steps=400, choose=never_leave)
        assert run.state.restocks >= 2


# ---------------------------------------------------------------- the greedy bot


def test_the_greedy_bot_beats_random_in_most_two_player_deals(capsys):
    """Greedy beats random_policy in a clear majority of 200 seeded 2-player deals (format = points)."""
    policy = greedy_policy("indian")
    wins = 0
    deals = 200
    for seed in range(deals):
        me = seed % 2
        match = Match(MatchConfig("indian", 2, {"format": "points"}, seed=f"greedy:{seed}"))
        rng = random.Random(seed)
        def choose(seat, view, legal, me=me, rng=rng):
            return (policy if seat == me else random_policy)(view, legal, rng)

        outcome = play_seats(match, choose)
        wins += outcome.ranking[0] == (me,)
    with capsys.disabled():
        print(f"\nindian greedy beat random in {wins}/{deals} deals ({100 * wins / deals:.1f}%)")
    assert wins / deals > 0.6


def test_the_greedy_bot_declares_takes_useful_open_cards_and_throws_dead_ones():
    """The greedy bot declares when a declaration is listed, takes an open card that builds a meld or a joker,
    draws blind otherwise, and throws its dead card."""
    policy = greedy_policy("indian")
    rng = random.Random(0)
    state = new()
    draw_phase = [DrawStock(), TakeDiscards(1), Drop()]
    view = V.observe(state, 0)
    assert policy(replace(view, discard_pile=(parse_card("5H"),)), draw_phase, rng) == TakeDiscards(1)
    assert policy(replace(view, discard_pile=(parse_card("8S"),)), draw_phase, rng) == TakeDiscards(1)  # a joker
    assert policy(replace(view, discard_pile=(parse_card("JH"),)), draw_phase, rng) == DrawStock()
    hand = (*parse_cards(S0), parse_card("JH"))
    legal = [Discard(c) for c in sorted(set(hand))]
    assert policy(replace(view, hand=hand, phase=Phase.PLAY), legal, rng) == Discard(parse_card("JH"))
    V.apply(state, 0, DrawStock())
    assert isinstance(policy(V.observe(state, 0), V.legal_actions(state, 0), rng), Declare)
