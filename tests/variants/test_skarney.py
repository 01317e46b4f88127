"""Skarney (SKA) and Skarney Singles (SKS): the rules as tests, with stacked decks (seat 0 plays first)."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.cards import JOKER, Card, Rank, parse_cards, shuffled
from referee.rules.errors import IllegalAction, InvalidOption
from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.melds import ACE_HIGH, MeldKind, read_meld
from referee.rules.policies import greedy_policy, random_policy
from referee.rules.variants import find
from referee.rules.variants.base import (
    AcceptOffer,
    DeclineOffer,
    Discard,
    DrawStock,
    EndTurn,
    ExchangeWild,
    GameState,
    Group,
    LayOff,
    Meld,
    Offer,
    Phase,
    PileView,
    Table,
    TakeDiscards,
)
from referee.rules.variants.skarney import (
    SHUTOUT_BONUS,
    SKARNEY_MELDS,
    SkarneyState,
    find_contracts,
    hand_bonus,
    in_hand_value,
    melded_value,
)
from referee.tools.testing import random_hand, zone_cards

SKA = find("skarney")
SKS = find("skarney-singles")
WILDS = frozenset({Rank.TWO, Rank.JOKER})


# ---------------------------------------------------------------- helpers


def C(text: str) -> list[Card]:
    return parse_cards(text)


def deal(
    variant=SKA,
    hands: dict[int, str] | None = None,
    stock: str = "",
    seats: int = 4,
    hand_number: int = 1,
    options: dict[str, str] | None = None,
    full: bool = True,
) -> SkarneyState:
    """A hand dealt from a stacked deck: the given hands (the rest filled from a fixed shuffle), then ``stock`` on
    top of the stock (followed by the rest of the pack when ``full``). Dealer is the last seat: seat 0 plays first."""
    rules = variant.configure(options or {}, seats)
    pool = shuffled(variant.deck(rules, seats), "filler")
    given_hands = {s: C(t) for s, t in (hands or {}).items()}
    top = C(stock)
    for c in [*itertools.chain(*given_hands.values()), *top]:
        pool.remove(c)
    dealt = {}
    for s in range(seats):
        mine = list(given_hands.get(s, []))
        while len(mine) < 11:
            mine.append(pool.pop(0))
        dealt[s] = mine
    deck = [dealt[s][i] for i in range(11) for s in range(seats)] + top + (pool if full else [])
    teams = tuple(s % 2 for s in range(seats)) if variant.team_play else tuple(range(seats))
    table = Table(seats, seats - 1, hand_number, teams, (True,) * seats, (0,) * seats)
    return variant.new_hand(rules, table, deck, "test")


def meld(*groups: str) -> Meld:
    return Meld(tuple(Group(tuple(C(g))) for g in groups))


def play(state: SkarneyState, seat: int, action, variant=SKA):
    return variant.apply(state, seat, action)


def refused(state: SkarneyState, seat: int, action, code: str, variant=SKA) -> IllegalAction:
    before = (list(map(list, state.hands)), list(state.stock), len(state.melds), state.phase, state.turn)
    with pytest.raises(IllegalAction) as exc:
        variant.apply(state, seat, action)
    assert exc.value.code == code, exc.value
    assert (list(map(list, state.hands)), list(state.stock), len(state.melds), state.phase, state.turn) == before
    return exc.value


def offer_declined(state: SkarneyState, seat: int, card: str, variant=SKA) -> None:
    """``seat`` offers ``card`` and every asked seat declines."""
    variant.apply(state, seat, Offer(C(card)[0]))
    while state.phase is Phase.OFFER:
        variant.apply(state, state.offer_queue[0], DeclineOffer())


def pass_round(state: SkarneyState, until: int, variant=SKA) -> None:
    """Every seat before ``until`` offers its lowest card and nobody takes it (or says one card)."""
    while state.turn != until and not state.over:
        s = state.turn
        if len(state.hands[s]) > 1:
            offer_declined(state, s, str(min(state.hands[s])), variant)
        else:
            variant.apply(state, s, EndTurn())


def kinds(events) -> list[str]:
    return [e.kind for e in events]


# ---------------------------------------------------------------- SKA-1 deck, deal, no discard pile


def test_SKA_1_two_packs_and_four_jokers_eleven_each_no_discard_pile():
    """SKA-1: 108 cards with four jokers; 11 dealt each, the first player draws; no discard pile; 2s and jokers wild."""
    rules = SKA.configure({}, 4)
    deck = SKA.deck(rules, 4)
    assert len(deck) == 108 and Counter(deck)[JOKER] == 4 and Counter(deck)[C("QS")[0]] == 2
    state = deal()
    assert [len(h) for h in state.hands] == [12, 11, 11, 11]
    assert len(state.stock) == 108 - 44 - 1
    assert state.pile_view is PileView.NONE and state.discards == []
    assert state.wild_ranks == WILDS
    assert sum(zone_cards(state).values()) == 108


def test_SKA_1_no_discard_pile_actions():
    """SKA-1: there is no discard pile to take from or discard to."""
    state = deal()
    refused(state, 0, TakeDiscards(), "NOT_IN_VARIANT")
    refused(state, 0, Discard(state.hands[0][0]), "NOT_IN_VARIANT")


def test_SKA_1_seat_counts_names_and_partnerships():
    """SKA-1: Skarney is four in partnerships opposite; Singles is two to four alone; names and aliases resolve."""
    assert find("skarney-partnership") is SKA and SKA.team_play and not SKA.lower_is_better
    assert not SKS.team_play and not SKS.lower_is_better
    for seats in (2, 3, 5):
        with pytest.raises(InvalidOption) as exc:
            SKA.configure({}, seats)
        assert exc.value.code == "BAD_SEAT_COUNT"
    for seats in (2, 3, 4):
        SKS.configure({}, seats)
    for seats in (1, 5):
        with pytest.raises(InvalidOption):
            SKS.configure({}, seats)
    assert Match(MatchConfig("skarney", 4)).teams == (0, 1, 0, 1)
    assert Match(MatchConfig("skarney-singles", 3)).teams == (0, 1, 2)


# ---------------------------------------------------------------- SKA-2 melds


@pytest.mark.parametrize(
    "cards, ok, kind",
    [
        ("3S JK 3H 3D", True, "SET"),
        ("5S 5H 5D 5C 5S 5H JK", True, "SET"),  # sets have no upper limit
        ("3S JK 2H 3H 3D", False, "TOO_MANY_WILDS"),
        ("3S 2S 5S 6S 2H", False, "TOO_MANY_WILDS"),
        ("4H 5H 6H 7H 8H", True, "RUN"),
        ("4H 5H JK 7H", True, "RUN"),
        ("AH 2H 3H JK", False, "TOO_MANY_WILDS"),  # a 2 in its own place still counts as the one wild
        ("QD KD AD", True, "RUN"),
        ("AD 3D 4D", False, "INVALID_MELD"),
        ("KD AD 2D", True, "RUN"),  # read as Q-K-A with the 2 wild, never around the corner
        ("KD AD 3D", False, "INVALID_MELD"),
        ("2S 2H 2C", True, "WILD_SET"),
        ("JK JK JK JK", True, "WILD_SET"),
        ("2S 2H JK", False, "MIXED_WILD_MELD"),
        ("2S 2H", False, "INVALID_MELD"),
        ("5S 5H", False, "INVALID_MELD"),
    ],
)
def test_SKA_2_meld_validity(cards, ok, kind):
    """SKA-2: sets and runs of 3+, at most one wild; wild-only melds of 3+ 2s or 3+ jokers, never mixed."""
    rules = SKA.configure({}, 4)
    ev = SKA.evaluate(rules, rules.wild_ranks, [C(cards)])
    verdict = ev.groups[0]
    assert verdict.valid is ok
    assert (verdict.kind if ok else verdict.reason) == kind


def test_SKA_2_no_second_wild_laid_off():
    """SKA-2: a meld with a wild takes no second wild by lay-off; a wild-only meld takes more of its wild."""
    state = deal(hands={0: "5S 5H JK 8S 8H 8D KS KH KD 2C 2D"}, stock="9C", options={"contract": "off"})
    play(state, 0, meld("5S 5H JK"))
    refused(state, 0, LayOff(1, (C("2C")[0],)), "TOO_MANY_WILDS")
    play(state, 0, meld("8S 8H 8D"))
    play(state, 0, LayOff(2, tuple(C("2C"))))
    assert len(state.meld(2).cards) == 4


def test_SKA_2_wild_only_meld_grows_with_its_own_wild_only():
    """SKA-2: 2-2-2 takes another 2 but not a joker or a natural."""
    state = deal(hands={0: "2S 2H 2C 2D JK 5S 5H 5D 9C 9D 9H"}, stock="7C", options={"contract": "off"})
    play(state, 0, meld("2S 2H 2C"))
    refused(state, 0, LayOff(1, (JOKER,)), "CANNOT_LAY_OFF")
    refused(state, 0, LayOff(1, tuple(C("5S"))), "CANNOT_LAY_OFF")
    play(state, 0, LayOff(1, tuple(C("2D"))))
    assert state.meld(1).meld_kind is MeldKind.WILD_SET


def _oracle_valid(cards: list[Card]) -> bool:
    """An independent reading of SKA-2 for the property test."""
    if len(cards) < 3:
        return False
    wild = [c for c in cards if c.rank in WILDS]
    nat = [c for c in cards if c.rank not in WILDS]
    if not nat:
        return len({c.rank for c in wild}) == 1
    if len(wild) > 1:
        return False
    if len({c.rank for c in nat}) == 1:
        return True
    if len({c.suit for c in nat}) != 1:
        return False
    n = len(cards)
    for choice in itertools.product(*[(1, ACE_HIGH) if c.rank is Rank.ACE else (int(c.rank),) for c in nat]):
        if len(set(choice)) != len(choice):
            continue
        for low in range(1, ACE_HIGH - n + 2):
            window = range(low, low + n)
            if 1 in window and ACE_HIGH in window:
                continue
            if all(p in window for p in choice):
                return True
    return False


_POOL = C("AS 2S 3S 4S 5S 6S QS KS AH 2H 3H 4H 5H KH JK")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_POOL), min_size=1, max_size=6))
def test_SKA_2_property_meld_validation_matches_the_rule(cards):
    """SKA-2 (property): a group is valid exactly when it is a set or run with at most one wild, or one wild rank alone."""
    rules = SKA.configure({}, 4)
    verdict = SKA.evaluate(rules, rules.wild_ranks, [cards]).groups[0]
    assert verdict.valid == _oracle_valid(cards), (cards, verdict)
    if verdict.valid and verdict.kind != "WILD_SET":
        assert sum(1 for c in cards if c.rank in WILDS) <= 1


# ---------------------------------------------------------------- SKA-3 contract


SETS_HAND = "5S 5H 5D 8S 8H 8D KS KH JK 3C 9D"


def test_SKA_3_three_sets_of_three_in_hands_1_to_3():
    """SKA-3: in hand 1 the contract is three sets of 3, laid in one action."""
    state = deal(hands={0: SETS_HAND}, stock="4C")
    events = play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK"))
    assert "CONTRACT_LAID" in kinds(events) and state.laid == {0}
    assert sorted(state.hands[0]) == sorted(C("3C 9D 4C"))


def test_SKA_3_three_runs_of_three():
    """SKA-3: three same-suit runs of 3 (here with an ace high run) make the hand-2 contract."""
    state = deal(hands={0: "3H 4H 5H 9S TS JS QD KD AD 7C 7C"}, stock="4C", hand_number=2)
    play(state, 0, meld("3H 4H 5H", "9S TS JS", "QD KD AD"))
    assert state.laid == {0}


def test_SKA_3_no_mix_no_other_size_no_wild_only_group():
    """SKA-3: not a mix of sets and runs, not four groups in hand 1, not a group of 4, not a wild-only group."""
    state = deal(hands={0: "5S 5H 5D 3H 4H 5H 9S TS JS 2C 2D"}, stock="2H")
    refused(state, 0, meld("5S 5H 5D", "3H 4H 5H", "9S TS JS"), "CONTRACT_NOT_MET")
    refused(state, 0, meld("5S 5H 5D 5H", "9S TS JS", "3H 4H 2C"), "CONTRACT_NOT_MET")
    refused(state, 0, meld("3H 4H 5H", "9S TS JS", "2C 2D 2H"), "CONTRACT_NOT_MET")
    state5 = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH JK 3C 3D"}, stock="3H", hand_number=5)
    refused(state5, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK"), "CONTRACT_NOT_MET")


def test_SKA_3_nothing_else_before_the_contract():
    """SKA-3: until the side has laid its contract it may not meld anything else nor lay off (CONTRACT_NOT_MET)."""
    state = deal(hands={0: SETS_HAND}, stock="4C")
    refused(state, 0, meld("5S 5H 5D"), "CONTRACT_NOT_MET")
    assert all(isinstance(a, (Meld, Offer)) for a in SKA.legal_actions(state, 0))
    assert all(len(a.groups) == 3 for a in SKA.legal_actions(state, 0) if isinstance(a, Meld))


def test_SKA_3_hands_4_to_7_want_four_groups():
    """SKA-3: in hand 5 the contract is four sets of 3 (12 cards); three are not enough."""
    state = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH JK 9C 9D"}, stock="9H", hand_number=5)
    assert SKA.observe(state, 0).notes[0] == ("contract", "4 sets of 3 or 4 runs of 3 (12 cards)")
    refused(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK"), "CONTRACT_NOT_MET")
    assert all(len(a.groups) == 4 for a in SKA.legal_actions(state, 0) if isinstance(a, Meld))
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK", "9C 9D 9H"))
    assert state.laid == {0}


def test_SKA_3_partner_contract_serves_both_not_the_opponents():
    """SKA-3: once seat 0 lays the contract, partner seat 2 melds a single set and lays off; opponent seat 1 may not."""
    state = deal(hands={0: SETS_HAND, 1: "7S 7H 7D", 2: "6S 6H 6D 5C"}, stock="4C")
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK"))
    offer_declined(state, 0, "3C")
    refused(state, 1, meld("7S 7H 7D"), "CONTRACT_NOT_MET")
    assert SKA.observe(state, 1).notes[2] == ("side_laid", "no")
    pass_round(state, 2)
    assert SKA.observe(state, 2).notes[2] == ("side_laid", "yes")
    play(state, 2, meld("6S 6H 6D"))
    play(state, 2, LayOff(1, tuple(C("5C"))))
    assert [p.card for p in state.meld(1).cards].count(C("5C")[0]) == 1


def test_SKA_3_contract_found_for_hand_number():
    """SKA-3: the contract search finds three groups in hand 1 and four in hand 5, all sets or all runs."""
    hand = C("5S 5H 5D 8S 8H 8D KS KH JK 9C 9D 2C")
    three = find_contracts(hand, 3, WILDS)
    four = find_contracts(hand, 4, WILDS)
    assert three and all(len(c) == 3 for c in three)
    assert four and all(len(c) == 4 and all(len(g) == 3 for g in c) for c in four)
    rules = SKA.configure({}, 4)
    ev = SKA.evaluate(rules, rules.wild_ranks, [list(g) for g in four[0]], hand_number=5)
    assert ev.declaration_valid
    ev = SKA.evaluate(rules, rules.wild_ranks, [list(g) for g in four[0]], hand_number=2)
    assert not ev.declaration_valid and ev.declaration_reason == "CONTRACT_NOT_MET"
    mixed = SKA.evaluate(rules, rules.wild_ranks, [C("5S 5H 5D"), C("3H 4H 5H"), C("9S TS JS")])
    assert not mixed.declaration_valid


# ---------------------------------------------------------------- SKA-4 the draw


def test_SKA_4_the_draw_is_made_for_the_player():
    """SKA-4: the top stock card is drawn for the player in turn, privately; DrawStock is never asked."""
    state = deal(stock="7C 9H")
    assert C("7C")[0] in state.hands[0] and len(state.hands[0]) == 12
    d = SKA.decision(state)
    assert d is not None and d.phase is Phase.PLAY and d.seat == 0
    refused(state, 0, DrawStock(), "DRAW_IS_AUTOMATIC")
    assert not any(isinstance(a, DrawStock) for a in SKA.legal_actions(state, 0))
    card = str(min(state.hands[0]))
    SKA.apply(state, 0, Offer(C(card)[0]))
    events = []
    while state.phase is Phase.OFFER:
        events += SKA.apply(state, state.offer_queue[0], DeclineOffer())
    drew = [e for e in events if e.kind == "DREW_STOCK"]
    assert [e.cards for e in drew if e.to == frozenset({1})] == [tuple(C("9H"))]
    assert all(e.cards == () for e in drew if e.to is None)
    assert len(state.hands[1]) == 12 and state.turn == 1


# ---------------------------------------------------------------- SKA-5 exchanges


CONTRACT_WITH_WILDS = "5S 5H JK 8S 8H 2D KS KH KD 3C 9D"


def _wild_table(variant=SKA, seats: int = 4) -> SkarneyState:
    state = deal(variant, hands={0: CONTRACT_WITH_WILDS, 1: "5C 8C 9C", 2: "5D 8D"}, stock="4C", seats=seats)
    variant.apply(state, 0, meld("5S 5H JK", "8S 8H 2D", "KS KH KD"))
    return state


def test_SKA_5_exchange_a_natural_for_an_opponents_wild():
    """SKA-5: an opponent puts the natural 5 in the meld and takes the joker into hand."""
    state = _wild_table()
    offer_declined(state, 0, "3C")
    assert ExchangeWild(1, C("5C")[0], JOKER) in SKA.legal_actions(state, 1)
    events = play(state, 1, ExchangeWild(1, C("5C")[0], JOKER))
    assert kinds(events) == ["EXCHANGED_WILD"]
    assert JOKER in state.hands[1] and C("5C")[0] not in state.hands[1]
    assert sorted(p.card for p in state.meld(1).cards) == sorted(C("5S 5H 5C"))
    assert state.meld(1).owner == 0 and state.meld(1).reading.pure


def test_SKA_5_only_a_wild_used_as_a_wild_for_its_natural():
    """SKA-5: the natural must be the card the wild stands for; a natural card, not another wild."""
    state = _wild_table()
    offer_declined(state, 0, "3C")
    refused(state, 1, ExchangeWild(2, C("9C")[0], C("2D")[0]), "WILD_NOT_THERE")
    refused(state, 1, ExchangeWild(3, C("5C")[0], JOKER), "WILD_NOT_THERE")
    refused(state, 1, ExchangeWild(2, C("2D")[0], C("2D")[0]), "NOT_NATURAL")
    play(state, 1, ExchangeWild(2, C("8C")[0], C("2D")[0]))


def test_SKA_5_never_from_own_or_partners_melds():
    """SKA-5: no exchange from one's own meld nor the partner's."""
    state = _wild_table()
    state.hands[0].append(C("5D")[0])  # seat 0 may hold the natural too
    refused(state, 0, ExchangeWild(1, C("5D")[0], JOKER), "OWN_SIDE_MELD")
    state.hands[0].remove(C("5D")[0])
    offer_declined(state, 0, "3C")
    pass_round(state, 2)
    refused(state, 2, ExchangeWild(1, C("5D")[0], JOKER), "OWN_SIDE_MELD")
    assert not any(isinstance(a, ExchangeWild) for a in SKA.legal_actions(state, 2))


def test_SKA_5_never_from_wild_only_melds():
    """SKA-5: the 2s of a meld of 2s are not used as wilds and cannot be taken."""
    state = deal(hands={0: "2S 2H 2C 5S 5H 5D 9C 9D 9H 3C 4D", 1: "7C 7D"}, stock="KC", options={"contract": "off"})
    play(state, 0, meld("2S 2H 2C"))
    offer_declined(state, 0, "3C")
    refused(state, 1, ExchangeWild(1, C("7C")[0], C("2S")[0]), "WILD_ONLY_MELD")


def test_SKS_1_singles_take_wilds_from_any_opponent():
    """SKS-1: in Skarney Singles every other seat is an opponent: seat 2 takes seat 0's joker."""
    state = _wild_table(SKS, seats=3)
    offer_declined(state, 0, "3C", SKS)
    pass_round(state, 2, SKS)
    play(state, 2, ExchangeWild(1, C("5D")[0], JOKER), SKS)
    assert JOKER in state.hands[2]


