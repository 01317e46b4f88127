"""The tournament report as one static HTML page (``tournament report OUTPUT --html OUT``), with the same charts
as ``NAME-ratings.svg`` and ``NAME-ratings.png`` beside ``NAME.html`` for a README or a chat message.

The page stands alone: no script, no asset from elsewhere (the charts are inline SVG). It shows the rating table
with its error bars drawn, the crosstable, the games per pairing, and ratings over time as the games came in:
from the rating runs the database keeps (``Store.rating_history``: a ladder keeps one per bot added) when there
are at least two, else fitted again on growing prefixes of the games in the order they finished (the same
maximum-likelihood fit as ``tournament ratings``). Above them, what was played: the variant, its options, the
time control and the wall time of the runs; below the ratings, each bot's faults (``tournaments.faults``): a
rating earned while the referee refused half a bot's answers or played its moves for it says so on the page.
"""

from __future__ import annotations

import html
import io
import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tournaments.faults import BotFaults
from tournaments.ratings import RatingTable, Result, fit_elo, rate
from tournaments.store import GameRow, RunRow, Store, find_db

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["HistoryPoint", "PairingCount", "ReportData", "load_report_data", "rating_history", "stored_history",
           "write_html_report"]

HISTORY_POINTS = 40  # prefix fits for ratings over time: enough for a smooth line, cheap for any tournament


@dataclass(frozen=True)
class HistoryPoint:
    """Ratings after the first ``games`` games: bot -> (Elo, 95% half-width)."""

    games: int
    ratings: dict[str, tuple[float, float]]


@dataclass(frozen=True)
class PairingCount:
    bots: tuple[str, ...]
    games: int
    points: tuple[float, ...]  # each bot's pairwise points in these games (same order as bots)


@dataclass
class ReportData:
    """What the page shows, read from one results database."""

    db: Path
    variant: str
    table: RatingTable
    history: list[HistoryPoint]
    history_source: str  # "stored" or "refitted"
    pairings: list[PairingCount]
    forfeits: int
    seconds: float  # time spent in games (more than the wall time when games ran at once)
    faults: dict[str, BotFaults] = field(default_factory=dict)  # per bot, over every game and run
    options: dict[str, str] = field(default_factory=dict)
    time_control: dict[str, int] = field(default_factory=dict)  # the last run's (or the fingerprint's) time control
    runs: list[RunRow] = field(default_factory=list)  # the runs that played games (none kept by older databases)

    @property
    def wall_s(self) -> float | None:
        """The wall time of every run, or None when the database kept none."""
        return sum(r.wall_s for r in self.runs) if self.runs else None


def load_report_data(db_or_dir: str | Path, anchor: str | None = None, anchor_rating: float = 1500.0,
                     average: float = 0.0, bootstrap: int = 0) -> ReportData:
    """:raises FileNotFoundError: no database :raises ValueError: nothing to rate."""
    db = find_db(db_or_dir)
    with Store(db, readonly=True) as store:
        rows = list(store.rows())
        bots = store.meta("bots") or {}
        stored = stored_history(store)
        fingerprint = store.meta("fingerprint") or {}
        runs = store.runs()
        faults = store.faults({b for r in rows for b in r.seats})
    if not rows:
        raise ValueError(f"{db} has no finished games yet")
    results = [r.result() for r in rows]
    names = [b for b in bots if any(b in r.seats for r in results)] or None
    table = rate(results, anchor, anchor_rating, average, bootstrap=bootstrap, names=names)
    history = stored or rating_history(results, anchor, anchor_rating, average)
    if runs:
        time_control = dict(runs[-1].time_control)
    else:  # a database from before runs were kept: what its fingerprint says
        per_move, bank = (list(fingerprint.get("time_control") or []) + [0, 0])[:2]
        time_control = {"per_move_ms": int(per_move), "bank_ms": int(bank)}
    return ReportData(db, rows[0].variant, table, history, "stored" if stored else "refitted", pairing_counts(rows),
                      sum(len(r.forfeited) for r in rows), sum(r.duration_s for r in rows), faults,
                      {str(k): str(v) for k, v in (fingerprint.get("options") or {}).items()}, time_control, runs)


