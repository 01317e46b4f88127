"""Fortune's and Arlington's legal-action listing is the old one, action for action and in order (bots and
environments pick from the list by index with seeded generators, so a faster listing must not reorder it), on
random reachable states of both variants, every seat count and option, with random play (long hands, a deep pile)
and melding play (tables full of melds to lay off on, pile takes that meld)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.cards import JOKER, NATURAL_RANKS, SUITS, Card, Rank, Suit
from referee.rules.variants import find
from referee.rules.variants.base import Action, Discard, DrawStock
from referee.rules.variants.oklahoma import OklahomaState, _verdicts_for, read_group
from tests.variants import oklahoma_listing_reference as old
from tests.variants.listing_oracle import assert_listed_as_before, deal

_OPTIONS = {
    "fortune": {"max_set": ("4", "unlimited"), "restock": ("turn-over", "shuffle"),
                "queen_of_spades_discard": ("forbidden", "allowed")},
    "arlington": {"max_set": ("4", "unlimited"), "restock": ("turn-over", "shuffle"), "joker": ("off", "on"),
                  "joker_retrieval": ("melder", "anyone"), "pile_take": ("two-from-hand", "any-meld")},
}
_SEATS = {"fortune": (2, 8), "arlington": (2, 7)}


def _pick(rng: random.Random, legal: list[Action], rich: float) -> Action:
    """Random play, or with probability ``rich`` a play that is neither a draw nor a discard (a pile take, a meld,
    a lay-off, a joker exchange) where one is listed."""
    plays = [a for a in legal if not isinstance(a, DrawStock | Discard)]
    if plays and rng.random() < rich:
        return rng.choice(plays)
    return rng.choice(legal)


def _compare_along_a_hand(name: str, seats: int, options: dict[str, str], seed: int, rich: float, steps: int,
                          seen: Counter[str] | None = None) -> None:
    """Play one hand; at each decision the listing equals the reference's for every seat; counts what was listed."""
    variant, state = deal(name, seats, options, seed)
    assert isinstance(state, OklahomaState)
    rng = random.Random(seed)
    for _ in range(steps):
        d = variant.decision(state)
        if d is None:
            break
        assert_listed_as_before(variant, state, seats, old.legal_actions,
                                f"{name} {options} seed {seed} ({d.phase}, top {state.discards[-1:]})")
        legal = variant.legal_actions(state, d.seat)
        if seen is not None:
            seen.update({type(a).__name__ + (":lay" if getattr(a, "lay_off_on", None) is not None else "")
                         for a in legal})
            seen["melds capped"] += sum(type(a).__name__ == "Meld" for a in legal) == old.MAX_MELDS_LISTED
        variant.apply(state, d.seat, _pick(rng, legal, rich))


@st.composite
def _games(draw: st.DrawFn) -> tuple[str, int, dict[str, str]]:
    name = draw(st.sampled_from(("fortune", "arlington")))
    seats = draw(st.integers(*_SEATS[name]))
    options = {k: draw(st.sampled_from(v)) for k, v in _OPTIONS[name].items()}
    return name, seats, options


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=_games(), seed=st.integers(0, 10**6), rich=st.sampled_from((0.0, 0.3, 0.8, 1.0)))
def test_listing_is_the_reference_on_random_play(game: tuple[str, int, dict[str, str]], seed: int, rich: float) -> None:
    name, seats, options = game
    _compare_along_a_hand(name, seats, options, seed, rich, steps=250)


