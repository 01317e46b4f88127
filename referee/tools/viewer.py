"""The browser viewer over HTTP (aiohttp): match records to step through, and running matches to follow.

Thin over ``referee.tools.timeline``: every card a page is sent comes from ``frame_json`` for the perspective the page
asked for (a seat, the spectator, or everything once the match is over), so the browser draws what it is given
and never holds a card its perspective could not see. The live page gets spectator frames only, built from the
match's record as it is written. A match still running is shown to nobody but as the spectator sees it.

``referee serve --http PORT`` runs it in a process of its own (``referee.tools.viewer_process``), at a lower priority,
over the records folder; it can also run on the referee's own event loop (``service``: the tests, the ladder's
page), so nothing a web client asks for may run long there either (issue #30):

- a record's timeline is cached and extended by the lines added since it was last read (a live record grows a
  move at a time), never rebuilt per request; reading, replaying and encoding run in a small thread pool
  (``viewer_jobs``, a bounded queue, then 503 ``VIEWER_BUSY``);
- the records listing is paged (``?limit=&after=``) from an index that reads a record once, when its name
  appears, and again only while it has no result;
- a live match's frames are encoded once per step and shared by all of its streams; streams are counted (total
  and per client address), each has a bounded queue, and a reader that falls behind is dropped with a reason;
- connections are counted (total and per address), closed when idle or slow to send their headers
  (``viewer_idle_s``), and aborted when the peer stops reading;
- malformed input is a 400 with a JSON body ``{"error": ..., "reason": CODE}``, never a 500.

``referee view RECORD`` serves one record.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import re
import socket
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import orjson
from aiohttp import web

from referee.service.limits import DEFAULT_LIMITS, ServerLimits
from referee.service.logs import get_logger
from referee.service.records import UnreadableRecord
from referee.service.replay import ReplayMismatch
from referee.tools.timeline import (
    SPECTATOR,
    Frame,
    HiddenPerspective,
    Perspective,
    Timeline,
    TimelineBuilder,
    builder_of,
    frame_json,
    hand_json,
    parse_perspective,
    timeline_json,
)

if TYPE_CHECKING:
    from referee.service.metrics import Metrics
    from referee.service.server import RefereeService
    from referee.service.session import MatchSession

__all__ = ["RecordShelf", "Tuning", "ViewerStats", "create_viewer_app", "start_viewer"]

T = TypeVar("T")

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")  # a record's file name without .jsonl
_CURSOR = re.compile(r"([0-9]{1,20})~([A-Za-z0-9][A-Za-z0-9_.-]{0,127})")  # a listing page's end: mtime_ns~id
_STATIC = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
_CSP = "default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'"
_REASONS = {400: "BAD_REQUEST", 403: "FORBIDDEN", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "TOO_LARGE",
            500: "INTERNAL"}


@dataclass(frozen=True)
class Tuning:
    """The viewer's fixed pacing (not limits a user sets): tests shorten them."""

    poll_s: float = 0.25  # a followed record is looked at this often (one stat; read only if it grew)
    fresh_s: float = 0.1  # a page asked again this soon is served from the last read, even if the record grew
    ping_s: float = 15.0  # an idle event stream gets a comment this often (proxies and browsers keep it open)
    sse_queue: int = 256  # events queued for one stream before its reader counts as too slow and is dropped
    sse_batch: int = 64  # more new frames than this at once: a fresh ``meta`` and the last frame instead
    write_timeout_s: float = 10.0  # one write to a stream may wait this long for its reader
    stall_s: float = 30.0  # a connection whose peer reads nothing for this long is aborted
    page: int = 100  # records in a listing page when ``limit`` is not given
    max_page: int = 500
    listing_recheck_s: float = 1.0  # records with no result yet are looked at again at most this often
    waiting_jobs: int = 16  # jobs queued beyond those running; more: 503 VIEWER_BUSY
    cached_bytes: int = 32 * 2**20  # encoded pages kept (LRU)
    sndbuf: int = 256 * 1024  # a connection's kernel send buffer: a reader that stops is seen soon, memory bounded
    refuse_delay_s: float = 1.0  # a connection past the limits waits this long for its 503
    refusing: int = 256  # refused connections held so at once; more are closed at once, unanswered


@dataclass
class ViewerStats:
    """What the viewer did, for tests and figures: whole replays of a record, bytes read, jobs."""

    builds: int = 0  # a record replayed from its first line
    extends: int = 0  # a record's timeline extended by its new lines
    bytes_read: int = 0
    jobs: int = 0
    busy: int = 0
    dropped_streams: int = 0
    refused_connections: int = 0
    listing_reads: int = 0  # record files read to list them


