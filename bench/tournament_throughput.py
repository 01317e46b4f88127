"""Tournament throughput: games per hour of the bundled bots (random, noisy, greedy) on an embedded referee, at
concurrency 1 and 2, with bot processes reused (one per bot, seated in match after match over one stream) and
restarted (a fresh process for every seat of every match).

    python -m bench.tournament_throughput [--variant indian] [--deals 4] [--concurrency 1 2]

Every run plays the same round-robin (the same duplicate deals) into its own temporary output folder; the wall
time of a whole run counts, bot start-up and shut-down included.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

from tournaments.demo import demo_config
from tournaments.runner import run_tournament


def measure(variant: str, deals: int, concurrency: int, per_match: bool, root: Path) -> tuple[int, float]:
    """Games played and the seconds they took."""
    out = root / f"{'per-match' if per_match else 'reused'}-{concurrency}"
    config = dataclasses.replace(demo_config(variant, out, deals, concurrency), process_per_match=per_match)
    t0 = time.monotonic()
    stats = run_tournament(config, handle_signals=False)
    elapsed = time.monotonic() - t0
    if stats.missing:
        raise RuntimeError(f"{stats.missing} games missing ({stats.stop_reason or 'failures'}); see {out}")
    return stats.played, elapsed


def run(variant: str = "indian", deals: int = 4, concurrencies: tuple[int, ...] = (1, 2)) -> dict[str, float]:
    """``games_per_hour_c{N}_{reused|restarted}`` for each concurrency, and the reused/restarted ratios."""
    from referee.service.logs import configure_logging

    configure_logging("warning")
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="tournament-bench-") as tmp:
        for c in concurrencies:
            for per_match in (False, True):
                games, secs = measure(variant, deals, c, per_match, Path(tmp))
                out[f"games_per_hour_c{c}_{'restarted' if per_match else 'reused'}"] = games / secs * 3600
            out[f"reused_over_restarted_c{c}"] = out[f"games_per_hour_c{c}_reused"] / out[f"games_per_hour_c{c}_restarted"]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--variant", default="indian")
    p.add_argument("--deals", type=int, default=4, help="deal seeds per pairing (6 games each: 3 pairings x 2 seats)")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    args = p.parse_args()
    got = run(args.variant, args.deals, tuple(args.concurrency))
    print(f"variant {args.variant}, {args.deals} deals per pairing, {os.cpu_count()} cores")
    for k, v in got.items():
        print(f"{k:<36} {v:>12,.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
