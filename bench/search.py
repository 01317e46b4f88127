"""Search service throughput over gRPC: samples/s and simulated decisions/s, per variant.

    python bench/search.py [--variants indian 500-rum] [--seconds 3]
    python bench/search.py --load [--calls 32] [--decisions 5000] [--seconds 6]

On an embedded referee, for a live seat of a match (two seats, at the deal and again some moves in), it times
SampleDeals (32 samples a call), Simulate one decision a call (a client-side search's step), and Simulate with
a rollout to the end of the hand (random and greedy moves played by the server), one client, calls in a row.
The same work in process, without gRPC, is printed beside it.

``--load`` measures what search costs everyone else (issue #30): a ``referee serve`` child process runs a match
of two instant bots; its pace (decisions per second) is taken alone, then while ``--calls`` parallel Simulate
calls with rollouts of up to ``--decisions`` decisions (the default policy, on a hand capped at 2,000 turns) run
from another process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path[1:1] = [str(ROOT / "clients" / "python"), str(ROOT / "protos" / "python")]

import grpc  # noqa: E402

from referee.rules.match import Match, MatchConfig  # noqa: E402
from referee.search import Rollout, RolloutPolicy, TokenCodec, sample_states, seat_record, simulate  # noqa: E402
from referee.service.server import EmbeddedReferee  # noqa: E402
from rummy.referee.v1 import referee_pb2 as pb  # noqa: E402
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc  # noqa: E402
from rummy.search.v1 import search_pb2 as spb  # noqa: E402
from rummy.search.v1 import search_pb2_grpc as spb_grpc  # noqa: E402

BATCH = 32


def rate(seconds: float, once: Callable[[], int]) -> float:
    """Units per second of ``once`` (which returns how many units it did), called for ``seconds``."""
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += once()
    return done / (time.perf_counter() - start)


def over_grpc(address: str, variant: str, seconds: float) -> dict[str, float]:
    with grpc.insecure_channel(address) as ch:
        ref = pb_grpc.RefereeServiceStub(ch)
        search = spb_grpc.SearchServiceStub(ch)
        m = ref.CreateMatch(pb.CreateMatchRequest(variant=variant, seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")],
                                                  seed="bench", time_control=pb.TimeControl(connect_ms=600_000)))
        cred = pb.SeatCredential(match_id=m.match_id, token=m.seat_tokens[0])
        k = [0]

        def sample() -> int:
            k[0] += 1
            return len(search.SampleDeals(spb.SampleDealsRequest(seat=cred, n=BATCH, seed=str(k[0]))).samples)

        tokens = [s.token for s in search.SampleDeals(spb.SampleDealsRequest(seat=cred, n=BATCH, seed="t")).samples]
        rng = random.Random(0)
        state = {"token": tokens[0]}

        def step() -> int:  # one decision per call: a random legal action from the position the last call returned
            pos = search.LegalActions(spb.LegalActionsRequest(token=state["token"])).position
            if pos.hand_over:
                state["token"] = rng.choice(tokens)
                return 0
            sim = search.Simulate(spb.SimulateRequest(token=state["token"], actions=[rng.choice(pos.legal_actions)]))
            state["token"] = sim.token
            return sim.applied

        def playout(policy: int) -> Callable[[], int]:
            def once() -> int:
                sim = search.Simulate(spb.SimulateRequest(token=rng.choice(tokens), rollout=spb.Rollout(
                    policy=policy, seed=str(rng.random()))))
                return len(sim.rollout_actions)
            return once

        return {
            "samples/s": rate(seconds, sample),
            "decisions/s, one a call": rate(seconds, step),
            "decisions/s, random rollouts": rate(seconds, playout(spb.ROLLOUT_POLICY_RANDOM)),
            "decisions/s, greedy rollouts": rate(seconds, playout(spb.ROLLOUT_POLICY_GREEDY)),
        }


def in_process(variant: str, seconds: float) -> dict[str, float]:
    m = Match(MatchConfig(variant=variant, seats=2, seed="bench"))
    record = seat_record(m, 0)
    codec_ = TokenCodec()
    k = [0]

    def sample() -> int:
        k[0] += 1
        return sum(1 for s, _ in sample_states(record, BATCH, str(k[0])) if codec_.seal(s))

    tokens = [codec_.seal(s) for s, _ in sample_states(record, BATCH, "t")]
    rng = random.Random(0)

    def playout(policy: RolloutPolicy) -> Callable[[], int]:
        def once() -> int:
            sim = simulate(codec_.open(rng.choice(tokens)), [], Rollout(policy, 0, str(rng.random())))
            codec_.seal(sim.state)
            return len(sim.rollout)
        return once

    return {"samples/s": rate(seconds, sample), "decisions/s, random rollouts": rate(seconds, playout(RolloutPolicy.RANDOM)),
            "decisions/s, greedy rollouts": rate(seconds, playout(RolloutPolicy.GREEDY))}


# ------------------------------------------------------------------------------ a running match under search load

PACE_VARIANT = "indian"


class _Pacer:
    """Two instant bots in one match: the times of their decisions are the match's pace."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def bot(self, seed: int) -> Any:
        from referee.rules.policies import random_policy
        from rummybot.sdk import Bot

        times, rng = self.times, random.Random(seed)

        class Instant(Bot):
            name = "instant"

            def decide(self, view, legal, request):  # type: ignore[no-untyped-def]
                times.append(time.perf_counter())
                return random_policy(view, legal, rng)

        return Instant()

    def rate(self, start: float, end: float) -> float:
        """Decisions per second between ``start`` and ``end`` (perf_counter times)."""
        return sum(start <= t < end for t in self.times) / (end - start)


