"""A request's deadline reaches the match as a mark in its seat's inbox, from a timer that serves request after
request: the mark of the open request plays the default move; a mark left over from an earlier request changes
nothing; a request due before the timer would fire moves the timer up."""

from __future__ import annotations

import asyncio

from referee.rules.match import MatchConfig
from referee.service.session import MatchSession, TimeControl
from tests.probes import RequestProbe


async def _started(per_move_ms: int) -> tuple[MatchSession, list[RequestProbe], asyncio.Task[None]]:
    session = MatchSession("m", MatchConfig("indian", 2, seed="deadlines"), ["a", "b"], ["", ""],
                           TimeControl(per_move_ms=per_move_ms, connect_ms=5000))
    conns = [RequestProbe(), RequestProbe()]
    task = session.task = asyncio.create_task(session.run())
    for seat, conn in enumerate(conns):
        session.attach(seat, conn)
    for _ in range(200):
        if any(c.requests for c in conns):
            break
        await asyncio.sleep(0.005)
    return session, conns, task


def test_a_late_mark_of_an_earlier_request_is_not_this_requests_deadline() -> None:
    async def go() -> tuple[int, int]:
        session, conns, task = await _started(per_move_ms=60000)
        seat = next(i for i, c in enumerate(conns) if c.requests)
        first = conns[seat].requests[0]
        session.seats[seat].inbox.put_nowait((first.request_id - 1, None))  # a stale mark
        await asyncio.sleep(0.02)
        timed_out = sum(session.seats[seat].stats.timed_out.values())
        session.deliver(conns[seat], first.request_id, first.legal_actions[0])
        for _ in range(200):
            if len(conns[seat].requests) + len(conns[1 - seat].requests) > 1:
                break
            await asyncio.sleep(0.005)
        asked = len(conns[seat].requests) + len(conns[1 - seat].requests)
        session.abort("test over")
        await asyncio.gather(task, return_exceptions=True)
        return timed_out, asked

    timed_out, asked = asyncio.run(go())
    assert timed_out == 0 and asked == 2


def test_the_open_requests_mark_plays_the_default_move() -> None:
    async def go() -> tuple[int, int]:
        session, conns, task = await _started(per_move_ms=30)
        seat = next(i for i, c in enumerate(conns) if c.requests)
        for _ in range(400):
            if sum(session.seats[seat].stats.timed_out.values()):
                break
            await asyncio.sleep(0.005)
        timed_out = sum(session.seats[seat].stats.timed_out.values())
        events = [e.kind for e in session.match.log]
        session.abort("test over")
        await asyncio.gather(task, return_exceptions=True)
        return timed_out, events.count("TIMED_OUT")

    timed_out, logged = asyncio.run(go())
    assert timed_out == 1 and logged >= 1


def test_a_request_due_sooner_than_the_timer_is_set_for_still_times_out_on_time() -> None:
    """The timer was set for the first request's minute; the next request has 30 ms (less time, or a spent bank)."""
    async def go() -> tuple[int, float]:
        session, conns, task = await _started(per_move_ms=60000)
        seat = next(i for i, c in enumerate(conns) if c.requests)
        first = conns[seat].requests[0]
        session.time = TimeControl(per_move_ms=30, connect_ms=5000)
        session.deliver(conns[seat], first.request_id, first.legal_actions[0])
        started = asyncio.get_running_loop().time()
        for _ in range(400):
            if sum(sum(s.stats.timed_out.values()) for s in session.seats):
                break
            await asyncio.sleep(0.005)
        waited = asyncio.get_running_loop().time() - started
        timed_out = sum(sum(s.stats.timed_out.values()) for s in session.seats)
        session.abort("test over")
        await asyncio.gather(task, return_exceptions=True)
        return timed_out, waited

    timed_out, waited = asyncio.run(go())
    assert timed_out >= 1 and waited < 1.5
