"""The cost of the wire: a decision over gRPC on 127.0.0.1 against a bare grpc.aio bidi ping-pong.

The referee runs in its own process (``referee serve --port 0``, records on, as in production) and the bots
in this one, as raw streams that answer at once with a random legal action that is never a drop, so games run
their full length. A decision's round trip is the time from a bot sending its answer to it receiving its
next ``DecisionRequest`` when that comes straight after (the DRAW -> PLAY step of one seat): everything the
referee does per decision (decode, apply, record, events, view and legal actions, encode) plus two hops.
Match set-up (CreateMatch, both joins, the first request) is measured on its own. The ping-pong server is a
generic bytes handler in its own process, echoing messages of the size of an average ``DecisionRequest``.
Like for like, both run on the event loop the referee and the Python SDK run on (``rummy.wire.loops``: uvloop
where installed), and so do the bench's bots and ping-pong client. The protocol's floor (``protocol_floor``)
runs the same bot against a ``Play`` that does no referee work, answering with canned referee messages: what
a referee that cost nothing would measure.

    python -m bench.wire                    # a short run, printed as JSON
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from rummy.wire import loops

_PING_METHOD = "/bench.Echo/PingPong"


def never_dropping(legal: Any) -> list[Any]:
    """A random bot's choices from a request's legal actions: all but an Indian drop (while anything else is
    legal), so games run their full length instead of mostly ending on the first turn."""
    return [a for a in legal if a.WhichOneof("kind") != "drop"] or list(legal)


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


# ---------------------------------------------------------------- processes


class Server:
    """A server subprocess that prints one JSON line with its address, stopped on exit."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"server {args} did not start")
        self.address: str = json.loads(line)["address"]

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_kib(self) -> int:
        """Resident memory of the server process (Linux ``/proc``)."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def referee_server(records: str | None) -> Server:
    args = ["-m", "referee.tools.cli", "serve", "--port", "0", "--log-level", "warning"]
    if records:
        args += ["--records", records]
    return Server(args)


# ---------------------------------------------------------------- the bare ping-pong


async def _serve_stream(service: str, method: str, handler: Any, request_deserializer: Any = None) -> None:
    """A server of one bidi method on 127.0.0.1 (replies are bytes, passed through): prints its address as the
    ``Server`` line and serves until stopped."""
    import grpc

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, {
        method: grpc.stream_stream_rpc_method_handler(handler, request_deserializer=request_deserializer,
                                                      response_serializer=None)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(json.dumps({"address": f"127.0.0.1:{port}"}), flush=True)
    await server.wait_for_termination()


async def _pingpong_serve() -> None:
    async def echo(request_iterator: Any, context: Any) -> Any:
        async for msg in request_iterator:
            yield msg

    await _serve_stream("bench.Echo", "PingPong", echo)


async def _pingpong_stream(channel: Any, size: int, count: int, lat: list[float]) -> None:
    call = channel.stream_stream(_PING_METHOD, request_serializer=None, response_deserializer=None)()
    payload = bytes(size)
    for _ in range(count):
        t0 = time.perf_counter()
        await call.write(payload)
        await call.read()
        lat.append(time.perf_counter() - t0)
    await call.done_writing()


def bare_pingpong(size: int, count: int, streams: int = 1, loop: str = "auto") -> dict[str, float]:
    """Round trips of ``size`` bytes over one (or ``streams`` concurrent) grpc.aio bidi streams, both sides on the
    event loop ``loop`` (``rummy.wire.loops``; ``auto``, as the referee and the SDK run, is uvloop where installed)."""
    import grpc

    with Server(["-m", "bench.wire", "--pingpong-server", loop]) as srv:
        async def go() -> dict[str, float]:
            async with grpc.aio.insecure_channel(srv.address) as ch:
                warm: list[float] = []
                await _pingpong_stream(ch, size, 200, warm)
                lat: list[float] = []
                t0 = time.perf_counter()
                await asyncio.gather(*(_pingpong_stream(ch, size, count, lat) for _ in range(streams)))
                elapsed = time.perf_counter() - t0
            return {"p50_us": percentile(lat, 50) * 1e6, "p99_us": percentile(lat, 99) * 1e6,
                    "round_trips_per_s": len(lat) / elapsed}

        return loops.run(go(), loop)


# ---------------------------------------------------------------- the protocol's floor: a referee that does nothing


def canned_requests(matches: int = 2) -> list[bytes]:
    """What a batching seat 0 is sent, write by write, in seeded in-process Indian matches (no gRPC), keeping the
    writes that carry a decision request: real messages (the acceptance and events riding with the request)."""
    from referee.rules.match import MatchConfig
    from referee.service.session import Connection, MatchSession, TimeControl
    from rummy.referee.v1 import referee_pb2 as pb

    kept: list[bytes] = []

    async def seat(session: MatchSession, conn: Connection, i: int) -> None:
        rng = random.Random(i)
        async for data in conn.outgoing():
            msg = pb.PlayResponse.FromString(data)
            inner = list(msg.batch.messages) if msg.WhichOneof("body") == "batch" else [msg]
            for m in inner:
                if m.WhichOneof("body") == "decision":
                    if i == 0:
                        kept.append(data)
                    session.deliver(conn, m.decision.request_id, rng.choice(never_dropping(m.decision.legal_actions)))
                elif m.WhichOneof("body") == "match_result":
                    return

    async def play(k: int) -> None:
        config = MatchConfig("indian", 2, seed=f"canned{k}", max_hands=1, max_turns_per_hand=200)
        session = MatchSession(f"canned{k}", config, ["a", "b"], ["", ""], TimeControl(per_move_ms=30000))
        conns = [Connection(batch=True) for _ in range(2)]
        for i, conn in enumerate(conns):
            session.attach(i, conn)
        task = asyncio.get_running_loop().create_task(session.run())
        await asyncio.gather(*(seat(session, conn, i) for i, conn in enumerate(conns)))
        for conn in conns:
            conn.close()
        await task

    async def all_matches() -> None:
        for k in range(matches):
            await play(k)

    loops.run(all_matches())
    return kept


async def _canned_serve(canned: list[bytes], answers: int) -> None:
    """A ``Play`` method that does no referee work: each message from the bot (its Join, then each answer) is
    answered with the next canned write (``canned_requests``), and after ``answers`` answers with a result."""
    from rummy.referee.v1 import referee_pb2 as pb

    result = pb.PlayResponse(match_result=pb.MatchResult(match_id="canned")).SerializeToString()

    async def play(request_iterator: Any, context: Any) -> Any:
        k = 0
        async for _msg in request_iterator:
            yield result if k > answers else canned[k % len(canned)]
            k += 1

    await _serve_stream("rummy.referee.v1.RefereeService", "Play", play, pb.PlayRequest.FromString)


def protocol_floor(answers: int = 2000) -> dict[str, float]:
    """The round trip of the wire bench's own bot against a ``Play`` that answers at once with real, canned
    referee messages: both hops, the protobuf decoding and encoding on both sides and the bot's choice, none of
    the referee's work. What a referee that cost nothing would measure; set against the bare ping-pong, it is the
    lowest wire overhead ratio this protocol can reach on grpc.aio."""
    import grpc

    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    with Server(["-m", "bench.wire", "--canned-server", str(answers)]) as srv:
        async def go() -> WireStats:
            stats = WireStats()
            async with grpc.aio.insecure_channel(srv.address) as ch:
                stub = pb_grpc.RefereeServiceStub(ch)
                await _seat(stub, "canned", "", random.Random(0), stats, [0], time.perf_counter(), 0, True)
            return stats

        stats = loops.run(go())
    rt = stats.round_trips[len(stats.round_trips) // 10:]  # the first tenth warms up
    return {"p50_us": percentile(rt, 50) * 1e6, "p99_us": percentile(rt, 99) * 1e6, "round_trips": len(rt)}


# ---------------------------------------------------------------- the referee over the wire


@dataclass
class WireStats:
    """What the bots saw: round trips (s), set-up times (s), decisions made, DecisionRequest sizes (bytes)."""

    round_trips: list[float] = field(default_factory=list)
    setups: list[float] = field(default_factory=list)
    decisions: int = 0
    request_bytes: list[int] = field(default_factory=list)


async def _seat(stub: Any, match_id: str, token: str, rng: random.Random, stats: WireStats,
                counter: list[int], created_at: float, seat: int, batch: bool) -> None:
    """One raw bot stream: join with the seat token, answer each request at once (never a drop); with ``batch``
    it reads batches (``Join.batch``), as the Python SDK does."""
    from rummy.referee.v1 import referee_pb2 as pb
    from rummybot.sdk import messages

    call = stub.Play()
    await call.write(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=match_id, token=token),
                                                   bot_name=f"bench{seat}", sdk="bench", batch=batch)))
    sent_at = 0.0
    mark = -1
    first = True
    async for msg in messages(call):
        body = msg.WhichOneof("body")
        if body == "decision":
            now = time.perf_counter()
            if first:
                stats.setups.append(now - created_at)
                first = False
            elif counter[0] == mark:  # no other seat decided in between: a clean round trip
                stats.round_trips.append(now - sent_at)
            d = msg.decision
            if len(stats.request_bytes) < 2000:
                stats.request_bytes.append(msg.ByteSize())
            action = rng.choice(never_dropping(d.legal_actions))
            counter[0] += 1
            mark = counter[0]
            stats.decisions += 1
            sent_at = time.perf_counter()
            await call.write(pb.PlayRequest(action=pb.ActionMessage(match_id=match_id, request_id=d.request_id,
                                                                      action=action)))
        elif body == "match_result":
            break
    await call.done_writing()


async def _one_match(stub: Any, k: int, variant: str, turns: int, stats: WireStats, seats: int = 2,
                     batch: bool = True) -> None:
    from rummy.referee.v1 import referee_pb2 as pb

    created = time.perf_counter()
    r = await stub.CreateMatch(pb.CreateMatchRequest(
        variant=variant, seed=f"wire{k}", max_hands=1, max_turns_per_hand=turns,
        seats=[pb.SeatSpec(name=f"bench{i}") for i in range(seats)],
        time_control=pb.TimeControl(per_move_ms=30000, connect_ms=60000)))
    counter = [0]
    await asyncio.gather(*(_seat(stub, r.match_id, tok, random.Random(f"{k}:{i}"), stats, counter, created, i, batch)
                           for i, tok in enumerate(r.seat_tokens)))


async def play_matches(address: str, matches: int, concurrency: int, variant: str, turns: int,
                        batch: bool = True) -> tuple[WireStats, float]:
    import grpc

    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    stats = WireStats()
    async with grpc.aio.insecure_channel(address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        await _one_match(stub, -1, variant, 20, WireStats())  # warm up: imports and first-call costs
        sem = asyncio.Semaphore(concurrency)

        async def bounded(k: int) -> None:
            async with sem:
                await _one_match(stub, k, variant, turns, stats, batch=batch)

        t0 = time.perf_counter()
        await asyncio.gather(*(bounded(k) for k in range(matches)))
        elapsed = time.perf_counter() - t0
    return stats, elapsed


def wire_run(matches: int, concurrency: int, variant: str = "indian", turns: int = 200,
             records: bool = True, batch: bool = True) -> dict[str, float]:
    """Full-length matches over gRPC, ``concurrency`` at a time, on a fresh referee process."""
    with tempfile.TemporaryDirectory(prefix="bench-records-") as tmp, referee_server(tmp if records else None) as srv:
        stats, elapsed = loops.run(play_matches(srv.address, matches, concurrency, variant, turns, batch))
    rt = stats.round_trips
    return {
        "matches": matches, "concurrency": concurrency, "decisions": stats.decisions,
        "decisions_per_s": stats.decisions / elapsed,
        "round_trip_p50_us": percentile(rt, 50) * 1e6, "round_trip_p99_us": percentile(rt, 99) * 1e6,
        "setup_p50_ms": percentile(stats.setups, 50) * 1e3,
        "request_bytes_mean": statistics.fmean(stats.request_bytes) if stats.request_bytes else 0.0,
    }


async def _live_matches(address: str, n: int) -> list[Any]:
    """``n`` matches with both seats joined and the first request out, left waiting for an answer."""
    import grpc

    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    ch = grpc.aio.insecure_channel(address)
    stub = pb_grpc.RefereeServiceStub(ch)
    calls = []
    for k in range(n):
        r = await stub.CreateMatch(pb.CreateMatchRequest(
            variant="indian", seed=f"rss{k}", max_hands=1, seats=[pb.SeatSpec(name=f"s{i}") for i in range(2)],
            time_control=pb.TimeControl(per_move_ms=600000, connect_ms=600000)))
        for tok in r.seat_tokens:
            call = stub.Play()
            await call.write(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=r.match_id, token=tok))))
            calls.append(call)
    async def drain(call: Any) -> None:  # read what the referee sends (the request stays unanswered)
        async for _msg in call:
            pass

    readers = [asyncio.create_task(drain(c)) for c in calls]
    return [ch, calls, readers]


def rss_per_match(counts: tuple[int, ...] = (1, 100)) -> dict[str, float]:
    """Resident memory of a referee process holding 1 and 100 live matches (records on)."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-rss-") as tmp, referee_server(tmp) as srv:
        async def go() -> None:
            held: list[Any] = []
            out["idle_rss_mib"] = srv.rss_kib() / 1024
            have = 0
            for n in counts:
                held.append(await _live_matches(srv.address, n - have))
                have = n
                await asyncio.sleep(1.0)  # every match started and its first request sent
                out[f"rss_{n}_live_mib"] = srv.rss_kib() / 1024
            for ch, _calls, readers in held:
                for r in readers:
                    r.cancel()
                await ch.close()

        asyncio.run(go())
    lo, hi = counts[0], counts[-1]
    out["rss_per_live_match_kib"] = (out[f"rss_{hi}_live_mib"] - out[f"rss_{lo}_live_mib"]) * 1024 / (hi - lo)
    return out


def main() -> None:
    if "--pingpong-server" in sys.argv:
        loops.run(_pingpong_serve(), sys.argv[-1] if sys.argv[-1] in loops.LOOPS else "auto")
        return
    if "--canned-server" in sys.argv:
        from referee.service.logs import configure_logging

        configure_logging("warning")  # stdout carries the address line only
        loops.run(_canned_serve(canned_requests(), int(sys.argv[-1])))
        return
    one = wire_run(6, 1)
    unbatched = wire_run(6, 1, batch=False)
    size = int(one["request_bytes_mean"])
    print(json.dumps({"wire": one, "wire_unbatched": unbatched, "bare": bare_pingpong(size, 2000),
                      "protocol_floor": protocol_floor(),
                      "rss": rss_per_match((1, 20))}, indent=1))


if __name__ == "__main__":
    main()
