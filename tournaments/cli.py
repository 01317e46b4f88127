"""``tournament run CONFIG``, ``tournament ladder add CONFIG NAME -- COMMAND...``, ``tournament ladder serve CONFIG``
(and ``ladder bots``, ``ladder status``: :mod:`tournaments.ladder.cli`), ``tournament ratings
DB_OR_OUTPUT_DIR [--history]``, ``tournament report DB_OR_OUTPUT_DIR --html OUT``, ``tournament schedule CONFIG``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from referee.tools.cli import port_number
from tournaments.faults import BotFaults

__all__ = ["main", "finish_report", "write_html", "print_faults"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tournament", description="Rummy bot tournaments: schedule, play, rate.")
    sub = p.add_subparsers(dest="cmd", required=True)

    run = sub.add_parser("run", help="play a tournament (a rerun resumes: only missing games are played)")
    run.add_argument("config", type=Path, help="tournament TOML file")
    _run_args(run)

    lad = sub.add_parser("ladder", help="the ladder service (serve, bots, status), or a continuing tournament "
                         "ladder's add")
    lsub = lad.add_subparsers(dest="ladder_cmd", required=True)
    from tournaments.ladder.cli import add_parsers

    add_parsers(lsub)
    add = lsub.add_parser("add", help="add a bot, play its games against the pool, rate everyone again",
                          usage="tournament ladder add CONFIG NAME [options] -- COMMAND...")
    add.add_argument("config", type=Path, help="the ladder's TOML file (schedule = \"ladder\", no pool)")
    add.add_argument("name", help="the new bot's name")
    add.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="an environment variable for the bot")
    _run_args(add)

    r = sub.add_parser("ratings", help="rate the games of a results database")
    r.add_argument("db", type=Path, metavar="DB_OR_OUTPUT_DIR")
    r.add_argument("--out", type=Path, help="write ratings.csv / ratings.json / crosstable.csv here (default: beside the database)")
    r.add_argument("--history", action="store_true", help="each bot's Elo after every rating run (a ladder's history)")
    _rating_args(r)

    s = sub.add_parser("schedule", help="print the schedule without playing it")
    s.add_argument("config", type=Path)

    h = sub.add_parser("report", help="write the HTML report (ratings with error bars, crosstable, pairings, "
                       "ratings over time) and NAME-ratings.svg / NAME-ratings.png beside it")
    h.add_argument("db", type=Path, metavar="DB_OR_OUTPUT_DIR")
    h.add_argument("--html", type=Path, metavar="OUT", help="the page to write (default: report.html beside the database)")
    _rating_args(h)
    return p


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--referee", metavar="HOST:PORT", help="use a running referee instead of an embedded one")
    p.add_argument("--cluster", metavar="SCHEDULER", help="play the matches on a Dask cluster (tcp://HOST:8786); "
                   "each worker runs a referee and the bots")
    p.add_argument("--concurrency", type=int, metavar="N", help="matches at once (default: the config's, or the CPU count)")
    p.add_argument("--output", type=Path, help="output folder (default: the config's)")
    p.add_argument("--no-progress", action="store_true", help="no live progress bar")
    p.add_argument("--time-budget", type=float, metavar="SECONDS", help="begin no new deal after this long (rerun to go on)")
    p.add_argument("--metrics-port", type=port_number, metavar="PORT", help="serve the embedded referee's Prometheus metrics "
                   "at /metrics on this port (0 picks one; the address is printed) while the run lasts")
    p.add_argument("--metrics-host", default="127.0.0.1", metavar="HOST", help="the address --metrics-port listens on "
                   "(default 127.0.0.1)")
    _rating_args(p)


def _split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``ladder add ... -- COMMAND...``: the runner's arguments, and the bot's command after the first ``--``."""
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _rerun_command(args: argparse.Namespace) -> str:
    """The command that goes on with this run's games: ``tournament run CONFIG`` with the options that say where
    the results are and where the games are played (``ladder add`` stored its bot: a plain run goes on)."""
    import shlex

    argv = ["tournament", "run", str(args.config)]
    for flag, value in (("--output", args.output), ("--referee", args.referee), ("--cluster", args.cluster)):
        if value is not None:
            argv += [flag, str(value)]
    return shlex.join(argv)