# ---------------------------------------------------------------- SKA-6 melds and lay-offs once laid


def test_SKA_6_lay_off_one_or_two_cards_per_meld_per_turn():
    """SKA-6: once laid, lay off 1 or 2 cards on each own meld in a turn, no more; the next turn again."""
    state = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH KD 8C 8C"}, stock="8S 4H")
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH KD"))
    refused(state, 0, LayOff(2, tuple(C("8C 8C 8S"))), "LAY_OFF_LIMIT")
    play(state, 0, LayOff(2, tuple(C("8C 8C"))))
    refused(state, 0, LayOff(2, tuple(C("8S"))), "LAY_OFF_LIMIT")
    assert not any(isinstance(a, LayOff) and a.meld_id == 2 for a in SKA.legal_actions(state, 0))
    play(state, 0, EndTurn())
    pass_round(state, 0)
    play(state, 0, LayOff(2, tuple(C("8S"))))
    assert len(state.meld(2).cards) == 6


def test_SKA_6_new_melds_after_the_contract():
    """SKA-6: after the contract any number of new melds may be laid (here in the same turn)."""
    state = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH KD 9C TC"}, stock="JC")
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH KD"))
    assert Meld((Group(tuple(C("9C TC JC"))),)) in SKA.legal_actions(state, 0)
    events = play(state, 0, meld("9C TC JC"))
    assert "WENT_OUT" in kinds(events) and state.went_out == 0