class _Refused(Exception):
    """A request refused: HTTP status, a reason code, and a message (JSON body ``{"error", "reason"}``)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message


def _shown(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _error_response(status: int, reason: str, message: str) -> web.Response:
    return web.Response(status=status, body=orjson.dumps({"error": message, "reason": reason}),
                        content_type="application/json")


# ---------------------------------------------------------------- records on disk


class RecordShelf:
    """The records a viewer serves: every ``*.jsonl`` in a folder, or one record file."""

    def __init__(self, where: Path | str | None) -> None:
        self.where = Path(where) if where is not None else None

    def names(self) -> Iterable[tuple[str, os.DirEntry[str] | Path]]:
        """(id, entry) of every record: one ``scandir`` pass (run off the loop)."""
        w = self.where
        if w is None:
            return []
        if w.is_file():
            return [(w.stem, w)]
        if not w.is_dir():
            return []
        with os.scandir(w) as it:
            return [(e.name[:-6], e) for e in it if e.name.endswith(".jsonl") and _ID.fullmatch(e.name[:-6])]

    def stamp(self) -> int:
        """The folder's mtime: it changes when a record appears or goes (a record that grows leaves it alone)."""
        try:
            return os.stat(self.where).st_mtime_ns if self.where is not None else 0
        except OSError:
            return 0

    def path(self, match_id: str) -> Path | None:
        """The record of ``match_id``, or None. :raises _Refused: BAD_MATCH_ID for a name that is no id."""
        if not _ID.fullmatch(match_id):
            raise _Refused(400, "BAD_MATCH_ID", f"{_shown(match_id)} is not a match id (letters, digits, '_.-', "
                           "at most 128)")
        if self.where is not None and self.where.is_file():
            return self.where if self.where.stem == match_id else None
        p = (self.where / f"{match_id}.jsonl") if self.where is not None else None
        return p if p is not None and p.is_file() else None


def _summary(match_id: str, path: Path | os.DirEntry[str]) -> dict[str, Any]:
    """What the list of records shows, read from a record's first lines and its last 4 KB (no replay)."""
    head: dict[str, Any] = {}
    with open(path, "rb") as f:
        for _, line in zip(range(4), f, strict=False):
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError:
                break
            if not isinstance(entry, dict):
                break
            if entry.get("type") == "header":
                head["seat_names"] = [str(n) for n in entry.get("seat_names", [])][:16]
            elif entry.get("type") == "match":
                head["variant"] = str(entry.get("variant", ""))
                head["seats"] = entry.get("config", {}).get("seats", 0)
        st = os.fstat(f.fileno())
        f.seek(max(0, st.st_size - 4096))
        ending = _last_entry(f.read())
    return {"match_id": match_id, "variant": head.get("variant", "?"), "seats": head.get("seats", 0),
            "seat_names": head.get("seat_names", []), "complete": ending.get("type") == "result",
            "aborted": ending.get("type") == "aborted", "bytes": st.st_size, "modified": st.st_mtime,
            "_ns": st.st_mtime_ns, "_size": st.st_size}


def _last_entry(tail: bytes) -> dict[str, Any]:
    for raw in reversed(tail.splitlines()):
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        return entry if isinstance(entry, dict) else {}
    return {}


class _Listing:
    """The records listing, kept between calls: a record is read when its name appears, and again only while it
    has no result (it may still grow); the folder is listed again only when its mtime changes."""

    def __init__(self, shelf: RecordShelf, jobs: _Jobs, tuning: Tuning, stats: ViewerStats) -> None:
        self.shelf, self.jobs, self.tuning, self.stats = shelf, jobs, tuning, stats
        self.rows: dict[str, dict[str, Any]] = {}
        self.keys: list[tuple[int, str]] = []  # (-mtime_ns, id), sorted: newest first
        self.dir_stamp: int | None = None
        self.open_rows = 0  # records with no result yet (they may grow)
        self.checked = 0.0
        self.lock = asyncio.Lock()

    async def page(self, limit: int, after: tuple[int, str] | None) -> dict[str, Any]:
        async with self.lock:
            stamp = self.shelf.stamp()
            due = self.open_rows > 0 and time.monotonic() - self.checked >= self.tuning.listing_recheck_s
            if stamp != self.dir_stamp or due:
                self.rows = await self.jobs.run(self._scan, self.rows, stamp != self.dir_stamp)
                self.keys = sorted((-r["_ns"], r["match_id"]) for r in self.rows.values())
                self.open_rows = sum(1 for r in self.rows.values() if not (r["complete"] or r["aborted"]))
                self.dir_stamp, self.checked = stamp, time.monotonic()
        start = 0 if after is None else bisect.bisect_right(self.keys, (-after[0], after[1]))
        keys = self.keys[start:start + limit]
        out = [{k: v for k, v in self.rows[mid].items() if not k.startswith("_")} for _, mid in keys]
        more = start + limit < len(self.keys)
        nxt = f"{-keys[-1][0]}~{keys[-1][1]}" if keys and more else None
        return {"records": out, "next": nxt, "total": len(self.keys)}

    def _scan(self, old: dict[str, dict[str, Any]], relist: bool) -> dict[str, dict[str, Any]]:
        """(Off the loop.) The rows: new names read, open records read again if they changed, gone ones dropped."""
        w = self.shelf.where
        found: Iterable[tuple[str, os.DirEntry[str] | Path]] = self.shelf.names() if relist or w is None else \
            [(mid, w if w.is_file() else w / f"{mid}.jsonl") for mid in old]
        rows: dict[str, dict[str, Any]] = {}
        for mid, where in found:
            row = old.get(mid)
            try:
                if row is not None and (row["complete"] or row["aborted"]):
                    rows[mid] = row  # a finished record does not change
                    continue
                st = where.stat() if isinstance(where, Path) else where.stat(follow_symlinks=True)
                if row is not None and (row["_ns"], row["_size"]) == (st.st_mtime_ns, st.st_size):
                    rows[mid] = row
                    continue
                self.stats.listing_reads += 1
                rows[mid] = _summary(mid, where)
            except (OSError, ValueError):
                continue  # gone, or not readable: not listed
        return rows