def rating_history(results: Sequence[Result], anchor: str | None = None, anchor_rating: float = 1500.0,
                   average: float = 0.0, points: int = HISTORY_POINTS) -> list[HistoryPoint]:
    """Ratings fitted on growing prefixes of ``results`` (in the order they finished). A prefix whose bots have not
    all met, directly or through others, has no common scale and is left out."""
    n = len(results)
    sizes = sorted({max(1, round(n * k / points)) for k in range(1, points + 1)})
    out = []
    for size in sizes:
        prefix = results[:size]
        try:
            fit = fit_elo(prefix, anchor if anchor and any(anchor in r.seats for r in prefix) else None, anchor_rating,
                          average)
        except ValueError:
            continue
        if len(fit.names) < 2:
            continue
        out.append(HistoryPoint(size, {b: (fit.rating(b), fit.error(b)) for b in fit.names}))
    return out


def stored_history(store: Store) -> list[HistoryPoint]:
    """The ladder's kept rating runs (``Store.rating_history``) as points, x being the games rated by then. Fewer
    than two runs draw no line over time (a round-robin keeps one per ``tournament run``): then the caller
    refits prefixes instead."""
    runs = store.rating_history()
    if len(runs) < 2:
        return []
    return [HistoryPoint(run.games, {bot: (elo, err) for bot, (elo, err, _) in run.ratings.items()}) for run in runs]


def pairing_counts(rows: Sequence[GameRow]) -> list[PairingCount]:
    """Games per table of bots, with each bot's pairwise points at that table."""
    games: Counter[str] = Counter()
    points: dict[str, dict[str, float]] = {}
    for row in rows:
        games[row.pairing] += 1
        got = points.setdefault(row.pairing, {})
        places = row.result().places()
        for a in places:
            for b in places:
                if a != b:
                    got[a] = got.get(a, 0.0) + (1.0 if places[a] < places[b] else 0.5 if places[a] == places[b] else 0.0)
    out = []
    for pairing, n in sorted(games.items()):
        bots = tuple(pairing.split("+"))
        out.append(PairingCount(bots, n, tuple(points[pairing].get(b, 0.0) for b in bots)))
    return out


# ------------------------------------------------------------------------------------------ charts


def _figure(data: ReportData) -> Figure:
    """Two panels: Elo with 95% error bars, best on top; ratings over time with their error bands."""
    from matplotlib.figure import Figure

    bots = data.table.bots
    fig = Figure(figsize=(11, max(3.2, 0.45 * len(bots) + 1.6)), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(1, 1.5))
    ys = list(range(len(bots)))[::-1]
    colours = [f"C{i % 10}" for i in range(len(bots))]
    for y, b, c in zip(ys, bots, colours, strict=True):
        left.errorbar(b.elo, y, xerr=b.error if math.isfinite(b.error) else 0, fmt="o", color=c, capsize=4, lw=2)
    left.set_yticks(ys, [b.name for b in bots])
    left.set_xlabel(f"Elo ({data.table.fit.scale}), 95% error bars")
    left.set_title(f"Ratings after {data.table.matches} games")
    left.grid(axis="x", alpha=0.3)
    colour_of = {b.name: c for b, c in zip(bots, colours, strict=True)}
    for name in [b.name for b in bots]:
        pts = [(p.games, *p.ratings[name]) for p in data.history if name in p.ratings]
        if not pts:
            continue
        xs, rs, es = zip(*pts, strict=True)
        if len(xs) == 1:  # one point (a bot just added to a ladder): a line and a band of one point draw nothing
            right.plot(xs, rs, color=colour_of[name], label=name, lw=2, marker="o")
            right.errorbar(xs, rs, yerr=[e if math.isfinite(e) else 0 for e in es], fmt="none",
                           ecolor=colour_of[name], capsize=4, lw=2)
            continue
        right.plot(xs, rs, color=colour_of[name], label=name, lw=2)
        right.fill_between(xs, [r - e for r, e in zip(rs, es, strict=True)], [r + e for r, e in zip(rs, es, strict=True)],
                           color=colour_of[name], alpha=0.15, lw=0)
    right.set_xlabel("games finished")
    right.set_ylabel("Elo")
    right.set_title("Ratings as the games came in" + (" (kept rating runs)" if data.history_source == "stored" else ""))
    right.grid(alpha=0.3)
    if data.history:
        right.legend(loc="best", fontsize="small")
    return fig