def test_SKA_6_lay_off_on_partner_never_opponent():
    """SKA-6: lay off on the partner's melds, never on the opponents'."""
    state = deal(hands={0: "5S 5H 5D 3C 4C", 1: "5C", 2: "5C"}, stock="9D", options={"contract": "off"})
    play(state, 0, meld("5S 5H 5D"))
    offer_declined(state, 0, "3C")
    refused(state, 1, LayOff(1, tuple(C("5C"))), "NOT_YOUR_MELD")
    offer_declined(state, 1, str(min(c for c in state.hands[1] if c != C("5C")[0])))
    play(state, 2, LayOff(1, tuple(C("5C"))))


def test_SKS_1_singles_lay_off_only_on_own_melds():
    """SKS-1: in Singles a player lays off only on his own melds."""
    state = deal(SKS, hands={0: "5S 5H 5D 3C 4C", 1: "5C 5C"}, stock="9D", seats=2, options={"contract": "off"})
    play(state, 0, meld("5S 5H 5D"), SKS)
    offer_declined(state, 0, "3C", SKS)
    refused(state, 1, LayOff(1, tuple(C("5C"))), "NOT_YOUR_MELD", SKS)


# ---------------------------------------------------------------- SKA-7 offers


def test_SKA_7_offer_goes_round_from_the_left_then_is_kept():
    """SKA-7: the card is shown face up to the left-hand opponent, then clockwise (partner, right opponent); kept if refused."""
    state = deal(hands={0: "9D 3C"}, stock="4H")
    play(state, 0, Offer(C("9D")[0]))
    assert state.face_up == C("9D")
    asked = []
    while state.phase is Phase.OFFER:
        d = SKA.decision(state)
        assert d.phase is Phase.OFFER and d.offer == C("9D")[0]
        assert SKA.legal_actions(state, d.seat) == [AcceptOffer(), DeclineOffer()]
        asked.append(d.seat)
        events = play(state, d.seat, DeclineOffer())
    assert asked == [1, 2, 3]
    assert "OFFER_KEPT" in kinds(events) and C("9D")[0] in state.hands[0] and state.face_up == []
    assert state.turn == 1 and len(state.hands[0]) == 12


