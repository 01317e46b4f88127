"""The incremental knowledge tracker answers what ``know`` answers, at every decision of random hands."""

from __future__ import annotations

import dataclasses
import random

import pytest

from referee.rules.match import Match, MatchConfig
from referee.rules.variants import all_variants
from referee.rules.variants.base import Drop, Event
from referee.search import KnowledgeTracker, NotSearchable, know, seat_record
from referee.search.errors import KnowledgeMismatch

SEATINGS = [(v.name, n) for v in all_variants() for n in sorted({v.min_seats, v.max_seats})]


def _reading(f, record):  # noqa: ANN001, ANN202 - a knowledge or the reason code it failed with
    try:
        return f(record)
    except (KnowledgeMismatch, NotSearchable) as exc:
        return exc.code


@pytest.mark.parametrize(("variant", "seats"), SEATINGS)
def test_the_tracker_fed_event_by_event_knows_what_a_whole_reading_knows(variant: str, seats: int) -> None:
    rng = random.Random(f"{variant}{seats}")
    m = Match(MatchConfig(variant=variant, seats=seats, seed=f"tracker:{variant}", max_hands=2, max_turns_per_hand=120))
    trackers = [KnowledgeTracker() for _ in range(seats)]
    quick = [KnowledgeTracker() for _ in range(seats)]  # asked only for the known cards
    hand = 0
    decisions = 0
    while (d := m.pending()) is not None and decisions < 260:
        if m.game.hands_played != hand:  # a new hand: a tracker reads one hand
            hand = m.game.hands_played
            trackers = [KnowledgeTracker() for _ in range(seats)]
            quick = [KnowledgeTracker() for _ in range(seats)]
        for s in range(seats):
            record = seat_record(m, s)
            whole = _reading(know, record)
            assert _reading(trackers[s].update, record) == whole
            if not isinstance(whole, str):
                assert quick[s].known(record) == [dict(+c) for c in whole.known]
        legal = m.legal_actions(d.seat)
        m.submit(d.seat, rng.choice([a for a in legal if not isinstance(a, Drop)] or legal))
        decisions += 1
    assert decisions > 20


def test_a_record_of_another_hand_or_seat_is_refused() -> None:
    m = Match(MatchConfig(variant="fortune", seats=2, seed="refuse", max_hands=1))
    rng = random.Random(0)
    t = KnowledgeTracker()
    for _ in range(6):
        d = m.pending()
        assert d is not None
        t.update(seat_record(m, 0))
        m.submit(d.seat, rng.choice(m.legal_actions(d.seat)))
    with pytest.raises(NotSearchable) as seat:
        t.update(seat_record(m, 1))
    assert seat.value.code == "NOT_EXTENDED"
    other = Match(MatchConfig(variant="fortune", seats=2, seed="another deal", max_hands=1))
    with pytest.raises(NotSearchable) as hand:
        t.update(seat_record(other, 0))
    assert hand.value.code == "NOT_EXTENDED"


def test_a_tracker_that_failed_reads_the_next_record_afresh() -> None:
    """A reading that fails part way (here a record from a hand that is over) leaves nothing half read behind."""
    m = Match(MatchConfig(variant="fortune", seats=2, seed="afresh", max_hands=1))
    rng = random.Random(2)
    t = KnowledgeTracker()
    for _ in range(8):
        d = m.pending()
        assert d is not None
        t.update(seat_record(m, 0))
        m.submit(d.seat, rng.choice(m.legal_actions(d.seat)))
    good = seat_record(m, 0)
    taken = Event("ACCEPTED", seat=1, cards=(good.view.hand[0],))  # read (seat 1 holds it), then the reading fails
    over = dataclasses.replace(good, events=(*good.events, taken, Event("HAND_ENDED")))
    with pytest.raises(NotSearchable) as ended:
        t.update(over)
    assert ended.value.code == "NO_HAND"
    assert t.known(good) == [dict(+c) for c in know(good).known]
    assert t.update(good) == know(good)
