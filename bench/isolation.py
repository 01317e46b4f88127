"""One hostile client cannot slow another's match: an honest match's pace with and without an attack (#30).

A ``referee serve`` (records and the HTTP viewer on) is attacked from a process of its own with, at once: idle
connections on both ports (an HTTP/2 preface and nothing more; half an HTTP request), Server-Sent-Event streams
and gRPC Watch streams on the honest match, long Simulate calls (random rollouts of thousands of decisions) and
a client looping on the viewer's largest pages (the records listing, the largest record's timeline). Meanwhile
two honest seats play at the referee's 500 ms per move, answering at once. Reported: the honest decisions per
second loaded against unloaded (at least half is the goal), the honest seats' missed deadlines (none is the
goal), ``ListVariants`` latency under the attack (p99 < 50 ms), the server's RSS growth (< 300 MB), and how
much of the attack the referee took and how much it refused (its limits).

The unloaded and loaded phases are measured in turns (``--rounds``, each round a fresh honest match and a fresh
attacker) and the median round's ratio is reported: a shared host's speed drifts between phases.

    python -m bench.isolation                          # the issue's scale: 1,000 of each, 32 Simulate calls
    python -m bench.isolation --scale 0.1 --decisions 100
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import psutil

from bench.wire import percentile
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # and an empty SETTINGS


def _raise_nofile() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Referee:
    """``referee serve`` with records and the viewer, in its own process."""

    def __init__(self, records: Path, extra: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--http", "0", "--records", str(records),
             "--log-level", "error", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        self.address = json.loads(self.proc.stdout.readline())["address"]
        self.http = json.loads(self.proc.stdout.readline())["url"].rstrip("/")

    def rss_mib(self) -> float:
        """The referee's resident memory with its children's (the viewer process, the search workers)."""
        try:
            me = psutil.Process(self.proc.pid)
            return sum(p.memory_info().rss for p in (me, *me.children(recursive=True))) / 2**20
        except psutil.NoSuchProcess:  # one ended meanwhile: the next sample counts again
            return 0.0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _first_legal(d: pb.DecisionRequest) -> pb.Action:
    """A discard where one is listed (turns pass on), never an Indian drop while anything else is legal."""
    legal = [a for a in d.legal_actions if a.WhichOneof("kind") != "drop"] or list(d.legal_actions)
    return next((a for a in legal if a.WhichOneof("kind") == "discard"), legal[0])


async def honest_match(address: str, variant: str, per_move_ms: int, decisions: int, created: Any = None,
                       stub: Any = None, think_ms: int = 0) -> dict[str, Any]:
    """Two seats answering after ``think_ms`` (at once by default), ``decisions`` decisions: their pace and their
    missed deadlines."""
    channel = None
    if stub is None:
        channel = grpc.aio.insecure_channel(address)
        stub = pb_grpc.RefereeServiceStub(channel)
    if created is None:
        created = await create_honest(stub, variant, per_move_ms)
    done = asyncio.Event()
    count = [0]
    timed_out = [0]
    started = [0.0]

    async def seat(token: str) -> None:
        out: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
        out.put_nowait(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=created.match_id, token=token))))

        async def requests() -> Any:
            while (m := await out.get()) is not None:
                yield m

        call = stub.Play(requests())
        async for msg in call:
            body = msg.WhichOneof("body")
            if body == "decision":
                if not started[0]:
                    started[0] = time.perf_counter()
                count[0] += 1
                if count[0] >= decisions:
                    done.set()
                    break
                if think_ms:
                    await asyncio.sleep(think_ms / 1000)
                out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(
                    match_id=created.match_id, request_id=msg.decision.request_id,
                    action=_first_legal(msg.decision))))
            elif body == "event" and msg.event.kind == "TIMED_OUT":
                timed_out[0] += 1
            elif body == "match_result":
                done.set()
                break
        out.put_nowait(None)
        call.cancel()

    tasks = [asyncio.create_task(seat(t)) for t in created.seat_tokens]
    await asyncio.wait_for(done.wait(), 600)
    elapsed = time.perf_counter() - started[0]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id, reason="bench over"))
    if channel is not None:
        await channel.close()
    return {"decisions": count[0], "seconds": round(elapsed, 2), "per_s": round(count[0] / elapsed, 1),
            "timed_out": timed_out[0] // 2}  # each seat is told of every timeout


async def create_honest(stub: Any, variant: str, per_move_ms: int) -> Any:
    return await stub.CreateMatch(pb.CreateMatchRequest(
        variant=variant, seed="honest", max_hands=1000, seats=[pb.SeatSpec(name="honest-a"), pb.SeatSpec(name="honest-b")],
        time_control=pb.TimeControl(per_move_ms=per_move_ms, connect_ms=600_000)))


def list_variants_latency(address: str, stop: threading.Event, out: list[float]) -> None:
    with grpc.insecure_channel(address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        while not stop.is_set():
            t = time.perf_counter()
            try:
                stub.ListVariants(pb.ListVariantsRequest(), timeout=10)
                out.append((time.perf_counter() - t) * 1000)
            except grpc.RpcError:
                out.append(10_000.0)
            stop.wait(0.05)


def seed_records(address: str, records: Path, seconds: float, copies: int) -> str:
    """A long finished record (two first-legal seats for ``seconds``) and ``copies`` copies of it under other names,
    for the viewer's pages. Returns the long record's match id."""
    async def go() -> str:
        async with grpc.aio.insecure_channel(address) as ch:
            stub = pb_grpc.RefereeServiceStub(ch)
            created = await create_honest(stub, "500-rum", 5000)
            await honest_match(address, "500-rum", 5000, int(seconds * 1500), created, stub)
            return str(created.match_id)

    match_id = asyncio.run(go())
    source = records / f"{match_id}.jsonl"
    for i in range(copies):
        shutil.copyfile(source, records / f"copy{i:05d}.jsonl")
    return match_id


# ---------------------------------------------------------------- the attacker (a process of its own)


ATTACKS = ("idle", "watch", "sse", "simulate", "viewer")


async def attack(address: str, http: str, match_id: str, big: str, n: int, simulate: int, rollout: int,
                 parts: frozenset[str] = frozenset(ATTACKS)) -> None:
    import aiohttp

    from rummy.search.v1 import search_pb2 as spb
    from rummy.search.v1 import search_pb2_grpc as spb_grpc

    took: Counter[str] = Counter()
    host, port = address.rsplit(":", 1)
    http_host, http_port = http.removeprefix("http://").rsplit(":", 1)
    sockets: list[socket.socket] = []
    for i in range(n if "idle" in parts else 0):  # idle connections: half an HTTP/2 preface on the gRPC port, half an HTTP request on the viewer's
        try:
            s = socket.create_connection((host, int(port)) if i % 2 == 0 else (http_host, int(http_port)), timeout=5)
            s.sendall(H2_PREFACE if i % 2 == 0 else b"GET /api/records HTTP/1.1\r\nHost: x\r\n")
            sockets.append(s)
            took["idle_opened"] += 1
        except OSError:
            took["idle_refused"] += 1
    channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(8)]
    tasks: list[asyncio.Task[None]] = []

    async def watch(i: int) -> None:
        call = pb_grpc.RefereeServiceStub(channels[i % len(channels)]).Watch(pb.WatchRequest(match_id=match_id))
        try:
            async for _ in call:
                took["watch_events"] += 1
        except grpc.aio.AioRpcError as exc:
            took[f"watch_{exc.code().name}"] += 1

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def sse() -> None:
        try:
            async with session.get(f"{http}/api/live/{match_id}/frames") as resp:
                took[f"sse_{resp.status}"] += 1
                async for _ in resp.content.iter_any():
                    pass
        except (TimeoutError, aiohttp.ClientError):
            took["sse_error"] += 1

    async def viewer_loop() -> None:
        while True:
            for path in ("/api/records?limit=500", f"/api/records/{big}"):
                try:
                    async with session.get(http + path) as resp:
                        await resp.read()
                        took[f"viewer_{resp.status}"] += 1
                except aiohttp.ClientError:
                    took["viewer_error"] += 1

    ref = pb_grpc.RefereeServiceStub(channels[0])
    own = await ref.CreateMatch(pb.CreateMatchRequest(variant="500-rum", seats=[pb.SeatSpec(), pb.SeatSpec()],
                                                      time_control=pb.TimeControl(per_move_ms=600_000,
                                                                                  connect_ms=600_000)))
    holders = []
    for token in own.seat_tokens:  # the attacker's own seats, joined and never answering: a dealt position to search
        q: asyncio.Queue[Any] = asyncio.Queue()
        q.put_nowait(pb.PlayRequest(join=pb.Join(seat=pb.SeatCredential(match_id=own.match_id, token=token))))

        async def it(q: asyncio.Queue[Any] = q) -> Any:
            while (m := await q.get()) is not None:
                yield m

        holders.append(ref.Play(it()))
    await asyncio.sleep(1.0)
    search = spb_grpc.SearchServiceStub(channels[1])
    samples = await search.SampleDeals(spb.SampleDealsRequest(seat=pb.SeatCredential(match_id=own.match_id,
                                                                                     token=own.seat_tokens[0]), n=1))
    token = samples.samples[0].token

    async def simulate_loop(i: int) -> None:
        while True:
            try:
                await search.Simulate(spb.SimulateRequest(token=token, rollout=spb.Rollout(
                    policy=spb.ROLLOUT_POLICY_RANDOM, max_decisions=rollout, seed=str(i))))
                took["simulate_ok"] += 1
            except grpc.aio.AioRpcError as exc:
                took[f"simulate_{exc.code().name}"] += 1
                await asyncio.sleep(0.05)

    tasks += [asyncio.create_task(watch(i)) for i in range(n if "watch" in parts else 0)]
    tasks += [asyncio.create_task(sse()) for _ in range(n if "sse" in parts else 0)]
    tasks += [asyncio.create_task(simulate_loop(i)) for i in range(simulate if "simulate" in parts else 0)]
    if "viewer" in parts:
        tasks.append(asyncio.create_task(viewer_loop()))
    await asyncio.sleep(3.0)  # let it all land
    print(json.dumps({"ready": True}), flush=True)
    await asyncio.to_thread(sys.stdin.readline)  # until the bench says stop
    print(json.dumps({"took": dict(took)}), flush=True)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await session.close()
    for s in sockets:
        s.close()
    for c in channels:
        await c.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--scale", type=float, default=1.0, help="of the 1,000 idle connections, SSE and Watch streams")
    p.add_argument("--simulate", type=int, default=32, help="long Simulate calls at once")
    p.add_argument("--rollout", type=int, default=5000, help="decisions per Simulate rollout")
    p.add_argument("--decisions", type=int, default=200, help="honest decisions timed, unloaded and loaded")
    p.add_argument("--per-move-ms", type=int, default=500, help="the honest match's time per decision")
    p.add_argument("--think-ms", type=int, default=0, help="how long each honest bot thinks per decision (0: answers "
                   "at once, so the pace is all the referee's)")
    p.add_argument("--variant", default="500-rum")
    p.add_argument("--seed-seconds", type=float, default=10.0, help="how long the large record's match plays")
    p.add_argument("--copies", type=int, default=2000, help="records in the folder for the listing")
    p.add_argument("--serve-args", default="", help="more `referee serve` flags, e.g. '--max-match-watchers 16'")
    p.add_argument("--attacker-nice", type=int, default=0, help="run the attacking process at this nice value (0: "
                   "as the referee; its own CPU is then the host's business, not the referee's)")
    p.add_argument("--rounds", type=int, default=3, help="unloaded then loaded, this many times in turns: the pace "
                   "ratio is each round's, its median reported (a shared host's speed drifts between phases)")
    p.add_argument("--parts", default=",".join(ATTACKS), help="which attacks to run, comma separated (to find which "
                   f"one costs the honest match most): {', '.join(ATTACKS)}")
    p.add_argument("--attack", nargs=4, metavar=("ADDRESS", "HTTP", "MATCH", "BIG"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    _raise_nofile()
    n = int(1000 * args.scale)
    if args.attack:
        asyncio.run(attack(*args.attack, n, args.simulate, args.rollout, frozenset(args.parts.split(","))))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp) / "records"
        records.mkdir()
        ref = Referee(records, args.serve_args.split())
        try:
            big = seed_records(ref.address, records, args.seed_seconds, args.copies)
            big_mb = (records / f"{big}.jsonl").stat().st_size / 2**20
            rss_before = ref.rss_mib()

            async def loaded_run() -> tuple[dict[str, Any], dict[str, Any], float]:
                async with grpc.aio.insecure_channel(ref.address) as ch:
                    stub = pb_grpc.RefereeServiceStub(ch)
                    created = await create_honest(stub, args.variant, args.per_move_ms)
                    attacker = subprocess.Popen(
                        [sys.executable, "-m", "bench.isolation", "--scale", str(args.scale), "--simulate",
                         str(args.simulate), "--rollout", str(args.rollout), "--parts", args.parts, "--attack", ref.address, ref.http,
                         created.match_id, big], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                        env={**os.environ, "PYTHONPATH": os.getcwd()},
                        preexec_fn=(lambda: os.nice(args.attacker_nice)) if args.attacker_nice else None)
                    assert attacker.stdout is not None and attacker.stdin is not None
                    line = await asyncio.to_thread(attacker.stdout.readline)
                    assert json.loads(line)["ready"], line
                    stop = threading.Event()
                    lat: list[float] = []
                    probe = threading.Thread(target=list_variants_latency, args=(ref.address, stop, lat), daemon=True)
                    probe.start()
                    peak = [ref.rss_mib()]

                    async def sample_rss() -> None:
                        while True:
                            peak.append(ref.rss_mib())
                            await asyncio.sleep(0.5)

                    sampler = asyncio.create_task(sample_rss())
                    result = await honest_match(ref.address, args.variant, args.per_move_ms, args.decisions, created, stub,
                                                args.think_ms)
                    sampler.cancel()
                    stop.set()
                    probe.join()
                    attacker.stdin.write("stop\n")
                    attacker.stdin.flush()
                    took = json.loads(await asyncio.to_thread(attacker.stdout.readline))["took"]
                    attacker.wait(30)
                    return result, {"took": took, "latencies": lat}, max(peak)

            rounds = []
            for _ in range(max(1, args.rounds)):
                unloaded = asyncio.run(honest_match(ref.address, args.variant, args.per_move_ms, args.decisions,
                                                    think_ms=args.think_ms))
                loaded, attack_report, rss_peak = asyncio.run(loaded_run())
                rounds.append((unloaded, loaded, attack_report, rss_peak))
        finally:
            ref.stop()
    ratios = [round(lo["per_s"] / un["per_s"], 2) for un, lo, _, _ in rounds]
    lat = [x for _, _, a, _ in rounds for x in a["latencies"]]
    rss_peak = max(r[3] for r in rounds)
    report = {
        "scale": args.scale, "parts": args.parts, "think_ms": args.think_ms, "serve_args": args.serve_args, "attacker_nice": args.attacker_nice,
        "simulate_calls": args.simulate, "rollout_decisions": args.rollout,
        "largest_record_mib": round(big_mb, 1), "records": args.copies + 1, "load_avg": os.getloadavg(),
        "rounds": [{"unloaded": un, "loaded": lo, "pace_ratio": r} for (un, lo, _, _), r in zip(rounds, ratios, strict=True)],
        "pace_ratio": sorted(ratios)[len(ratios) // 2],
        "rss_mib": {"before": round(rss_before, 1), "peak": round(rss_peak, 1), "growth": round(rss_peak - rss_before, 1)},
        "took": rounds[-1][2]["took"],
        "list_variants_ms": {"p50": round(percentile(lat, 50), 1), "p99": round(percentile(lat, 99), 1), "calls": len(lat)},
    }
    timed_out = sum(lo["timed_out"] for _, lo, _, _ in rounds)
    report["goals_met"] = {
        "no_timeout": timed_out == 0,
        "pace_at_least_half": report["pace_ratio"] >= 0.5,
        "list_variants_p99_under_50ms": report["list_variants_ms"]["p99"] < 50,
        "rss_growth_under_300mb": report["rss_mib"]["growth"] < 300,
    }
    print(json.dumps(report, indent=2))
    return 0 if all(report["goals_met"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
