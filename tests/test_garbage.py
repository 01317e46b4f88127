"""Playing makes no cyclic garbage: every object the rules core makes is freed by reference counting, so a
serving referee can run the cyclic collector rarely (``referee.service.server.tune_gc``) without its memory growing.

A self-calling closure in Indian rummy's meld search once made about 113 objects of cyclic garbage per decision;
the collector's full passes over every live match's objects then stopped the referee for up to 70 ms at 100
concurrent matches."""

from __future__ import annotations

import gc
import random

import pytest

from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.variants import all_variants
from referee.rules.variants.base import Action, Drop, SeatView


@pytest.mark.parametrize("variant", [v.name for v in all_variants()])
def test_a_played_match_leaves_no_cyclic_garbage(variant: str) -> None:
    v = next(x for x in all_variants() if x.name == variant)
    seats = 4 if v.team_play else v.min_seats
    decisions = 0
    gc.collect()
    gc.disable()
    try:
        for game in range(3):
            rng = random.Random(game)

            def choose(seat: int, view: SeatView, legal: list[Action], rng: random.Random = rng) -> Action:
                nonlocal decisions
                decisions += 1
                return rng.choice([a for a in legal if not isinstance(a, Drop)] or legal)  # full-length games

            play_seats(Match(MatchConfig(variant=variant, seats=seats, seed=f"garbage{game}", max_turns_per_hand=200,
                                         max_hands=1), on_record=lambda entry: None), choose)
        garbage = gc.collect()
    finally:
        gc.enable()
    assert decisions > 60
    assert garbage == 0, f"{garbage} objects of cyclic garbage in {decisions} decisions"


def test_a_finished_match_on_a_serving_referee_is_freed_without_the_cyclic_collector(tmp_path) -> None:
    """Once the referee forgets a finished match (``--max-finished-kept``), reference counting frees its session,
    match and record writer: nothing of it waits for a collection."""
    import asyncio
    import dataclasses

    from bench.wire import play_matches
    from referee.service.limits import DEFAULT_LIMITS
    from referee.service.server import EmbeddedReferee
    from referee.service.session import MatchSession

    limits = dataclasses.replace(DEFAULT_LIMITS, max_finished_kept=0)
    with EmbeddedReferee(records_dir=tmp_path, limits=limits) as referee:
        gc.collect()
        gc.disable()
        try:
            asyncio.run(play_matches(referee.address, matches=3, concurrency=1, variant="indian", turns=60))
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            sessions = [o for o in gc.garbage if isinstance(o, MatchSession)]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    assert sessions == []
