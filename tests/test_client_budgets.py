"""Every client is bounded by its credential, not by its address (bots on one host share 127.0.0.1): a bot token
must be named by a match or minted by the admin, streams yet to join and tokens nothing names share small
budgets, the admin's waits never compete with bots, watchers are bounded per match and dropped when they fall
behind, a client that does not read is dropped, a rejoin's backlog goes out in slices, and the time the referee
itself stalls is never charged to a bot (issue #30)."""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager

import grpc
import pytest

from referee.service.credentials import is_minted, looks_minted, mint_bot_token
from referee.service.limits import ServerLimits
from referee.service.server import REASON_KEY, EmbeddedReferee
from referee.service.session import Connection, TimeControl, Watcher
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

ADMIN = "admin-secret-for-tests"


def _reason(err: grpc.aio.AioRpcError) -> str:
    return dict(err.trailing_metadata() or ()).get(REASON_KEY, "")


class Stream:
    """A raw Play stream: what it sends is queued; what it gets is read by a task of its own into a queue (a timed
    out wait on ``call.read()`` itself would cancel the whole call), or never read at all (a slow reader)."""

    def __init__(self, stub: pb_grpc.RefereeServiceStub, join: pb.Join | None, read: bool = True) -> None:
        self.out: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
        if join is not None:
            self.out.put_nowait(pb.PlayRequest(join=join))

        async def requests():
            while (m := await self.out.get()) is not None:
                yield m

        self.call = stub.Play(requests())
        self.got: list[pb.PlayResponse] = []
        self.inbox: asyncio.Queue[pb.PlayResponse | BaseException | None] = asyncio.Queue()
        self.reader = asyncio.ensure_future(self._read()) if read else None

    async def _read(self) -> None:
        try:
            async for msg in self.call:
                for one in (msg.batch.messages if msg.WhichOneof("body") == "batch" else [msg]):
                    self.inbox.put_nowait(one)
            self.inbox.put_nowait(None)
        except grpc.aio.AioRpcError as exc:
            self.inbox.put_nowait(exc)
        except asyncio.CancelledError:
            self.inbox.put_nowait(None)

    async def next(self, body: str | None = None, timeout: float = 10) -> pb.PlayResponse:
        while True:
            msg = await asyncio.wait_for(self.inbox.get(), timeout)
            assert isinstance(msg, pb.PlayResponse), f"the stream ended: {msg!r}"
            self.got.append(msg)
            if body is None or msg.WhichOneof("body") == body:
                return msg

    async def error(self, timeout: float = 10) -> grpc.aio.AioRpcError:
        """The status the stream ends with (every message before it is read and dropped)."""
        while True:
            item = await asyncio.wait_for(self.inbox.get(), timeout)
            if isinstance(item, grpc.aio.AioRpcError):
                return item
            if item is None:
                raise AssertionError("the stream ended OK")

    def act(self, match_id: str, request_id: int, action: pb.Action) -> None:
        self.out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(match_id=match_id, request_id=request_id,
                                                                     action=action)))

    def close(self) -> None:
        self.out.put_nowait(None)
        self.call.cancel()


@asynccontextmanager
async def _referee(admin: bool = True, time_control: TimeControl | None = None, **limits: int):
    ref = EmbeddedReferee(admin_token=ADMIN if admin else None, limits=ServerLimits(**limits),
                          default_time=time_control or TimeControl(per_move_ms=5000, connect_ms=5000, grace_ms=2000))
    await asyncio.to_thread(ref.start)
    channel = grpc.aio.insecure_channel(ref.address)
    try:
        yield ref, pb_grpc.RefereeServiceStub(channel)
    finally:
        await channel.close()
        await asyncio.to_thread(ref.stop)


def _as_admin() -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {ADMIN}"),)


async def _create(stub: pb_grpc.RefereeServiceStub, tokens: list[str], variant: str = "indian") -> pb.CreateMatchResponse:
    return await stub.CreateMatch(pb.CreateMatchRequest(variant=variant, seed="budgets",
                                                        seats=[pb.SeatSpec(name=f"s{i}", bot_token=t)
                                                               for i, t in enumerate(tokens)]),
                                  metadata=_as_admin())