def _serve(records: str) -> tuple[subprocess.Popen[str], str]:
    """``referee serve`` on a free port in a child process (its own interpreter, as in production)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "clients" / "python"), str(ROOT / "protos" / "python")])}
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from referee.tools.cli import main; sys.exit(main())", "serve",
                             "--port", "0", "--records", records], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)
    assert proc.stdout is not None
    for line in proc.stdout:
        if '"serving"' in line:
            return proc, json.loads(line)["address"]
    raise RuntimeError("the referee did not start")


def load_worker(address: str, match_id: str, token: str, calls: int, decisions: int, seconds: float) -> None:
    """``calls`` threads, each calling Simulate (a rollout of up to ``decisions``) in a row for ``seconds``; prints
    the calls answered, refused by code, and rollout decisions played."""
    import threading

    done: Counter[str] = Counter()
    with grpc.insecure_channel(address) as ch:
        search = spb_grpc.SearchServiceStub(ch)
        cred = pb.SeatCredential(match_id=match_id, token=token)
        tokens = [s.token for s in search.SampleDeals(spb.SampleDealsRequest(seat=cred, n=calls, seed="load")).samples]
        ends = time.perf_counter() + seconds

        def loop(i: int) -> None:
            while time.perf_counter() < ends:
                try:
                    sim = search.Simulate(spb.SimulateRequest(token=tokens[i], rollout=spb.Rollout(
                        policy=spb.ROLLOUT_POLICY_DEFAULT, max_decisions=decisions, seed=str(i))), timeout=30)
                    done["answered"] += 1
                    done["decisions"] += len(sim.rollout_actions)
                except grpc.RpcError as exc:
                    reason = dict(exc.trailing_metadata() or ()).get("rummy-reason", "")  # type: ignore[attr-defined]
                    done[f"{exc.code().name} {reason}"] += 1  # type: ignore[attr-defined]
                    time.sleep(0.05)

        threads = [threading.Thread(target=loop, args=(i,)) for i in range(calls)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(json.dumps(dict(done)), flush=True)


async def _both(pacer: _Pacer, address: str, m: pb.CreateMatchResponse) -> None:
    from rummybot.sdk import run_bot

    await asyncio.gather(*(run_bot(pacer.bot(i), address, match_id=m.match_id, token=m.seat_tokens[i]) for i in range(2)))


def under_load(calls: int, decisions: int, seconds: float) -> dict[str, Any]:
    """A match's pace alone, then while ``calls`` parallel Simulate calls with ``decisions``-decision rollouts run."""
    import tempfile
    import threading

    with tempfile.TemporaryDirectory() as records:
        proc, address = _serve(records)
        try:
            with grpc.insecure_channel(address) as ch:
                ref = pb_grpc.RefereeServiceStub(ch)
                seats = [pb.SeatSpec(name="a"), pb.SeatSpec(name="b")]
                long = ref.CreateMatch(pb.CreateMatchRequest(variant=PACE_VARIANT, seats=seats, seed="long",
                                                             max_turns_per_hand=2000,
                                                             time_control=pb.TimeControl(connect_ms=600_000)))
            pacer = _Pacer()
            stop = threading.Event()

            def play() -> None:  # one match after another (an Indian match is one deal)
                with grpc.insecure_channel(address) as ch:
                    ref = pb_grpc.RefereeServiceStub(ch)
                    while not stop.is_set():
                        m = ref.CreateMatch(pb.CreateMatchRequest(variant=PACE_VARIANT, seats=seats, seed="pace"))
                        asyncio.run(_both(pacer, address, m))

            threading.Thread(target=play, daemon=True).start()
            time.sleep(1.0)  # connected and playing
            t0 = time.perf_counter()
            time.sleep(seconds)
            t1 = time.perf_counter()
            load = subprocess.Popen([sys.executable, __file__, "--load-worker", address, long.match_id, long.seat_tokens[0],
                                     str(calls), str(decisions), str(seconds + 1.5)], stdout=subprocess.PIPE, text=True)
            time.sleep(1.5)  # every call started
            t2 = time.perf_counter()
            time.sleep(seconds)
            t3 = time.perf_counter()
            out, _ = load.communicate(timeout=120)
            alone, loaded = pacer.rate(t0, t1), pacer.rate(t2, t3)
            stop.set()
            return {"alone decisions/s": alone, "loaded decisions/s": loaded, "slowdown": alone / max(loaded, 1e-9),
                    "load": json.loads(out.strip().splitlines()[-1]) if out.strip() else {}}
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--variants", nargs="+", default=["indian", "500-rum"])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--load", action="store_true", help="a running match's pace alone and under parallel Simulate calls")
    p.add_argument("--calls", type=int, default=32, help="--load: parallel Simulate calls")
    p.add_argument("--decisions", type=int, default=5000, help="--load: the most decisions of each call's rollout")
    p.add_argument("--load-worker", nargs=6, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.load_worker:
        address, match_id, token, calls, decisions, seconds = args.load_worker
        load_worker(address, match_id, token, int(calls), int(decisions), float(seconds))
        return 0
    if args.load:
        print(json.dumps(under_load(args.calls, args.decisions, args.seconds), indent=1))
        return 0
    import logging

    import structlog
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with EmbeddedReferee() as ref:
        for variant in args.variants:
            wire = over_grpc(ref.address, variant, args.seconds)
            local = in_process(variant, args.seconds)
            print(f"{variant}: over gRPC (in process)")
            for key, value in wire.items():
                extra = f"  ({local[key]:8,.0f})" if key in local else ""
                print(f"  {key:32s} {value:8,.0f}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
