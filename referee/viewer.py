"""The browser viewer over HTTP (aiohttp): match records to step through, and running matches to follow.

Thin over ``referee.timeline``: every card a page is sent comes from ``frame_json`` for the perspective the page
asked for (a seat, the spectator, or everything once the match is over), so the browser draws what it is given
and never holds a card its perspective could not see. The live page gets spectator frames only, built from the
match's record as it is written and woken by the same public events ``Watch`` streams.

``referee serve --http PORT`` runs it next to the gRPC server (on the same event loop, so it can follow that
server's matches); ``referee view RECORD`` serves one record.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from referee.records import read_record
from referee.replay import ReplayMismatch
from referee.session import Watcher
from referee.timeline import (
    SPECTATOR,
    HiddenPerspective,
    Timeline,
    TimelineBuilder,
    build_timeline,
    frame_json,
    hand_json,
    parse_perspective,
    timeline_json,
)

if TYPE_CHECKING:
    from referee.server import RefereeService

__all__ = ["RecordShelf", "create_viewer_app", "start_viewer"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")  # a record's file name without .jsonl
_STATIC = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
_CSP = "default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'"
WAKE_S = 0.5  # the live stream looks at the record at least this often (a record written by another process)
PING_S = 15.0
WAKE_QUEUE = 64  # public events that may wait to wake a live page; it reads the record itself, so more are not needed


class RecordShelf:
    """The records a viewer serves: every ``*.jsonl`` in a folder, or one record file."""

    def __init__(self, where: Path | str | None) -> None:
        self.where = Path(where) if where is not None else None

    def paths(self) -> dict[str, Path]:
        w = self.where
        if w is None:
            return {}
        if w.is_file():
            return {w.stem: w}
        return {p.stem: p for p in w.glob("*.jsonl") if _ID.match(p.stem)} if w.is_dir() else {}

    def path(self, match_id: str) -> Path | None:
        """The record of ``match_id``, or None; an id that is not a plain file name is never a path."""
        if not _ID.match(match_id):
            return None
        if self.where is not None and self.where.is_file():
            return self.where if self.where.stem == match_id else None
        p = (self.where / f"{match_id}.jsonl") if self.where is not None else None
        return p if p is not None and p.is_file() else None


@dataclass
class _Cached:
    stamp: tuple[int, int]
    timeline: Timeline


class _Timelines:
    """Timelines of record files, rebuilt when a file changes (a record still being written grows)."""

    def __init__(self, keep: int = 8) -> None:
        self.keep = keep
        self._cache: OrderedDict[Path, _Cached] = OrderedDict()

    def get(self, path: Path) -> Timeline:
        st = path.stat()
        stamp = (st.st_mtime_ns, st.st_size)
        hit = self._cache.get(path)
        if hit is not None and hit.stamp == stamp:
            self._cache.move_to_end(path)
            return hit.timeline
        timeline = build_timeline(read_record(path), match_id=path.stem)
        self._cache[path] = _Cached(stamp, timeline)
        while len(self._cache) > self.keep:
            self._cache.popitem(last=False)
        return timeline


def _summary(match_id: str, path: Path) -> dict[str, Any]:
    """What the list of records shows, read from a record's first and last lines (no replay)."""
    head: dict[str, Any] = {}
    with path.open(encoding="utf-8") as f:
        for _, line in zip(range(4), f, strict=False):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                break
            if entry.get("type") == "header":
                head["seat_names"] = entry.get("seat_names", [])
            elif entry.get("type") == "match":
                head["variant"] = entry.get("variant", "")
                head["seats"] = entry.get("config", {}).get("seats", 0)
    ending = _last_entry(path)
    st = path.stat()
    return {"match_id": match_id, "variant": head.get("variant", "?"), "seats": head.get("seats", 0),
            "seat_names": head.get("seat_names", []), "complete": ending.get("type") == "result",
            "aborted": ending.get("type") == "aborted", "bytes": st.st_size, "modified": st.st_mtime}


def _last_entry(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - 4096))
        lines = f.read().splitlines()
    for raw in reversed(lines):
        try:
            entry = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        return entry if isinstance(entry, dict) else {}
    return {}


def _read_new_lines(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """Whole lines added to a record since ``offset`` (a line still being written waits for the next look)."""
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b"\n") + 1
    entries = [json.loads(line) for line in data[:end].splitlines() if line.strip()]
    return entries, offset + end


def _error(status: type[web.HTTPException], message: str) -> web.HTTPException:
    return status(text=json.dumps({"error": message}), content_type="application/json")


