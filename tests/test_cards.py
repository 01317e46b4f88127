"""Cards, packs and the text notation (COM-1, COM-5)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules.cards import (
    JOKER,
    Card,
    Rank,
    Suit,
    build_deck,
    contains_cards,
    format_cards,
    holds_all,
    parse_card,
    parse_cards,
    shuffle,
    shuffled,
    tally,
)
from referee.rules.errors import InvalidAction

cards = st.builds(Card, st.sampled_from([r for r in Rank if r is not Rank.JOKER]),
                  st.sampled_from([Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS])) | st.just(JOKER)


def test_COM_1_a_pack_has_thirteen_ranks_in_four_suits_and_jokers_are_extra():
    """COM-1: ranks A..K in spades, hearts, diamonds, clubs; printed jokers where a variant adds them."""
    deck = build_deck(packs=1, jokers=2)
    assert len(deck) == 54 and deck.count(JOKER) == 2
    assert {c.rank for c in deck if not c.is_joker} == set(Rank) - {Rank.JOKER}
    assert {c.suit for c in deck if not c.is_joker} == {Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS}


def test_COM_1_several_packs_give_identical_interchangeable_cards():
    """COM-1: two packs shuffled together hold two equal copies of each card."""
    deck = build_deck(packs=2)
    assert len(deck) == 104 and deck.count(parse_card("7H")) == 2
    assert parse_card("7H") == Card(Rank.SEVEN, Suit.HEARTS)


@pytest.mark.parametrize("text,card", [("QS", Card(Rank.QUEEN, Suit.SPADES)), ("TH", Card(Rank.TEN, Suit.HEARTS)),
                                       ("10H", Card(Rank.TEN, Suit.HEARTS)), ("2C", Card(Rank.TWO, Suit.CLUBS)),
                                       ("ad", Card(Rank.ACE, Suit.DIAMONDS)), ("JK", JOKER)])
def test_text_notation_reads_rank_then_suit(text, card):
    assert parse_card(text) == card


@given(st.lists(cards, max_size=20))
def test_text_notation_round_trips(cs):
    assert parse_cards(format_cards(cs)) == cs


@pytest.mark.parametrize("bad", ["", "1H", "QX", "KING", "J"])
def test_a_malformed_card_is_an_invalid_action_naming_the_notation(bad):
    with pytest.raises(InvalidAction) as err:
        parse_card(bad)
    assert err.value.code == "BAD_CARD" and "rank then suit" in err.value.message


def test_COM_5_the_same_seed_gives_the_same_shuffle_and_another_seed_another():
    """COM-5: a shuffle is seeded per match."""
    deck = build_deck(2, 2)
    assert shuffled(deck, 42) == shuffled(deck, 42)
    assert shuffled(deck, 42) != shuffled(deck, 43)
    assert sorted(shuffled(deck, 42)) == sorted(deck)


@given(st.lists(cards, max_size=50), st.lists(cards, max_size=8))
def test_a_counted_hand_holds_the_cards_the_hand_holds_counting_duplicates(hand, wanted):
    """``holds_all`` (a hand counted once, checked many times) answers as ``contains_cards`` does."""
    assert holds_all(tally(hand), wanted) == contains_cards(hand, wanted)
    assert holds_all(tally(hand), hand) and not holds_all(tally(hand), [*hand, JOKER] * 2)  # each card once more


@given(st.lists(cards, max_size=120), st.text(max_size=12))
def test_COM_5_the_shuffle_is_random_shuffle_step_for_step(deck, seed):
    """The rules core's own shuffle gives the order ``random.Random.shuffle`` gives for the same seed: every
    record and replay dealt before it was written still deals the same."""
    import random

    ours, theirs = list(deck), list(deck)
    shuffle(random.Random(seed), ours)
    random.Random(seed).shuffle(theirs)
    assert ours == theirs


@given(cards, cards)
def test_a_cards_code_names_it_copies_share_it_and_it_orders_as_the_cards(a, b):
    """``Card.code``, the small integer tables index by card: equal exactly when the cards are, ordered as they are."""
    assert (a.code == b.code) == (a == b)
    assert (a.code < b.code) == (a < b)
    assert Card(a.rank, a.suit).code == a.code
