"""The meld finder's quick test of a group (``melds._valid``, on card codes) answers exactly what reading the group
does (``bool(melds.readings(...))``, which builds every reading): for the rules of every variant and for random
combinations of every ``MeldRules`` field, with every kind of wild set, on groups drawn to hit the corners (aces
low and high, printed jokers wild or not, wilds of the run's own suit, twins from two packs, wild-only groups)."""

from __future__ import annotations

import random

import pytest

from referee.rules import melds
from referee.rules.cards import JOKER, NATURAL_RANKS, SUITS, Card, Rank, build_deck
from referee.rules.errors import InvalidAction
from referee.rules.melds import MeldRules, WildOnly, readings
from referee.rules.variants import iceberg, indian, oklahoma, skarney

VARIANT_RULES: dict[str, MeldRules] = {
    "indian": indian.MELD_RULES,
    "iceberg": iceberg.ICEBERG_MELDS,
    "skarney": skarney.SKARNEY_MELDS,
    "fortune": oklahoma.FORTUNE.meld_rules,
    "fortune-unlimited": oklahoma.OklahomaRules("fortune", hand=11, target=500, max_set=None).meld_rules,
    "arlington": oklahoma.ARLINGTON.meld_rules,
    "500": MeldRules(max_set=4),
    "persian-high": MeldRules(max_set=4, ace_low=False),
}
WILD_SETS: list[frozenset[Rank]] = [
    frozenset(), frozenset({Rank.JOKER}), frozenset({Rank.TWO}), frozenset({Rank.TWO, Rank.JOKER}),
    frozenset({Rank.SEVEN, Rank.JOKER}), frozenset({Rank.ACE}), frozenset({Rank.KING, Rank.JOKER}),
]


def random_rules(rng: random.Random) -> MeldRules:
    return MeldRules(
        sets=rng.random() < 0.85, runs=rng.random() < 0.85, min_set=rng.choice((2, 3)),
        max_set=rng.choice((None, 4, 5)), set_distinct_suits=rng.random() < 0.4, min_run=rng.choice((3, 4)),
        ace_low=rng.random() < 0.7, ace_high=rng.random() < 0.7, aces_meld=rng.random() < 0.85,
        max_wilds=rng.choice((None, None, 0, 1, 2)), wild_only=rng.choice(list(WildOnly)),
        min_wild_only=rng.choice((2, 3)), wilds_as_natural=rng.random() < 0.6,
    )


def groups(rng: random.Random, wilds: frozenset[Rank], count: int) -> list[list[Card]]:
    """Groups from the whole two-pack deck, from one suit and its neighbours in rank, and from one rank, always
    with the wilds and jokers at hand."""
    deck = build_deck(2, 4)
    wild_cards = [c for c in deck if c.rank in wilds] + [JOKER] * 2
    out = []
    for _ in range(count):
        kind = rng.random()
        size = rng.choice((1, 2, 3, 3, 3, 4, 4, 5, 6, 7, 9, 13, 14))
        if kind < 0.2:
            pool = deck
        elif kind < 0.6:
            suit = rng.choice(SUITS)
            low = rng.randint(1, 13)
            pool = [Card(r, suit) for r in NATURAL_RANKS if abs(int(r) - low) <= size or r is Rank.ACE] * 2
            pool += wild_cards + [Card(r, rng.choice(SUITS)) for r in NATURAL_RANKS if abs(int(r) - low) <= 1]
        elif kind < 0.85:
            rank = rng.choice(NATURAL_RANKS + (Rank.JOKER,))
            pool = [c for c in deck if c.rank == rank] + wild_cards + rng.sample(deck, 3)
        else:
            pool = wild_cards * 2 + rng.sample(deck, 4)
        out.append(rng.sample(pool, min(size, len(pool))))
    return out


def check(rules: MeldRules, wilds: frozenset[Rank], rng: random.Random, count: int) -> None:
    bits = melds._rank_bits(wilds)
    for cards in groups(rng, wilds, count):
        for order in (sorted(cards), cards):
            codes = tuple(melds._code(c) for c in order)
            want = bool(readings(order, rules, wilds))
            assert melds._valid(codes, rules, bits) == want, (order, rules, sorted(wilds))