@pytest.mark.parametrize("card", ["AS", "2C", "JK"])
def test_SKA_7_aces_and_wilds_only_to_the_next_player(card):
    """SKA-7: an ace or a wild is offered only to the next player; refused, the offerer keeps it."""
    state = deal(hands={0: f"{card} 3C"}, stock="4H")
    play(state, 0, Offer(C(card)[0]))
    assert state.offer_queue == [1]
    events = play(state, 1, DeclineOffer())
    assert "OFFER_KEPT" in kinds(events) and C(card)[0] in state.hands[0] and state.turn == 1


def test_SKA_7_partner_may_accept_and_play_goes_on_from_the_offerer():
    """SKA-7: the partner (asked second) accepts; play passes to the offerer's left."""
    state = deal(hands={0: "9D 3C"}, stock="4H")
    play(state, 0, Offer(C("9D")[0]))
    play(state, 1, DeclineOffer())
    events = play(state, 2, AcceptOffer())
    assert "ACCEPTED" in kinds(events) and C("9D")[0] in state.hands[2] and len(state.hands[2]) == 12
    assert state.turn == 1 and len(state.hands[1]) == 12 and state.phase is Phase.PLAY


def test_SKA_7_singles_offer_order_three_players():
    """SKA-7: in Singles the offer goes to the next player, then the one after."""
    state = deal(SKS, hands={0: "9D 3C"}, stock="4H", seats=3)
    play(state, 0, Offer(C("9D")[0]), SKS)
    assert state.offer_queue == [1, 2]


