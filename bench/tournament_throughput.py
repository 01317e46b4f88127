"""Tournament throughput: games per hour with persistent bot processes (one per bot, seated in match after match
over one stream) against starting a fresh process for every seat of every match.

    python bench/tournament_throughput.py [--variant indian] [--deals 20] [--concurrency N]

Both runs play the same round-robin (random, noisy, greedy; the same duplicate deals) on an embedded referee,
each into its own temporary output folder, and print games/hour for each and the ratio.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tournaments.demo import demo_config  # noqa: E402
from tournaments.runner import run_tournament  # noqa: E402


def measure(variant: str, deals: int, concurrency: int, per_match: bool, root: Path) -> tuple[int, float]:
    out = root / ("per-match" if per_match else "persistent")
    config = dataclasses.replace(demo_config(variant, out, deals, concurrency), process_per_match=per_match)
    t0 = time.monotonic()
    stats = run_tournament(config, handle_signals=False)
    elapsed = time.monotonic() - t0  # wall time of the whole run: bot start-up and shut-down included
    if stats.missing:
        raise SystemExit(f"{stats.missing} games missing ({stats.stop_reason or 'failures'}); see {out}")
    return stats.played, elapsed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--variant", default="indian")
    p.add_argument("--deals", type=int, default=20, help="deal seeds per pairing (6 games each: 3 pairings x 2 seats)")
    p.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="tournament-bench-") as tmp:
        root = Path(tmp)
        rows = []
        for per_match in (False, True):
            games, secs = measure(args.variant, args.deals, args.concurrency, per_match, root)
            rows.append((games, secs, games / secs * 3600))
    (g1, s1, r1), (g2, s2, r2) = rows
    print(f"variant {args.variant}, {args.deals} deals per pairing, concurrency {args.concurrency}, {os.cpu_count()} cores")
    print(f"persistent bot processes : {g1} games in {s1:6.1f} s = {r1:9,.0f} games/hour")
    print(f"a process per seat/match : {g2} games in {s2:6.1f} s = {r2:9,.0f} games/hour")
    print(f"ratio persistent / per-match: {r1 / r2:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