def print_history(db_or_dir: Path, console: Console) -> None:
    """``tournament ratings --history``: one row per rating run, one column per bot (Elo ± 95%)."""
    from rich.table import Table

    from tournaments.store import Store, find_db

    db = find_db(db_or_dir)
    with Store(db, readonly=True) as store:
        runs = store.rating_history()
    if not runs:
        raise ValueError(f"{db} has no rating history yet (it is kept after each run that plays games)")
    last = runs[-1].ratings
    bots = sorted({b for r in runs for b in r.ratings}, key=lambda b: (-last[b][0] if b in last else 0.0, b))
    table = Table(title=f"Rating history ({len(runs)} rating runs)", caption="Elo ± 95%; blank: not yet in the ladder",
                  caption_justify="left")
    for col in ("#", "UTC", "run", "games"):
        table.add_column(col, justify="right" if col in ("#", "games") else "left", no_wrap=col != "run")
    for b in bots:
        table.add_column(b, justify="right", no_wrap=True)
    import datetime

    for r in runs:
        when = datetime.datetime.fromtimestamp(r.at, datetime.UTC).strftime("%m-%d %H:%M")
        cells = [f"{r.ratings[b][0]:.0f}±{r.ratings[b][1]:.0f}" if b in r.ratings else "" for b in bots]
        table.add_row(str(r.id), when, escape(r.label), str(r.games), *cells)
    console.print(table)


def print_faults(faulty: Sequence[BotFaults], output: Path, err: Console) -> None:
    """Each bot with a fault in this run, one line each: its refusals by reason code, the moves the referee made
    for it, its disconnects and restarts, and its log; then where the referee's reasons are."""
    for f in faulty:
        err.print(f"[yellow]faults:[/] {escape(f.describe())}", markup=True, highlight=False, soft_wrap=True)
    referee_log = output / "referee.log"
    if faulty and referee_log.is_file():
        err.print(f"each refusal's reason and each missed deadline: {escape(str(referee_log))} (events action_rejected, "
                  "deadline_missed, seat_disconnected)", highlight=False, soft_wrap=True)


def _rating_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--anchor", metavar="BOT", help="hold this bot at --anchor-rating (default: the mean rating is 0)")
    p.add_argument("--anchor-rating", type=float, default=None)
    p.add_argument("--bootstrap", type=int, default=0, metavar="N", help="error bars from N bootstrap refits over duplicate deals")


def finish_report(db_or_dir: Path, console: Console, anchor: str | None = None, anchor_rating: float = 1500.0,
                  average: float = 0.0, bootstrap: int = 0, out: Path | None = None, title: str = "Ratings") -> None:
    from tournaments.report import load_faults, load_ratings, print_report, write_reports

    rt, db = load_ratings(db_or_dir, anchor, anchor_rating, average, bootstrap)
    faults = load_faults(db, rt.names)
    print_report(rt, console, title=f"{title} ({rt.matches} games)", faults=faults)
    paths = write_reports(rt, out or db.parent, faults=faults)
    console.print("written: " + ", ".join(str(p) for p in paths))


def write_html(db_or_dir: Path, out: Path | None = None, anchor: str | None = None, anchor_rating: float = 1500.0,
               average: float = 0.0, bootstrap: int = 0) -> list[Path]:
    """``tournament report``: the page and its charts; the page's path first."""
    from tournaments.htmlreport import load_report_data, write_html_report

    data = load_report_data(db_or_dir, anchor, anchor_rating, average, bootstrap)
    return write_html_report(data, out or data.db.parent / "report.html")