def test_SKA_7_must_offer_holding_more_than_one_card_one_card_otherwise():
    """SKA-7: holding more than one card the player must offer; holding one he says "one card" and offers nothing."""
    state = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH KD 8C 8C"}, stock="9S")
    refused(state, 0, EndTurn(), "MUST_OFFER")
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH KD"))
    play(state, 0, LayOff(2, tuple(C("8C 8C"))))
    refused(state, 0, Offer(C("9S")[0]), "ONE_CARD")
    assert SKA.legal_actions(state, 0)[-1] == EndTurn()
    assert not any(isinstance(a, Offer) for a in SKA.legal_actions(state, 0))
    events = play(state, 0, EndTurn())
    assert kinds(events)[0] == "ONE_CARD" and state.turn == 1


def test_SKA_7_wrong_seat_and_phase():
    """SKA-7: only the asked seat answers an offer, and nothing but an answer is taken meanwhile."""
    state = deal(hands={0: "9D 3C"}, stock="4H")
    refused(state, 1, Offer(state.hands[1][0]), "NOT_YOUR_TURN")
    refused(state, 0, AcceptOffer(), "WRONG_PHASE")
    play(state, 0, Offer(C("9D")[0]))
    refused(state, 2, AcceptOffer(), "NOT_YOUR_TURN")
    refused(state, 0, Offer(C("3C")[0]), "NOT_YOUR_TURN")


# ---------------------------------------------------------------- SKA-8 stop cards


@pytest.mark.parametrize("card", ["AS", "2C", "JK"])
def test_SKA_8_accepting_a_stop_card_skips_the_next_draw(card):
    """SKA-8: the seat that accepts an ace, 2 or joker does not draw at its next turn (only that one)."""
    state = deal(hands={0: f"{card} 3C"}, stock="4H 6H 7H 8H 9H")
    play(state, 0, Offer(C(card)[0]))
    stock_before = len(state.stock)
    events = play(state, 1, AcceptOffer())
    assert "SKIPPED_DRAW" in kinds(events) and "DREW_STOCK" not in kinds(events)
    assert len(state.hands[1]) == 12 and len(state.stock) == stock_before
    offer_declined(state, 1, "3C" if C("3C")[0] in state.hands[1] else str(max(state.hands[1])))
    pass_round(state, 1)
    assert state.turn == 1 and C("9H")[0] in state.hands[1]  # the next turn draws again
    assert len(state.hands[1]) == 13


def test_SKA_8_other_cards_do_not_stop_the_draw():
    """SKA-8: accepting any other card, the next player still draws."""
    state = deal(hands={0: "9D 3C"}, stock="4H 6H")
    play(state, 0, Offer(C("9D")[0]))
    events = play(state, 1, AcceptOffer())
    assert "DREW_STOCK" in kinds(events) and len(state.hands[1]) == 13


