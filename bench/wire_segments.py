"""Where a decision's round trip goes: the wire bench's DRAW -> PLAY round trip cut into five segments.

    python -m bench.wire_segments [--matches 20]     # prints each segment's p50 and mean, as JSON

The referee runs in its own process, as in ``bench.wire``, with timestamps taken at four points of its live path
(the answer delivered to the match, the match task resuming with it, the next request handed to the seat's
connection, that request handed to gRPC); the bots in this process take theirs when they write an answer and
when they read the next request. ``time.perf_counter`` is the system's monotonic clock, the same in both
processes. The points are set by wrapping the referee's functions in its process only (nothing in the referee
knows about this), so the figures carry a few microseconds of the wrappers' own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rummy.wire import loops

SEGMENTS = ("bot write -> match gets it", "-> match task resumes", "-> next request ready", "-> handed to gRPC",
            "-> bot reads it", "round trip")


def _serve(out: str, argv: list[str]) -> int:
    """The referee's ``serve`` with its live path timed; the stamps go to ``out`` when it exits."""
    from referee.service import session as s
    from referee.tools.cli import main
    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.wire import protocodec

    clock = time.perf_counter
    stamps: dict[str, dict[str, float]] = {k: {} for k in ("deliver", "resume", "send", "handed")}
    last: list[str] = [""]

    deliver = s.MatchSession.deliver

    def timed_deliver(self: Any, conn: Any, request_id: int, action: Any) -> None:
        last[0] = f"{self.match_id}/{request_id}"
        stamps["deliver"][last[0]] = clock()
        deliver(self, conn, request_id, action)

    action_from_pb = protocodec.action_from_pb

    def timed_action_from_pb(m: Any) -> Any:  # the first thing the match task does with an answer
        stamps["resume"].setdefault(last[0], clock())
        return action_from_pb(m)

    send = s.Connection.send_encoded

    def timed_send(self: Any, data: bytes, urgent: bool) -> None:
        now = clock()
        if urgent:
            msg = pb.PlayResponse.FromString(data)
            if msg.WhichOneof("body") == "decision":
                stamps["send"][f"{msg.decision.match_id}/{msg.decision.request_id}"] = now
        send(self, data, urgent)

    outgoing = s.Connection.outgoing

    async def timed_outgoing(self: Any) -> Any:
        async for data in outgoing(self):
            now = clock()
            msg = pb.PlayResponse.FromString(data)
            inner = msg.batch.messages if msg.WhichOneof("body") == "batch" else [msg]
            for m in inner:
                if m.WhichOneof("body") == "decision":
                    stamps["handed"][f"{m.decision.match_id}/{m.decision.request_id}"] = now
            yield data

    s.MatchSession.deliver = timed_deliver  # type: ignore[method-assign]
    protocodec.action_from_pb = timed_action_from_pb
    s.Connection.send_encoded = timed_send  # type: ignore[method-assign]
    s.Connection.outgoing = timed_outgoing  # type: ignore[method-assign]
    atexit.register(lambda: Path(out).write_text(json.dumps(stamps)))
    return main(argv)


async def _seat(stub: Any, match_id: str, token: str, seat: int, rng: random.Random,
                stamps: dict[str, dict[str, float]]) -> None:
    from bench.wire import never_dropping
    from rummy.referee.v1 import referee_pb2 as pb
    from rummybot.sdk import messages

    call = stub.Play()
    await call.write(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=match_id, token=token),
                                                   bot_name="segments", sdk="bench", batch=True)))
    async for msg in messages(call):
        body = msg.WhichOneof("body")
        if body == "decision":
            d = msg.decision
            key = f"{match_id}/{d.request_id}"
            stamps["read"][key] = time.perf_counter()
            stamps["seat"][key] = seat
            action = rng.choice(never_dropping(d.legal_actions))
            stamps["write"][key] = time.perf_counter()
            await call.write(pb.PlayRequest(action=pb.ActionMessage(match_id=match_id, request_id=d.request_id,
                                                                      action=action)))
        elif body == "match_result":
            break
    await call.done_writing()


async def _play(address: str, matches: int, stamps: dict[str, dict[str, float]]) -> None:
    import grpc

    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    async with grpc.aio.insecure_channel(address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        for k in range(-1, matches):  # the first one warms up
            r = await stub.CreateMatch(pb.CreateMatchRequest(
                variant="indian", seed=f"segments{k}", max_hands=1, max_turns_per_hand=200,
                seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")],
                time_control=pb.TimeControl(per_move_ms=30000, connect_ms=60000)))
            await asyncio.gather(*(_seat(stub, r.match_id, tok, i, random.Random(f"{k}:{i}"), stamps)
                                   for i, tok in enumerate(r.seat_tokens)))


def measure(matches: int = 20) -> dict[str, dict[str, float]]:
    """Each segment's p50 and mean (us) over the round trips of ``matches`` Indian matches where one seat's answer
    is followed by its own next request (DRAW -> PLAY), as ``bench.wire`` counts them."""
    from bench.wire import Server

    with tempfile.TemporaryDirectory(prefix="bench-segments-") as tmp:
        out = Path(tmp) / "stamps.json"
        bots: dict[str, dict[str, float]] = {"write": {}, "read": {}, "seat": {}}
        srv = Server(["-m", "bench.wire_segments", "--serve", str(out), "serve", "--port", "0", "--log-level",
                      "warning", "--records", tmp])
        with srv:
            loops.run(_play(srv.address, matches, bots))
        srv.proc.wait(10)
        ref = json.loads(out.read_text())
    cuts: dict[str, list[float]] = {k: [] for k in SEGMENTS}
    for key, wrote in bots["write"].items():
        match_id, rid = key.rsplit("/", 1)
        nxt = f"{match_id}/{int(rid) + 1}"
        points: list[Any] = [wrote, ref["deliver"].get(key), ref["resume"].get(key), ref["send"].get(nxt), ref["handed"].get(nxt),
                  bots["read"].get(nxt)]
        if any(p is None for p in points) or bots["seat"].get(nxt) != bots["seat"][key]:
            continue  # the next request is another seat's: not a round trip of one bot
        for name, a, b in zip(SEGMENTS, points, points[1:], strict=False):
            cuts[name].append(b - a)
        cuts["round trip"].append(points[-1] - points[0])
    return {k: {"p50_us": statistics.median(v) * 1e6, "mean_us": statistics.fmean(v) * 1e6, "n": len(v)}
            for k, v in cuts.items() if v}


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        sys.exit(_serve(sys.argv[2], sys.argv[3:]))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--matches", type=int, default=20)
    args = p.parse_args()
    print(json.dumps(measure(args.matches), indent=1))


if __name__ == "__main__":
    main()
