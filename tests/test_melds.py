"""The shared meld engine: sets and runs with wilds, both ace positions, never around the corner (COM-2, COM-3)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules.cards import JOKER, SUITS, Card, Rank, parse_cards
from referee.rules.errors import IllegalAction
from referee.rules.melds import ACE_HIGH, MeldKind, MeldRules, WildOnly, extend_meld, find_melds, read_meld, readings

PLAIN = MeldRules()
JOKERS_WILD = frozenset({Rank.JOKER})


def rank_at(pos: int) -> Rank:
    return Rank.ACE if pos == ACE_HIGH else Rank(pos)


def kinds(text, rules=PLAIN, wilds=frozenset()):
    return {r.kind for r in readings(parse_cards(text), rules, wilds)}


def test_COM_2_three_of_a_rank_is_a_set_and_three_in_suit_sequence_a_run():
    """COM-2: a set is 3+ cards of one rank; a run 3+ consecutive cards of one suit."""
    assert kinds("7H 7S 7D") == {MeldKind.SET}
    assert kinds("5H 6H 7H") == {MeldKind.RUN}
    assert kinds("5H 6H") == set()
    assert kinds("5H 6S 7H") == set()
    assert kinds("5H 6H 8H") == set()


def test_COM_3_ace_is_low_or_high_but_never_around_the_corner():
    """COM-3: A-2-3 and Q-K-A are runs; K-A-2 is not."""
    low = read_meld(parse_cards("AH 2H 3H"), PLAIN)
    high = read_meld(parse_cards("QH KH AH"), PLAIN)
    assert (low.low, low.high) == (1, 3) and (high.low, high.high) == (12, ACE_HIGH)
    assert kinds("KH AH 2H") == set()
    assert kinds("AH 2H 3H", MeldRules(ace_low=False)) == set()
    assert kinds("QH KH AH", MeldRules(ace_high=False)) == set()


def test_set_limits_and_distinct_suits_are_options():
    assert kinds("7H 7S 7D 7C 7H") == set()
    assert kinds("7H 7S 7D 7C 7H", MeldRules(max_set=None)) == {MeldKind.SET}
    assert kinds("7H 7H 7D", MeldRules(set_distinct_suits=True)) == set()
    assert kinds("7H 7H 7D") == {MeldKind.SET}


def test_a_wild_fills_a_gap_and_says_what_it_stands_for():
    r = read_meld(parse_cards("5H JK 7H"), PLAIN, JOKERS_WILD)
    assert r.kind is MeldKind.RUN and r.wilds_used == 1
    assert [(p.rank, p.suit) for p in r.cards if p.is_wild] == [(Rank.SIX, SUITS[1])]


def test_a_wild_at_the_end_of_a_run_goes_as_high_as_it_can_unless_the_player_says_otherwise():
    r = read_meld(parse_cards("5H 6H JK"), PLAIN, JOKERS_WILD)
    assert r.high == 7
    r = read_meld(parse_cards("5H 6H JK"), PLAIN, JOKERS_WILD, stands_for=((JOKER, Card(Rank.FOUR, SUITS[1])),))
    assert r.low == 4


def test_a_meld_that_reads_as_set_or_run_is_ambiguous_until_the_player_says():
    with pytest.raises(IllegalAction) as err:
        read_meld(parse_cards("7H JK JK"), PLAIN, JOKERS_WILD)
    assert err.value.code == "AMBIGUOUS_WILD"
    r = read_meld(parse_cards("7H JK JK"), PLAIN, JOKERS_WILD, stands_for=((JOKER, Card(Rank.SEVEN, SUITS[0])),))
    assert r.kind is MeldKind.SET


def test_wild_only_groups_follow_the_variant():
    twos = frozenset({Rank.TWO})
    assert kinds("2H 2S 2D", MeldRules(), twos) == set()
    assert kinds("2H 2S 2D", MeldRules(wild_only=WildOnly.SPECIAL), twos) == {MeldKind.WILD_SET}
    assert MeldKind.SET in kinds("2H 2S 2D", MeldRules(wild_only=WildOnly.NATURAL), twos)


def test_max_wilds_limits_stand_ins_but_not_wilds_used_as_themselves():
    one = MeldRules(max_wilds=1)
    assert kinds("5H JK JK 8H", one, JOKERS_WILD) == set()
    assert kinds("5H JK 7H 8H", one, JOKERS_WILD) == {MeldKind.RUN}
    twos = frozenset({Rank.TWO})
    assert read_meld(parse_cards("AH 2H 3H"), one, twos).pure


def test_a_lay_off_keeps_the_wilds_where_they_stand():
    meld = read_meld(parse_cards("5H JK 7H"), PLAIN, JOKERS_WILD)
    grown = extend_meld(meld, parse_cards("8H"), PLAIN, JOKERS_WILD)
    assert (grown.low, grown.high) == (5, 8)
    with pytest.raises(IllegalAction) as err:
        extend_meld(meld, parse_cards("6H"), PLAIN, JOKERS_WILD)
    assert err.value.code == "CANNOT_LAY_OFF"


@given(suit=st.sampled_from(SUITS), low=st.integers(1, 12), length=st.integers(3, 13),
       jokers=st.sets(st.integers(0, 12), max_size=3), ace_high=st.booleans())
def test_property_any_window_of_a_suit_with_some_cards_jokered_reads_as_a_run(suit, low, length, jokers, ace_high):
    top = ACE_HIGH if ace_high else 13
    if low + length - 1 > top or (low == 1 and low + length - 1 == ACE_HIGH):
        return
    cards = [Card(rank_at(p), suit) for p in range(low, low + length)]
    for i in jokers:
        if i < length:
            cards[i] = JOKER
    if all(c == JOKER for c in cards):
        return
    found = readings(cards, PLAIN, JOKERS_WILD)
    assert any(r.kind is MeldKind.RUN and r.low <= low + length - 1 for r in found)


@given(suit=st.sampled_from(SUITS), length=st.integers(3, 13))
def test_property_runs_through_the_corner_never_read(suit, length):
    length = min(length, 12)  # thirteen cards are A..K, a run with the ace low
    # a window that contains K and A(low) or A(high) and 2
    for start in range(13 - length + 2, 14):
        positions = [((start + k - 1) % 13) + 1 for k in range(length)]
        if 13 in positions and 1 in positions and positions.index(1) > positions.index(13):
            cards = [Card(Rank(p), suit) for p in positions]
            if 2 in positions:
                assert not any(r.kind is MeldKind.RUN for r in readings(cards, PLAIN))


@given(st.lists(st.sampled_from(parse_cards("7S 7H 7D 7C")), min_size=3, max_size=4))
def test_property_a_set_with_a_repeated_suit_is_invalid_when_suits_must_differ(cards):
    valid = bool(readings(cards, MeldRules(set_distinct_suits=True)))
    assert valid == (len(set(cards)) == len(cards))


@given(st.lists(st.sampled_from(parse_cards("AH 2H 3H 4H 5H 9S 9D 9C JK QH KH")), min_size=3, max_size=9, unique=False))
def test_property_every_group_the_finder_returns_reads_as_a_meld(hand):
    for group in find_melds(hand, PLAIN, JOKERS_WILD):
        assert readings(list(group), PLAIN, JOKERS_WILD)