# ---------------------------------------------------------------- work off the event loop


class _Jobs:
    """Whole-file work (reading, replaying, encoding) in a small thread pool: the event loop only waits. At most
    ``running`` run and ``waiting`` wait; past that a request is refused 503 VIEWER_BUSY rather than queued."""

    def __init__(self, running: int, waiting: int, stats: ViewerStats) -> None:
        self.limit = max(1, running) + max(0, waiting)
        self.active = 0
        self.stats = stats
        self.pool = ThreadPoolExecutor(max_workers=max(1, running), thread_name_prefix="viewer-job")

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self.active >= self.limit:
            self.stats.busy += 1
            raise _Refused(503, "VIEWER_BUSY", f"the viewer has {self.limit} jobs under way; try again shortly")
        self.active += 1
        self.stats.jobs += 1
        fut = asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)
        fut.add_done_callback(self._done)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            await asyncio.wait([fut])  # the job still runs (and holds its record's lock): wait it out
            raise

    def _done(self, _: asyncio.Future[Any]) -> None:
        self.active -= 1

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


# ---------------------------------------------------------------- timelines, cached and extended


@dataclass
class _Entry:
    """One record's timeline as far as the record is written, and where its next line starts. Every use holds
    ``lock``; the state changes only in a job (a thread) while the lock is held."""

    path: Path
    match_id: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    stamp: tuple[int, int, int] | None = None  # (inode, size, mtime_ns) when last read
    read_at: float = 0.0  # (loop time) when the file was last looked at
    offset: int = 0  # bytes read: the record's whole lines so far
    builder: TimelineBuilder | None = None
    timeline: Timeline | None = None
    error: str = ""  # the record does not replay (kept until it changes)
    feed: _Feed | None = None
    spectator: list[tuple[Frame | None, bytes]] = field(default_factory=list)  # a live record's frames, encoded once


def _sse(event: str, data: Any) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def _parse_lines(data: bytes) -> list[dict[str, Any]]:
    out = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise UnreadableRecord(number, "is not JSON") from exc
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise UnreadableRecord(number, "is not a record entry")
        out.append(entry)
    return out