def test_a_minted_token_is_recognised_and_nothing_else_is() -> None:
    token = mint_bot_token(ADMIN, "greedy bot!")
    assert looks_minted(token) and token.startswith("greedy-bot-.")
    assert is_minted(ADMIN, token)
    assert not is_minted("another admin", token)
    label, nonce, mac = token.split(".")
    assert not is_minted(ADMIN, f"{label}.{nonce}x.{mac}")
    assert not is_minted(ADMIN, "made-up-token") and not is_minted(ADMIN, "a.b.ü" * 3)


def test_a_made_up_bot_token_is_refused_and_a_minted_or_named_one_is_seated() -> None:
    async def go() -> None:
        async with _referee() as (_ref, stub):
            stranger = Stream(stub, pb.Join(bot_token="made-up", bot_name="x"))
            err = await stranger.error()
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED and _reason(err) == "BOT_TOKEN_UNKNOWN"

            minted = Stream(stub, pb.Join(bot_token=mint_bot_token(ADMIN, "m"), bot_name="m"))
            assert (await minted.next()).WhichOneof("body") == "welcome"

            created = await _create(stub, ["named-by-a-match", ""])
            named = Stream(stub, pb.Join(bot_token="named-by-a-match", bot_name="n"))
            seated = await named.next("seated")
            assert seated.seated.match_id == created.match_id
            for s in (minted, named):
                s.close()

    asyncio.run(go())


def test_unknown_tokens_on_an_open_server_share_a_small_budget_that_named_tokens_never_touch() -> None:
    async def go() -> None:
        async with _referee(admin=False, max_unclaimed_streams=3) as (ref, stub):
            squatters = [Stream(stub, pb.Join(bot_token=f"squat-{i}")) for i in range(3)]
            for s in squatters:
                await s.next("welcome")
            err = await Stream(stub, pb.Join(bot_token="squat-4")).error()
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and _reason(err) == "LIMIT_UNCLAIMED_STREAMS"

            # a match names one squatter's token: it is claimed and leaves the budget; the honest bot named next
            # is seated although the budget was full
            await _create(stub, ["squat-0", "honest"])
            await squatters[0].next("seated")
            honest = Stream(stub, pb.Join(bot_token="honest"))
            await honest.next("seated")
            assert len(ref.service.unclaimed) == 2
            newcomer = Stream(stub, pb.Join(bot_token="another"))
            await newcomer.next("welcome")  # the claimed one's place is free again
            for s in [*squatters, honest, newcomer]:
                s.close()

    asyncio.run(go())


def test_streams_that_never_join_are_closed_oldest_first_and_do_not_block_a_bot() -> None:
    async def go() -> None:
        async with _referee(max_joining=3) as (_ref, stub):
            silent = [Stream(stub, None) for _ in range(3)]
            await asyncio.sleep(0.3)  # all three are waiting to join
            created = await _create(stub, ["", ""])
            bot = Stream(stub, pb.Join(seat=pb.SeatCredential(match_id=created.match_id, token=created.seat_tokens[0])))
            await bot.next("seated")
            ended, _ = await asyncio.wait([asyncio.ensure_future(s.error()) for s in silent],
                                          return_when=asyncio.FIRST_COMPLETED, timeout=5)
            assert len(ended) == 1
            err = next(iter(ended)).result()
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and _reason(err) == "LIMIT_JOINING"
            for s in [*silent, bot]:
                s.close()

    asyncio.run(go())