# ---------------------------------------------------------------- SKA-9 end of the hand


def test_SKA_9_going_out_by_melding_the_last_card():
    """SKA-9: laying a 12-card contract from 12 cards in hand 5 melds the last card: the hand ends."""
    state = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH JK 9C 9D"}, hand_number=5, stock="9H")
    events = play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK", "9C 9D 9H"))
    assert "WENT_OUT" in kinds(events) and state.over and state.went_out == 0 and state.hands[0] == []
    assert SKA.decision(state) is None
    refused(state, 0, Offer(C("9H")[0]), "HAND_OVER")


def test_SKA_9_drawing_the_last_stock_card_stops_play():
    """SKA-9: who draws the last stock card melds what he can, offers nothing, and play stops."""
    state = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH KD 3C 4D"}, stock="9C", full=False)
    assert state.stock == [] and state.last_draw
    refused(state, 0, Offer(C("3C")[0]), "NO_OFFER_AFTER_LAST_CARD")
    assert SKA.legal_actions(state, 0)[-1] == EndTurn()
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH KD"))
    events = play(state, 0, EndTurn())
    assert kinds(events) == ["HAND_STOPPED"] and state.over and state.went_out is None
    assert SKA.decision(state) is None
    assert "SKA-11" in SKA.score(state).reason


def test_SKA_9_last_stock_card_and_going_out():
    """SKA-9: the player who draws the last card may still go out by melding everything."""
    state = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH KD TC JC"}, stock="QC", full=False)
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH KD"))
    play(state, 0, meld("TC JC QC"))
    assert state.went_out == 0 and state.over


# ---------------------------------------------------------------- SKA-10 bonuses


@pytest.mark.parametrize("hand, bonus", [(1, 100), (2, 100), (3, 100), (4, 200), (5, 300), (6, 400), (7, 500)])
def test_SKA_10_hand_bonus_by_hand_number(hand, bonus):
    """SKA-10: 100 in hands 1-3; 200, 300, 400, 500 in hands 4-7."""
    assert hand_bonus(hand) == bonus


