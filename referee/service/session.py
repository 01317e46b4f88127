"""One running match on the server: seats and their connections, deadlines, dispatch of events by visibility.

The rules live in ``referee.rules.match``; this module adds only time and transport. Every wait has a deadline, so a
bot that crashes, stalls, floods or lies costs at most its own seat: a missed deadline plays the default move,
a disconnect past the grace period forfeits the seat to the autopilot, and the match always ends.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from array import array
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING

from structlog.typing import FilteringBoundLogger

from referee.rules.errors import IllegalAction, InvalidAction
from referee.rules.match import Match, MatchConfig
from referee.rules.variants.base import Event
from referee.service import encoded
from referee.service.limits import DEFAULT_LIMITS, ServerLimits
from referee.service.logs import get_logger
from referee.service.records import REASON_UNWRITABLE, RecordsUnwritable, RecordWriter
from referee.service.replay import feed
from referee.service.resume import RESUMED, Unfinished, token_digest
from rummy.referee.v1 import referee_pb2 as pb
from rummy.wire import protocodec as codec

if TYPE_CHECKING:
    from referee.service.metrics import Metrics

__all__ = ["Connection", "TimeControl", "MatchSession", "SeatStats", "DEFAULT_TIME"]


@dataclass(frozen=True)
class TimeControl:
    per_move_ms: int = 5000
    bank_ms: int = 0
    grace_ms: int = 3000
    connect_ms: int = 15000  # how long a match waits for its seats to connect
    max_rejections: int = 25  # illegal answers to one request before it counts as missed (flooding)


DEFAULT_TIME = TimeControl()
INBOX_LIMIT = 64  # answers a seat may have waiting; more are dropped as flooding
OUTBOX_LIMIT = 4096  # messages waiting for a slow reader past which rejections are no longer sent (a flood's echo)
RESTART_REQUESTS = 2**32  # request ids after the n-th restart start at n * 2**32: never one seen before


class Connection:
    """One Play stream: the messages waiting to be written (encoded: ``referee.service.encoded``) and the seats it holds."""

    def __init__(self, name: str = "", bot_token: str = "", batch: bool = False,
                 max_bytes: int = DEFAULT_LIMITS.max_outbox_bytes) -> None:
        self.name = name
        self.bot_token = bot_token
        self.batch = batch  # the client reads PlayResponse.batch (Join.batch)
        self.closed = False
        self.max_bytes = max_bytes  # what may wait for the client to read; past it the connection is dropped
        self.dropped = ""  # why the referee dropped the connection ("" while it did not)
        self.unclaimed = ""  # the client address whose budget holds this stream (a bot token no match has named yet)
        self._waiting_bytes = 0
        self.seats: set[tuple[str, int]] = set()
        self._waiting: list[bytes] = []  # encoded PlayResponses
        self._due = False  # what waits must go now (something urgent, the hold is over, or the stream closes)
        self._writer: asyncio.Future[None] | None = None  # the writer, asleep until something is due
        self._hold: asyncio.TimerHandle | None = None  # wakes the writer when what waits has waited HOLD_S
        self._held_since = 0.0  # when the first message now waiting came (loop time)

    def waiting(self) -> int:
        """Messages not yet handed to the stream (a slow or absent reader makes this grow)."""
        return len(self._waiting)

    def send(self, msg: pb.PlayResponse) -> None:
        self.send_encoded(msg.SerializeToString(), msg.WhichOneof("body") in _URGENT)

    def send_encoded(self, data: bytes, urgent: bool) -> None:
        """An encoded ``PlayResponse``; ``urgent``: it asks something of the client (``_URGENT``)."""
        if self.closed:
            return
        self._waiting_bytes += len(data)
        if self._waiting_bytes > self.max_bytes:  # a client that does not read: its backlog is not the referee's to keep
            self.drop("SLOW_READER", f"more than {self.max_bytes} bytes were waiting for this stream to read them; "
                      "rejoin (Join.resume names the last seq handled) and read as they come")
            return
        if urgent or not self.batch:
            self._waiting.append(data)
            self._wake()
            return
        if not self._waiting:
            self._held_since = time.monotonic()
        self._waiting.append(data)
        if self._hold is None:
            self._hold = asyncio.get_running_loop().call_at(self._held_since + HOLD_S, self._hold_over)

    def _hold_over(self) -> None:
        """The hold timer: wake the writer if what waits has waited ``HOLD_S``, else wait on for the rest. The
        timer outlives a write (one timer per ``HOLD_S`` at most, not one per batch): what it finds then came
        later, and waits only its own time."""
        self._hold = None
        if not self._waiting:
            return
        due = self._held_since + HOLD_S
        if time.monotonic() >= due:
            self._wake()
        else:
            self._hold = asyncio.get_running_loop().call_at(due, self._hold_over)

    def flush(self) -> None:
        """Write what waits now, without waiting out a batching client's hold."""
        if self._waiting:
            self._wake()

    def drop(self, code: str, message: str) -> None:
        """Close the connection for something it did; the stream then ends with ``code`` (``RESOURCE_EXHAUSTED``)."""
        if not self.closed:
            self.dropped = f"{code}: {message}"
            self._waiting.clear()
            self._waiting_bytes = 0
            self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._hold is not None:
                self._hold.cancel()
                self._hold = None
            self._wake()

    def _wake(self) -> None:
        self._due = True
        if self._writer is not None and not self._writer.done():
            self._writer.set_result(None)

    async def outgoing(self) -> AsyncIterator[bytes]:
        """What to write to the stream, in order, until the connection closes: encoded ``PlayResponse``s (the
        Play method's serializer passes them through).

        A batching client (``Join.batch``) gets its messages as batches, and only when one of them asks something
        of it (a decision request, a rejection, a welcome, a match's result) or ``HOLD_S`` after the first one
        waiting: an acceptance and the events of the other seats' moves then ride with the seat's next request.
        A move then costs one write, the same as a bare request and reply, instead of one per seat: on this path
        gRPC's per-message cost is most of the referee's work. A message that asks nothing wakes no one: the
        writer sleeps until something is due (no task step per event, one hold timer per ``HOLD_S`` at most)."""
        loop = asyncio.get_running_loop()
        while True:
            if not self._due:
                self._writer = loop.create_future()
                await self._writer
                self._writer = None
            self._due = False
            ready, self._waiting = self._waiting, []
            self._waiting_bytes = 0
            if self.batch and len(ready) > 1:
                yield encoded.batch(ready)
            else:
                for data in ready:
                    yield data
            if self.closed and not self._waiting:
                return