def _svg(fig: Figure) -> str:
    """The chart as SVG text without its XML prologue and metadata, so it can go inline in the page too."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.S)


# ------------------------------------------------------------------------------------------ the page


def _e(x: object) -> str:
    return html.escape(str(x))


def _num(x: float, spec: str = ".0f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _error_bar_cell(elo: float, err: float, lo: float, hi: float) -> str:
    """A small SVG with the rating's 95% interval on the common scale of the table."""
    width, pad = 220, 6

    def x(v: float) -> float:
        return pad + (v - lo) / (hi - lo) * (width - 2 * pad) if hi > lo else width / 2

    e = err if math.isfinite(err) else 0.0
    return (f'<svg class="bar" width="{width}" height="16" viewBox="0 0 {width} 16" role="img" '
            f'aria-label="{elo:.0f} plus or minus {e:.0f}"><line x1="{pad}" y1="8" x2="{width - pad}" y2="8" class="axis"/>'
            f'<line x1="{x(elo - e):.1f}" y1="8" x2="{x(elo + e):.1f}" y2="8" class="interval"/>'
            f'<line x1="{x(elo - e):.1f}" y1="3" x2="{x(elo - e):.1f}" y2="13" class="interval"/>'
            f'<line x1="{x(elo + e):.1f}" y1="3" x2="{x(elo + e):.1f}" y2="13" class="interval"/>'
            f'<circle cx="{x(elo):.1f}" cy="8" r="4" class="point"/></svg>')


def _rating_rows(t: RatingTable) -> str:
    finite = [b for b in t.bots if math.isfinite(b.elo)]
    lo = min((b.elo - (b.error if math.isfinite(b.error) else 0) for b in finite), default=0.0)
    hi = max((b.elo + (b.error if math.isfinite(b.error) else 0) for b in finite), default=1.0)
    rows = []
    for i, b in enumerate(t.bots, 1):
        los = "" if b.los_next is None else f"{b.los_next * 100:.1f}%"
        rows.append(f"<tr><td>{i}</td><th>{_e(b.name)}</th><td>{_num(b.elo)}</td><td>±{_num(b.error)}</td>"
                    f"<td>{_error_bar_cell(b.elo, b.error, lo, hi)}</td><td>{los}</td><td>{b.games}</td>"
                    f"<td>{_num(b.score * 100, '.1f')}%</td><td>{b.forfeits}</td>"
                    f"<td>{b.openskill_mu:.1f} ± {b.openskill_sigma:.1f}</td></tr>")
    return "\n".join(rows)


def _cross_rows(t: RatingTable) -> str:
    head = "<tr><th></th>" + "".join(f"<th>{_e(n)}</th>" for n in t.names) + "<th>total</th></tr>"
    rows = [head]
    for i, n in enumerate(t.names):
        cells = []
        for j in range(len(t.names)):
            g = float(t.cross_games[i, j])
            if i == j:
                cells.append('<td class="self"></td>')
            elif g == 0:
                cells.append("<td>-</td>")
            else:
                s = float(t.cross_score[i, j])
                share = s / g
                shade = f"hsl({120 * share:.0f}, 55%, 85%)"  # red for a losing record, green for a winning one
                cells.append(f'<td style="background:{shade}" title="{share * 100:.0f}%">{s:g}/{g:g}</td>')
        total = f"{float(t.cross_score[i].sum()):g}/{float(t.cross_games[i].sum()):g}"
        rows.append(f"<tr><th>{_e(n)}</th>{''.join(cells)}<td>{total}</td></tr>")
    return "\n".join(rows)


def _duration(seconds: float) -> str:
    """19 s, 3 min 5 s, 2 h 4 min: not "0.3 minutes"."""
    s = round(seconds)
    if s < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