class _Timelines:
    """Timelines of record files by path. A record that grew is read from where the last read stopped and its
    builder fed the new lines; one that was replaced (another inode, shorter) or whose new lines do not replay
    on the kept builder (a stacked deck the builder could not know) is replayed whole. Whole frames are kept up
    to ``max_frames`` over all records (least recently used go first; one being followed stays)."""

    max_entries = 256  # records kept at all (one that does not replay keeps no frames but is still an entry)

    def __init__(self, jobs: _Jobs, stats: ViewerStats, max_frames: int, tuning: Tuning) -> None:
        self.jobs, self.stats, self.max_frames, self.tuning = jobs, stats, max_frames, tuning
        self._entries: OrderedDict[Path, _Entry] = OrderedDict()
        self._bodies: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self._body_bytes = 0

    def entry(self, path: Path) -> _Entry:
        e = self._entries.get(path)
        if e is None:
            e = self._entries[path] = _Entry(path, path.stem)
        self._entries.move_to_end(path)
        return e

    async def refresh(self, e: _Entry, encode_from: int | None = None) -> list[bytes]:
        """Bring ``e`` up to its file (the caller holds ``e.lock``); with ``encode_from``, the spectator events of
        the frames from there on, for the streams that follow it."""
        try:
            st = os.stat(e.path)
        except OSError as exc:
            raise _Refused(404, "NO_RECORD", f"the record {e.match_id!r} cannot be read: {exc.strerror}") from exc
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        now = asyncio.get_running_loop().time()
        if stamp == e.stamp or (encode_from is None and e.stamp is not None and now - e.read_at < self.tuning.fresh_s):
            return []  # (a client asking in a loop for a record written every move costs a read per fresh_s)
        e.read_at = now
        out = await self.jobs.run(self._extend, e, stamp, encode_from)
        self._trim()
        return out

    def _extend(self, e: _Entry, stamp: tuple[int, int, int], encode_from: int | None) -> list[bytes]:
        """(A job.) Read what the record gained, feed it, and encode the new frames if asked."""
        ino, size, mtime = stamp
        whole = e.builder is None or e.error != "" or e.stamp is None or e.stamp[0] != ino or size < e.offset \
            or (size == e.stamp[1] and mtime != e.stamp[2])
        try:
            if not whole and e.builder is not None:
                try:
                    with open(e.path, "rb") as f:
                        f.seek(e.offset)
                        data = f.read(max(0, size - e.offset))
                    self.stats.bytes_read += len(data)
                    end = data.rfind(b"\n") + 1
                    for entry in _parse_lines(data[:end]):
                        e.builder.feed(entry)
                    e.offset += end
                    self.stats.extends += 1
                except (ReplayMismatch, KeyError, ValueError, TypeError):
                    whole = True  # the kept builder is half fed: start over with every deck known
            if whole:
                with open(e.path, "rb") as f:
                    data = f.read(size)
                self.stats.bytes_read += len(data)
                self.stats.builds += 1
                end = data.rfind(b"\n") + 1
                e.builder = builder_of(_parse_lines(data[:end]), e.match_id)
                e.offset = end
            e.timeline = e.builder.timeline() if e.builder is not None and e.builder.started else None
            e.error = ""
            if whole or (e.timeline is not None and (e.timeline.complete or e.timeline.aborted)):
                e.spectator = []  # (kept only while the match runs: a finished record's pages are kept whole)
        except (ReplayMismatch, KeyError, ValueError, TypeError, OSError) as exc:  # UnreadableRecord: ValueError
            e.builder, e.timeline, e.error = None, None, str(exc)[:300]
        e.stamp = stamp
        tl = e.timeline
        if encode_from is None or tl is None or len(tl.frames) <= encode_from:
            return []
        new = tl.frames[encode_from:]
        if encode_from == 0 or len(new) > self.tuning.sse_batch:  # a first look, or too many to send each
            return [_sse("meta", timeline_json(tl, SPECTATOR)), _sse("frame", frame_json(tl.frames[-1], SPECTATOR))]
        return [_sse("frame", frame_json(f, SPECTATOR)) for f in new]

    @staticmethod
    def _live_hand(e: _Entry, tl: Timeline, hand: int) -> bytes:
        """(A job.) A running match's hand as the spectator sees it, from frames encoded once each: the hand in
        play is asked for again after every move, and only its new frames (and a last one replaced) are encoded."""
        done = e.spectator
        del done[len(tl.frames):]  # (a record replayed again from the start may have fewer)
        first, last = tl.ranges[hand]
        for f in tl.frames[first:last + 1]:
            if f.index < len(done) and done[f.index][0] is f:
                continue
            if f.index > len(done):  # (frames before this hand, never asked for: encoded as they come)
                done.extend((None, b"") for _ in range(len(done), f.index))
            encoded = orjson.dumps(frame_json(f, SPECTATOR))
            if f.index < len(done):
                done[f.index] = (f, encoded)
            else:
                done.append((f, encoded))
        return b'{"hand":%d,"perspective":"spectator","frames":[' % hand + \
            b",".join(done[i][1] for i in range(first, last + 1)) + b"]}"

    def _trim(self) -> None:
        total = sum(len(e.timeline.frames) for e in self._entries.values() if e.timeline is not None)
        count = len(self._entries)
        for path in list(self._entries):
            if total <= self.max_frames and count <= self.max_entries:
                break
            e = self._entries[path]
            if e.lock.locked() or (e.feed is not None and e.feed.subs):
                continue
            total -= len(e.timeline.frames) if e.timeline is not None else 0
            count -= 1
            del self._entries[path]

    async def body(self, e: _Entry, who: Perspective, hand: int | None) -> bytes:
        """The JSON of a record's index (``hand`` None) or of one hand, for ``who``; encoded in a job, kept by
        the record's stamp. The caller holds ``e.lock`` and has checked ``who`` may see it."""
        tl = e.timeline
        assert tl is not None
        key = (e.path, e.stamp, who, hand)
        hit = self._bodies.get(key)
        if hit is not None:
            self._bodies.move_to_end(key)
            return hit
        if hand is None:
            body = await self.jobs.run(lambda: orjson.dumps(timeline_json(tl, who)))
        elif who == SPECTATOR and not (tl.complete or tl.aborted):
            body = await self.jobs.run(self._live_hand, e, tl, hand)
        else:
            body = await self.jobs.run(lambda: orjson.dumps(hand_json(tl, who, hand)))
        self._bodies[key] = body
        self._body_bytes += len(body)
        while self._body_bytes > self.tuning.cached_bytes and self._bodies:
            self._body_bytes -= len(self._bodies.popitem(last=False)[1])
        return body


# ---------------------------------------------------------------- live streams


class _Sub:
    """One open event stream: a bounded queue of encoded events; ``None`` ends it."""

    def __init__(self, addr: str, size: int) -> None:
        self.addr = addr
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=max(4, size))
        self.closed = False

    def offer(self, msg: bytes) -> bool:
        """Queue ``msg``; a full queue means the reader fell behind: it is dropped with a reason (False)."""
        if self.closed:
            return False
        if self.queue.qsize() < self.queue.maxsize - 2:  # room is kept for the reason and the end
            self.queue.put_nowait(msg)
            return True
        self.close(_sse("error", {"reason": "SLOW_READER", "error": "this stream fell too far behind the match "
                                  "(its reader is too slow): reload the page"}))
        return False

    def close(self, last: bytes | None = None) -> None:
        if self.closed:
            return
        self.closed = True
        while self.queue.qsize() > self.queue.maxsize - 2:  # (offer always leaves two; this is a safeguard)
            self.queue.get_nowait()
        if last is not None:
            self.queue.put_nowait(last)
        self.queue.put_nowait(None)