HOLD_S = 0.025  # how long a batching client's non-urgent messages (events, acceptances) may wait for company
_URGENT = frozenset({"decision", "rejected", "welcome", "match_result"})  # sent at once, with what waits before them
STALL_S = 0.025  # a deadline timer this late means the referee itself fell behind: that time is not the bot's
RESEND_SLICE = 256  # a rejoin's missed events go out this many at a time, the loop free between slices


class Watcher:
    """One Watch stream's queue: the public events, encoded once per event and shared by every watcher, waiting for
    the stream to write them. Bounded: a watcher that falls ``limit`` events behind is dropped, so a slow spectator
    costs the referee no more than that."""

    def __init__(self, limit: int, admin: bool = False) -> None:
        self.limit = limit
        self.admin = admin  # the admin's: outside the crowd's budgets
        self.items: deque[bytes | None] = deque()
        self.dropped = False
        self._ready = asyncio.Event()

    def push(self, item: bytes | None) -> None:
        if self.dropped:
            return
        if item is not None and len(self.items) >= self.limit:
            self.dropped = True
            self.items.clear()
            self.items.append(None)
        else:
            self.items.append(item)
        self._ready.set()

    async def next(self) -> bytes | None:
        """The next encoded ``WatchResponse``; None once the match has ended or the watcher was dropped."""
        while not self.items:
            self._ready.clear()
            await self._ready.wait()
        item = self.items.popleft()
        if item is None:
            self.items.appendleft(None)  # the end stays the end
        return item

    async def frames(self) -> AsyncIterator[bytes]:
        """The encoded ``WatchResponse``s (one event each), in order, until the match ends or the watcher is dropped."""
        while (item := await self.next()) is not None:
            yield item


@dataclass
class SeatStats:
    """How a seat answered, per phase name: what the conformance check (``referee check-bot``) reports, and what
    the match's result gives as the seat's faults (``MatchResult.faults``)."""

    asked: Counter[str] = field(default_factory=Counter)
    accepted: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)  # by "PHASE/CODE"
    timed_out: Counter[str] = field(default_factory=Counter)
    disconnects: int = 0  # times its stream went while the match was on

    def faults(self, seat: int) -> pb.SeatFaults:
        """The seat's faults for the result: refusals by reason code (over all phases), moves made for it."""
        rejected: Counter[str] = Counter()
        for key, n in self.rejected.items():
            rejected[key.rpartition("/")[2]] += n
        return pb.SeatFaults(seat=seat, rejected=dict(rejected), timed_out=sum(self.timed_out.values()),
                             disconnects=self.disconnects, asked=sum(self.asked.values()))


