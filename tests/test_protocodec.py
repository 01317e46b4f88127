"""Round trips at the wire: domain -> proto -> domain is identity for cards, groups and actions."""

from hypothesis import given
from hypothesis import strategies as st

from referee.rules.cards import JOKER, SUITS, Card, Rank
from referee.rules.variants.base import (
    AcceptOffer,
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
)
from rummy.referee.v1 import referee_pb2 as pb
from rummy.wire.protocodec import action_from_pb, action_to_pb, card_from_pb, card_to_pb

cards = st.builds(Card, st.sampled_from([r for r in Rank if r is not Rank.JOKER]), st.sampled_from(SUITS)) | st.just(JOKER)
card_tuples = st.lists(cards, min_size=1, max_size=6).map(tuple)
assignments = st.lists(st.tuples(cards, cards.filter(lambda c: not c.is_joker)), max_size=2).map(tuple)
groups = st.builds(Group, card_tuples, assignments)
actions = st.one_of(
    st.just(DrawStock()), st.just(Drop()), st.just(EndTurn()), st.just(AcceptOffer()), st.just(DeclineOffer()),
    st.builds(Discard, cards), st.builds(Offer, cards),
    st.builds(TakeDiscards, st.integers(0, 20), st.none() | groups, st.none() | st.integers(0, 50)),
    st.builds(Meld, st.lists(groups, min_size=1, max_size=4).map(tuple)),
    st.builds(LayOff, st.integers(0, 50), card_tuples, assignments),
    st.builds(ExchangeWild, st.integers(0, 50), cards, cards),
    st.builds(Declare, st.lists(groups, max_size=4).map(tuple), st.none() | cards),
)


@given(cards)
def test_cards_round_trip(card):
    assert card_from_pb(card_to_pb(card)) == card


@given(actions)
def test_actions_round_trip_through_the_wire(action):
    wire = pb.Action.FromString(action_to_pb(action).SerializeToString())
    assert action_from_pb(wire) == action


def test_an_empty_action_is_malformed_not_illegal():
    import pytest

    from referee.rules.errors import InvalidAction

    with pytest.raises(InvalidAction) as err:
        action_from_pb(pb.Action())
    assert err.value.code == "NO_ACTION"
    with pytest.raises(InvalidAction):
        action_from_pb(pb.Action(discard=pb.Discard(card=pb.Card(rank=pb.RANK_JOKER, suit=pb.SUIT_HEARTS))))


def _refusal(card: pb.Card) -> str:
    import pytest

    from referee.rules.errors import InvalidAction

    with pytest.raises(InvalidAction) as err:
        action_from_pb(pb.Action(discard=pb.Discard(card=card)))
    assert err.value.code == "BAD_CARD"
    assert "<" not in err.value.message, "names, not Python enum reprs"
    return err.value.message


def test_a_card_whose_rank_or_suit_is_unset_is_refused_naming_what_is_missing():
    """The zero of Rank and Suit is *_UNSPECIFIED: a card a client forgot to fill in is not read as a joker."""
    assert "neither rank nor suit" in _refusal(pb.Card())
    assert "rank is unset (RANK_UNSPECIFIED)" in _refusal(pb.Card(suit=pb.SUIT_SPADES))
    assert "suit of a card of rank RANK_QUEEN is unset (SUIT_UNSPECIFIED)" in _refusal(pb.Card(rank=pb.RANK_QUEEN))
    assert "suit of a card of rank RANK_JOKER is unset" in _refusal(pb.Card(rank=pb.RANK_JOKER))
    assert "not a rank: 99" in _refusal(pb.Card(rank=99, suit=pb.SUIT_SPADES))  # type: ignore[arg-type]
    assert "not a suit: 9" in _refusal(pb.Card(rank=pb.RANK_TWO, suit=9))  # type: ignore[arg-type]


def test_a_suited_joker_and_a_suitless_card_are_refused_in_wire_names():
    assert "a printed joker (RANK_JOKER) has suit SUIT_NONE, not SUIT_HEARTS" in _refusal(
        pb.Card(rank=pb.RANK_JOKER, suit=pb.SUIT_HEARTS))
    assert "RANK_KING has one of the four suits, not SUIT_NONE" in _refusal(pb.Card(rank=pb.RANK_KING, suit=pb.SUIT_NONE))


def test_the_rules_core_names_a_suited_joker_readably():
    import pytest

    from referee.rules.cards import Suit
    from referee.rules.errors import InvalidAction

    with pytest.raises(InvalidAction) as err:
        Card(Rank.JOKER, Suit.HEARTS)
    assert err.value.code == "BAD_CARD" and "JOKER/HEARTS" in err.value.message and "<" not in err.value.message


def test_the_wire_numbers_keep_zero_for_unspecified_and_the_core_keeps_its_own():
    """A joker is 14/5 on the wire and 0/0 in the rules core (whose numbers order cards: jokers first, as records
    and fingerprints were made); every other card has the same numbers in both."""
    from referee.rules.cards import Suit

    assert (pb.RANK_UNSPECIFIED, pb.SUIT_UNSPECIFIED) == (0, 0)
    assert card_to_pb(JOKER) == pb.Card(rank=pb.RANK_JOKER, suit=pb.SUIT_NONE) and (pb.RANK_JOKER, pb.SUIT_NONE) == (14, 5)
    assert (Rank.JOKER, Suit.NONE) == (0, 0) and sorted([Card(Rank.TWO, Suit.SPADES), JOKER])[0] == JOKER
    for rank in Rank:
        for suit in SUITS:
            if rank is not Rank.JOKER:
                assert card_to_pb(Card(rank, suit)) == pb.Card(rank=int(rank), suit=int(suit))  # type: ignore[arg-type]


def test_a_set_wild_may_stand_for_an_unnamed_suit_but_not_an_unset_rank():
    import pytest

    from referee.rules.errors import InvalidAction
    from rummy.wire.protocodec import group_from_pb

    five = pb.Card(rank=pb.RANK_FIVE, suit=pb.SUIT_SPADES)
    wild = pb.WildAssignment(wild=card_to_pb(JOKER), as_card=pb.Card(rank=pb.RANK_FIVE, suit=pb.SUIT_NONE))
    group = group_from_pb(pb.Group(cards=[five, card_to_pb(JOKER)], stands_for=[wild]))
    assert group.stands_for[0][0] == JOKER and group.stands_for[0][1].rank is Rank.FIVE
    unset = pb.WildAssignment(wild=card_to_pb(JOKER), as_card=pb.Card(suit=pb.SUIT_NONE))
    with pytest.raises(InvalidAction) as err:
        group_from_pb(pb.Group(cards=[five, card_to_pb(JOKER)], stands_for=[unset]))
    assert err.value.code == "BAD_CARD" and "RANK_UNSPECIFIED" in err.value.message