def test_the_admins_wait_for_a_result_is_not_counted_against_its_address() -> None:
    async def go() -> None:
        async with _referee(max_client_streams=2) as (_ref, stub):
            created = await _create(stub, ["", ""])
            watchers = [stub.Watch(pb.WatchRequest(match_id=created.match_id)) for _ in range(2)]
            await asyncio.sleep(0.3)
            with pytest.raises(grpc.aio.AioRpcError) as anonymous:
                await stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=5)
            assert _reason(anonymous.value) == "LIMIT_CLIENT_STREAMS"
            admins_wait = asyncio.ensure_future(stub.GetResult(
                pb.GetResultRequest(match_id=created.match_id, wait=True), metadata=_as_admin(), timeout=5))
            await asyncio.sleep(0.3)
            assert not admins_wait.done(), "the admin's wait was refused or did not wait"
            await stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id, reason="test"), metadata=_as_admin())
            assert (await admins_wait).result.status == pb.MATCH_STATUS_ABORTED
            for w in watchers:
                w.cancel()

    asyncio.run(go())


def test_a_match_takes_only_so_many_watchers() -> None:
    async def go() -> None:
        async with _referee(max_match_watchers=2) as (_ref, stub):
            created = await _create(stub, ["", ""])
            first = [stub.Watch(pb.WatchRequest(match_id=created.match_id)) for _ in range(2)]
            await asyncio.sleep(0.3)
            third = stub.Watch(pb.WatchRequest(match_id=created.match_id))
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await asyncio.wait_for(third.read(), 5)
            assert _reason(refused.value) == "LIMIT_MATCH_WATCHERS"
            assert "viewer" in refused.value.details()  # where a crowd goes instead
            admins = stub.Watch(pb.WatchRequest(match_id=created.match_id), metadata=_as_admin())
            assert (await asyncio.wait_for(admins.read(), 5)).event.sequence >= 0  # a full match still lets the admin in
            for w in (*first, admins):
                w.cancel()

    asyncio.run(go())


def test_a_watcher_that_falls_behind_is_dropped_not_kept() -> None:
    async def go() -> tuple[list[bytes], bool]:
        w = Watcher(limit=3)
        for i in range(3):
            w.push(b"%d" % i)
        w.push(b"one too many")
        got = [frame async for frame in w.frames()]
        return got, w.dropped

    got, dropped = asyncio.run(go())
    assert dropped and got == [] and Watcher(3).items == type(Watcher(3).items)()


def test_watch_frames_are_the_match_events_encoded_once() -> None:
    async def go() -> list[pb.MatchEvent]:
        async with _referee(time_control=TimeControl(per_move_ms=5000, connect_ms=200, grace_ms=100)) as (_ref, stub):
            created = await _create(stub, ["", ""])
            call = stub.Watch(pb.WatchRequest(match_id=created.match_id))
            return [r.event async for r in call]  # nobody joins: both forfeit, the match ends

    events = asyncio.run(go())
    assert events and [e.sequence for e in events] == sorted(e.sequence for e in events)
    assert all(e.match_id for e in events)


def test_a_connection_whose_backlog_passes_its_bound_is_dropped_with_a_reason() -> None:
    async def go() -> tuple[str, bool]:
        conn = Connection("slow", max_bytes=1000)
        for _ in range(9):
            conn.send_encoded(b"x" * 100, False)
        assert not conn.closed
        conn.send_encoded(b"x" * 200, False)
        return conn.dropped, conn.closed

    dropped, closed = asyncio.run(go())
    assert closed and dropped.startswith("SLOW_READER")


def test_a_stream_dropped_as_a_slow_reader_ends_resource_exhausted() -> None:
    async def go() -> None:
        async with _referee(max_outbox_bytes=300) as (_ref, stub):  # smaller than one decision request with its view
            created = await _create(stub, ["", ""])
            seats = [Stream(stub, pb.Join(seat=pb.SeatCredential(match_id=created.match_id, token=t)))
                     for t in created.seat_tokens]
            errors = await asyncio.gather(*(s.error() for s in seats))
            assert any(_reason(e) == "SLOW_READER" and e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED for e in errors)

    asyncio.run(go())


def _turn_ender(d: pb.DecisionRequest) -> pb.Action:
    return next((a for a in d.legal_actions if a.WhichOneof("kind") == "discard"), d.legal_actions[0])


