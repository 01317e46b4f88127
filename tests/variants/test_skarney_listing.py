"""Skarney's legal-action listing is the old one, action for action and in order (bots and environments pick from
the list by index with seeded generators, so a faster listing must not reorder it), on random reachable states of
both variants, every seat count and option, with long hands (offers accepted) and tables full of melds."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.cards import JOKER, Card, Rank, build_deck, shuffled
from referee.rules.variants import find
from referee.rules.variants.base import (
    AcceptOffer,
    Action,
    DeclineOffer,
    EndTurn,
    ExchangeWild,
    LayOff,
    Meld,
    Offer,
    Phase,
    Table,
    default_teams,
)
from referee.rules.variants.skarney import SkarneyState, find_contracts
from tests.variants import skarney_listing_reference as old
from tests.variants.listing_oracle import assert_listed_as_before, deal

_QUIET = (Offer, EndTurn, AcceptOffer, DeclineOffer)


def _pick(rng: random.Random, legal: list[Action], rich: float, accept: float) -> Action:
    """A mixed policy: meld, lay off or exchange with probability ``rich``, accept an offer with ``accept``."""
    if AcceptOffer() in legal:
        return AcceptOffer() if rng.random() < accept else DeclineOffer()
    plays = [a for a in legal if isinstance(a, Meld | LayOff | ExchangeWild)]
    if plays and rng.random() < rich:
        return rng.choice(plays)
    return rng.choice([a for a in legal if isinstance(a, _QUIET)] or legal)


def _compare_along_a_hand(variant_name: str, seats: int, options: dict[str, str], seed: int, hand_number: int,
                          rich: float, accept: float, steps: int, seen: Counter[str] | None = None) -> int:
    """Play one hand; at each decision the listing equals the reference's for every seat. Returns the longest hand;
    counts the kinds of action listed in ``seen``."""
    variant, state = deal(variant_name, seats, options, seed, hand_number)
    assert isinstance(state, SkarneyState)
    rng = random.Random(seed)
    longest = 0
    for _ in range(steps):
        d = variant.decision(state)
        if d is None:
            break
        assert_listed_as_before(variant, state, seats, lambda st, seat: old.legal_actions(variant, st, seat),
                                f"{variant_name} {options} seed {seed} hand {hand_number} ({d.phase})")
        longest = max(longest, len(state.hands[d.seat]))
        legal = variant.legal_actions(state, d.seat)
        if seen is not None:
            seen.update({type(a).__name__ for a in legal})
            seen["capped"] += len(legal) == 60
        variant.apply(state, d.seat, _pick(rng, legal, rich, accept))
    return longest


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    singles=st.booleans(),
    seats=st.integers(2, 4),
    jokers=st.sampled_from(("on", "off")),
    contract=st.sampled_from(("on", "off")),
    seed=st.integers(0, 10**6),
    hand_number=st.integers(1, 7),
    rich=st.sampled_from((0.02, 0.1, 0.5, 0.9)),
    accept=st.sampled_from((0.3, 0.6, 0.9)),
)
def test_listing_is_the_reference_on_random_play(singles: bool, seats: int, jokers: str, contract: str, seed: int,
                                                 hand_number: int, rich: float, accept: float) -> None:
    name = "skarney-singles" if singles else "skarney"
    _compare_along_a_hand(name, seats if singles else 4, {"jokers": jokers, "contract": contract}, seed, hand_number,
                          rich, accept, steps=160)


@pytest.mark.parametrize(("name", "seats"), [("skarney", 4), ("skarney-singles", 2), ("skarney-singles", 3)])
def test_listing_is_the_reference_on_long_hands(name: str, seats: int) -> None:
    """A hoarding table (offers mostly accepted, melds rare) grows hands past 25 cards (past 50 in singles): the listing's cap, the
    contract search's budget and many lay-off targets all come into play."""
    seen: Counter[str] = Counter()
    longest = max(_compare_along_a_hand(name, seats, {}, seed, hand, 0.02, 1.0, 600, seen)
                  for seed, hand in ((11, 1), (12, 5)))
    assert longest >= 25
    assert seen["capped"] > 0 or seats == 4, seen  # hands so long the listing meets its cap of 60


def test_listing_is_the_reference_on_full_tables() -> None:
    """Melding players fill the table: contracts, new melds, lay-offs and exchanges are all listed and checked."""
    seen: Counter[str] = Counter()
    for seed in range(4):
        _compare_along_a_hand("skarney-singles", 2 + seed % 3, {"jokers": "on"}, seed, 1 + seed, 0.9, 0.7, 300, seen)
        _compare_along_a_hand("skarney", 4, {}, seed, 7 - seed, 0.9, 0.7, 300, seen)
    for kind in ("Meld", "LayOff", "ExchangeWild", "Offer", "EndTurn", "AcceptOffer"):
        assert seen[kind] > 0, seen


def test_every_option_is_covered() -> None:
    """The random states above draw every option the variants document (a new option must be added there)."""
    for name in ("skarney", "skarney-singles"):
        assert {o.name: set(o.choices) for o in find(name).options} == {"jokers": {"on", "off"},
                                                                           "contract": {"on", "off"}}


_DECK = build_deck(packs=2, jokers=4)


_WILDS = (frozenset({Rank.TWO, Rank.JOKER}), frozenset({Rank.TWO}), frozenset({Rank.JOKER}),
          frozenset({Rank.SEVEN, Rank.TWO, Rank.JOKER}), frozenset())


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**9), size=st.integers(0, 70), groups=st.sampled_from((3, 4)),
       jokers=st.booleans(), wilds=st.sampled_from(_WILDS))
def test_contract_search_is_the_reference(seed: int, size: int, groups: int, jokers: bool,
                                          wilds: frozenset[Rank]) -> None:
    """``find_contracts`` (public: bots use it) finds the very contracts of the old search, in its order, whether it
    stops at the sample's size or at its budget, on hands short and very long, with Skarney's wild ranks and
    others (a natural 2, a natural joker, a third wild rank)."""
    deck: list[Card] = [c for c in _DECK if jokers or c != JOKER]
    hand = shuffled(deck, seed)[:size]
    assert find_contracts(hand, groups, wilds) == old.find_contracts(hand, groups, wilds)
    for limit in (1, 5, 40):
        assert find_contracts(hand, groups, wilds, limit) == old.find_contracts(hand, groups, wilds, limit)


def test_decisions_other_than_play_and_offer() -> None:
    """A seat not to act gets nothing; the seat answering an offer gets accept and decline, as before."""
    variant = find("skarney")
    rules = variant.configure({}, 4)
    table = Table(4, 0, 1, default_teams(True, 4), (True,) * 4, (0,) * 4)
    state = variant.new_hand(rules, table, shuffled(variant.deck(rules, 4), 3), "x")
    d = variant.decision(state)
    assert d is not None and d.phase is Phase.PLAY
    offer = next(a for a in variant.legal_actions(state, d.seat) if isinstance(a, Offer))
    variant.apply(state, d.seat, offer)
    d = variant.decision(state)
    assert d is not None and d.phase is Phase.OFFER
    assert variant.legal_actions(state, d.seat) == old.legal_actions(variant, state, d.seat) == [AcceptOffer(),
                                                                                                   DeclineOffer()]
    assert all(variant.legal_actions(state, s) == [] for s in range(4) if s != d.seat)
