"""Round trips at the wire: domain -> proto -> domain is identity for cards, groups and actions."""

from hypothesis import given
from hypothesis import strategies as st

from referee.cards import JOKER, SUITS, Card, Rank
from referee.protocodec import action_from_pb, action_to_pb, card_from_pb, card_to_pb
from referee.variants.base import (
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

    from referee.errors import InvalidAction

    with pytest.raises(InvalidAction) as err:
        action_from_pb(pb.Action())
    assert err.value.code == "NO_ACTION"
    with pytest.raises(InvalidAction):
        action_from_pb(pb.Action(discard=pb.Discard(card=pb.Card(rank=pb.RANK_JOKER, suit=pb.SUIT_HEARTS))))