def _out_in_hand_5(variant=SKA, seats=4, opponent_hand="JK 2C AS KS 9S 3S 4S 6D 7D 8C TD"):
    state = deal(variant, hands={0: "5S 5H 5D 8S 8H 8D KS KH JK 9C 9D", 1: opponent_hand}, stock="9H",
                 hand_number=5, seats=seats)
    variant.apply(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK", "9C 9D 9H"))
    assert state.went_out == 0
    return state


def test_SKA_10_going_out_with_shutout():
    """SKA-10/SKA-12: out before the opponents' contract: melds + 300 + 200 shutout; the partner loses nothing."""
    state = _out_in_hand_5()
    sc = SKA.score(state)
    melded = 15 + 15 + (10 + 10 + 50) + 15
    assert sc.points[0] == melded + 300 + SHUTOUT_BONUS and sc.winner == 0
    assert sc.points[2] == 0
    assert sc.points[1] == -(100 + 50 + 15 + 10 + 5 + 5 + 5 + 5 + 5 + 5 + 10)
    assert sc.points[3] == -sum(in_hand_value(c) for c in state.hands[3])
    assert "shutout" in sc.reason


def test_SKA_10_no_shutout_once_the_opponents_have_laid():
    """SKA-10: seat 1 goes out after seat 0's side has laid: hand bonus only."""
    state = deal(hands={0: SETS_HAND, 1: "6S 6H 6D 7S 7H 7D QS QH QD TC JC"}, stock="4C QC")
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK"))
    offer_declined(state, 0, "3C")
    play(state, 1, meld("6S 6H 6D", "7S 7H 7D", "QS QH QD"))
    play(state, 1, meld("TC JC QC"))
    sc = SKA.score(state)
    assert state.went_out == 1 and sc.winner == 1 and "shutout" not in sc.reason
    assert sc.points[1] == 3 * 5 + 3 * 5 + 3 * 10 + 30 + 100
    assert sc.points[3] == 0  # the partner of the one who went out keeps his cards unpunished


def test_SKS_1_singles_shutout_only_if_no_opponent_has_laid():
    """SKS-1/SKA-10: in Singles the shutout needs every opponent without a contract."""
    state = _out_in_hand_5(SKS, seats=3)
    assert "shutout" in SKS.score(state).reason
    state = deal(SKS, hands={0: SETS_HAND, 1: "6S 6H 6D 7S 7H 7D QS QH QD TC JC"}, stock="4C QC", seats=3)
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH JK"), SKS)
    offer_declined(state, 0, "3C", SKS)
    play(state, 1, meld("6S 6H 6D", "7S 7H 7D", "QS QH QD"), SKS)
    play(state, 1, meld("TC JC QC"), SKS)
    sc = SKS.score(state)
    assert "shutout" not in sc.reason and sc.points[1] == 15 + 15 + 30 + 30 + 100
    assert sc.points[2] == -sum(in_hand_value(c) for c in state.hands[2])  # seat 2 had not laid, seat 0 had


# ---------------------------------------------------------------- SKA-11 nobody out


def _stopped(seat1: str) -> SkarneyState:
    """Seat 0 draws the last stock card and stops play; nobody has melded. Seats 0 and 2 hold 55, seat 3 55."""
    fives = "3S 4S 5S 6S 7S 8S 9S 3H 4H 5H 6H"
    state = deal(hands={0: fives, 1: seat1, 2: fives, 3: "7H 8H 9H 3D 4D 5D 6D 7D 8D 9D 3C"}, stock="9H", full=False)
    play(state, 0, EndTurn())
    return state


def test_SKA_11_nobody_out_side_with_more_points_takes_the_bonus():
    """SKA-11: with nobody out every side subtracts its cards; the side with more points takes the bonus."""
    state = _stopped("4C 5C 6C 7C 8C 9C 4C 5C 6C KC KD")
    sc = SKA.score(state)
    assert sc.points == (-60, -65, -55 + 100, -55) and sc.winner == 2


def test_SKA_11_level_sides_the_hand_does_not_count():
    """SKA-11: sides level on points: nobody scores the hand."""
    state = _stopped("4C 5C 6C 7C 8C 9C 4C 5C 6C 7C KD")
    sc = SKA.score(state)
    assert sc.points == (0, 0, 0, 0) and sc.winner is None and "does not count" in sc.reason


def test_SKA_11_turn_cap_scores_as_nobody_out():
    """SKA-11: a hand stopped by the engine's turn cap is scored as a hand where nobody went out."""
    m = Match(MatchConfig("skarney", 4, seed="cap", max_turns_per_hand=3, max_hands=1))
    while m.pending() is not None:
        m.timeout(m.pending().seat)
    hand = m.outcome.hands[0]
    assert hand.reason.startswith("turn cap") and "SKA-11" in hand.reason
    assert m.outcome.reason.startswith("hand cap")


# ---------------------------------------------------------------- SKA-12 values


def test_SKA_12_values_melded_and_in_hand():
    """SKA-12: joker 100 in a joker meld, 50 as wild; 2 50 in a 2s meld, 25 as wild; ace 15; K-10 10; 9-3 5."""
    jk, two, ace, king, ten, nine, three = C("JK 2H AS KD TC 9H 3S")
    assert (melded_value(jk, True), melded_value(jk, False), melded_value(two, True), melded_value(two, False)) == (100, 50, 50, 25)
    assert [melded_value(c, False) for c in (ace, king, ten, nine, three)] == [15, 10, 10, 5, 5]
    assert [in_hand_value(c) for c in (jk, two, ace, king, ten, nine, three)] == [100, 50, 15, 10, 10, 5, 5]
    rules = SKA.configure({}, 4)
    ev = SKA.evaluate(rules, rules.wild_ranks, [C("JK JK JK"), C("2S 2D 2C"), C("AS AH 2C"), C("9H TH JH")])
    assert [g.points for g in ev.groups] == [300, 150, 55, 25]
    assert ev.hand_points == -(300 + 150 + 80 + 25) and ev.melded_points == 530


_CARDS = C("JK 2S 2H AS AD KS QH TC 9D 5S 3C 7H")


@settings(max_examples=120, deadline=None)
@given(
    hands=st.lists(st.lists(st.sampled_from(_CARDS), max_size=6), min_size=4, max_size=4),
    melds=st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["5S 5H JK", "2S 2H 2D", "JK JK JK", "9S TS JS QS",
                                                                  "AS AH AD", "KD KC 2C"])), max_size=5),
    out=st.one_of(st.none(), st.integers(0, 3)),
    laid=st.sets(st.integers(0, 1)),
    hand_number=st.integers(1, 7),
)
def test_SKA_12_property_scoring(hands, melds, out, laid, hand_number):
    """SKA-10/11/12 (property): melds count for owners, hands subtract off the winning side, one bonus at most."""
    state = deal(hand_number=hand_number)
    state.hands = [list(h) for h in hands]
    state.melds = []
    for owner, text in melds:
        state.add_meld(owner, read_meld(C(text), SKARNEY_MELDS, WILDS))
    state.laid = set(laid)
    state.over = True
    if out is not None:
        state.hands[out] = []
        state.went_out = out
    sc = SKA.score(state)
    melded = [0] * 4
    for m in state.melds:
        wild_only = m.meld_kind is MeldKind.WILD_SET
        melded[m.owner] += sum(melded_value(p.card, wild_only) for p in m.cards)
    base = [melded[s] - (0 if out is not None and s % 2 == out % 2 else sum(map(in_hand_value, state.hands[s])))
            for s in range(4)]
    extra = [sc.points[s] - base[s] for s in range(4)]
    if out is not None:
        shut = SHUTOUT_BONUS if (1 - out % 2) not in laid else 0
        assert extra == [hand_bonus(hand_number) + shut if s == out else 0 for s in range(4)]
    else:
        sides = [base[0] + base[2], base[1] + base[3]]
        if sides[0] == sides[1]:
            assert sc.points == (0, 0, 0, 0)
        else:
            win = 0 if sides[0] > sides[1] else 1
            assert sum(extra) == hand_bonus(hand_number) and all(extra[s] == 0 for s in range(4) if s % 2 != win)
            assert sc.winner is not None and sc.winner % 2 == win


# ---------------------------------------------------------------- SKA-13 seven hands


def test_SKA_13_seven_hands_highest_total_wins():
    """SKA-13: the game goes on for seven hands, then the highest team total ranks first."""
    rules = SKA.configure({}, 4)
    game = GameState(4, (0, 1, 0, 1), [100, 300, 50, 0], hands_played=6, eliminated=[False] * 4)
    assert SKA.game_outcome(rules, game, 100) is None
    game.hands_played = 7
    outcome = SKA.game_outcome(rules, game, 100)
    assert outcome.ranking == ((1, 3), (0, 2)) and "SKA-13" in outcome.reason


def _game(variant: str, seats: int, seed: str, policy_of) -> object:
    rng = random.Random(seed)
    m = Match(MatchConfig(variant, seats, seed=seed))
    return play_seats(m, lambda s, view, legal: policy_of(s)(view, legal, rng))