@dataclass
class _Feed:
    """A followed record: its streams, how many frames they were sent, and the task that polls the record."""

    entry: _Entry
    session: MatchSession | None
    subs: set[_Sub] = field(default_factory=set)
    sent: int = 0
    task: asyncio.Task[None] | None = None


# ---------------------------------------------------------------- connections


class _Connections:
    """Counts the viewer's connections, refuses those past the limits (a 503 written straight to the socket, then
    closed) and aborts a connection whose peer stopped reading (paused for ``stall_s``)."""

    def __init__(self, limits: ServerLimits, tuning: Tuning, stats: ViewerStats, name: str = "the viewer") -> None:
        self.limits, self.tuning, self.stats = limits, tuning, stats
        self.name = name  # what a refusal says has too many connections (the metrics server's are counted so too)
        self.open = 0
        self.by_addr: Counter[str] = Counter()
        self.refusing = 0  # refused connections held before their 503 (``refuse``)

    def refuse(self, transport: asyncio.Transport, reason: str, message: str) -> None:
        """A 503 with its reason, after ``refuse_delay_s``: a client looping on refusals is slowed to one a delay
        instead of one per round trip, which would cost the loop that runs every match an accept, a write and a close
        each time. At most ``refusing`` are held so; past that the connection is closed at once, with no answer."""
        self.stats.refused_connections += 1
        if self.refusing >= self.tuning.refusing:
            transport.abort()
            return
        body = orjson.dumps({"error": message, "reason": reason})
        answer = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close"
                  b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        self.refusing += 1

        def answer_and_close() -> None:
            self.refusing -= 1
            if not transport.is_closing():
                transport.write(answer)
                transport.close()

        asyncio.get_running_loop().call_later(self.tuning.refuse_delay_s, answer_and_close)

    def protocol(self, make: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        return lambda: _Guarded(self, make)


class _Guarded(asyncio.Protocol):
    """aiohttp's protocol for one connection, behind the connection limits and the stall timer."""

    def __init__(self, conns: _Connections, make: Callable[[], asyncio.Protocol]) -> None:
        self.conns, self.make = conns, make
        self.inner: asyncio.Protocol | None = None
        self.addr = ""
        self.transport: asyncio.Transport | None = None
        self.stall: asyncio.TimerHandle | None = None

    def connection_made(self, base: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, base)  # (uvloop's transports are not asyncio.Transport subclasses)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.addr = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer or "")
        c, lim = self.conns, self.conns.limits
        refused = ("LIMIT_CONNECTIONS", f"{c.name} has {lim.viewer_max_connections} connections open") \
            if c.open >= lim.viewer_max_connections else \
            ("LIMIT_CLIENT_CONNECTIONS", f"this address has {lim.viewer_client_connections} connections open") \
            if c.by_addr[self.addr] >= lim.viewer_client_connections else None
        if refused is not None:
            c.refuse(transport, *refused)
            return
        c.open += 1
        c.by_addr[self.addr] += 1
        sock = transport.get_extra_info("socket")
        if sock is not None and c.tuning.sndbuf > 0:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, c.tuning.sndbuf)
            except OSError:
                pass
        self.inner = self.make()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()
            if self.stall is None and self.transport is not None:
                self.stall = asyncio.get_running_loop().call_later(self.conns.tuning.stall_s, self.transport.abort)

    def resume_writing(self) -> None:
        if self.stall is not None:
            self.stall.cancel()
            self.stall = None
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.stall is not None:
            self.stall.cancel()
        if self.inner is not None:
            c = self.conns
            c.open -= 1
            c.by_addr[self.addr] -= 1
            if c.by_addr[self.addr] <= 0:
                del c.by_addr[self.addr]
            self.inner.connection_lost(exc)
            self.inner = None