@pytest.mark.parametrize("name", ["fortune", "arlington"])
def test_listing_is_the_reference_on_full_tables(name: str) -> None:
    """Melding players fill the table and take the pile by melding its top card; random players let hands grow
    long (the cap of 20 melds is met): every kind of action is listed and checked."""
    seen: Counter[str] = Counter()
    for seed in range(6):
        seats = 2 + seed % 4
        opts = {k: v[seed % len(v)] for k, v in _OPTIONS[name].items()}
        if name == "arlington":
            opts["joker"] = "on"
        _compare_along_a_hand(name, seats, opts, seed, 0.9, 300, seen)
        _compare_along_a_hand(name, seats, opts, 100 + seed, 0.3, 300, seen)
        _compare_along_a_hand(name, seats, {}, 200 + seed, 0.0, 400, seen)
    kinds = ["DrawStock", "TakeDiscards", "Meld", "LayOff", "Discard", "melds capped"]
    if name == "arlington":
        kinds += ["ExchangeWild", "TakeDiscards:lay"]
    for kind in kinds:
        assert seen[kind] > 0, seen


def test_every_option_is_covered() -> None:
    """The random states above draw every option the variants document (a new option must be added there)."""
    for name, opts in _OPTIONS.items():
        assert {o.name: set(o.choices) for o in find(name).options} == {k: set(v) for k, v in opts.items()}
        variant = find(name)
        assert (variant.min_seats, variant.max_seats) == _SEATS[name]


_RULES = [find("fortune").configure({"max_set": m}, 4) for m in ("4", "unlimited")] + [
    find("arlington").configure({"max_set": m, "joker": j}, 4) for m in ("4", "unlimited") for j in ("off", "on")]
_WILD_CARDS = [Card(Rank.TWO, s) for s in SUITS] + [JOKER]


@st.composite
def _groups(draw: st.DrawFn) -> list[Card]:
    """Groups shaped like melds (one rank's cards, a suit's run with gaps) with wilds, and random cards."""
    mode = draw(st.sampled_from(("set", "run", "random", "wilds")))
    if mode == "set":
        rank = draw(st.sampled_from(NATURAL_RANKS))
        cards = [Card(rank, draw(st.sampled_from(SUITS))) for _ in range(draw(st.integers(1, 5)))]
    elif mode == "run":
        suit = draw(st.sampled_from((Suit.SPADES, Suit.SPADES, Suit.HEARTS)))
        low = draw(st.integers(1, 13))
        ranks = [NATURAL_RANKS[(low - 1 + i) % 13] for i in range(draw(st.integers(1, 6)))]
        cards = [Card(r, suit) for r in ranks if draw(st.booleans()) or r is Rank.QUEEN]
    elif mode == "random":
        cards = draw(st.lists(st.sampled_from(_DECK), min_size=1, max_size=6))
    else:
        cards = []
    cards += draw(st.lists(st.sampled_from(_WILD_CARDS), max_size=4))
    return draw(st.permutations(cards))


_DECK = [Card(r, s) for r in NATURAL_RANKS for s in SUITS]


@settings(max_examples=3000, deadline=None)
@given(cards=_groups())
def test_group_verdict_on_codes_is_the_reference(cards: list[Card]) -> None:
    """Whether a group reads as a new meld, decided on card codes, is the old ``group_reads`` for every rules record
    (sets of 4 or unlimited, deuce-only sets and ARL-3 in Arlington, with or without the joker)."""
    for rules in _RULES:
        if JOKER in cards and not rules.joker:
            continue
        assert _verdicts_for(rules).group_reads(tuple(cards)) == old.group_reads(rules, cards), (rules.variant, cards)


@settings(max_examples=1500, deadline=None)
@given(cards=_groups())
def test_one_card_lay_offs_are_the_reference(cards: list[Card]) -> None:
    """Which single cards lay off on a meld (sets, runs, deuce sets; with the set limit and ARL-3) is the old
    ``_may_fit`` and ``group_extends``, for every card and every rules record."""
    for rules in _RULES:
        if (JOKER in cards and not rules.joker) or not old.group_reads(rules, cards):
            continue
        reading = read_group(rules, cards)
        verdicts = _verdicts_for(rules)
        for card in _EVERY:
            want = old._may_fit(reading, card, rules.wilds) and old.group_extends(rules, reading, (card,))
            assert verdicts.lays_off(reading, card) == want, (rules.variant, reading.describe(), card)


_EVERY = [*_DECK, JOKER]
