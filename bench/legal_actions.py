"""Microseconds per ``legal_actions`` call, per variant: the rules core's legal-action listing (the meld finder,
lay-offs, takes), the cost every environment step, bot and search rollout pays.

    python -m bench.legal_actions                 # every variant at its default seats, compiled if fresh
    python -m bench.legal_actions --games 20 --json out.json
    python -m bench.legal_actions --variant skarney-singles --policy taker --turns 400   # an environment's hands

It plays seeded games (a policy that melds when it can, so the table fills with melds to lay off on, a uniform
random one, and a "taker" that rarely melds and so holds long hands, as an environment's random agent does) and times
the first ``legal_actions`` call at each decision in CPU time (the box is shared); the decisions and their order are
fixed by the seeds, so two runs (before and after a change) time the very same states. A few games of other seeds
are played first, untimed, so the finder's memories are as warm as in a long training run. Each figure is the
least of ``--repeat`` runs, each in a fresh process (so each starts with the same empty memories): on a shared box
the least is the run least disturbed. Which core ran (compiled or plain) is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from typing import Any

from referee.rules import native
from referee.rules.match import Match, MatchConfig
from referee.rules.variants import all_variants
from referee.rules.variants.base import Action, Discard, DrawStock, Drop, ExchangeWild, LayOff, Meld


def _choose(legal: list[Action], rng: random.Random, policy: str) -> Action:
    """``uniform``: any action; ``melder``: meld or lay off four times in five when possible, else any action but
    dropping out; ``taker``: meld, lay off or exchange one time in twenty, else draw, discard, offer, accept or
    decline at random. ``taker``'s hands grow long (in Skarney it accepts every other offer and rarely melds), as an
    environment's random agent's do: it picks among action ids, and a meld takes several right ones."""
    if policy == "uniform":
        return rng.choice(legal)
    if policy == "taker":
        rich = [a for a in legal if isinstance(a, Meld | LayOff | ExchangeWild)]
        plain = [a for a in legal if not isinstance(a, Meld | LayOff | ExchangeWild | Drop)] or legal
        return rng.choice(rich) if rich and rng.random() < 0.05 else rng.choice(plain)
    rich = [a for a in legal if not isinstance(a, DrawStock | Discard | Drop)]
    legal = [a for a in legal if not isinstance(a, Drop)] or legal
    if rich and rng.random() < 0.8:
        return rng.choice(rich)
    return rng.choice(legal)


POLICIES = ("melder", "uniform", "taker")


def measure(variant: str, seats: int, games: int, policy: str, turns: int = 150, warm: int = 3) -> dict[str, Any]:
    """Time ``legal_actions`` at every decision of ``games`` seeded games; microseconds per call."""
    spent = 0.0
    calls = 0
    actions = 0
    for seed in range(-warm, games):
        m = Match(MatchConfig(variant=variant, seats=seats, seed=f"la{seed}", max_turns_per_hand=turns, max_hands=2))
        rng = random.Random(seed)
        for _ in range(20_000):
            d = m.pending()
            if d is None:
                break
            t0 = time.process_time()
            legal = m.legal_actions(d.seat)
            if seed >= 0:
                spent += time.process_time() - t0
                calls += 1
                actions += len(legal)
            m.submit(d.seat, _choose(legal, rng, policy))
    return {"us_per_call": round(spent / max(calls, 1) * 1e6, 1), "calls": calls,
            "actions_per_call": round(actions / max(calls, 1), 1)}


def least_of(variant: str, seats: int, games: int, policy: str, repeat: int, turns: int = 150,
             warm: int = 3) -> dict[str, Any]:
    """``measure`` in ``repeat`` fresh processes; the run with the fewest microseconds a call."""
    runs = []
    for _ in range(repeat):
        cmd = [sys.executable, "-m", "bench.legal_actions", "--one", variant, str(seats), str(games), policy, str(turns), str(warm)]
        runs.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout))
    return min(runs, key=lambda r: float(r["us_per_call"]))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--games", type=int, default=12, help="seeded games per variant")
    p.add_argument("--variant", action="append", help="only these variants (repeatable)")
    p.add_argument("--repeat", type=int, default=3, help="fresh processes per figure; the least is kept")
    p.add_argument("--policy", action="append", choices=POLICIES, help="only these policies (repeatable)")
    p.add_argument("--seats", type=int, help="this seat count (default: the variant's least, 4 with partners)")
    p.add_argument("--turns", type=int, default=150, help="turns per hand before the hand is stopped (environments: 400)")
    p.add_argument("--warm", type=int, default=3, help="untimed games first (more: memories as warm as a long run's)")
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--one", nargs=6, metavar=("VARIANT", "SEATS", "GAMES", "POLICY", "TURNS", "WARM"),
                   help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:  # one run, in this process, as JSON (what ``least_of`` runs)
        variant, seats, games, policy, turns, warm = args.one
        print(json.dumps(measure(variant, int(seats), int(games), policy, int(turns), int(warm))))
        return 0
    from referee.rules import melds

    core = "compiled" if native.compiled(melds) else "plain Python"
    print(f"rules core: {core}")
    out: dict[str, Any] = {"core": core, "variants": {}}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for v in all_variants():
        if args.variant and v.name not in args.variant:
            continue
        seats = args.seats or (v.min_seats if not v.team_play else max(v.min_seats, 4))
        if not v.min_seats <= seats <= v.max_seats:
            continue
        rows = {policy: least_of(v.name, seats, args.games, policy, args.repeat, args.turns, args.warm)
                for policy in args.policy or POLICIES}
        out["variants"][v.name] = {"seats": seats, "turns": args.turns, "warm": args.warm, **rows}
        print(f"{v.name:<18} seats {seats}  " + "  ".join(
            f"{policy} {row['us_per_call']:>7.1f} us/call ({row['calls']} calls, {row['actions_per_call']} actions)"
            for policy, row in rows.items()))
    out["load_after"] = list(os.getloadavg())
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
