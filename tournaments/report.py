"""What people see: the live progress bar, the rating table and crosstable on the terminal (rich), and the
same as files in the output folder (``ratings.csv``, ``ratings.json``, ``crosstable.csv``). Each bot's faults
(``tournaments.faults``: refused answers, moves the referee made for it, disconnects, restarts) are a table of
their own on the terminal, columns of ``ratings.csv``, and in full under ``faults`` in ``ratings.json``."""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress
from rich.table import Table
from rich.text import Text

from tournaments.faults import BotFaults
from tournaments.ratings import RatingTable, rate
from tournaments.schedule import Game
from tournaments.store import Store, find_db

__all__ = ["LiveProgress", "ratings_table", "cross_table", "faults_table", "write_reports", "print_report", "load_ratings", "load_faults"]


class _Rate(ProgressColumn):
    """Games per hour over this run (rich's own speed estimate is for bytes)."""

    def __init__(self, progress: LiveProgress) -> None:
        super().__init__()
        self.p = progress

    def render(self, task: Task) -> Text:
        elapsed = time.monotonic() - self.p.t0
        played = self.p.played
        if played == 0 or elapsed <= 0:
            return Text("--/h", style="progress.data.speed")
        return Text(f"{played / elapsed * 3600:,.0f}/h", style="progress.data.speed")


class _Left(ProgressColumn):
    def render(self, task: Task) -> Text:
        left = int((task.total or 0) - task.completed)
        return Text(f"{left} left", style="progress.remaining")


class LiveProgress:
    """A live bar: games done / total, games left, rate, ETA; failures and forfeits as they come."""

    def __init__(self, console: Console | None = None, title: str = "games") -> None:
        self.console = console or Console(stderr=True)
        self.t0 = time.monotonic()
        self.played = 0
        self.failed = 0
        self.forfeits = 0
        self.refused = 0
        self.timed_out = 0
        self.bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            _Left(),
            _Rate(self),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[note]}"),
            console=self.console,
            transient=False,
        )
        self.task = self.bar.add_task(title, total=None, note="")
        self.status = ""  # a line the run keeps current (an SPRT's LLR)

    def __enter__(self) -> LiveProgress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def started(self, total: int, done: int) -> None:
        self.t0 = time.monotonic()
        self.bar.update(self.task, total=total, completed=done)

    def finished(self, game: Game, outcome: Any, error: str | None) -> None:
        if outcome is None:
            self.failed += 1
        else:
            self.played += 1
            self.forfeits += len(outcome.forfeited)
            for f in getattr(outcome, "faults", ()):
                self.refused += f.refused
                self.timed_out += f.timed_out
            self.bar.advance(self.task)
        self._show()

    def note(self, status: str) -> None:
        """Show ``status`` beside the bar until the next note."""
        self.status = status
        self._show()

    def _show(self) -> None:
        notes = [self.status] if self.status else []
        if self.forfeits:
            notes.append(f"{self.forfeits} forfeited seats")
        if self.refused:
            notes.append(f"[yellow]{self.refused} refused answers")
        if self.timed_out:
            notes.append(f"[yellow]{self.timed_out} timed-out moves")
        if self.failed:
            notes.append(f"[red]{self.failed} failed matches")
        self.bar.update(self.task, note=", ".join(notes))


# ------------------------------------------------------------------------------------------ tables


