"""``tournament run CONFIG``, ``tournament ratings DB_OR_OUTPUT_DIR``, ``tournament schedule CONFIG``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

__all__ = ["main", "finish_report"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tournament", description="Rummy bot tournaments: schedule, play, rate.")
    sub = p.add_subparsers(dest="cmd", required=True)

    run = sub.add_parser("run", help="play a tournament (a rerun resumes: only missing games are played)")
    run.add_argument("config", type=Path, help="tournament TOML file")
    run.add_argument("--referee", metavar="HOST:PORT", help="use a running referee instead of an embedded one")
    run.add_argument("--concurrency", type=int, metavar="N", help="matches at once (default: the config's, or the CPU count)")
    run.add_argument("--output", type=Path, help="output folder (default: the config's)")
    run.add_argument("--no-progress", action="store_true", help="no live progress bar")
    run.add_argument("--time-budget", type=float, metavar="SECONDS", help="begin no new deal after this long (rerun to go on)")
    _rating_args(run)

    r = sub.add_parser("ratings", help="rate the games of a results database")
    r.add_argument("db", type=Path, metavar="DB_OR_OUTPUT_DIR")
    r.add_argument("--out", type=Path, help="write ratings.csv / ratings.json / crosstable.csv here (default: beside the database)")
    _rating_args(r)

    s = sub.add_parser("schedule", help="print the schedule without playing it")
    s.add_argument("config", type=Path)
    return p


def _rating_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--anchor", metavar="BOT", help="hold this bot at --anchor-rating (default: the mean rating is 0)")
    p.add_argument("--anchor-rating", type=float, default=None)
    p.add_argument("--bootstrap", type=int, default=0, metavar="N", help="error bars from N bootstrap refits over duplicate deals")


def finish_report(db_or_dir: Path, console: Console, anchor: str | None = None, anchor_rating: float = 1500.0,
                  average: float = 0.0, bootstrap: int = 0, out: Path | None = None, title: str = "Ratings") -> None:
    from tournaments.report import load_ratings, print_report, write_reports

    rt, db = load_ratings(db_or_dir, anchor, anchor_rating, average, bootstrap)
    print_report(rt, console, title=f"{title} ({rt.matches} games)")
    paths = write_reports(rt, out or db.parent)
    console.print("written: " + ", ".join(str(p) for p in paths))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console()
    err = Console(stderr=True)
    if args.cmd == "ratings":
        try:
            finish_report(args.db, console, args.anchor, args.anchor_rating or 1500.0, 0.0, args.bootstrap, args.out)
        except (FileNotFoundError, ValueError) as exc:
            err.print(f"[red]error:[/] {exc}")
            return 2
        return 0

    import dataclasses

    from tournaments.config import ConfigError, load_config
    from tournaments.runner import plan, run_tournament
    from tournaments.store import StoreMismatch

    try:
        config = load_config(args.config)
        if getattr(args, "output", None):
            config = dataclasses.replace(config, output=args.output.resolve())
        if getattr(args, "concurrency", None) is not None and args.concurrency < 1:
            raise ConfigError("--concurrency", f"must be at least 1, not {args.concurrency}")
        p = plan(config)
    except ConfigError as exc:
        err.print(f"[red]config error[/] in {args.config}: {exc}")
        return 2

    if args.cmd == "schedule":
        for g in p.games:
            console.print(f"{g.key}\tseed={g.seed}\t" + " ".join(f"{i}:{b}" for i, b in enumerate(g.seats)))
        console.print(f"{len(p.games)} games")
        return 0

    from tournaments.report import LiveProgress

    anchor = args.anchor or config.ratings.anchor
    anchor_rating = args.anchor_rating if args.anchor_rating is not None else config.ratings.anchor_rating
    progress = None if args.no_progress else LiveProgress(err)
    try:
        if progress is not None:
            with progress:
                stats = run_tournament(config, referee=args.referee, concurrency=args.concurrency, progress=progress,
                                       time_budget_s=args.time_budget)
        else:
            stats = run_tournament(config, referee=args.referee, concurrency=args.concurrency, time_budget_s=args.time_budget)
    except ConfigError as exc:
        err.print(f"[red]config error[/] in {args.config}: {exc}")
        return 2
    except StoreMismatch as exc:
        err.print(f"[red]error:[/] {exc}")
        return 2
    console.print(
        f"{stats.played} games played this run, {stats.already_done} before, {stats.missing} missing"
        + (f", {stats.failed} failed attempts" if stats.failed else "")
        + (f" ({stats.games_per_hour:,.0f} games/h)" if stats.played else "")
    )
    from tournaments.health import bot_troubles, describe

    for trouble in bot_troubles(config.output):
        err.print(f"[yellow]warning:[/] {describe(trouble)}", markup=True, highlight=False, soft_wrap=True)
    if stats.stop_reason:
        err.print(f"[red]stopped:[/] {stats.stop_reason}")
    try:
        finish_report(config.output, console, anchor, anchor_rating, config.ratings.average, args.bootstrap)
    except (FileNotFoundError, ValueError) as exc:
        err.print(f"no ratings yet: {exc}")
    if stats.budget_reached:
        err.print(f"time budget reached: rerun `tournament run {args.config}` to play the {stats.missing} missing games")
    if stats.interrupted:
        err.print(f"interrupted: rerun `tournament run {args.config}` to play the {stats.missing} missing games")
        return 130
    return 1 if stats.stop_reason else 0


if __name__ == "__main__":
    sys.exit(main())
