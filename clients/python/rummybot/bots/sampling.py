"""A searching bot for Indian rummy and 500 Rum: perfect-information Monte Carlo over the referee's samples.

At a decision worth thinking about (what to draw, what to discard), it asks the referee for ``--samples`` deals
consistent with what its seat has seen, and for each candidate action and each deal has the referee play the
action and then ``--depth`` more decisions by the greedy bot (every seat), scoring the hand as it then stands
(the final points if it ended), as its margin over the other seats. The candidates are the greedy bot's choice
and the few next best by the greedy bot's own measures; every deal is shared by all candidates (common random
numbers), and it leaves the greedy choice only for a candidate whose paired margin is ahead by more than ``--z``
standard errors. In Indian rummy games of several deals (IND-13 deals-N, pools) a drop is a candidate too: 20 or
40 can beat a hopeless hand's count. Other decisions, and other variants, are the greedy bot's. It keeps to ``--budget`` seconds a decision (and to a third of the time it has left).

    python -m rummybot.bots.sampling --referee HOST:PORT --bot-token T [--samples 8 --depth 10 --budget 1.5]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Sequence

from referee.rules.policies import five_hundred as fh
from referee.rules.policies import greedy_policy
from referee.rules.policies import indian as ind
from referee.rules.variants.base import Action, Declare, Discard, DrawStock, Drop, Meld, SeatView, TakeDiscards
from rummybot.sdk import Bot, Request, main, parse_args
from rummybot.search import SearchClient

__all__ = ["SamplingBot", "candidates"]

LOWER_IS_BETTER = {"indian": True, "500-rum": False}
MAX_CANDIDATES = 6
INDIAN_DISCARDS = 4  # the greedy discard and the next three by keep value (see candidates)


def candidates(view: SeatView, legal: Sequence[Action], chosen: Action) -> list[Action]:
    """The actions worth a search, the greedy choice first; a single one means "just play it"."""
    variant = view.variant
    if variant == "indian":
        if any(isinstance(a, Declare) for a in legal):
            return [next(a for a in legal if isinstance(a, Declare))]
        # a drop costs 20 or 40 (IND-10), better than a hopeless hand's count of up to 80, where counts add up
        # over deals; in a one-deal game (format = points) it is a sure loss
        several = dict(view.notes).get("format", "points") != "points"
        draws = [a for a in legal if isinstance(a, (DrawStock, TakeDiscards)) or (several and isinstance(a, Drop))]
        if draws:
            return _first([chosen, *draws])
        wilds = frozenset(view.wild_ranks)
        values = ind.keep_values(view.hand, wilds)
        discards = sorted((a for a in legal if isinstance(a, Discard)), key=lambda a: (values[a.card], a.card))
        return _first([chosen, *discards], INDIAN_DISCARDS)
    if variant == "500-rum":
        if isinstance(chosen, Meld) or not isinstance(chosen, (Discard, DrawStock, TakeDiscards)):
            return [chosen]  # lay down what it can: melds score, and the greedy bot lays off the same way
        rules = fh.rules_of(view)
        if isinstance(chosen, Discard) or not any(isinstance(a, TakeDiscards) for a in legal):
            hand = list(view.hand)
            discards = [a for a in legal if isinstance(a, Discard)]
            discards.sort(key=lambda a: (a.card.rank in rules.wilds, fh._promise(a.card, [c for c in hand if c != a.card]),
                                         -fh.in_hand_value(a.card, rules)))
            return _first([chosen, *discards])
        now, _ = fh.meldable(view.hand, view.melds, rules)
        takes = sorted((a for a in legal if isinstance(a, TakeDiscards)),
                       key=lambda a: -fh._take_gain(view, a, rules, now))
        return _first([chosen, *[a for a in legal if isinstance(a, DrawStock)], *takes])
    return [chosen]


def _pick(values: Sequence[Sequence[float]], z: float) -> int:
    """The candidate whose margin beats the first's (the greedy choice) by most, counting only what the deals
    show beyond ``z`` standard errors of the paired differences; the first if none does."""
    best, best_gain = 0, 0.0
    for i in range(1, len(values)):
        diffs = [a - b for a, b in zip(values[i], values[0], strict=True)]
        if not diffs or any(math.isinf(d) or math.isnan(d) for d in diffs):
            continue
        mean = sum(diffs) / len(diffs)
        spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1) / len(diffs))
        if mean - z * spread > best_gain:
            best, best_gain = i, mean - z * spread
    return best


def _first(actions: Sequence[Action], most: int = MAX_CANDIDATES) -> list[Action]:
    out: list[Action] = []
    for a in actions:
        if a not in out:
            out.append(a)
        if len(out) >= most:
            break
    return out


class SamplingBot(Bot):
    """PIMC over ``samples`` referee samples with greedy rollouts of ``depth`` decisions."""

    def __init__(self, samples: int = 8, depth: int = 10, budget_s: float = 1.5, seed: int | None = None,
                 z: float = 0.5) -> None:
        self.name = "sampling"
        self.samples = samples
        self.depth = depth
        self.z = z
        self.budget_s = budget_s
        self.rng = random.Random(seed)
        self.search: SearchClient | None = None
        self.searched = 0  # decisions searched (for tests and logs)

    def connect(self, referee: str, token: str) -> None:
        self.search = SearchClient(referee, token=token)

    def decide(self, view: SeatView, legal: Sequence[Action], request: Request) -> Action:
        greedy = greedy_policy(view.variant)(view, legal, self.rng)
        if self.search is None or view.variant not in LOWER_IS_BETTER or len(legal) < 2:
            return greedy
        cands = candidates(view, legal, greedy)
        if len(cands) < 2:
            return cands[0]
        started = time.monotonic()
        budget = min(self.budget_s, request.time_left_ms / 3000) if request.time_left_ms else self.budget_s
        lower = LOWER_IS_BETTER[view.variant]
        me = view.seat
        values: list[list[float]] = [[] for _ in cands]  # per candidate, per deal: our margin over the others
        seed = f"{request.match_id}:{request.request_id}:{self.rng.random()}"
        deals = self.search.sample_deals(request.match_id, self.samples, seed)
        for k, sample in enumerate(deals):
            if k and time.monotonic() - started > budget:
                break
            row = []
            for action in cands:
                sim = self.search.simulate(sample.token, [action], rollout="greedy", max_decisions=self.depth,
                                           seed=f"{seed}:{k}", evaluate=True)
                if sim.rejected is not None:  # not legal in this deal after all: never chosen
                    row.append(float("-inf"))
                    continue
                points = sim.points
                others = sum(p for s, p in enumerate(points) if s != me) / (len(points) - 1)
                row.append(others - points[me] if lower else points[me] - others)
            for i, v in enumerate(row):
                values[i].append(v)
        self.searched += 1
        return cands[_pick(values, self.z)]


def run(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--samples", type=int, default=8)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--budget", type=float, default=1.5)
    p.add_argument("--z", type=float, default=0.5)
    own, rest = p.parse_known_args(argv)
    args = parse_args(rest, description="a sampling (PIMC) bot")
    bot = SamplingBot(own.samples, own.depth, own.budget, args.seed, own.z)
    token = args.token if args.match else args.bot_token
    if token:
        bot.connect(args.referee, token)
    main(bot, rest)


if __name__ == "__main__":
    run()
