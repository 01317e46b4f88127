"""Leak test: an observation never depends on a card its seat cannot see.

The search service deals the hidden cards afresh, consistently with what a seat was shown (other hands, the stock,
face-down cards); put in the game's place, the seat's tensor, strings and mask must not change."""

from __future__ import annotations

import random

import numpy as np
import pytest

from referee.search import sample_states, seat_record
from rummy_env.observation import information_state_string, observation_string, observation_tensor
from tests.envs.helpers import SEATINGS, reach


def _seen(g, seat):  # type: ignore[no-untyped-def]
    view = g.view(seat)
    known = g.known_cards(seat)
    prefix = g.chooser().prefix if g.current_seat == seat else []
    mask = g.mask() if g.current_seat == seat else None
    return (observation_tensor(view, known, prefix), observation_string(view, known, prefix),
            information_state_string(view, known, prefix, g.events(seat)), mask)


def _hidden(state, seat):  # type: ignore[no-untyped-def]
    return ([sorted(h) for s, h in enumerate(state.hands) if s != seat], list(state.stock),
            [c for c, who in state.face_down if seat not in who])


@pytest.mark.parametrize(("variant", "seats"), SEATINGS[::2] + SEATINGS[1::7])
def test_changing_hidden_cards_keeps_the_observation(variant: str, seats: int) -> None:
    rng = random.Random(f"{variant}:{seats}")
    changed = 0
    for trial in range(2):
        seed, steps = rng.randrange(10_000), rng.randrange(5, 120)
        g = reach(variant, seats, seed=seed, steps=steps, max_hands=1)
        while g.over:  # a short hand (Iceberg's): fewer steps
            steps //= 2
            g = reach(variant, seats, seed=seed, steps=steps, max_hands=1)
        to_act = g.current_seat
        for seat in {to_act, (to_act + 1) % seats}:
            # half-way through a compound move too, where the tensor shows the picked cards
            if seat == to_act and trial == 1 and len(g.legal_ids()) > 0:
                ids = g.legal_ids()
                first = ids[-1]
                g.step(first)
                if g.over or g.current_seat != seat:
                    break
            before = _seen(g, seat)
            truth = g.match.state
            try:
                for sample, _deal in sample_states(seat_record(g.match, seat), 2, seed=f"leak:{trial}"):
                    g.match.state = sample.state
                    taken = list(g.chooser().prefix)
                    g._chooser = None  # noqa: SLF001 - the legal actions listed anew from the sample, the steps kept
                    for i in taken:
                        g.chooser().step(i)
                    after = _seen(g, seat)
                    np.testing.assert_array_equal(before[0], after[0])
                    assert before[1] == after[1] and before[2] == after[2]
                    if before[3] is not None:
                        np.testing.assert_array_equal(before[3], after[3])
                    changed += _hidden(sample.state, seat) != _hidden(truth, seat)
            finally:
                g.match.state = truth
                g._chooser = None  # noqa: SLF001
    assert changed, "no sample changed a hidden card: the test tested nothing"
