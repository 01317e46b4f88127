"""A game's copies (what OpenSpiel's clone and a search take) play on apart from their original, plain or compiled."""

from __future__ import annotations

import copy
import pickle
import random

import pytest

from rummy_env.game import RummyGame
from tests.envs.helpers import VARIANTS, reach, seat_counts


def _seen(g: RummyGame) -> list[object]:
    return [(g.view(s), g.known_cards(s), g.events(s)) for s in range(g.num_players)]


def _play(g: RummyGame, rng: random.Random, steps: int) -> list[int]:
    taken = []
    for _ in range(steps):
        if g.over:
            break
        i = rng.choice(g.legal_ids())
        g.step(i)
        taken.append(i)
    return taken


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_copy_plays_on_without_touching_its_original(variant: str) -> None:
    g = reach(variant, seat_counts(variant)[0], seed=3, steps=30)
    assert not g.over
    _seen(g)  # the knowledge trackers exist and are fed: the copy must carry its own
    before = _seen(g)
    log = len(g.match.log)
    clone = copy.deepcopy(g)
    assert clone.match is not g.match and clone.match.state is not g.match.state
    taken = _play(clone, random.Random(7), 60)
    assert taken and _seen(g) == before and len(g.match.log) == log
    for i in taken:  # the original, played the same way, reaches the same place
        g.step(i)
    assert _seen(g) == _seen(clone)
    assert g.match.game.totals == clone.match.game.totals


def test_a_pickled_game_is_played_again_to_the_same_place() -> None:
    g = reach("fortune", 3, seed=5, steps=40)
    back = pickle.loads(pickle.dumps(g))
    assert _seen(back) == _seen(g)