@pytest.mark.parametrize("batch", [False, True])
def test_a_rejoin_from_the_start_gets_a_long_backlog_in_order_then_its_request(batch: bool) -> None:
    """More events than one slice (``RESEND_SLICE``): all come, seq 1, 2, 3... with no gap or repeat, and the open
    request after them; to a batching client too, each slice at once (not held for company)."""
    async def go() -> None:
        async with _referee(admin=False, time_control=TimeControl(per_move_ms=5000, connect_ms=5000,
                                                                  grace_ms=5000)) as (_ref, stub):
            created = await stub.CreateMatch(pb.CreateMatchRequest(variant="five_hundred", seed="backlog",
                                                                   seats=[pb.SeatSpec(), pb.SeatSpec()]))
            mid = created.match_id
            seats = [Stream(stub, pb.Join(seat=pb.SeatCredential(match_id=mid, token=t))) for t in created.seat_tokens]

            async def play(seat: Stream, until: asyncio.Event) -> None:
                while not until.is_set():
                    try:
                        msg = await seat.next(timeout=0.2)
                    except TimeoutError:
                        continue
                    if msg.WhichOneof("body") == "decision":
                        seat.act(mid, msg.decision.request_id, _turn_ender(msg.decision))

            enough = asyncio.Event()
            players = [asyncio.create_task(play(s, enough)) for s in seats]
            for _ in range(600):
                seqs = [m.event.seq for m in seats[0].got if m.WhichOneof("body") == "event"]
                if seqs and seqs[-1] > 700:
                    break
                await asyncio.sleep(0.05)
            enough.set()
            await asyncio.gather(*players)
            seats[0].close()
            again = Stream(stub, pb.Join(seat=pb.SeatCredential(match_id=mid, token=created.seat_tokens[0]),
                                         resume=[pb.ResumePoint(match_id=mid, last_seq=0)], batch=batch))
            seated = (await again.next("seated")).seated
            assert seated.last_seq > 700
            seqs: list[int] = []
            while len(seqs) < seated.last_seq:
                msg = await again.next()
                if msg.WhichOneof("body") == "event":
                    seqs.append(msg.event.seq)
                assert msg.WhichOneof("body") != "decision" or len(seqs) >= seated.last_seq
            assert seqs == list(range(1, seated.last_seq + 1))
            again.close()
            seats[1].close()

    asyncio.run(go())


def test_time_the_referee_stalls_is_not_charged_to_the_bot() -> None:
    """The bot answers at once, but the referee's loop is stuck for longer than the move's time: when it runs
    again, the answer is taken, not timed out (#30 item 8)."""
    async def go() -> list[str]:
        tc = TimeControl(per_move_ms=300, connect_ms=5000, grace_ms=5000)
        async with _referee(admin=False, time_control=tc) as (ref, stub):
            created = await stub.CreateMatch(pb.CreateMatchRequest(variant="indian", seed="stall",
                                                                   seats=[pb.SeatSpec(), pb.SeatSpec()]))
            mid = created.match_id
            seats = [Stream(stub, pb.Join(seat=pb.SeatCredential(match_id=mid, token=t))) for t in created.seat_tokens]
            first = await asyncio.wait([asyncio.ensure_future(s.next("decision")) for s in seats],
                                       return_when=asyncio.FIRST_COMPLETED)
            request = next(iter(first[0])).result().decision
            mover = next(s for s in seats if s.got and s.got[-1].WhichOneof("body") == "decision")
            assert ref._loop is not None
            ref._loop.call_soon_threadsafe(time.sleep, 1.0)  # the referee is stuck for 1 s, over 3 moves' time
            await asyncio.sleep(0.05)
            mover.act(mid, request.request_id, _turn_ender(request))
            outcome = []
            while not outcome:
                msg = await mover.next(timeout=5)
                body = msg.WhichOneof("body")
                if body in ("accepted", "rejected"):
                    outcome.append(body if body == "accepted" else msg.rejected.code)
                elif body == "event" and msg.event.kind == "TIMED_OUT":
                    outcome.append("TIMED_OUT")
            for s in seats:
                s.close()
            return outcome

    assert asyncio.run(go()) == ["accepted"]
