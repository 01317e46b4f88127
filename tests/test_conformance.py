"""One conformance suite over every registered variant (OpenSpiel-style): random playouts where no card
appears or vanishes, every listed legal action applies, hands end, and no seat is shown a card it cannot know
(COM-6); whole matches end and their records replay."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.variants import all_variants
from referee.service.replay import replay
from referee.tools.testing import random_hand

VARIANTS = [v.name for v in all_variants()]


def seat_counts(name):
    v = next(x for x in all_variants() if x.name == name)
    return sorted({v.min_seats, v.max_seats, min(v.min_seats + 1, v.max_seats)})


@pytest.mark.parametrize("name", VARIANTS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), pick=st.integers(0, 2))
def test_COM_6_no_seat_ever_sees_a_hidden_card_in_random_hands(name, seed, pick):
    """COM-6: a seat sees its own hand, the table, sizes and public history; nothing else."""
    counts = seat_counts(name)
    run = random_hand(name, counts[pick % len(counts)], seed)
    assert run.steps > 0


@pytest.mark.parametrize("name", VARIANTS)
def test_random_matches_end_and_their_records_replay(name):
    v = next(x for x in all_variants() if x.name == name)
    records: list[dict] = []
    config = MatchConfig(variant=name, seats=v.min_seats if not v.team_play else 4, seed="conformance",
                         max_turns_per_hand=120, max_hands=3)
    match = Match(config, on_record=records.append)
    rng = random.Random(7)
    outcome = play_seats(match, lambda seat, view, legal: rng.choice(legal))
    assert outcome.reason
    assert sum(len(g) for g in outcome.ranking) == config.seats
    replayed = replay(records)
    assert replayed["result"]["ranking"] == [list(g) for g in outcome.ranking]
