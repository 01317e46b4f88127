"""The ladder's web page and JSON, served in a process of its own (:mod:`.webproc`) by the viewer's aiohttp app (so
the viewer's bounds hold: connections counted per address, idle ones closed, bodies small) with these routes first:

- ``/``: the leaderboard (rank, name@version, Elo ± 95% with a drawn bar, games, online, faults, paused);
- ``/bots/NAME[@VERSION]``: a bot's page (rating history chart, faults by reason code, why it is paused, recent
  games linked to the replay viewer, ``/replay/MATCH_ID``, and live ones to ``/live/MATCH_ID``);
- ``/api/leaderboard`` and ``/api/bots/NAME[@VERSION]``: the same as JSON.

Everything is read from the store (:class:`StoreSource`: the SQLite file read-only, or the same PostgreSQL
database), in one thread of its own, never on the loop that answers: the bots, the last rating run, and the fault
tallies (read whole once, then only the games stored since). Who is connected now and which games are being played
exist only in the service's memory: they come from the service (:class:`Presence`, asked at most once a second).

Every page is built at most once a second (``CACHE_S``) whatever the number of readers (one build at a time per
page, shared by every reader waiting for it), and at most ``CACHE_ENTRIES`` are kept: a crowd reloading the page
costs one build a second, not one per reader. A page up to ``STALE_S`` old is answered at once while the next is
built (1,000 bots take tens of milliseconds to build; no reader of a busy page waits for that).
``tournament ladder status`` prints the same leaderboard in the terminal.
"""

from __future__ import annotations

import asyncio
import html
import math
import time
import urllib.request
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import orjson
import structlog
from aiohttp import web
from rich.console import Console
from rich.markup import escape

from tournaments.ladder.store import BotRow, FaultSummary, SqliteLadderStore, check_name, parse_ref
from tournaments.ladder.stores import open_store
from tournaments.ladder.versions import sprt_view

__all__ = ["routes", "leaderboard", "bot_page_data", "fetch_leaderboard", "leaderboard_from_store", "print_leaderboard",
           "Presence", "StoreSource", "UNKNOWN"]

T = TypeVar("T")
CACHE_S = 1.0
STALE_S = 10.0  # a page older than this is built before it is answered (a bot page nobody read for an hour)
CACHE_ENTRIES = 256
NO_SUCH_BOT = "NO_SUCH_BOT"  # the web page's reason code for a bot that is not registered
Body = tuple[bytes, str, int]  # body, content type, status


def _err(err: float) -> float | None:
    return None if not math.isfinite(err) or err < 0 else round(err, 1)


def leaderboard(bots: Sequence[BotRow], ratings: dict[int, tuple[float, float, float, float, int]],
                faults: dict[int, FaultSummary], online: Callable[[BotRow], bool | None]) -> list[dict[str, Any]]:
    """Rated bots best first (then the unrated ones by games); ``ratings``: per bot (elo, err or -1/inf, mu, sigma,
    games)."""
    rows: list[dict[str, Any]] = []
    now = time.time()
    for b in bots:
        elo, err, mu, sigma, _n = ratings.get(b.id, (0.0, math.inf, 25.0, 25.0 / 3, 0))
        f = faults.get(b.id, FaultSummary())
        rows.append({"name": b.name, "version": b.version, "bot": b.label, "kind": b.kind,
                     "elo": round(elo, 1) if _err(err) is not None else None, "error95": _err(err),
                     "openskill": {"mu": round(mu, 3), "sigma": round(sigma, 3)}, "games": f.games,
                     "online": online(b), "faults": f.to_json(),
                     "paused": b.pause_reason if b.paused(now) else "",
                     "paused_until": b.paused_until if b.paused(now) else None})
    rows.sort(key=lambda r: (r["elo"] is None, -float(r["elo"] or 0.0), -int(r["games"]), str(r["bot"])))
    for i, r in enumerate(rows):
        r["rank"] = i + 1 if r["elo"] is not None else None
    return rows