_TIME_FIELDS = (("per_move_ms", "per move"), ("bank_ms", "bank"), ("grace_ms", "grace after a disconnect"),
                ("connect_ms", "to join"))
_DEFAULT_WHEN_ZERO = {"per_move_ms", "grace_ms", "connect_ms"}  # 0 there: the referee's own default


def _time_control(tc: dict[str, int]) -> str:
    parts = []
    for key, label in _TIME_FIELDS:
        if key not in tc:
            continue
        ms = int(tc[key])
        if ms == 0 and key == "bank_ms":
            continue
        value = "the referee's default" if ms == 0 and key in _DEFAULT_WHEN_ZERO else f"{ms:,} ms"
        parts.append(f"{label} {value}")
    return ", ".join(parts) or "the referee's defaults"


def _setting_rows(data: ReportData) -> str:
    """What was played: variant, options, time control, wall time."""
    options = ", ".join(f"<code>{_e(k)} = {_e(v)}</code>" for k, v in sorted(data.options.items())) or "the variant's defaults"
    if data.wall_s is not None:
        n = len(data.runs)
        wall = f"{_duration(data.wall_s)} over {n} run{'s' * (n != 1)}"
        if data.seconds > data.wall_s * 1.05:
            wall += f" ({_duration(data.seconds)} of games, several at once)"
    else:
        wall = f"not kept by this database ({_duration(data.seconds)} of games)"
    rows = [("variant", f"<code>{_e(data.variant)}</code>"), ("options", options),
            ("time control", _e(_time_control(data.time_control))), ("wall time", _e(wall))]
    return "\n".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)


def _fault_rows(data: ReportData) -> str:
    """One row per bot that played, most faults first."""
    def weight(f: BotFaults) -> tuple[int, str]:
        return (-(f.refused + f.timed_out + f.disconnects + f.restarts), f.bot)

    rows = []
    for f in sorted(data.faults.values(), key=weight):
        codes = ", ".join(f"<code>{_e(c)}</code> {n}" for c, n in sorted(f.rejected.items(), key=lambda kv: (-kv[1], kv[0])))
        logs = "<br>".join(f"<code>{_e(p)}</code>" for p in f.logs)
        cls = ' class="fault"' if f.any else ""
        rows.append(f"<tr{cls}><th>{_e(f.bot)}</th><td>{f.faulty_games} of {f.games}</td><td>{f.asked}</td>"
                    f"<td>{f.refused}</td><td class=\"codes\">{codes}</td><td>{f.timed_out}</td><td>{f.disconnects}</td>"
                    f"<td>{f.restarts}</td><td class=\"logs\">{logs}</td></tr>")
    return "\n".join(rows)


def _fault_summary(data: ReportData) -> str:
    bad = [f for f in data.faults.values() if f.any]
    recorded = max((f.games for f in data.faults.values()), default=0)
    older = ""
    if any(f.games == 0 for f in data.faults.values()) or recorded == 0:
        older = " Games stored before faults were kept (an older database) count in no row."
    if not bad:
        return f"No bot had an answer refused, a move made for it, a disconnect or a restart.{older}"
    names = ", ".join(_e(f.bot) for f in sorted(bad, key=lambda f: f.bot))
    return f"{len(bad)} bot{'s' * (len(bad) != 1)} with faults: {names}.{older}"


def _pairing_rows(pairings: Sequence[PairingCount]) -> str:
    rows = []
    for p in pairings:
        points = ", ".join(f"{_e(b)} {s:g}" for b, s in zip(p.bots, p.points, strict=True))
        rows.append(f"<tr><th>{' vs '.join(_e(b) for b in p.bots)}</th><td>{p.games}</td><td>{points}</td></tr>")
    return "\n".join(rows)