class _GuardedSite(web.TCPSite):
    """A TCP site whose connections go through ``_Connections``."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, conns: _Connections) -> None:
        super().__init__(runner, host, port, backlog=128)
        self._conns = conns

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            self._conns.protocol(server), self._host, self._port, backlog=self._backlog)
        self._bound_port = self._server.sockets[0].getsockname()[1] if self._server.sockets else self._port


# ---------------------------------------------------------------- the app


STATS = web.AppKey("viewer_stats", ViewerStats)
CONNECTIONS = web.AppKey("viewer_connections", _Connections)


def _int_param(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query.get(name)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit() and len(text) <= 9 and low <= int(text) <= high):
        raise _Refused(400, f"BAD_{name.upper()}", f"{name} must be a whole number from {low} to {high}, "
                       f"not {_shown(text)}")
    return int(text)


def create_viewer_app(records: Path | str | None, service: RefereeService | None = None,
                      limits: ServerLimits = DEFAULT_LIMITS, tuning: Tuning = Tuning(),
                      routes: Iterable[web.AbstractRouteDef] = (), metrics: Metrics | None = None) -> web.Application:
    """The viewer's routes over the records in ``records`` (a folder or one file), and the live matches of
    ``service`` when it runs on the same event loop. ``routes``: another app's, served first under the same limits
    (the ladder's pages). ``/metrics`` too when there are ``metrics`` (by default the service's)."""
    if metrics is None:  # (getattr: a stand-in service, as the tests pass, may have no metrics at all)
        metrics = getattr(service, "metrics", None)
    shelf = RecordShelf(records)
    stats = ViewerStats()
    jobs = _Jobs(limits.viewer_jobs, tuning.waiting_jobs, stats)
    timelines = _Timelines(jobs, stats, limits.viewer_cached_frames, tuning)
    listing = _Listing(shelf, jobs, tuning, stats)
    feeds: dict[Path, _Feed] = {}
    streams: Counter[str] = Counter()
    web_dir = Path(str(files("referee.tools").joinpath("web")))
    web_files = {p.name for p in web_dir.iterdir() if p.suffix in _STATIC}  # read once: names are never paths
    stopping = asyncio.Event()
    log = get_logger(component="viewer")

    def running(match_id: str) -> bool:
        """The match is being played on this referee (whatever its record says so far)."""
        s = service.sessions.get(match_id) if service is not None else None
        return s is not None and not s.done.is_set()

    def record_path(request: web.Request) -> Path:
        match_id = request.match_info["match_id"]
        path = shelf.path(match_id)
        if path is None:
            raise _Refused(404, "NO_RECORD", f"no record {_shown(match_id)}")
        return path

    def perspective(request: web.Request, tl: Timeline) -> Perspective:
        try:
            who = parse_perspective(request.query.get("seat"), tl.seats)
        except HiddenPerspective as exc:
            raise _Refused(400, "BAD_PERSPECTIVE", str(exc)) from exc
        if who != SPECTATOR and (running(request.match_info["match_id"]) or running(tl.match_id)):
            raise _Refused(403, "HIDDEN_WHILE_RUNNING", "this match is being played: it is shown only as the "
                           "spectator sees it, until it is over")
        return who

    async def sync(e: _Entry) -> None:
        """Bring ``e`` up to its file (the caller holds its lock) and send the streams that follow it what is new:
        whoever reads a record first, a page or the feed's poll, the streams get each frame once."""
        feed = e.feed if e.feed is not None and e.feed.subs else None
        msgs = await timelines.refresh(e, feed.sent if feed is not None else None)
        if feed is not None:
            for sub in list(feed.subs):
                for m in msgs:
                    if not sub.offer(m):
                        stats.dropped_streams += 1
                        feed.subs.discard(sub)
                        break
        if e.feed is not None and e.timeline is not None:
            e.feed.sent = len(e.timeline.frames)

    async def loaded(e: _Entry) -> Timeline:
        await sync(e)
        if e.error:
            raise _Refused(422, "DOES_NOT_REPLAY", f"the record does not replay: {e.error}")
        if e.timeline is None:
            raise _Refused(422, "DOES_NOT_REPLAY", "the record does not replay: it has no match and deal entries yet")
        return e.timeline

    def as_json(body: bytes) -> web.Response:
        resp = web.Response(body=body, content_type="application/json")
        resp.enable_compression()  # (aiohttp compresses bodies over 4 KB in its executor, off the loop)
        return resp

    async def page(request: web.Request) -> web.FileResponse:
        name = {"": "index.html", "replay": "viewer.html", "live": "live.html"}[request.match_info.get("kind", "")]
        if "match_id" in request.match_info and not _ID.fullmatch(request.match_info["match_id"]):
            raise _Refused(400, "BAD_MATCH_ID", f"{_shown(request.match_info['match_id'])} is not a match id")
        return web.FileResponse(web_dir / name, headers={"Content-Security-Policy": _CSP, "Cache-Control": "no-cache"})

    async def static(request: web.Request) -> web.FileResponse:
        name = request.match_info["name"]
        if len(name) > 64 or not re.fullmatch(r"[a-z0-9_-]+\.[a-z]+", name):
            raise _Refused(400, "BAD_NAME", f"{_shown(name)} is not a viewer file name")
        if name not in web_files:
            raise _Refused(404, "NOT_FOUND", f"no viewer file {name!r}")
        return web.FileResponse(web_dir / name, headers={"Content-Type": _STATIC[Path(name).suffix],
                                                         "Cache-Control": "no-cache"})

    async def list_records(request: web.Request) -> web.Response:
        limit = _int_param(request, "limit", tuning.page, 1, tuning.max_page)
        after = None
        if "after" in request.query:
            m = _CURSOR.fullmatch(request.query["after"])
            if m is None:
                raise _Refused(400, "BAD_AFTER", f"after must be a page's 'next' value, not "
                               f"{_shown(request.query['after'])}")
            after = (int(m.group(1)), m.group(2))
        return as_json(orjson.dumps(await listing.page(limit, after)))

    async def record_index(request: web.Request) -> web.Response:
        e = timelines.entry(record_path(request))
        async with e.lock:
            tl = await loaded(e)
            who = perspective(request, tl)
            try:
                return as_json(await timelines.body(e, who, None))
            except HiddenPerspective as exc:
                raise _Refused(403, "HIDDEN_WHILE_RUNNING", str(exc)) from exc

    async def record_hand(request: web.Request) -> web.Response:
        text = request.match_info["hand"]
        if not (text.isascii() and text.isdigit() and len(text) <= 6):
            raise _Refused(400, "BAD_HAND", f"a hand is a number, not {_shown(text)}")
        e = timelines.entry(record_path(request))
        async with e.lock:
            tl = await loaded(e)
            who = perspective(request, tl)
            if int(text) not in tl.ranges:
                raise _Refused(404, "NO_HAND", f"no hand {int(text)} in this record")
            try:
                return as_json(await timelines.body(e, who, int(text)))
            except HiddenPerspective as exc:
                raise _Refused(403, "HIDDEN_WHILE_RUNNING", str(exc)) from exc

    async def list_live(request: web.Request) -> web.Response:
        if service is None:  # a viewer of its own (referee.tools.viewer_process): the records with no result yet
            await listing.page(1, None)  # (brings the index up to date)
            rows = [r for r in listing.rows.values() if not (r["complete"] or r["aborted"])]
            rows.sort(key=lambda r: -r["_ns"])
            return as_json(orjson.dumps({"live": [
                {"match_id": r["match_id"], "variant": r["variant"], "seat_names": r["seat_names"], "hands_played": None,
                 "recorded": True} for r in rows[:5000]]}))
        out = []
        for session in list(service.sessions.values())[:5000]:
            if session.done.is_set():
                continue
            out.append({"match_id": session.match_id, "variant": session.match.variant.name,
                        "seat_names": [s.name for s in session.seats], "hands_played": session.match.game.hands_played,
                        "recorded": session.writer is not None})
        return as_json(orjson.dumps({"live": out}))

    def ended(e: _Entry, session_done: bool) -> bytes | None:
        """The last event of a followed match once it is over: ``error`` if its record does not replay, ``end``
        once the record has its result or abort, or its session was done before the record was last read."""
        if e.error:
            return _sse("error", {"reason": "DOES_NOT_REPLAY", "error": f"the record does not replay: {e.error}"})
        tl = e.timeline
        if tl is not None and (tl.complete or tl.aborted):
            return _sse("end", {"complete": tl.complete, "aborted": tl.aborted})
        if session_done:
            return _sse("end", {"complete": False, "aborted": tl.aborted if tl is not None else ""})
        return None

    async def poll(feed: _Feed) -> bytes | None:
        """Bring the feed's record up to date and send its streams what is new; the last event once it ends."""
        e = feed.entry
        async with e.lock:
            done_before = feed.session is not None and feed.session.done.is_set()
            try:
                await sync(e)
            except _Refused as exc:
                if exc.reason == "VIEWER_BUSY":
                    return None  # the next look catches up
                return _sse("error", {"reason": exc.reason, "error": exc.message})
            return ended(e, done_before)

    async def drive(feed: _Feed) -> None:
        """Polls a followed record while anyone follows it (one task per record, however many streams)."""
        last: bytes | None = None
        try:
            while feed.subs and not stopping.is_set():
                await asyncio.sleep(tuning.poll_s)
                last = await poll(feed)
                if last is not None:
                    break
        except Exception as exc:  # never leave streams hanging on a task that died
            log.warning("viewer_feed_failed", match_id=feed.entry.match_id, error=repr(exc))
            last = _sse("error", {"reason": "INTERNAL", "error": "the viewer stopped following this match"})
        finally:  # (no await here: a stream joining sees either this task running or no task)
            for sub in list(feed.subs):
                sub.close(last)
            feed.subs.clear()
            feed.task = None
            if feeds.get(feed.entry.path) is feed:
                del feeds[feed.entry.path]
            if feed.entry.feed is feed:
                feed.entry.feed = None

    async def live_frames(request: web.Request) -> web.StreamResponse:
        """Server-sent events: ``meta``, the last ``frame`` so far, then a ``frame`` per step as the record grows
        (or a fresh ``meta`` and the last frame when many steps came at once), and ``end``; ``error`` with a
        reason when the stream is dropped. Spectator frames only."""
        match_id = request.match_info["match_id"]
        if not _ID.fullmatch(match_id):
            raise _Refused(400, "BAD_MATCH_ID", f"{_shown(match_id)} is not a match id")
        addr = request.remote or ""
        if sum(streams.values()) >= limits.viewer_sse_streams:
            raise _Refused(503, "LIMIT_SSE_STREAMS", f"the viewer has {limits.viewer_sse_streams} live streams open")
        if streams[addr] >= limits.viewer_client_sse_streams:
            raise _Refused(429, "LIMIT_CLIENT_SSE_STREAMS", f"this address has {limits.viewer_client_sse_streams} "
                           "live streams open")
        session = service.sessions.get(match_id) if service is not None else None
        if session is not None and session.writer is None:
            raise _Refused(409, "NOT_RECORDED", "this referee keeps no records (start it with --records DIR) to follow")
        path = session.writer.path if session is not None and session.writer is not None else shelf.path(match_id)
        if path is None or not path.is_file():
            raise _Refused(404, "NO_MATCH", f"no match {_shown(match_id)} to follow")
        streams[addr] += 1  # counted before any await: joins at once cannot pass the limits
        sub = _Sub(addr, tuning.sse_queue)
        e = timelines.entry(path)
        resp: web.StreamResponse | None = None
        try:
            async with e.lock:
                done_before = session is not None and session.done.is_set()
                await sync(e)
                tl = e.timeline
                if tl is not None and tl.frames:
                    sub.offer(b"event: meta\ndata: " + await timelines.body(e, SPECTATOR, None) + b"\n\n")
                    sub.offer(_sse("frame", frame_json(tl.frames[-1], SPECTATOR)))
                last = ended(e, done_before)
                if last is not None:
                    sub.close(last)
                else:
                    feed = feeds.get(path) or _Feed(e, session)
                    if not feed.subs:
                        feed.sent = len(tl.frames) if tl is not None else 0
                    feed.subs.add(sub)
                    feeds[path] = e.feed = feed
                    if feed.task is None:
                        feed.task = asyncio.create_task(drive(feed))
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
            await resp.prepare(request)
            while True:
                try:
                    msg = await asyncio.wait_for(sub.queue.get(), tuning.ping_s)
                except TimeoutError:
                    msg = b": still here\n\n"  # the heartbeat
                if msg is None:
                    break
                await asyncio.wait_for(resp.write(msg), tuning.write_timeout_s)
            return resp
        except (TimeoutError, ConnectionResetError):  # a reader that stopped reading: dropped
            stats.dropped_streams += 1
            if request.transport is not None:
                request.transport.abort()
            if resp is None:
                raise
            return resp
        finally:
            sub.closed = True
            if e.feed is not None:
                e.feed.subs.discard(sub)
            streams[addr] -= 1
            if streams[addr] <= 0:
                del streams[addr]

    @web.middleware
    async def guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                    ) -> web.StreamResponse:
        """Every refusal a JSON body with a reason code; every unexpected failure a logged 500 of the same form."""
        try:
            resp = await handler(request)
        except _Refused as exc:
            resp = _error_response(exc.status, exc.reason, exc.message)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            resp = _error_response(exc.status, _REASONS.get(exc.status, "HTTP_ERROR"), exc.reason)
            for k in ("Allow",):
                if k in exc.headers:
                    resp.headers[k] = exc.headers[k]
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as exc:
            log.error("viewer_request_failed", path=request.path[:200], error=repr(exc))
            resp = _error_response(500, "INTERNAL", "the viewer failed on this request")
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        return resp

    async def on_shutdown(app: web.Application) -> None:
        stopping.set()
        for feed in list(feeds.values()):
            for sub in list(feed.subs):
                sub.close(_sse("end", {"complete": False, "aborted": "", "stopping": True}))
            if feed.task is not None:
                feed.task.cancel()

    async def on_cleanup(app: web.Application) -> None:
        jobs.close()

    app = web.Application(middlewares=[guard], client_max_size=64 * 1024)
    app[STATS] = stats
    app.on_shutdown.append(on_shutdown)
    app.on_cleanup.append(on_cleanup)
    app.add_routes([
        *routes,
        web.get("/", page),
        web.get("/{kind:replay|live}/{match_id}", page),
        web.get("/static/{name}", static),
        web.get("/api/records", list_records),
        web.get("/api/records/{match_id}", record_index),
        web.get("/api/records/{match_id}/hands/{hand}", record_hand),
        web.get("/api/live", list_live),
        web.get("/api/live/{match_id}/frames", live_frames),
    ])
    if metrics is not None:
        from referee.service.metrics import add_metrics_route

        add_metrics_route(app, metrics)
    return app