def create_viewer_app(records: Path | str | None, service: RefereeService | None = None) -> web.Application:
    """The viewer's routes over the records in ``records`` (a folder or one file), and the live matches of
    ``service`` when it runs on the same event loop."""
    shelf = RecordShelf(records)
    timelines = _Timelines()
    web_dir = Path(str(files("referee").joinpath("web")))
    stopping = asyncio.Event()

    def timeline_of(request: web.Request) -> Timeline:
        path = shelf.path(request.match_info["match_id"])
        if path is None:
            raise _error(web.HTTPNotFound, f"no record {request.match_info['match_id']!r}")
        try:
            return timelines.get(path)
        except (ReplayMismatch, ValueError, KeyError) as exc:  # UnreadableRecord is a ValueError
            raise _error(web.HTTPUnprocessableEntity, f"the record does not replay: {exc}") from exc

    def perspective(request: web.Request, tl: Timeline) -> int | str:
        try:
            return parse_perspective(request.query.get("seat"), tl.seats)
        except HiddenPerspective as exc:
            raise _error(web.HTTPBadRequest, str(exc)) from exc

    def as_json(doc: Any) -> web.Response:
        resp = web.json_response(doc, dumps=lambda d: json.dumps(d, separators=(",", ":")))
        resp.enable_compression()
        return resp

    async def page(request: web.Request) -> web.FileResponse:
        name = {"": "index.html", "replay": "viewer.html", "live": "live.html"}[request.match_info.get("kind", "")]
        return web.FileResponse(web_dir / name, headers={"Content-Security-Policy": _CSP, "Cache-Control": "no-cache"})

    async def static(request: web.Request) -> web.FileResponse:
        name = request.match_info["name"]
        kind = _STATIC.get(Path(name).suffix)
        if not re.fullmatch(r"[a-z0-9_-]+\.[a-z]+", name) or kind is None or not (web_dir / name).is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(web_dir / name, headers={"Content-Type": kind, "Cache-Control": "no-cache"})

    async def list_records(request: web.Request) -> web.Response:
        out = []
        for match_id, path in shelf.paths().items():
            try:
                out.append(_summary(match_id, path))
            except (OSError, UnicodeDecodeError):
                continue
        out.sort(key=lambda r: -r["modified"])
        return as_json({"records": out})

    async def record_index(request: web.Request) -> web.Response:
        tl = timeline_of(request)
        who = perspective(request, tl)
        try:
            return as_json(timeline_json(tl, who))
        except HiddenPerspective as exc:
            raise _error(web.HTTPForbidden, str(exc)) from exc

    async def record_hand(request: web.Request) -> web.Response:
        tl = timeline_of(request)
        who = perspective(request, tl)
        try:
            return as_json(hand_json(tl, who, int(request.match_info["hand"])))
        except HiddenPerspective as exc:
            raise _error(web.HTTPForbidden, str(exc)) from exc
        except (KeyError, ValueError) as exc:
            raise _error(web.HTTPNotFound, f"no hand {request.match_info['hand']} in this record") from exc

    async def list_live(request: web.Request) -> web.Response:
        out = []
        for session in list(service.sessions.values()) if service is not None else []:
            if session.done.is_set():
                continue
            out.append({"match_id": session.match_id, "variant": session.match.variant.name,
                        "seat_names": [s.name for s in session.seats], "hands_played": session.match.game.hands_played,
                        "recorded": session.writer is not None})
        return as_json({"live": out})

    async def live_frames(request: web.Request) -> web.StreamResponse:
        """Server-sent events: ``meta`` once, a ``frame`` (spectator) per step as the record grows, ``end``."""
        match_id = request.match_info["match_id"]
        session = service.sessions.get(match_id) if service is not None else None
        if session is not None and session.writer is None:
            raise _error(web.HTTPConflict, "this referee keeps no records (start it with --records DIR) to follow")
        path = session.writer.path if session is not None and session.writer is not None else shelf.path(match_id)
        if path is None or not path.is_file():
            raise _error(web.HTTPNotFound, f"no match {match_id!r} to follow")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        wake = Watcher(WAKE_QUEUE)
        if session is not None and not session.done.is_set():
            session.watchers.append(wake)  # public events wake us: the Watch stream's own feed
        builder = TimelineBuilder(match_id)
        offset, sent_meta, quiet = 0, False, 0.0

        async def send(event: str, data: Any) -> None:
            await resp.write(f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode())

        try:
            while not stopping.is_set():
                entries, offset = _read_new_lines(path, offset)
                frames = [f for e in entries for f in builder.feed(e)]
                if builder.started and not sent_meta:
                    await send("meta", timeline_json(builder.timeline(), SPECTATOR))
                    sent_meta = True
                for f in frames:
                    await send("frame", frame_json(f, SPECTATOR))
                finished = session is not None and session.done.is_set() and not entries
                if builder.complete or builder.aborted or finished:
                    await send("end", {"complete": builder.complete, "aborted": builder.aborted})
                    break
                try:
                    await asyncio.wait_for(wake.next(), WAKE_S)
                    wake.items.clear()
                    quiet = 0.0
                except TimeoutError:
                    quiet += WAKE_S
                    if quiet >= PING_S:
                        await resp.write(b": still here\n\n")
                        quiet = 0.0
        except ReplayMismatch as exc:
            await send("error", {"error": f"the record does not replay: {exc}"})
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            if session is not None and wake in session.watchers:
                session.watchers.remove(wake)
        return resp

    async def on_shutdown(app: web.Application) -> None:
        stopping.set()

    @web.middleware
    async def no_sniff(request: web.Request, handler: Any) -> web.StreamResponse:
        resp: web.StreamResponse = await handler(request)
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        return resp

    app = web.Application(middlewares=[no_sniff])
    app.on_shutdown.append(on_shutdown)
    app.add_routes([
        web.get("/", page),
        web.get("/{kind:replay|live}/{match_id}", page),
        web.get("/static/{name}", static),
        web.get("/api/records", list_records),
        web.get("/api/records/{match_id}", record_index),
        web.get("/api/records/{match_id}/hands/{hand}", record_hand),
        web.get("/api/live", list_live),
        web.get("/api/live/{match_id}/frames", live_frames),
    ])
    return app


async def start_viewer(records: Path | str | None, service: RefereeService | None = None, host: str = "127.0.0.1",
                       port: int = 0) -> tuple[web.AppRunner, int]:
    """A started viewer on ``host:port`` (0 picks a port); returns its runner (``await runner.cleanup()`` stops
    it) and the port."""
    runner = web.AppRunner(create_viewer_app(records, service), shutdown_timeout=2.0, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner, int(runner.addresses[0][1])