@pytest.mark.parametrize("name", sorted(VARIANT_RULES))
def test_the_quick_test_agrees_with_reading_under_each_variants_rules(name: str) -> None:
    rng = random.Random(name)
    for wilds in WILD_SETS:
        check(VARIANT_RULES[name], wilds, rng, 400)


@pytest.mark.parametrize("seed", range(8))
def test_the_quick_test_agrees_with_reading_under_any_rules(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(6):
        rules = random_rules(rng)
        for wilds in rng.sample(WILD_SETS, 3):
            check(rules, wilds, rng, 150)


def test_the_finder_keeps_exactly_the_candidates_that_read() -> None:
    """Every group the finder lists reads as a meld, and its memory of verdicts is the readings' verdicts."""
    rng = random.Random(5)
    deck = build_deck(2, 4)
    for name, rules in VARIANT_RULES.items():
        for wilds in WILD_SETS:
            for _ in range(15):
                hand = rng.sample(deck, rng.choice((7, 11, 14)))
                for g in melds.find_melds(hand, rules, wilds):
                    assert readings(g, rules, wilds), (name, g)
            memory = melds._memories[rules, wilds]
            for codes, ok in list(memory.valid.items())[:300]:
                assert ok == bool(readings([melds._CARD_OF[c] for c in codes], rules, wilds)), (name, codes)


@pytest.mark.parametrize("name", sorted(VARIANT_RULES))
def test_extension_is_what_extend_meld_answers_or_none_where_it_refuses(name: str) -> None:
    """``melds.extension`` (lay-offs tested while actions are listed) against ``extend_meld`` itself."""
    rules = VARIANT_RULES[name]
    rng = random.Random(f"extension {name}")
    deck = build_deck(2, 4)
    fitted = refused = 0
    for wilds in WILD_SETS:
        table = [g for _ in range(40) for g in melds.find_melds(rng.sample(deck, 12), rules, wilds)[:3]]
        for group in table:
            meld = readings(group, rules, wilds)[0]
            for _ in range(6):
                cards = rng.sample(deck, rng.choice((1, 1, 2)))
                try:
                    want = melds.extend_meld(meld, cards, rules, wilds)
                except InvalidAction:
                    # a wild standing for a printed joker (no variant has one) cannot be spelled in the refusal's
                    # description, ``_stands``: a fault of the message alone, found by this test
                    assert melds.extension(meld, cards, rules, wilds) is None
                    continue
                except melds.IllegalAction as exc:
                    assert exc.code == "CANNOT_LAY_OFF"
                    assert melds.extension(meld, cards, rules, wilds) is None
                    refused += 1
                else:
                    assert melds.extension(meld, cards, rules, wilds) == want
                    fitted += 1
    assert fitted and refused


@pytest.mark.parametrize("base", ["fortune", "arlington", "arlington-joker"])
def test_oklahoma_verdicts_are_read_group_and_extend_group_without_the_refusals(base: str) -> None:
    """``group_reads`` / ``group_extends`` (what Fortune and Arlington list with) say yes exactly where
    ``read_group`` / ``extend_group`` take the cards, for groups the finder offers and random groups."""
    from dataclasses import replace

    rules = {"fortune": oklahoma.FORTUNE, "arlington": oklahoma.ARLINGTON,
             "arlington-joker": replace(oklahoma.ARLINGTON, joker=True)}[base]
    rng = random.Random(base)
    deck = build_deck(2, 1)
    said = {True: 0, False: 0}
    for _ in range(150):
        hand = rng.sample(deck, rng.choice((8, 11, 13)))
        for cards in melds.find_melds(hand, rules.meld_rules, rules.wilds)[:8] + [rng.sample(hand, 3)]:
            try:
                oklahoma.read_group(rules, cards)
                want = True
            except (melds.IllegalAction, InvalidAction):
                want = False
            assert oklahoma.group_reads(rules, cards) == want, cards
            said[want] += 1
            if not want:
                continue
            meld = oklahoma.read_group(rules, cards)
            for card in rng.sample(deck, 6):
                try:
                    oklahoma.extend_group(rules, meld, (card,))
                    fits = True
                except (melds.IllegalAction, InvalidAction):
                    fits = False
                assert oklahoma.group_extends(rules, meld, (card,)) == fits, (meld.describe(), card)
    assert said[True] and said[False]
