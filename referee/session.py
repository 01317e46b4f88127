"""One running match on the server: seats and their connections, deadlines, dispatch of events by visibility.

The rules live in ``referee.match``; this module adds only time and transport. Every wait has a deadline, so a
bot that crashes, stalls, floods or lies costs at most its own seat: a missed deadline plays the default move,
a disconnect past the grace period forfeits the seat to the autopilot, and the match always ends.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from referee import protocodec as codec
from referee.errors import IllegalAction, InvalidAction
from referee.limits import DEFAULT_LIMITS, ServerLimits
from referee.logs import get_logger
from referee.match import Match, MatchConfig
from referee.records import RecordWriter
from referee.variants.base import Event
from rummy.referee.v1 import referee_pb2 as pb

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


class Connection:
    """One Play stream: an outbound queue and the seats it holds."""

    def __init__(self, name: str = "", bot_token: str = "") -> None:
        self.name = name
        self.bot_token = bot_token
        self.out: asyncio.Queue[pb.RefereeMessage | None] = asyncio.Queue()
        self.closed = False
        self.seats: set[tuple[str, int]] = set()

    def send(self, msg: pb.RefereeMessage) -> None:
        if not self.closed:
            self.out.put_nowait(msg)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.out.put_nowait(None)


@dataclass
class SeatStats:
    """How a seat answered, per phase name: what the conformance check (``referee check-bot``) reports."""

    asked: Counter[str] = field(default_factory=Counter)
    accepted: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)  # by "PHASE/CODE"
    timed_out: Counter[str] = field(default_factory=Counter)


@dataclass
class _Seat:
    token: str
    name: str
    bot_token: str
    conn: Connection | None = None
    inbox: asyncio.Queue[tuple[int, pb.Action] | None] = field(default_factory=asyncio.Queue)
    attached: asyncio.Event = field(default_factory=asyncio.Event)
    bank_left_ms: int = 0
    stats: SeatStats = field(default_factory=SeatStats)


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
    ) -> None:
        self.match_id = match_id
        self.time = time_control
        self.limits = limits
        self.client = client  # the address that created it (per-client limits)
        self.writer: RecordWriter | None = None
        self._early: list[dict] = []  # type: ignore[type-arg]
        self.match = Match(config, on_record=self._record)  # raises InvalidOption before any file is made
        if records_dir:
            self.writer = RecordWriter(records_dir, match_id, {"seat_names": seat_names}, max_bytes=limits.max_record_bytes)
            for entry in self._early:
                self.writer.write(entry)
            self.writer.flush()
        self._early = []
        self.seats = [
            _Seat(secrets.token_urlsafe(18) if not bt else "", seat_names[s], bt, bank_left_ms=time_control.bank_ms)
            for s, bt in enumerate(bot_tokens)
        ]
        self.status: int = pb.MATCH_STATUS_WAITING
        self.watchers: list[asyncio.Queue[pb.MatchEvent | None]] = []
        self.done = asyncio.Event()
        self.sequence = 0
        self.request_seat: dict[int, int] = {}
        self._next_request = 1
        self._on_finish = on_finish
        self.log = get_logger(match_id=match_id, variant=config.variant)
        self.result: pb.MatchResult | None = None

    # ------------------------------------------------------------ connections

    def _record(self, entry: dict) -> None:  # type: ignore[type-arg]
        if self.writer is not None:
            self.writer.write(entry)
        else:
            self._early.append(entry)

    def attach(self, seat: int, conn: Connection) -> None:
        """A connection takes the seat (first join, or a reconnect within the grace period)."""
        s = self.seats[seat]
        s.conn = conn
        conn.seats.add((self.match_id, seat))
        s.attached.set()
        m = self.match
        tc = pb.TimeControl(per_move_ms=self.time.per_move_ms, bank_ms=self.time.bank_ms, grace_ms=self.time.grace_ms)
        conn.send(pb.RefereeMessage(seated=pb.Seated(
            match_id=self.match_id, seat=seat, variant=m.variant.name, options=dict(m.config.options),
            seats=m.config.seats, teams=list(m.teams), time_control=tc)))
        self.log.info("seat_attached", seat=seat, name=s.name)
        if self._current is not None and self._current[1] == seat:
            conn.send(self._current[2])  # resume: the pending request again

    def detach(self, conn: Connection) -> None:
        for seat, s in enumerate(self.seats):
            if s.conn is conn:
                s.conn = None
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

    _current: tuple[int, int, pb.RefereeMessage] | None = None
    task: asyncio.Task[None] | None = None

    def abort(self, reason: str) -> None:
        """Stop the match where it stands: it ends ABORTED, recorded as such, with no ranking."""
        if self.done.is_set():
            return
        if self.task is not None:
            self.task.cancel()
        self._record({"type": "aborted", "reason": reason})
        self._finish(pb.MATCH_STATUS_ABORTED, reason=f"aborted: {reason}")

    async def run(self) -> None:
        try:
            await self._wait_for_seats()
            self.status = pb.MATCH_STATUS_RUNNING
            self.log.info("match_started", seats=[s.name for s in self.seats])
            ends_at = time.monotonic() + self.limits.max_match_seconds
            while True:
                d = self.match.pending()
                if d is None:
                    break
                if time.monotonic() >= ends_at:
                    self._dispatch(self.match.stop(f"the server's time limit for a match ({self.limits.max_match_seconds} s)"))
                    break
                if self.writer is not None and self.writer.full:
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
                self._record({"type": "aborted", "reason": "referee shutting down"})
                self._finish(pb.MATCH_STATUS_ABORTED, reason="aborted: referee shutting down")
            raise
        except Exception:  # the match must end with a result even if the code has a bug
            self.log.exception("match_crashed")
            if not self.done.is_set():
                self._record({"type": "aborted", "reason": "referee error"})
            self._finish(pb.MATCH_STATUS_ABORTED, reason="referee error")

    async def _wait_for_seats(self) -> None:
        """Wait up to the connect time for every seat; those still missing forfeit together (they tie)."""
        waits = [asyncio.ensure_future(s.attached.wait()) for s in self.seats]
        try:
            await asyncio.wait(waits, timeout=self.time.connect_ms / 1000)
        finally:
            for w in waits:
                w.cancel()
        missing = [seat for seat, s in enumerate(self.seats) if not s.attached.is_set()]
        if missing:
            self._dispatch(self.match.forfeit(missing, "never connected"))

    async def _ask(self, seat: int) -> None:
        s = self.seats[seat]
        hand = self.match.game.hands_played + 1
        log = self.log.bind(seat=seat, hand=hand)
        if s.conn is None and not await self._await_reconnect(seat):
            self._dispatch(self.match.forfeit(seat, "disconnected"))
            return
        rid = self._next_request
        self._next_request += 1
        self.request_seat = {rid: seat}
        d = self.match.pending()
        assert d is not None
        view = codec.view_to_pb(self.match.view(seat))
        legal = [codec.action_to_pb(a) for a in self.match.legal_actions(seat)]
        budget_ms = self.time.per_move_ms + s.bank_left_ms
        started = time.monotonic()
        deadline = started + budget_ms / 1000

        def request(left_ms: int) -> pb.RefereeMessage:
            return pb.RefereeMessage(decision=pb.DecisionRequest(
                match_id=self.match_id, request_id=rid, phase=view.phase, view=view, legal_actions=legal,
                time_left_ms=max(left_ms, 0), bank_left_ms=s.bank_left_ms))

        msg = request(budget_ms)
        phase = d.phase.name
        s.stats.asked[phase] += 1
        self._current = (rid, seat, msg)
        if s.conn is not None:
            s.conn.send(msg)
        rejections = 0
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    log.info("deadline_missed", request_id=rid)
                    s.stats.timed_out[phase] += 1
                    self._dispatch(self.match.timeout(seat))
                    return
                try:
                    item = await asyncio.wait_for(s.inbox.get(), remaining)
                except TimeoutError:
                    continue
                if item is None:  # the connection dropped, or the seat resigned
                    if self.match.on_autopilot(seat):
                        return
                    if not await self._await_reconnect(seat):
                        self._dispatch(self.match.forfeit(seat, "disconnected"))
                        return
                    continue
                got_rid, action_pb = item
                refusal: tuple[int, str, str] | None = None
                if got_rid != rid:
                    refusal = (got_rid, "STALE_REQUEST", f"request {got_rid} is not the open request {rid}")
                else:
                    try:
                        events = self.match.submit(seat, codec.action_from_pb(action_pb))
                    except (IllegalAction, InvalidAction) as exc:
                        log.info("action_rejected", code=exc.code, reason=exc.message)
                        refusal = (rid, exc.code, exc.message)
                if refusal is not None:
                    rejections += 1
                    s.stats.rejected[f"{phase}/{refusal[1]}"] += 1
                    self._reject(s, *refusal)
                    if rejections >= self.time.max_rejections:  # flooding: counts as a missed deadline
                        log.warning("flooding", rejections=rejections)
                        s.stats.timed_out[phase] += 1
                        self._dispatch(self.match.timeout(seat))
                        return
                    continue
                used_ms = int((time.monotonic() - started) * 1000)
                s.stats.accepted[phase] += 1
                if used_ms > self.time.per_move_ms:
                    s.bank_left_ms = max(0, s.bank_left_ms - (used_ms - self.time.per_move_ms))
                if s.conn is not None:
                    s.conn.send(pb.RefereeMessage(accepted=pb.ActionAccepted(match_id=self.match_id, request_id=rid)))
                self._dispatch(events)
                return
        finally:
            self._current = None

    async def _await_reconnect(self, seat: int) -> bool:
        s = self.seats[seat]
        try:
            await asyncio.wait_for(s.attached.wait(), self.time.grace_ms / 1000)
        except TimeoutError:
            return False
        while not s.inbox.empty():  # drop the disconnect marker
            item = s.inbox.get_nowait()
            if item is not None:
                s.inbox.put_nowait(item)
                break
        return True

    def _reject(self, s: _Seat, rid: int, code: str, message: str) -> None:
        if s.conn is not None:
            s.conn.send(pb.RefereeMessage(rejected=pb.ActionRejected(match_id=self.match_id, request_id=rid, code=code,
                                                                     message=message)))

    # ------------------------------------------------------------ output

    def _dispatch(self, events: list[Event]) -> None:
        hand = self.match.game.hands_played
        for e in events:
            self.sequence += 1
            if e.kind == "HAND_STARTED":
                hand = e.count
            msg = codec.event_to_pb(e, self.match_id, self.sequence, hand)
            for seat, s in enumerate(self.seats):
                if s.conn is not None and e.visible_to(seat):
                    s.conn.send(pb.RefereeMessage(event=msg))
            if e.public:
                for w in self.watchers:
                    w.put_nowait(msg)
            if e.kind == "HAND_ENDED":
                g = self.match.game
                hr = codec.hand_result_to_pb(g.history[-1], self.match_id, g.hands_played, g.totals)
                for s in self.seats:
                    if s.conn is not None:
                        s.conn.send(pb.RefereeMessage(hand_result=hr))
        if self.writer is not None:
            self.writer.flush()  # once per move, not per line: the record's writes stay off the hot path

    def _finish(self, status: int, reason: str = "") -> None:
        if self.done.is_set():
            return
        m = self.match
        out = m.outcome
        result = pb.MatchResult(match_id=self.match_id, status=status, variant=m.variant.name,  # type: ignore[arg-type]
                                totals=list(m.game.totals), seat_names=[s.name for s in self.seats],
                                forfeited=list(m.forfeited), seed=m.config.seed,
                                record_path=str(self.writer.path) if self.writer else "")
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
            if s.conn is not None:
                s.conn.send(pb.RefereeMessage(match_result=result))
                s.conn.seats.discard((self.match_id, seat))
        for w in self.watchers:
            w.put_nowait(None)
        if self.writer is not None:
            self.writer.close()
        self.log.info("match_finished", reason=result.reason, totals=list(result.totals),
                      ranking=[list(p.seats) for p in result.ranking])
        self.done.set()
        if self._on_finish:
            self._on_finish(self)