def bot_page_data(store: SqliteLadderStore, bot: BotRow, board_row: dict[str, Any], labels: dict[int, str],
                  live: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    history = [{"run": p.run, "at": p.at, "elo": round(p.elo, 1), "error95": _err(p.err), "games": p.games}
               for p in store.rating_history(bot.id)]
    recent = []
    for g in store.recent_games(bot.id, 30):
        place = next((i for i, grp in enumerate(g.ranking) for s in grp if g.seats[s] == bot.id), None)
        recent.append({"match_id": g.match_id, "replay": f"/replay/{g.match_id}", "finished_at": g.finished_at,
                       "seats": [labels.get(s, str(s)) for s in g.seats], "place": place,
                       "forfeited": [labels.get(g.seats[s], str(s)) for s in g.forfeited if 0 <= s < len(g.seats)],
                       "reason": g.reason, "why": g.why})
    tests = [sprt_view(t, labels) for t in store.sprt_tests() if bot.id in (t.candidate_id, t.baseline_id)]
    playing = [{"match_id": m, "live": f"/live/{m}", "seats": [labels.get(s, str(s)) for s in seats]}
               for m, seats in live.items() if bot.id in seats]
    return {**board_row, "registered_at": bot.created_at, "revoked": bot.revoked_at is not None,
            "pause_reason": bot.pause_reason, "history": history, "recent_games": recent, "live_games": playing, "sprt": tests}


# ---------------------------------------------------------------- where the pages' numbers come from


@dataclass(frozen=True)
class Presence:
    """What only the running service knows: the bots whose stream is open (None: not known now) and the games being
    played (match id -> bot per seat)."""

    online: frozenset[int] | None
    live: dict[str, tuple[int, ...]]

    @classmethod
    def from_json(cls, data: Any) -> Presence:
        """The service's answer (``service.presence_json``). :raises ValueError: not of that form."""
        if not isinstance(data, dict) or not isinstance(data.get("online"), list) or not isinstance(data.get("live"), list):
            raise ValueError("not a presence")
        return cls(frozenset(int(b) for b in data["online"]),
                   {str(m): tuple(int(b) for b in seats) for m, seats in data["live"]})


UNKNOWN = Presence(None, {})


class StoreSource:
    """The pages' numbers from the ladder's store (``database``: the SQLite file, opened read-only, or a PostgreSQL
    URL), read in one thread of its own (the store's connection belongs to it), and ``presence`` from the service.

    The fault tallies are read whole once, then only for the games stored since (``faults(after, upto)``): a
    ladder of a million games is not read again every second. Games are counted the same way."""

    def __init__(self, database: str | Path, variant: str, presence: Callable[[], Awaitable[Presence]]) -> None:
        self.database, self.variant, self.presence = database, variant, presence
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ladder-store")
        self._store: SqliteLadderStore | None = None
        self._faults: dict[int, FaultSummary] = {}
        self._seen = 0  # the last game id taken into the tallies
        self.stored = 0  # games in the store, as of the last look
        self._board: tuple[float, Presence, list[dict[str, Any]]] | None = None  # the last board built, for bot pages

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` in the store's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn)

    async def open(self) -> None:
        """Open the store (in its thread) and take in every game stored so far.
        :raises FileNotFoundError, StoreUnavailable, StoreTooNew: as :func:`.stores.open_store`."""
        await self.run(self._catch_up)

    def close(self) -> None:
        def shut() -> None:
            if self._store is not None:
                self._store.close()
                self._store = None

        self._pool.submit(shut).result()
        self._pool.shutdown()

    @property
    def store(self) -> SqliteLadderStore:
        if self._store is None:
            self._store = open_store(self.database, readonly=True)
        return self._store

    def _catch_up(self) -> None:
        """Add the games stored since the last look to the tallies. A game's rows are written in one transaction
        by the service's one connection, so every game up to ``upto`` is there whole."""
        upto = self.store.last_game_id()
        if upto <= self._seen:
            return
        for b, f in self.store.faults(self._seen, upto).items():
            mine = self._faults.setdefault(b, FaultSummary())
            mine.games += f.games
            mine.forfeits += f.forfeits
            mine.refused.update(f.refused)
            mine.timed_out += f.timed_out
            mine.disconnects += f.disconnects
        self.stored += self.store.count_games(self._seen, upto)
        self._seen = upto

    def board(self, presence: Presence) -> list[dict[str, Any]]:
        """The leaderboard as stored now (in the store's thread); built at most once per ``CACHE_S`` for a presence,
        however many bot pages (each shows its row) are built meanwhile."""
        last = self._board
        if last is not None and last[1] is presence and time.monotonic() - last[0] < CACHE_S:
            return last[2]
        self._catch_up()
        _, ratings = self.store.latest_ratings()
        online = presence.online

        def is_online(b: BotRow) -> bool | None:
            return None if online is None else b.id in online

        rows = leaderboard(self.store.bots(), ratings, self._faults, is_online)
        self._board = (time.monotonic(), presence, rows)
        return rows

    def labels(self) -> dict[int, str]:
        return {b.id: b.label for b in self.store.bots(include_revoked=True)}

    def bot(self, ref: str, presence: Presence) -> dict[str, Any] | None:
        """A bot's page (the newest version when ``ref`` names none), or None (in the store's thread)."""
        name, version = parse_ref(ref)
        found = [b for b in self.store.find(name, version) if b.revoked_at is None]
        if not found:
            return None
        bot = max(found, key=lambda b: b.id)
        row = next((r for r in self.board(presence) if r["bot"] == bot.label), None)
        if row is None:  # revoked between the two reads
            return None
        return bot_page_data(self.store, bot, row, self.labels(), presence.live)


class _Cache:
    """Bodies built at most once per ``CACHE_S`` each, one build at a time per key whatever the number of readers,
    at most ``CACHE_ENTRIES`` kept (least recently used go)."""

    def __init__(self) -> None:
        self.items: OrderedDict[str, tuple[float, Body]] = OrderedDict()
        self.building: dict[str, asyncio.Task[tuple[float, Body] | None]] = {}
        self.log = structlog.get_logger(component="ladder-web")

    async def get(self, key: str, build: Callable[[], Awaitable[Body]]) -> web.Response:
        hit = self.items.get(key)
        age = time.monotonic() - hit[0] if hit is not None else math.inf
        if age >= CACHE_S:
            task = self.building.get(key)
            if task is None:
                task = self.building[key] = asyncio.get_running_loop().create_task(self._build(key, build))
            if hit is None or age >= STALE_S:
                # shielded: a reader that goes away does not cancel the build the others wait for
                hit = await asyncio.shield(task) or hit
                if hit is None:
                    raise RuntimeError(f"the ladder's page {key[:80]!r} could not be built")
        assert hit is not None
        if key in self.items:
            self.items.move_to_end(key)
        body, ctype, status = hit[1]
        return web.Response(body=body, content_type=ctype, status=status, headers={"Cache-Control": "max-age=1"})

    async def _build(self, key: str, build: Callable[[], Awaitable[Body]]) -> tuple[float, Body] | None:
        try:
            hit = (time.monotonic(), await build())
        except Exception:  # the last body stays; the next reader tries again
            self.log.exception("ladder_page_build_failed", page=key[:80])
            return None
        finally:
            self.building.pop(key, None)
        self.items[key] = hit
        while len(self.items) > CACHE_ENTRIES:
            self.items.popitem(last=False)
        return hit


def _valid_ref(ref: str) -> bool:
    """A ref that could name a bot (no store read for what could not)."""
    name, version = parse_ref(ref)
    try:
        check_name(name, version or "1")
    except ValueError:
        return False
    return True


def routes(source: StoreSource) -> list[web.RouteDef]:
    cache = _Cache()

    def missing(ref: str) -> Body:
        return orjson.dumps({"error": f"no bot {ref[:60]!r} on this ladder", "reason": NO_SUCH_BOT}), "application/json", 404

    def missing_page() -> Body:
        return b"<!doctype html><title>no such bot</title><p>No such bot. <a href='/'>Leaderboard</a>", "text/html", 404

    async def board_body(as_json: bool) -> Body:
        presence = await source.presence()

        def build() -> Body:
            rows = source.board(presence)
            if as_json:
                return orjson.dumps({"variant": source.variant, "games": source.stored, "bots": rows}), \
                    "application/json", 200
            labels = source.labels()
            live = [(m, [labels.get(b, str(b)) for b in seats]) for m, seats in list(presence.live.items())[:50]]
            return _board_html(rows, source.variant, source.stored, live).encode(), "text/html", 200

        return await source.run(build)

    async def bot_body(ref: str, as_json: bool) -> Body:
        if not _valid_ref(ref):
            return missing(ref) if as_json else missing_page()
        presence = await source.presence()
        data = await source.run(lambda: source.bot(ref, presence))
        if data is None:
            return missing(ref) if as_json else missing_page()
        return (orjson.dumps(data), "application/json", 200) if as_json else (_bot_html(data).encode(), "text/html", 200)

    async def api_board(request: web.Request) -> web.Response:
        return await cache.get("api/board", lambda: board_body(True))

    async def page_board(request: web.Request) -> web.Response:
        return await cache.get("page/board", lambda: board_body(False))

    async def api_bot(request: web.Request) -> web.Response:
        ref = request.match_info["ref"][:80]
        return await cache.get(f"api/bot/{ref}", lambda: bot_body(ref, True))

    async def page_bot(request: web.Request) -> web.Response:
        ref = request.match_info["ref"][:80]
        return await cache.get(f"page/bot/{ref}", lambda: bot_body(ref, False))

    return [web.get("/", page_board), web.get("/bots/{ref}", page_bot), web.get("/api/leaderboard", api_board),
            web.get("/api/bots/{ref}", api_bot)]


# ---------------------------------------------------------------- HTML (no scripts: the numbers are in the page)

_STYLE = ("body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}"
          "td,th{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}"
          ".on{color:#080}.off{color:#999}.paused{color:#b50}svg{vertical-align:middle}")


def _e(x: Any) -> str:
    return html.escape(str(x))


def _bar(elo: float | None, err: float | None, lo: float, hi: float, width: int = 160) -> str:
    if elo is None or err is None or hi <= lo:
        return ""

    def x(v: float) -> float:
        return max(0.0, min(width, (v - lo) / (hi - lo) * width))

    return (f'<svg width="{width}" height="12" role="img" aria-label="{elo:.0f} ± {err:.0f}">'
            f'<line x1="{x(elo - err):.1f}" x2="{x(elo + err):.1f}" y1="6" y2="6" stroke="#47a" stroke-width="2"/>'
            f'<circle cx="{x(elo):.1f}" cy="6" r="3" fill="#246"/></svg>')


def _board_html(rows: list[dict[str, Any]], variant: str, stored: int, live: list[tuple[str, list[str]]]) -> str:
    rated = [r for r in rows if r["elo"] is not None]
    lo = min((r["elo"] - r["error95"] for r in rated), default=0.0)
    hi = max((r["elo"] + r["error95"] for r in rated), default=0.0)
    body = []
    for r in rows:
        f = r["faults"]
        faults = f["forfeits"] + sum(f["refused"].values()) + f["timed_out"] + f["disconnects"]
        elo = f"{r['elo']:.0f} ± {r['error95']:.0f}" if r["elo"] is not None else "unrated"
        online = '<span class="on">online</span>' if r["online"] else '<span class="off">offline</span>'
        if r["paused"]:
            online = f'<span class="paused" title="{_e(r["paused"])}">paused</span>'
        body.append(f"<tr><td class=n>{r['rank'] or ''}</td><td><a href='/bots/{_e(r['bot'])}'>{_e(r['bot'])}</a></td>"
                    f"<td class=n>{elo}</td><td>{_bar(r['elo'], r['error95'], lo, hi)}</td><td class=n>{r['games']}</td>"
                    f"<td>{online}</td><td class=n>{faults}</td></tr>")
    playing = "".join(f"<li><a href='/live/{_e(m)}'>{_e(' vs '.join(seats))}</a></li>" for m, seats in live)
    return (f"<!doctype html><html><head><meta charset=utf-8><title>Ladder: {_e(variant)}</title>"
            f"<style>{_STYLE}</style></head><body><h1>Ladder: {_e(variant)}</h1>"
            f"<p>{stored} games. Elo ± 95% (Bradley-Terry, whole history, mean 0). "
            f"<a href='/api/leaderboard'>JSON</a></p><table><thead><tr><th>#</th><th>bot</th><th>Elo ± 95%</th><th></th>"
            f"<th>games</th><th>now</th><th>faults</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
            f"<h2>Playing now</h2><ul>{playing or '<li>nothing</li>'}</ul></body></html>")


def _history_svg(history: list[dict[str, Any]], width: int = 600, height: int = 160) -> str:
    pts = [h for h in history if h["error95"] is not None]
    if len(pts) < 2:
        return "<p>Not enough rating runs for a chart yet.</p>"
    lo = min(h["elo"] - h["error95"] for h in pts)
    hi = max(h["elo"] + h["error95"] for h in pts)
    span = hi - lo or 1.0

    def xy(i: int, v: float) -> str:
        return f"{i / (len(pts) - 1) * (width - 10) + 5:.1f},{height - 5 - (v - lo) / span * (height - 10):.1f}"

    band = " ".join(xy(i, h["elo"] + h["error95"]) for i, h in enumerate(pts)) + " " + \
        " ".join(xy(i, h["elo"] - h["error95"]) for i, h in reversed(list(enumerate(pts))))
    line = " ".join(xy(i, h["elo"]) for i, h in enumerate(pts))
    return (f'<svg width="{width}" height="{height}" role="img" aria-label="rating history">'
            f'<polygon points="{band}" fill="#cde"/><polyline points="{line}" fill="none" stroke="#246" stroke-width="2"/>'
            f'<text x="5" y="12" font-size="11">{hi:.0f}</text><text x="5" y="{height - 8}" font-size="11">{lo:.0f}</text></svg>')


def _sprt_html(tests: list[dict[str, Any]]) -> str:
    if not tests:
        return "<p>None: this bot is not a new version of another, nor has a newer one.</p>"
    rows = []
    for t in tests:
        e = t["elo"]
        lo = "-inf" if e["lower"] is None else f"{e['lower']:+.0f}"
        hi = "+inf" if e["upper"] is None else f"{e['upper']:+.0f}"
        elo = "" if e["elo"] is None else f"{e['elo']:+.0f} [{lo}, {hi}]"
        rows.append(f"<tr class='sprt'><td>{_e(t['candidate'])} vs {_e(t['baseline'])}</td>"
                    f"<td class='sprt-status'>{_e(t['status'])}</td><td class=n>{t['llr']:+.2f}</td>"
                    f"<td class=n>[{t['lower_bound']:+.2f}, {t['upper_bound']:+.2f}]</td>"
                    f"<td>[{t['elo0']:g}, {t['elo1']:g}] α={t['alpha']:g} β={t['beta']:g}</td><td class=n>{t['deals']}</td>"
                    f"<td class=n>{elo}</td><td>{_e(t['verdict'])}</td></tr>")
    return ("<table><thead><tr><th>test</th><th>status</th><th>LLR</th><th>bounds</th><th>H0, H1 (Elo)</th>"
            f"<th>deals</th><th>Elo [95%]</th><th>verdict</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _bot_html(d: dict[str, Any]) -> str:
    f = d["faults"]
    refused = ", ".join(f"{_e(k)} × {v}" for k, v in sorted(f["refused"].items(), key=lambda kv: -kv[1])) or "none"
    elo = f"{d['elo']:.0f} ± {d['error95']:.0f}" if d["elo"] is not None else "unrated"
    paused = f"<p class=paused><b>Paused</b>: {_e(d['paused'])}</p>" if d["paused"] else (
        f"<p>Last pause: {_e(d['pause_reason'])}</p>" if d["pause_reason"] else "")
    games = "".join(
        f"<tr><td><a href='{_e(g['replay'])}'>{_e(g['match_id'])}</a></td><td>{_e(' vs '.join(g['seats']))}</td>"
        f"<td class=n>{'' if g['place'] is None else g['place'] + 1}</td><td>{_e(', '.join(g['forfeited']))}</td>"
        f"<td>{_e(g['why'][:160])}</td></tr>" for g in d["recent_games"])
    live = "".join(f"<li><a href='{_e(g['live'])}'>{_e(' vs '.join(g['seats']))}</a></li>" for g in d["live_games"])
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{_e(d['bot'])}</title><style>{_STYLE}</style></head>"
            f"<body><p><a href='/'>Leaderboard</a></p><h1>{_e(d['bot'])}</h1><p>{_e(d['kind'])} bot; rank "
            f"{d['rank'] or '-'}; Elo {elo}; {d['games']} games; {'online' if d['online'] else 'offline'}</p>{paused}"
            f"<h2>Rating history</h2>{_history_svg(d['history'])}<h2>SPRT (new version against the previous)</h2>"
            f"{_sprt_html(d['sprt'])}<h2>Faults</h2><ul><li>forfeits: {f['forfeits']}</li>"
            f"<li>refused answers: {refused}</li><li>missed deadlines: {f['timed_out']}</li>"
            f"<li>disconnects: {f['disconnects']}</li></ul><h2>Playing now</h2><ul>{live or '<li>nothing</li>'}</ul>"
            f"<h2>Recent games</h2><table><thead><tr><th>replay</th><th>seats</th><th>place</th><th>forfeited</th>"
            f"<th>why scheduled</th></tr></thead><tbody>{games}</tbody></table></body></html>")


# ---------------------------------------------------------------- the terminal


def fetch_leaderboard(web_address: str, timeout: float = 3.0) -> list[dict[str, Any]] | None:
    """The running service's leaderboard, or None when it does not answer."""
    host, _, port = web_address.rpartition(":")
    host = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/api/leaderboard", timeout=timeout) as resp:  # noqa: S310
            data = orjson.loads(resp.read(4 * 2**20))
    except (OSError, ValueError):
        return None
    bots = data.get("bots") if isinstance(data, dict) else None
    return bots if isinstance(bots, list) else None


def leaderboard_from_store(db: Path | str) -> list[dict[str, Any]]:
    """The leaderboard as last stored (``db``: the SQLite file or a PostgreSQL URL), online unknown."""
    with open_store(db, readonly=True) as store:
        _, ratings = store.latest_ratings()
        return leaderboard(store.bots(), ratings, store.faults(), lambda _b: None)


def print_leaderboard(rows: list[dict[str, Any]], console: Console, source: str) -> None:
    from rich.table import Table

    table = Table(title=f"Ladder ({len(rows)} bots)", caption=f"from {source}", caption_justify="left")
    for c in ("#", "bot", "Elo ± 95%", "games", "online", "faults"):
        table.add_column(c, justify="right" if c in ("#", "games", "faults") else "left")
    for r in rows:
        f = r["faults"]
        faults = f["forfeits"] + sum(f["refused"].values()) + f["timed_out"] + f["disconnects"]
        elo = f"{r['elo']:.0f} ± {r['error95']:.0f}" if r["elo"] is not None else "unrated"
        online = "?" if r["online"] is None else "yes" if r["online"] else "no"
        if r.get("paused"):
            online = "paused"
        table.add_row(str(r["rank"] or ""), escape(r["bot"]), elo, str(r["games"]), online, str(faults))
    console.print(table)