def _one_blas_thread() -> None:
    """The ladder refits a 1,000-bot Hessian every few seconds in a thread beside the event loop: BLAS threads would
    take the cores the matches need, and on a busy host they spin (a Cholesky of 1,000 takes seconds, not 30 ms)."""
    import os

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def main(argv: Sequence[str] | None = None) -> int:
    own, command = _split_command(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(own)
    console = Console()
    err = Console(stderr=True)
    if args.cmd == "ladder" and args.ladder_cmd != "add":
        if args.ladder_cmd == "serve":  # before numpy loads: the refits' BLAS on one core, beside the referee's loop
            _one_blas_thread()
        from tournaments.ladder.cli import run as run_ladder

        return run_ladder(args, command, console, err)
    if args.cmd == "report":
        try:
            paths = write_html(args.db, args.html, args.anchor, args.anchor_rating or 1500.0, 0.0, args.bootstrap)
        except (FileNotFoundError, ValueError) as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}")
            return 2
        print("written: " + ", ".join(str(p) for p in paths[1:]))
        print(paths[0])  # the page, last, alone on its line
        return 0
    if args.cmd == "ratings":
        try:
            if args.history:
                print_history(args.db, console)
                return 0
            finish_report(args.db, console, args.anchor, args.anchor_rating or 1500.0, 0.0, args.bootstrap, args.out)
        except (FileNotFoundError, ValueError) as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}")
            return 2
        return 0

    import dataclasses

    from tournaments.config import ConfigError, load_config
    from tournaments.runner import MatchError, plan, run_tournament
    from tournaments.store import DB_NAME, StoreMismatch

    try:
        config = load_config(args.config)
        if getattr(args, "output", None):
            config = dataclasses.replace(config, output=args.output.resolve())
        if getattr(args, "concurrency", None) is not None and args.concurrency < 1:
            raise ConfigError("--concurrency", f"must be at least 1, not {args.concurrency}")
        if getattr(args, "metrics_port", None) is not None and (args.referee or args.cluster):
            raise ConfigError("--metrics-port", "serves the embedded referee's metrics: a running referee serves its "
                              "own (referee serve --metrics-port); a cluster's workers run theirs unexposed")
        label = "run"
        if args.cmd == "ladder":
            from tournaments.ladder import add_entry

            env = dict(kv.split("=", 1) for kv in args.env if "=" in kv)
            if len(env) != len(args.env):
                raise ConfigError("--env", "give NAME=VALUE")
            entry = add_entry(config, args.name, command, Path.cwd(), env, check_program=args.cluster is None)
            console.print(f"added {entry.name} to the ladder; its pool, best first: {', '.join(entry.pool)}", highlight=False)
            label = f"added {entry.name}"
        p = plan(config)
    except ConfigError as exc:
        err.print(f"[red]config error[/] in {escape(str(args.config))}: {escape(str(exc))}")
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
    metrics_at = (args.metrics_host, args.metrics_port) if args.metrics_port is not None else None
    try:
        if progress is not None:
            with progress:
                stats = run_tournament(config, referee=args.referee, concurrency=args.concurrency, progress=progress,
                                       time_budget_s=args.time_budget, label=label, cluster=args.cluster,
                                       metrics_at=metrics_at)
        else:
            stats = run_tournament(config, referee=args.referee, concurrency=args.concurrency, time_budget_s=args.time_budget,
                                   label=label, cluster=args.cluster, metrics_at=metrics_at)
    except ConfigError as exc:
        err.print(f"[red]config error[/] in {escape(str(args.config))}: {escape(str(exc))}")
        return 2
    except (StoreMismatch, MatchError) as exc:  # another tournament's results; no referee or scheduler there
        err.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    console.print(
        f"{stats.played} games played this run, {stats.already_done} before, {stats.missing} missing"
        + (f", {stats.failed} failed attempts" if stats.failed else "")
        + (f" ({stats.games_per_hour:,.0f} games/h)" if stats.played else ""),
        highlight=False,
    )
    console.print(f"results: {config.output / DB_NAME}", highlight=False, soft_wrap=True)
    if stats.sprt is not None:
        console.print(stats.sprt.summary(), highlight=False)
    from tournaments.health import BotTrouble, SilentBot, bot_troubles, describe, silent_bots

    troubles: list[BotTrouble | SilentBot] = [*bot_troubles(config.output)]
    dead = {t.bot for t in troubles}
    troubles += [s for s in silent_bots(config.output) if s.bot not in dead]
    for trouble in troubles:
        err.print(f"[yellow]warning:[/] {escape(describe(trouble))}", markup=True, highlight=False, soft_wrap=True)
    print_faults(stats.faulty(), config.output, err)
    if stats.stop_reason:
        err.print(f"[red]stopped:[/] {escape(stats.stop_reason)}")
    try:
        finish_report(config.output, console, anchor, anchor_rating, config.ratings.average, args.bootstrap)
    except (FileNotFoundError, ValueError) as exc:
        err.print(f"no ratings yet: {escape(str(exc))}")
    rerun = _rerun_command(args)
    if stats.budget_reached:
        err.print(f"time budget reached: rerun `{escape(rerun)}` to play the {stats.missing} missing games")
    if stats.interrupted:
        err.print(f"interrupted: rerun `{escape(rerun)}` to play the {stats.missing} missing games")
        return 130
    return 1 if stats.stop_reason else 0


if __name__ == "__main__":
    sys.exit(main())
