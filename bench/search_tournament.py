"""The sampling bot against the greedy bot: a tournament per variant, Elo with 95% error bars.

    python bench/search_tournament.py [--variants indian 500-rum] [--deals 60] [--samples 8 --depth 10]

Each variant plays a round-robin of the two bots over ``--deals`` duplicate deals (each deal once per seat
order) with real bot processes on an embedded referee, then rates them. The sampling bot asks the referee's
Search service for its samples and simulations over gRPC, as any bot would. Prints each table and whether the
sampling bot's rating is above the greedy bot's with error bars apart; exits 1 if not, for any variant.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tournaments.config import parse_config  # noqa: E402
from tournaments.report import load_ratings  # noqa: E402
from tournaments.runner import run_tournament  # noqa: E402

PY = sys.executable


def config(variant: str, out: Path, deals: int, samples: int, depth: int, budget: float, concurrency: int,
           max_hands: int, options: dict[str, str] | None = None, z: float = 0.5) -> Any:
    sampling = [PY, "-m", "rummybot.bots.sampling", "--samples", str(samples), "--depth", str(depth), "--budget", str(budget),
                "--z", str(z)]
    tournament: dict[str, Any] = {
        "variant": variant, "options": options or {}, "games_per_pairing": deals, "schedule": "round-robin",
        "seed": "search-bench", "concurrency": concurrency, "output": str(out),
        "time_control": {"per_move_ms": 30000, "grace_ms": 2000, "connect_ms": 20000}}
    if max_hands:
        tournament["max_hands"] = max_hands
    return parse_config({
        "tournament": tournament,
        "bots": [{"name": "sampling", "command": sampling}, {"name": "greedy", "command": [PY, "-m", "rummybot.bots.greedy"]}],
    }, base_dir=out.parent)


def play(variant: str, out: Path, deals: int, samples: int, depth: int, budget: float, concurrency: int,
         max_hands: int, options: dict[str, str] | None = None, z: float = 0.5) -> dict[str, Any]:
    """Run one variant's tournament into ``out``; the two bots' ratings, errors and the games played."""
    t0 = time.monotonic()
    stats = run_tournament(config(variant, out, deals, samples, depth, budget, concurrency, max_hands, options, z),
                           handle_signals=False)
    table, _ = load_ratings(out)
    s, g = table.bot("sampling"), table.bot("greedy")
    return {"variant": variant, "games": stats.played, "seconds": time.monotonic() - t0, "sampling": (s.elo, s.error),
            "greedy": (g.elo, g.error), "score": s.score, "apart": s.elo - s.error > g.elo + g.error}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--variants", nargs="+", default=["indian", "500-rum"])
    p.add_argument("--deals", type=int, default=60, help="deal seeds per variant (each played twice, seats swapped)")
    p.add_argument("--samples", type=int, default=8)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--budget", type=float, default=1.5, help="seconds a decision, at most")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--z", type=float, default=0.5, help="standard errors a search must be ahead by to leave the greedy choice")
    p.add_argument("--max-hands", type=int, default=1, help="hands per match, ranked by totals after them (0: the game's own end)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a variant option, e.g. format=deals-4")
    p.add_argument("--output", type=Path, default=None, help="default: a temporary folder")
    args = p.parse_args()
    root = args.output or Path(tempfile.mkdtemp(prefix="search-tournament-"))
    ok = True
    for variant in args.variants:
        options = dict(o.split("=", 1) for o in args.option)
        r = play(variant, root / variant, args.deals, args.samples, args.depth, args.budget, args.concurrency,
                 args.max_hands, options, args.z)
        (se, sx), (ge, gx) = r["sampling"], r["greedy"]
        print(f"{variant}: {r['games']} games in {r['seconds']:.0f} s; sampling {se:+.0f} ± {sx:.0f}, greedy {ge:+.0f} ± "
              f"{gx:.0f} (Elo, 95%); sampling's pairwise score {r['score']:.3f}; "
              + ("error bars apart" if r["apart"] else "error bars OVERLAP"), flush=True)
        ok &= r["apart"]
    print(f"results: {root}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
