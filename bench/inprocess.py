"""The rules core in process: random self-play decisions/s and games/s per variant, beside OpenSpiel's gin_rummy
(C++ through pyspiel) and RLCard's gin-rummy (pure Python), both random self-play, measured in the same run.

A decision is one choice a seat makes from its legal actions: each is listed, a view is built, one is picked at
random and applied (the referee's full in-process path: events and record lines included). OpenSpiel's chance
nodes (the deal) are sampled and not counted; RLCard's ``env.run`` with two ``RandomAgent`` is its canonical loop.
Rates are the best of ``repeat`` runs of ``seconds`` each: the best is the least disturbed on a shared machine.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable

from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.variants import all_variants, find
from referee.rules.variants.base import Action, Drop, SeatView

Rate = tuple[float, float]  # (decisions/s, games/s)


def best_of(measure: Callable[[float], Rate], seconds: float, repeat: int) -> Rate:
    return max((measure(seconds) for _ in range(repeat)), key=lambda r: r[0])


def variant_rate(variant: str, seats: int | None = None, drops: bool = True, turns: int = 200) -> Callable[[float], Rate]:
    """Random self-play of one-hand matches of ``variant``; ``drops=False`` never picks an Indian drop."""
    v = find(variant)
    n = seats if seats is not None else (4 if v.team_play else v.min_seats)

    def measure(seconds: float) -> Rate:
        done = games = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            rng = random.Random(games)

            def choose(seat: int, view: SeatView, legal: list[Action], rng: random.Random = rng) -> Action:
                nonlocal done
                done += 1
                if not drops:
                    legal = [a for a in legal if not isinstance(a, Drop)] or legal
                return rng.choice(legal)

            m = Match(MatchConfig(variant=v.name, seats=n, seed=f"bench{games}", max_turns_per_hand=turns, max_hands=1))
            play_seats(m, choose)
            games += 1
        elapsed = time.perf_counter() - start
        return done / elapsed, games / elapsed

    return measure


def openspiel_rate(seconds: float) -> Rate:
    import pyspiel  # the bench extra: open_spiel

    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(0)
    done = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                done += 1
        games += 1
    elapsed = time.perf_counter() - start
    return done / elapsed, games / elapsed


def rlcard_rate(seconds: float) -> Rate:
    import rlcard  # the bench extra: rlcard
    from rlcard.agents import RandomAgent

    env = rlcard.make("gin-rummy", config={"seed": 0})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)])
    done = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        trajectories, _ = env.run(is_training=False)
        done += sum((len(t) - 1) // 2 for t in trajectories)  # state, action, state, ... per player
        games += 1
    elapsed = time.perf_counter() - start
    return done / elapsed, games / elapsed


def peer(measure: Callable[[float], Rate], seconds: float, repeat: int) -> Rate | None:
    """A peer's rate, or None when its package (the ``bench`` extra) is not installed."""
    try:
        return best_of(measure, seconds, repeat)
    except ImportError:
        return None


def run(seconds: float, repeat: int) -> dict[str, object]:
    variants = {}
    for v in all_variants():
        variants[v.name] = best_of(variant_rate(v.name), seconds, repeat)
    indian_full = best_of(variant_rate("indian", drops=False), seconds, repeat)
    return {
        "variants": variants,
        "indian_no_drops": indian_full,
        "openspiel": peer(openspiel_rate, seconds, repeat),
        "rlcard": peer(rlcard_rate, seconds, repeat),
    }


def plain_rates(seconds: float, repeat: int) -> dict[str, float]:
    """Decisions/s per variant through the plain Python modules (``RUMMY_PURE_PYTHON=1``, in a fresh process): the
    compiled core's speed-up is measured beside it, in the same run."""
    env = dict(os.environ, RUMMY_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-m", "bench.inprocess", str(seconds), str(repeat)], env=env,
                         capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


if __name__ == "__main__":  # python -m bench.inprocess SECONDS REPEAT: decisions/s per variant as JSON
    _seconds, _repeat = float(sys.argv[1]), int(sys.argv[2])
    print(json.dumps({v.name: best_of(variant_rate(v.name), _seconds, _repeat)[0] for v in all_variants()}))