_STYLE = """
body { font-family: "DejaVu Sans", "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 1.5em auto; max-width: 72em;
       padding: 0 1em; color: #15171a; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.8em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { text-align: left; }
.cross td { text-align: center; } .cross td.self { background: #eee; }
svg.bar .axis { stroke: #ccc; stroke-width: 1; } svg.bar .interval { stroke: #1f5fa8; stroke-width: 2; }
svg.bar .point { fill: #c3132b; }
.chart svg { max-width: 100%; height: auto; }
.notes { color: #555; font-size: 0.9em; }
.setting th { padding-right: 1.5em; } .setting td { text-align: left; }
.faults tr.fault th { color: #a4161a; } .faults td.codes, .faults td.logs { text-align: left; font-size: 0.9em; }
"""


def render_html(data: ReportData, chart_svg: str) -> str:
    t = data.table
    notes = "".join(f"<li>{_e(n)}</li>" for n in t.notes)
    how = (f"as the database kept them after each of its {len(data.history)} rating runs" if data.history_source == "stored" else
           f"fitted again on the first N games in the order they finished ({len(data.history)} points)")
    return f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tournament report: {_e(data.variant)}</title><style>{_STYLE}</style></head>
<body>
<h1>Tournament report: {_e(data.variant)}</h1>
<p>{t.matches} games, {len(t.bots)} bots, {data.forfeits} forfeited seats; results from <code>{_e(data.db)}</code>;
written {_e(time.strftime("%Y-%m-%d %H:%M"))}.</p>
<table class="setting">
{_setting_rows(data)}
</table>

<h2 id="ratings">Ratings</h2>
<table class="ratings">
<tr><th>#</th><th>bot</th><th>Elo</th><th>95%</th><th>error bar (common scale)</th><th title="likelihood of superiority over the next bot down">LOS↓</th>
<th>games</th><th>score</th><th>forfeits</th><th>OpenSkill μ ± σ</th></tr>
{_rating_rows(t)}
</table>
<ul class="notes">{notes}<li>LOS↓: the likelihood that a bot is truly stronger than the next one down; score: pairwise points.</li></ul>

<h2 id="faults">Faults</h2>
<p>{_fault_summary(data)}</p>
<table class="faults">
<tr><th>bot</th><th>games with faults</th><th>decisions asked</th><th>answers refused</th><th>by reason code</th>
<th title="moves the referee made for the bot: a missed deadline, or a flood of refused answers">moves timed out</th>
<th>disconnects</th><th>process restarts</th><th>logs</th></tr>
{_fault_rows(data)}
</table>
<p class="notes">Refused: answers the referee did not accept (each with a reason code, as the bot was told); timed out:
moves the referee made for the bot because its deadline passed; restarts: of the bot's processes, by the runner,
after they died. The referee's reason for each refusal is in its log (<code>referee.log</code> beside the database
for an embedded referee).</p>

<h2 id="over-time">Ratings over time</h2>
<p class="notes">Ratings {how}; the bands are the 95% error bars.</p>
<div class="chart">{chart_svg}</div>

<h2 id="crosstable">Crosstable</h2>
<p class="notes">The row bot's pairwise points against the column bot, out of the games they met in.</p>
<table class="cross">
{_cross_rows(t)}
</table>

<h2 id="pairings">Games per pairing</h2>
<table class="pairings">
<tr><th>table</th><th>games</th><th>pairwise points</th></tr>
{_pairing_rows(data.pairings)}
</table>
</body>
</html>
"""


def write_html_report(data: ReportData, out_html: Path) -> list[Path]:
    """The page at ``out_html``, and its charts beside it, named after it (``report.html``: ``report-ratings.svg``
    and ``report-ratings.png``, so reports in one folder keep their own); returns the three paths."""
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "rummy-referee"  # stable element ids: the same data gives the same file
    out_html.parent.mkdir(parents=True, exist_ok=True)
    fig = _figure(data)
    svg_text = _svg(fig)
    svg_path = out_html.with_name(f"{out_html.stem}-ratings.svg")
    png_path = out_html.with_name(f"{out_html.stem}-ratings.png")
    svg_path.write_text(svg_text, encoding="utf-8")
    fig.savefig(png_path, format="png", dpi=120)
    out_html.write_text(render_html(data, svg_text), encoding="utf-8")
    return [out_html, svg_path, png_path]