@dataclass
class _Seat:
    token: str
    name: str
    bot_token: str
    conn: Connection | None = None
    # answers (request id, action); None: the stream went; (request id, None): that request's deadline
    inbox: asyncio.Queue[tuple[int, pb.Action | None] | None] = field(default_factory=asyncio.Queue)
    attached: asyncio.Event = field(default_factory=asyncio.Event)
    bank_left_ms: int = 0
    stats: SeatStats = field(default_factory=SeatStats)
    token_hash: str = ""  # what the record keeps of the seat token (``token_digest``): a rejoin is checked with it
    bot_token_hash: str = ""
    log: array[int] = field(default_factory=lambda: array("I"))  # the seat's events, by dispatch index: seq = i + 1
    dropped_at: float | None = None  # when its stream went (the grace period runs from here)
    resending: asyncio.Task[None] | None = None  # a rejoin's missed events going out: new ones wait behind them
    resent: int = 0  # and how far they have gone (seq)


class _Recorder:
    """Where a match's record lines go: the record file, or a list until it exists; resuming, the lines the record
    has already are skipped. Apart from the session because the match holds it: a match holding its session would
    make a reference cycle, and every finished match cyclic garbage (which ``referee serve`` collects rarely)."""

    def __init__(self) -> None:
        self.writer: RecordWriter | None = None
        self.early: list[dict] = []  # type: ignore[type-arg]
        self.skip = 0  # resuming: lines the record has already, which the replay makes again

    def __call__(self, entry: dict) -> None:  # type: ignore[type-arg]
        if self.skip:
            self.skip -= 1
        elif self.writer is not None:
            self.writer.write(entry)
        else:
            self.early.append(entry)