async def start_viewer(records: Path | str | None, service: RefereeService | None = None, host: str = "127.0.0.1",
                       port: int = 0, limits: ServerLimits | None = None,
                       tuning: Tuning = Tuning(), routes: Iterable[web.AbstractRouteDef] = ()
                       ) -> tuple[web.AppRunner, int]:
    """A started viewer on ``host:port`` (0 picks a port); returns its runner (``await runner.cleanup()`` stops
    it) and the port. ``limits`` default to the service's own (``referee serve``'s flags)."""
    limits = limits or (service.limits if service is not None else DEFAULT_LIMITS)
    app = create_viewer_app(records, service, limits, tuning, routes)
    conns = _Connections(limits, tuning, app[STATS])
    app[CONNECTIONS] = conns
    # keepalive_timeout bounds both an idle connection and one still sending its request's headers (aiohttp
    # arms it at connect and after each response; a request in progress is not idle)
    # handler_cancellation: a stream whose client went away stops counting at once, not at its next heartbeat
    runner = web.AppRunner(app, shutdown_timeout=2.0, access_log=None, keepalive_timeout=float(limits.viewer_idle_s),
                           lingering_time=1.0, max_line_size=8190, max_field_size=8190, handler_cancellation=True)
    await runner.setup()
    await _GuardedSite(runner, host, port, conns).start()
    return runner, int(runner.addresses[0][1])