@pytest.mark.parametrize("variant, seats", [("skarney", 4), ("skarney-singles", 3)])
def test_SKA_13_full_game_of_greedy_bots(variant, seats):
    """SKA-13: a whole game of greedy bots ends after the seven hands."""
    g = greedy_policy(variant)
    out = _game(variant, seats, "full", lambda s: g)
    assert out.reason == "seven hands played (SKA-13)" and len(out.hands) == 7


@pytest.mark.parametrize("variant, seats", [("skarney", 4), ("skarney-singles", 2)])
def test_SKA_13_random_bots_end_with_a_recorded_reason(variant, seats):
    """SKA-13: random bots end the game by its seven hands or by a cap, with a reason."""
    out = _game(variant, seats, "rnd", lambda s: random_policy)
    assert out.reason == "seven hands played (SKA-13)" or "cap" in out.reason


def test_SKA_13_greedy_beats_random():
    """SKA-13: over a few seeded Singles games the greedy policy outscores random play."""
    g = greedy_policy("skarney-singles")
    wins = 0
    for i in range(4):
        out = _game("skarney-singles", 2, f"gvr{i}", lambda s, i=i: g if s == i % 2 else random_policy)
        wins += out.totals[i % 2] > out.totals[1 - i % 2]
    assert wins >= 3


# ---------------------------------------------------------------- SKA-14 options


def test_SKA_14_jokers_on_and_off():
    """SKA-14: jokers=on plays 108 cards with jokers wild; jokers=off 104 cards with only 2s wild."""
    on = SKA.configure({"jokers": "on"}, 4)
    off = SKA.configure({"jokers": "off"}, 4)
    assert len(SKA.deck(on, 4)) == 108 and on.wild_ranks == WILDS
    assert len(SKA.deck(off, 4)) == 104 and JOKER not in SKA.deck(off, 4) and off.wild_ranks == {Rank.TWO}
    assert SKA.evaluate(off, off.wild_ranks, [C("5S 5H JK")]).groups[0].reason == "NO_JOKERS"
    state = deal(options={"jokers": "off"})
    assert state.wild_ranks == {Rank.TWO} and sum(zone_cards(state).values()) == 104


def test_SKA_14_contract_on_and_off():
    """SKA-14: contract=on demands the contract first; contract=off lets any meld be laid at any time."""
    on = deal(hands={0: "5S 5H 5D"}, options={"contract": "on"})
    refused(on, 0, meld("5S 5H 5D"), "CONTRACT_NOT_MET")
    off = deal(hands={0: "5S 5H 5D"}, options={"contract": "off"})
    play(off, 0, meld("5S 5H 5D"))
    assert SKA.observe(off, 0).notes[0] == ("contract", "off")
    rules = SKA.configure({"contract": "off"}, 4)
    assert SKA.evaluate(rules, rules.wild_ranks, [C("5S 5H 5D")]).declaration_valid


def test_SKA_14_bad_options_are_refused():
    """SKA-14: an unknown option or value is refused, naming the clause."""
    with pytest.raises(InvalidOption) as exc:
        SKA.configure({"jokers": "maybe"}, 4)
    assert exc.value.code == "BAD_OPTION_VALUE" and "SKA-14" in exc.value.message
    with pytest.raises(InvalidOption):
        SKS.configure({"discards": "on"}, 2)


# ---------------------------------------------------------------- conformance, legal lists, defaults


CONFORMANCE = [
    (name, seats, seed, opts, hn)
    for (name, seats), seed0 in [(("skarney", 4), 0), (("skarney-singles", 2), 10), (("skarney-singles", 3), 20),
                                  (("skarney-singles", 4), 30)]
    for k, (opts, hn) in enumerate([({}, 1), ({}, 5), ({"jokers": "off"}, 1), ({"contract": "off"}, 5),
                                    ({"jokers": "off", "contract": "off"}, 1)])
    for seed in [seed0 + k]
]


@pytest.mark.parametrize("name, seats, seed, opts, hand_number", CONFORMANCE)
def test_SKA_1_conformance_random_hands(name, seats, seed, opts, hand_number):
    """SKA-1..SKA-9: random playouts keep every card, every listed action applies, no hidden card leaks, the hand ends."""
    sizes = []

    def choose(rng, view, legal):
        sizes.append((len(legal), len(view.hand)))
        return rng.choice(list(legal))

    run = random_hand(name, seats, seed, opts, hand_number=hand_number, choose=choose)
    assert run.state.over and run.state.end_reason
    sc = find(name).score(run.state)
    assert len(sc.points) == seats
    assert all(n <= 60 or h > 40 for n, h in sizes)


def test_SKA_7_default_actions():
    """SKA-7: a missed deadline declines an offer, offers the highest natural card, or ends a one-card turn."""
    state = deal(hands={0: "KD 3C JK 2S AS 4D 5D 6C 7C 8S 9H"}, stock="4H")
    assert SKA.default_action(state, 0, 1) == Offer(C("AS")[0])
    play(state, 0, Offer(C("3C")[0]))
    assert SKA.default_action(state, 1, 1) == DeclineOffer()
    last = deal(stock="9C", full=False)
    assert SKA.default_action(last, 0, 1) == EndTurn()


def test_SKA_6_legal_actions_list_exchanges_melds_lay_offs_and_offers():
    """SKA-5/6/7: once laid the list holds new melds, lay-offs on own melds and each distinct offer; all apply."""
    state = deal(hands={0: "5S 5H 5D 8S 8H 8D KS KH KD 5C 9C"}, stock="TC")
    play(state, 0, meld("5S 5H 5D", "8S 8H 8D", "KS KH KD"))
    legal = SKA.legal_actions(state, 0)
    assert LayOff(1, tuple(C("5C"))) in legal
    assert {a.card for a in legal if isinstance(a, Offer)} == set(state.hands[0])
    assert len(legal) <= 60