class MatchSession:
    """Runs one ``Match`` against its seats' connections."""

    def __init__(
        self,
        match_id: str,
        config: MatchConfig,
        seat_names: list[str],
        bot_tokens: list[str],
        time_control: TimeControl,
        records_dir: str | None = None,
        on_finish: Callable[[MatchSession], None] | None = None,
        limits: ServerLimits = DEFAULT_LIMITS,
        client: str = "",
        resume: Unfinished | None = None,
        idempotency: tuple[str, str] | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.match_id = match_id
        self.metrics = metrics  # decisions, their round trips, timeouts and refusals are counted into it
        self.time = time_control
        self.limits = limits
        self.client = client  # the address that created it (per-client limits)
        self._record = _Recorder()
        self.status: int = pb.MATCH_STATUS_WAITING
        self.watchers: list[Watcher] = []
        self.done = asyncio.Event()
        self.sequence = 0
        self._sent: list[tuple[Event, int]] = []  # every event dispatched, with its hand: what a rejoin resends
        self._hand_results: dict[int, pb.HandResult] = {}  # by the sequence of its HAND_ENDED event
        self.request_seat: dict[int, int] = {}
        self._next_request = 1
        self._on_finish = on_finish
        self.log = get_logger(match_id=match_id, variant=config.variant)
        self.result: pb.MatchResult | None = None
        self.resumed = resume is not None
        # the CreateMatch idempotency key and request digest (in the record, so a restart still knows them)
        self.idempotency = idempotency if resume is None else resume.idempotency
        if resume is not None:
            self._resume(resume, config, seat_names)
            return
        # hex, not url-safe base64: a token starting with '-' reads as an option on a bot's command line
        self.seats = [
            _Seat(secrets.token_hex(16) if not bt else "", seat_names[s], bt, bank_left_ms=time_control.bank_ms)
            for s, bt in enumerate(bot_tokens)
        ]
        for s in self.seats:
            s.token_hash = token_digest(s.token) if s.token else ""
            s.bot_token_hash = token_digest(s.bot_token) if s.bot_token else ""
        self.match = Match(config, on_record=self._record)  # raises InvalidOption before any file is made
        self.writer: RecordWriter | None = None
        if records_dir:
            header = {"seat_names": seat_names, "seat_token_sha256": [s.token_hash for s in self.seats],
                      "bot_token_sha256": [s.bot_token_hash for s in self.seats], "time_control": asdict(time_control)}
            if idempotency is not None:
                header["idempotency_key"], header["request_sha256"] = idempotency
            self.writer = self._record.writer = RecordWriter(records_dir, match_id, header,
                                                             max_bytes=limits.max_record_bytes, opening=self._record.early)
        self._record.early = []

    def _resume(self, resume: Unfinished, config: MatchConfig, seat_names: list[str]) -> None:
        """Take a match up again from its record (``referee.service.resume.recover``): replay its inputs into a new
        ``Match``, dispatching their events to no one, so each seat's event log and seq stand where they stood;
        then append a ``resumed`` line and play on. The seats rejoin with their old tokens (checked against the
        record's digests); time banks start full again."""
        self.seats = [_Seat("", name, "", bank_left_ms=self.time.bank_ms, token_hash=sd, bot_token_hash=bd)
                      for name, sd, bd in zip(seat_names, resume.seat_token_digests, resume.bot_token_digests, strict=True)]
        self.writer = self._record.writer = RecordWriter(resume.path.parent, resume.path.stem,
                                                         max_bytes=self.limits.max_record_bytes)
        self.writer.size = resume.path.stat().st_size  # the size limit is on the whole record
        self._record.skip = resume.lines
        self.match = Match(config, on_record=self._record)
        for entry in resume.inputs:
            self._dispatch(feed(self.match, entry))
        if self._record.skip:
            raise ValueError(f"the replay made {resume.lines - self._record.skip} of the record's {resume.lines} lines")
        restart = resume.restarts + 1
        self._next_request = restart * RESTART_REQUESTS + 1
        self._record({"type": RESUMED, "restart": restart, "at": round(time.time(), 3)})
        self.writer.flush()

    @staticmethod
    def time_control_from(saved: Mapping[str, int], default: TimeControl = DEFAULT_TIME) -> TimeControl:
        """The time control a record's header saved (``asdict``), over ``default`` for what it lacks."""
        known = {f.name for f in fields(TimeControl)}
        return TimeControl(**{**asdict(default), **{k: int(v) for k, v in saved.items() if k in known}})

    # ------------------------------------------------------------ connections

    def attach(self, seat: int, conn: Connection, last_seq: int | None = None) -> None:
        """A connection takes the seat (first join, or a rejoin within the grace period). ``last_seq``: the last
        event seq the client handled; the seat's events after it are resent (None: nothing is resent). Then the
        pending request, if it is this seat's, with the time it has left."""
        s = self.seats[seat]
        s.conn = conn
        s.dropped_at = None
        conn.seats.add((self.match_id, seat))
        s.attached.set()
        m = self.match
        tc = pb.TimeControl(per_move_ms=self.time.per_move_ms, bank_ms=self.time.bank_ms, grace_ms=self.time.grace_ms)
        conn.send(pb.PlayResponse(seated=pb.Seated(
            match_id=self.match_id, seat=seat, variant=m.variant.name, options=dict(m.config.options),
            seats=m.config.seats, teams=list(m.teams), time_control=tc, last_seq=len(s.log))))
        self.log.info("seat_attached", seat=seat, name=s.name, last_seq=last_seq, seq=len(s.log))
        if s.resending is not None:
            s.resending.cancel()
            s.resending = None
        if last_seq is not None and last_seq < len(s.log):
            if len(s.log) - last_seq <= RESEND_SLICE:
                self._resend(seat, conn, last_seq, len(s.log))
            else:  # a long backlog goes out in slices, as the client reads it (``_resend_slices``)
                s.resent = last_seq
                s.resending = asyncio.get_running_loop().create_task(self._resend_slices(seat, conn, last_seq))
                return
        self._send_current(seat, conn)

    def _send_current(self, seat: int, conn: Connection) -> None:
        """The pending request again, if it is this seat's, as it was, with the time left now."""
        if self._current is not None and self._current[1] == seat:
            conn.send_encoded(self._current[2](int((self._deadline - time.monotonic()) * 1000)), True)

    def _resend(self, seat: int, conn: Connection, start: int, stop: int) -> None:
        """The seat's events from seq ``start + 1`` to ``stop``, each with the HandResult that followed it."""
        log = self.seats[seat].log
        for n in range(max(0, start), stop):
            i = log[n]
            event, hand = self._sent[i]
            msg = pb.PlayResponse(event=codec.event_to_pb(event, self.match_id, i + 1, hand))
            msg.event.seq = n + 1
            conn.send(msg)
            hr = self._hand_results.get(i + 1)
            if hr is not None:
                out = pb.PlayResponse(hand_result=hr)
                out.hand_result.seq = n + 1
                conn.send(out)

    async def _resend_slices(self, seat: int, conn: Connection, last_seq: int) -> None:
        """A rejoin's missed events, ``RESEND_SLICE`` at a time, each slice once the client has read the one before:
        a backlog of tens of thousands of events never holds the loop nor piles up in memory. Events dispatched
        meanwhile join the backlog (``_dispatch`` sends nothing to a seat that is catching up); the pending request
        goes last."""
        s = self.seats[seat]
        sent = last_seq
        try:
            while sent < len(s.log) and not conn.closed:
                stop = min(len(s.log), sent + RESEND_SLICE)
                self._resend(seat, conn, sent, stop)
                sent = s.resent = stop
                conn.flush()
                while conn.waiting() > 0 and not conn.closed:
                    await asyncio.sleep(0.002)
            if not conn.closed:
                s.resending = None
                self._send_current(seat, conn)
        finally:
            if s.resending is asyncio.current_task():
                s.resending = None

    def detach(self, conn: Connection) -> None:
        for seat, s in enumerate(self.seats):
            if s.conn is conn:
                s.conn = None
                if s.resending is not None:
                    s.resending.cancel()
                    s.resending = None
                s.dropped_at = time.monotonic()
                if not self.done.is_set():
                    s.stats.disconnects += 1
                s.attached.clear()
                s.inbox.put_nowait(None)
                self.log.warning("seat_disconnected", seat=seat)

    def deliver(self, conn: Connection, request_id: int, action: pb.Action) -> None:
        seat = self.request_seat.get(request_id)
        if seat is None or self.seats[seat].conn is not conn:
            seat = next((i for i, s in enumerate(self.seats) if s.conn is conn), None)
            if seat is None:
                return
        s = self.seats[seat]
        if s.inbox.qsize() >= INBOX_LIMIT:  # flooding: drop it, and say so once the queue has room again
            self._reject(s, request_id, "FLOODING", f"more than {INBOX_LIMIT} answers are waiting: this one is dropped")
            return
        s.inbox.put_nowait((request_id, action))

    def resign(self, conn: Connection) -> None:
        for seat, s in enumerate(self.seats):
            if s.conn is conn:
                self._dispatch(self.match.forfeit(seat, "resigned"))
                s.inbox.put_nowait(None)

    # ------------------------------------------------------------ the match loop

    _current: tuple[int, int, Callable[[int], bytes]] | None = None  # the open request: its id, seat and message
    # (encoded, given the time left in ms)
    _deadline = 0.0  # and its deadline (time.monotonic)
    _deadline_timer: asyncio.TimerHandle | None = None  # calls ``_deadline_due``; it outlives a request
    _timer_at = 0.0  # when that timer is due
    _stalled = 0.0  # how long the referee fell behind during the open request (added to its deadline)
    _unflushed = False  # record lines written since the last flush
    task: asyncio.Task[None] | None = None
    end = "completed"  # how the match ended, for the metrics (``referee.service.metrics.END_REASONS``)

    def abort(self, reason: str) -> None:
        """Stop the match where it stands: it ends ABORTED, recorded as such, with no ranking."""
        if self.done.is_set():
            return
        if self.task is not None:
            self.task.cancel()
        self.end = "aborted"
        self._record({"type": "aborted", "reason": reason})
        self._finish(pb.MATCH_STATUS_ABORTED, reason=f"aborted: {reason}")

    async def run(self) -> None:
        try:
            await self._wait_for_seats("did not rejoin after the referee restarted" if self.resumed else "never connected")
            self.status = pb.MATCH_STATUS_RUNNING
            self.log.info("match_started", seats=[s.name for s in self.seats])
            ends_at = time.monotonic() + self.limits.max_match_seconds
            while True:
                d = self.match.pending()
                if d is None:
                    break
                if time.monotonic() >= ends_at:
                    self.end = "time_limit"
                    self._dispatch(self.match.stop(f"the server's time limit for a match ({self.limits.max_match_seconds} s)"))
                    break
                if self.writer is not None and self.writer.full:
                    self.end = "record_limit"
                    self._dispatch(self.match.stop(f"the server's size limit for a record ({self.limits.max_record_bytes} bytes)"))
                    break
                if self.match.on_autopilot(d.seat):
                    self._dispatch(self.match.autoplay(d.seat))
                    await asyncio.sleep(0)  # an autopilot move never holds the loop: other matches and calls go on
                    continue
                await self._ask(d.seat)
            self._finish(pb.MATCH_STATUS_FINISHED)
        except asyncio.CancelledError:
            if not self.done.is_set():
                self.end = "shutdown"
                self._record({"type": "aborted", "reason": "referee shutting down"})
                self._finish(pb.MATCH_STATUS_ABORTED, reason="aborted: referee shutting down")
            raise
        except Exception:  # the match must end with a result even if the code has a bug
            self.log.exception("match_crashed")
            if not self.done.is_set():
                self.end = "error"
                self._record({"type": "aborted", "reason": "referee error"})
            self._finish(pb.MATCH_STATUS_ABORTED, reason="referee error")

    async def _wait_for_seats(self, reason: str) -> None:
        """Wait up to the connect time for every seat still playing; those still missing forfeit together (they
        tie)."""
        playing = [seat for seat in range(len(self.seats)) if not self.match.on_autopilot(seat)]
        waits = [asyncio.ensure_future(self.seats[seat].attached.wait()) for seat in playing]
        try:
            if waits:
                await asyncio.wait(waits, timeout=self.time.connect_ms / 1000)
        finally:
            for w in waits:
                w.cancel()
        # a seat that came and went is not missing: its grace period runs from when it went
        missing = [seat for seat in playing if not self.seats[seat].attached.is_set() and self.seats[seat].dropped_at is None]
        if missing:
            self._dispatch(self.match.forfeit(missing, reason))

    async def _ask(self, seat: int) -> None:
        s = self.seats[seat]
        if s.conn is None:
            if self._unflushed:
                self._flush_record()  # before waiting for the seat to come back
            if not await self._await_reconnect(seat):
                self._dispatch(self.match.forfeit(seat, "disconnected"))
                return
        rid = self._next_request
        self._next_request += 1
        self.request_seat = {rid: seat}
        d = self.match.pending()
        assert d is not None
        view = self.match.view(seat)
        view_bytes = encoded.view(view)
        legal = self.match.legal_actions(seat)
        budget_ms = self.time.per_move_ms + s.bank_left_ms
        started = time.monotonic()
        deadline = started + budget_ms / 1000
        self._deadline = deadline

        def request(left_ms: int) -> bytes:
            return encoded.decision(self.match_id, rid, view, view_bytes, legal, left_ms, s.bank_left_ms)

        phase = d.phase.name
        s.stats.asked[phase] += 1
        self._current = (rid, seat, request)
        self._stalled = 0.0
        if s.conn is not None and s.resending is None:  # (a seat catching up is sent it after its backlog)
            s.conn.send_encoded(request(budget_ms), True)
        if self._unflushed:  # the last move's record lines, once the request is on its way (its writer runs first)
            self._unflushed = False
            asyncio.get_running_loop().call_soon(self._flush_record)
        rejections = 0
        # the deadline comes as a mark in the inbox (``_deadline_due``), from a timer that serves request after request
        timer = self._deadline_timer
        if timer is None or timer.when() > deadline:  # none yet, or set for a later deadline than this one
            if timer is not None:
                timer.cancel()
            self._arm(deadline)
        try:
            while True:
                item = await s.inbox.get()  # an answer, or the deadline's mark (the timer always comes)
                if item is None:  # the connection dropped, or the seat resigned
                    if self.match.on_autopilot(seat):
                        return
                    if await self._await_reconnect(seat, deadline) is False:
                        self._dispatch(self.match.forfeit(seat, "disconnected"))
                        return
                    continue  # back (the request is sent again), or the move's clock ran out first: its default move
                got_rid, action_pb = item
                if action_pb is None:  # a deadline's mark: this request's, or a late one of an earlier request
                    if got_rid != rid:
                        continue
                    self._seat_log(seat).info("deadline_missed", request_id=rid)
                    s.stats.timed_out[phase] += 1
                    if self.metrics is not None:
                        self.metrics.timed_out()
                    self._dispatch(self.match.timeout(seat))
                    return
                refusal: tuple[int, str, str] | None = None
                if got_rid != rid:
                    refusal = (got_rid, "STALE_REQUEST", f"request {got_rid} is not the open request {rid}")
                else:
                    try:
                        events = self.match.submit(seat, codec.action_from_pb(action_pb))
                    except (IllegalAction, InvalidAction) as exc:
                        self._seat_log(seat).info("action_rejected", code=exc.code, reason=exc.message)
                        refusal = (rid, exc.code, exc.message)
                if refusal is not None:
                    rejections += 1
                    s.stats.rejected[f"{phase}/{refusal[1]}"] += 1
                    self._reject(s, *refusal)
                    if rejections >= self.time.max_rejections:  # flooding: counts as a missed deadline
                        self._seat_log(seat).warning("flooding", rejections=rejections)
                        s.stats.timed_out[phase] += 1
                        if self.metrics is not None:
                            self.metrics.timed_out()
                        self._dispatch(self.match.timeout(seat))
                        return
                    continue
                elapsed = time.monotonic() - started
                used_ms = int((elapsed - self._stalled) * 1000)  # the referee's stalls are not the bot's
                s.stats.accepted[phase] += 1
                if self.metrics is not None:
                    self.metrics.decided(elapsed)
                if used_ms > self.time.per_move_ms:
                    s.bank_left_ms = max(0, s.bank_left_ms - (used_ms - self.time.per_move_ms))
                if s.conn is not None:
                    s.conn.send_encoded(encoded.accepted(self.match_id, rid), False)
                self._dispatch(events)
                return
        finally:
            self._current = None

    def _flush_record(self) -> None:
        """Hand the record's lines to the operating system: a move's lines at once, just after the request that
        follows the move has gone to its seat, so the write is off the decision's round trip (a referee that
        crashes loses at most the move in flight)."""
        self._unflushed = False
        if self.writer is not None:
            try:
                self.writer.flush()
            except RecordsUnwritable:  # a full or read-only disk: the match ends now, ABORTED with that reason
                self.end = "records_unwritable"
                if self.task is not None:
                    self.task.cancel()
                self._finish(pb.MATCH_STATUS_ABORTED)

    def _deadline_due(self) -> None:
        """The deadline timer: if the open request's deadline has come, its mark goes to its seat's inbox; if not
        (it was answered, and a later one is open), the timer waits on for that one. Made once and kept, not once
        per request: most requests are answered in a small part of a move's time, so it fires about once per
        move's time instead of being made and cancelled for every decision."""
        late = time.monotonic() - self._timer_at
        self._deadline_timer = None
        current = self._current
        if current is None or self.done.is_set():
            return  # between requests: the next one sets a timer again
        if late > STALL_S:  # the loop could not run this timer (nor read the seat's answer) for at least that long:
            # the seat gets that time again from now, so an answer that came meanwhile is read before its deadline
            self._deadline = time.monotonic() + late
            self._stalled += late
            self.log.warning("referee_stalled", seconds=round(late, 3), request_id=current[0], seat=current[1])
        if time.monotonic() >= self._deadline:
            self.seats[current[1]].inbox.put_nowait((current[0], None))
        else:
            self._arm(self._deadline)

    def _arm(self, when: float) -> None:
        """Set the deadline timer for ``when`` (remembered, to see how late it runs)."""
        self._timer_at = when
        self._deadline_timer = asyncio.get_running_loop().call_at(when, self._deadline_due)

    def _seat_log(self, seat: int) -> FilteringBoundLogger:
        """The match's logger with the seat and the hand in play bound (made when a line is written, not per request)."""
        return self.log.bind(seat=seat, hand=self.match.game.hands_played + 1)

    async def _await_reconnect(self, seat: int, deadline: float | None = None) -> bool | None:
        """Wait for a gone seat to rejoin within its grace period, counted from when its stream went. True: it is
        back; False: the grace period is over (it forfeits); None: the move's ``deadline`` came first (the clock
        of a move runs on while its seat is away; the grace period goes on into its next turn)."""
        s = self.seats[seat]
        grace_ends = (s.dropped_at if s.dropped_at is not None else time.monotonic()) + self.time.grace_ms / 1000
        ends = grace_ends if deadline is None else min(grace_ends, deadline)
        try:
            await asyncio.wait_for(s.attached.wait(), max(0.0, ends - time.monotonic()))
        except TimeoutError:
            return False if ends == grace_ends else None
        while not s.inbox.empty():  # drop the disconnect marker
            item = s.inbox.get_nowait()
            if item is not None:
                s.inbox.put_nowait(item)
                break
        return True

    def _reject(self, s: _Seat, rid: int, code: str, message: str) -> None:
        if self.metrics is not None:
            self.metrics.rejected(code)
        if s.conn is not None and s.conn.waiting() < OUTBOX_LIMIT:
            s.conn.send(pb.PlayResponse(rejected=pb.ActionRejected(match_id=self.match_id, request_id=rid, code=code,
                                                                     message=message)))

    # ------------------------------------------------------------ output

    def _dispatch(self, events: list[Event]) -> None:
        hand = self.match.game.hands_played
        for e in events:
            self.sequence += 1
            if e.kind == "HAND_STARTED":
                hand = e.count
            msg_bytes = encoded.match_event(e, self.match_id, self.sequence, hand)
            self._sent.append((e, hand))
            for seat, s in enumerate(self.seats):
                if e.visible_to(seat):
                    s.log.append(self.sequence - 1)
                    if s.conn is not None and s.resending is None:  # seq, per seat: what a rejoin names
                        s.conn.send_encoded(encoded.event(msg_bytes, len(s.log)), False)
            if e.public and self.watchers:
                frame = encoded.watch_response(msg_bytes)
                for w in self.watchers:
                    w.push(frame)
            if e.kind == "HAND_ENDED":
                g = self.match.game
                hr = codec.hand_result_to_pb(g.history[-1], self.match_id, g.hands_played, g.totals)
                self._hand_results[self.sequence] = hr
                for s in self.seats:
                    if s.conn is not None and s.resending is None:
                        res = pb.PlayResponse(hand_result=hr)
                        res.hand_result.seq = len(s.log)
                        s.conn.send(res)
        self._unflushed = self.writer is not None  # flushed once per move, not per line (``_flush_record``)

    def _finish(self, status: int, reason: str = "") -> None:
        if self.done.is_set():
            return
        try:
            self._finish_result(status, reason)
        finally:  # whatever happened, the match is over: GetResult(wait) returns, the server forgets it in time
            self.done.set()
            if self._on_finish:
                self._on_finish(self)

    def _close_record(self) -> RecordsUnwritable | None:
        """The record's last flush. If a write failed (now or earlier), one try to end it with an ``aborted`` line
        (so a restart does not take it up again), and the failure is returned: the match ends ABORTED."""
        w = self.writer
        if w is None:
            return None
        try:
            w.close()
        except RecordsUnwritable:
            pass
        if w.failed is None:
            return None
        ended = w.salvage({"type": "aborted", "reason": f"{REASON_UNWRITABLE}: {w.failed.message}"})
        self.log.error("record_unwritable", path=str(w.path), error=w.failed.message, record_ended=ended)
        return w.failed

    def _finish_result(self, status: int, reason: str) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        m = self.match
        out = m.outcome
        if (failed := self._close_record()) is not None:  # reason code first: clients match on the prefix
            status, reason, out = pb.MATCH_STATUS_ABORTED, f"{REASON_UNWRITABLE}: {failed.message}", None
            self.end = "records_unwritable"
        elif self.end == "completed" and len(m.forfeited) == len(self.seats):
            self.end = "all_forfeited"
        result = pb.MatchResult(match_id=self.match_id, status=status, variant=m.variant.name,  # type: ignore[arg-type]
                                totals=list(m.game.totals), seat_names=[s.name for s in self.seats],
                                forfeited=list(m.forfeited), seed=m.config.seed,
                                record_path=str(self.writer.path) if self.writer else "",
                                faults=[s.stats.faults(seat) for seat, s in enumerate(self.seats)])
        for i, h in enumerate(m.game.history):
            result.hands.append(codec.hand_result_to_pb(h, self.match_id, i + 1, []))
        if out is not None:
            result.reason = out.reason
            result.ranking.extend(pb.Placement(seats=list(g)) for g in out.ranking)
        else:
            result.reason = reason
        self.result = result
        self.status = status
        for seat, s in enumerate(self.seats):
            if s.resending is not None:  # what it had still to catch up on comes before the result
                s.resending.cancel()
                s.resending = None
                if s.conn is not None:
                    self._resend(seat, s.conn, s.resent, len(s.log))
            if s.conn is not None:
                s.conn.send(pb.PlayResponse(match_result=result))
                s.conn.seats.discard((self.match_id, seat))
        for w in self.watchers:
            w.push(None)
        # a finished match takes no rejoins and is asked only for its result: what is kept of it until the server
        # forgets it (--max-finished-kept) is small; its events are all in its record
        self._sent, self._hand_results = [], {}
        for s in self.seats:
            s.log = array("I")
        m.log.clear()
        self.log.info("match_finished", reason=result.reason, totals=list(result.totals),
                      ranking=[list(p.seats) for p in result.ranking])
