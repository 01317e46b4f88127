"""``python -m tournaments.demo --variant indian`` (what ``make demo`` runs): a round-robin of the bundled bots
(random, noisy, greedy) with an embedded referee, ending with the rating table.

It plays in ``./demo-output/<variant>`` (cleared first, unless ``--resume``): up to ``--deals`` duplicate deals
per pairing, enough for greedy to rank above random with non-overlapping 95% error bars. Indian rummy plays
them all in seconds; slower variants (500 Rum, Skarney, Iceberg: 1,000 to 6,000 games an hour on two cores)
stop beginning new deals after ``--budget`` seconds, so the demo ends in under two minutes whatever the variant.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from tournaments.config import BotSpec, ConfigError, TimeControl, TournamentConfig, registry_facts
from tournaments.store import DB_NAME

__all__ = ["main", "demo_config", "BUNDLED"]

BUNDLED = (
    ("random", "rummybot.bots.random_bot"),
    ("noisy", "rummybot.bots.noisy"),
    ("greedy", "rummybot.bots.greedy"),
)
DEFAULT_DEALS = 30  # deal seeds per pairing: 3 pairings x 2 seat rotations x 30 = 180 games
DEFAULT_BUDGET_S = 75.0  # then no new deal is begun (the deals under way finish)


def demo_config(variant: str, output: Path, deals: int = DEFAULT_DEALS, concurrency: int | None = None, seats: int | None = None) -> TournamentConfig:
    facts = registry_facts(variant)
    n_seats = seats or (4 if facts.team_play else 2)
    bots = tuple(BotSpec(name, (sys.executable, "-m", module)) for name, module in BUNDLED)
    return TournamentConfig(
        bots=bots,
        variant=facts.name,
        seats=n_seats,
        team_play=facts.team_play,
        games_per_pairing=deals,
        schedule="round-robin",
        time_control=TimeControl(per_move_ms=2000),
        concurrency=concurrency or max(2, os.cpu_count() or 1),
        seed="demo",
        output=output,
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tournaments.demo", description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--variant", default="indian")
    p.add_argument("--deals", type=int, default=DEFAULT_DEALS, help=f"deal seeds per pairing (default {DEFAULT_DEALS})")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, help=f"seconds after which no new deal is begun (default {DEFAULT_BUDGET_S:g})")
    p.add_argument("--concurrency", type=int, default=None)
    p.add_argument("--output", type=Path, default=None, help="default: ./demo-output/<variant>")
    p.add_argument("--resume", action="store_true", help="keep the previous demo's results and play only what is missing")
    args = p.parse_args(argv)
    console = Console()

    from tournaments.cli import finish_report
    from tournaments.report import LiveProgress, load_ratings
    from tournaments.runner import run_tournament

    try:
        facts = registry_facts(args.variant)
    except LookupError as exc:
        console.print(f"[red]{exc}[/]")
        return 2
    out = (args.output or Path("demo-output") / facts.name).resolve()
    if out.exists() and not args.resume:
        if (out / DB_NAME).exists():
            shutil.rmtree(out)
        elif any(out.iterdir()):
            console.print(f"[red]{out} exists and is not a demo's output; choose another --output[/]")
            return 2
    try:
        config = demo_config(facts.name, out, args.deals, args.concurrency)
    except ConfigError as exc:
        console.print(f"[red]{exc}[/]")
        return 2
    console.print(
        f"[bold]Demo:[/] round-robin of {', '.join(b.name for b in config.bots)} at {facts.name} "
        f"({config.seats} seats), up to {config.games_per_pairing} duplicate deals per pairing ({args.budget:g} s budget), "
        f"{config.concurrency} matches at once, embedded referee; output in {out}"
    )
    t0 = time.monotonic()
    with LiveProgress(Console(stderr=True)) as progress:
        stats = run_tournament(config, progress=progress, time_budget_s=args.budget)
    elapsed = time.monotonic() - t0
    console.print(f"{stats.played} games in {elapsed:.1f} s ({stats.games_per_hour:,.0f} games/h)"
                  + (f"; time budget reached, {stats.missing} games not begun" if stats.budget_reached else ""))
    finish_report(out, console, title=f"Demo ratings, {facts.name}")
    rt, _ = load_ratings(out)
    try:
        g, r = rt.bot("greedy"), rt.bot("random")
    except KeyError:
        _print_report_path(out)
        return 1
    apart = g.elo - g.error > r.elo + r.error
    console.print(
        f"greedy {g.elo:.0f} ± {g.error:.0f} vs random {r.elo:.0f} ± {r.error:.0f}: "
        + ("[green]greedy ranks above random, error bars do not overlap[/]" if apart else ("[yellow]error bars overlap: give it more time (--budget)[/]" if stats.budget_reached else "[yellow]error bars overlap: play more deals (--deals)[/]"))
    )
    _print_report_path(out)
    return 0 if stats.missing == 0 or stats.budget_reached else 1


def _print_report_path(out: Path) -> None:
    """The demo's last line: where its HTML report is (plain print: a wrapped path could not be copied)."""
    from tournaments.cli import write_html

    print(f"tournament report: {write_html(out)[0]}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