def _fmt(x: float, spec: str = ".0f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def ratings_table(rt: RatingTable, title: str = "Ratings") -> Table:
    t = Table(title=title, caption="\n".join([*rt.notes, "LOS↓: likelihood of superiority over the next bot down; "
                                                "score: pairwise points; OpenSkill: Plackett-Luce μ ± σ"]),
              caption_justify="left")
    t.add_column("#", justify="right")
    t.add_column("bot")
    t.add_column("Elo", justify="right")
    t.add_column("±95%", justify="right")
    t.add_column("LOS↓", justify="right")
    t.add_column("games", justify="right")
    t.add_column("score", justify="right")
    t.add_column("forf.", justify="right")
    t.add_column("OpenSkill", justify="right", no_wrap=True)
    for i, b in enumerate(rt.bots, 1):
        t.add_row(
            str(i),
            b.name,
            _fmt(b.elo),
            _fmt(b.error),
            "" if b.los_next is None else f"{b.los_next * 100:.1f}%",
            str(b.games),
            f"{b.score * 100:.1f}%",
            str(b.forfeits),
            f"{b.openskill_mu:.1f} ± {b.openskill_sigma:.1f}",
        )
    return t


def faults_table(faults: Mapping[str, BotFaults]) -> Table | None:
    """The bots with faults, most first, and what they were; None when no bot had any."""
    bad = sorted((f for f in faults.values() if f.any),
                 key=lambda f: (-(f.refused + f.timed_out + f.disconnects + f.restarts), f.bot))
    if not bad:
        return None
    t = Table(title="Faults (every game stored)", caption="games: with a fault, of those recorded; refused: answers the "
              "referee refused; t/o: moves it made for the bot on a missed deadline; disc.: disconnects; restarts: of "
              "the bot's processes",
              caption_justify="left")
    t.add_column("bot", no_wrap=True, min_width=max(len(f.bot) for f in bad))
    for col in ("games", "refused", "t/o", "disc.", "restarts"):
        t.add_column(col, justify="right")
    lines = {f.bot: [f"{c} {n}" for c, n in sorted(f.rejected.items(), key=lambda kv: (-kv[1], kv[0]))] for f in bad}
    t.add_column("by reason code", min_width=max((len(x) for ls in lines.values() for x in ls), default=8))
    for f in bad:
        codes = "\n".join(lines[f.bot])
        t.add_row(Text(f.bot), f"{f.faulty_games}/{f.games}", str(f.refused), str(f.timed_out), str(f.disconnects),
                  str(f.restarts), Text(codes))
    return t


def cross_table(rt: RatingTable) -> Table:
    t = Table(title="Crosstable (row's pairwise points against column / games)")
    t.add_column("")
    for n in rt.names:
        t.add_column(n, justify="right")
    t.add_column("total", justify="right")
    for i, n in enumerate(rt.names):
        cells = []
        for j in range(len(rt.names)):
            g = rt.cross_games[i, j]
            cells.append("" if i == j else "-" if g == 0 else f"{rt.cross_score[i, j]:g}/{g:g}")
        cells.append(f"{rt.cross_score[i].sum():g}/{rt.cross_games[i].sum():g}")
        t.add_row(n, *cells)
    return t


def print_report(rt: RatingTable, console: Console | None = None, title: str = "Ratings",
                 faults: Mapping[str, BotFaults] | None = None) -> None:
    """The rating table, the crosstable and, when a bot had any, its faults."""
    c = console or Console()
    c.print(ratings_table(rt, title))
    c.print(cross_table(rt))
    if faults is not None and (ft := faults_table(faults)) is not None:
        c.print(ft)


def rating_rows(rt: RatingTable, faults: Mapping[str, BotFaults] | None = None) -> list[dict[str, Any]]:
    """One row per bot, best first; with ``faults``, its fault totals as columns."""
    rows = []
    for i, b in enumerate(rt.bots, 1):
        f = faults.get(b.name, BotFaults(b.name)) if faults is not None else None
        more = {} if f is None else {"refused": f.refused, "timed_out": f.timed_out, "disconnects": f.disconnects,
                                     "restarts": f.restarts}
        rows.append(
            {
                "rank": i,
                "bot": b.name,
                "elo": round(b.elo, 1),
                "error95": round(b.error, 1),
                "los_next": None if b.los_next is None else round(b.los_next, 4),
                "games": b.games,
                "pairwise_games": b.pairwise_games,
                "score": round(b.score, 4),
                "forfeits": b.forfeits,
                "openskill_mu": round(b.openskill_mu, 3),
                "openskill_sigma": round(b.openskill_sigma, 3),
                "openskill_ordinal": round(b.openskill_ordinal, 3),
                **more,
            }
        )
    return rows


def write_reports(rt: RatingTable, out_dir: Path, extra: dict[str, Any] | None = None,
                  faults: Mapping[str, BotFaults] | None = None) -> list[Path]:
    """``ratings.csv``, ``ratings.json`` and ``crosstable.csv`` in ``out_dir``; with ``faults``, each bot's
    totals are columns of the ratings, and ``ratings.json`` has them in full (refusals by reason code, logs)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = rating_rows(rt, faults)
    p_csv = out_dir / "ratings.csv"
    with p_csv.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["rank", "bot"])
        w.writeheader()
        w.writerows(rows)
    p_cross = out_dir / "crosstable.csv"
    with p_cross.open("w", newline="", encoding="utf-8") as f:
        w2 = csv.writer(f)
        w2.writerow(["bot", *rt.names, "score", "games"])
        for i, n in enumerate(rt.names):
            w2.writerow([n, *(f"{rt.cross_score[i, j]:g}/{rt.cross_games[i, j]:g}" if i != j else "" for j in range(len(rt.names))),
                         f"{rt.cross_score[i].sum():g}", f"{rt.cross_games[i].sum():g}"])
    p_json = out_dir / "ratings.json"
    doc = {
        "matches": rt.matches,
        "scale": rt.fit.scale,
        "error_bars": f"95% ({rt.fit.method})",
        "prior_draws": rt.fit.prior_draws,
        "notes": rt.notes,
        "ratings": rows,
        "crosstable": {"bots": rt.names, "score": rt.cross_score.tolist(), "games": rt.cross_games.tolist()},
        **({} if faults is None else {"faults": {b: faults.get(b, BotFaults(b)).to_json() for b in rt.names}}),
        **(extra or {}),
    }
    p_json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return [p_csv, p_json, p_cross]


def load_ratings(
    db_or_dir: str | Path, anchor: str | None = None, anchor_rating: float = 1500.0, average: float = 0.0, bootstrap: int = 0
) -> tuple[RatingTable, Path]:
    """Ratings of every game in a results database (or the output folder holding it). :raises
    FileNotFoundError: :raises ValueError: when there is nothing to rate."""
    db = find_db(db_or_dir)
    with Store(db, readonly=True) as store:
        results = store.results()
        bots = store.meta("bots") or {}
    if not results:
        raise ValueError(f"{db} has no finished games yet")
    return rate(results, anchor, anchor_rating, average, bootstrap=bootstrap, names=[b for b in bots if any(b in r.seats for r in results)] or None), db


def load_faults(db_or_dir: str | Path, bots: list[str] | None = None) -> dict[str, BotFaults]:
    """Each bot's faults over every game and run of a results database (``Store.faults``)."""
    with Store(find_db(db_or_dir), readonly=True) as store:
        return store.faults(bots or [])
