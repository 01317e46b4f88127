"""Benchmarks, run on demand (`make bench`): rules-core speed per variant and the cost of the wire.

Figures are reported as ratios against a baseline measured in the same run (the first variant's in-process
decision rate), so they compare across machines; absolute rates are printed beside them for reference.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from referee.match import Match, MatchConfig, play_seats
from referee.variants import all_variants


def decisions_per_second(variant: str, seats: int, seconds: float) -> float:
    done = 0
    start = time.perf_counter()
    k = 0
    while time.perf_counter() - start < seconds:
        rng = random.Random(k)
        m = Match(MatchConfig(variant=variant, seats=seats, seed=f"bench{k}", max_turns_per_hand=200, max_hands=1))

        def choose(seat, view, legal, rng=rng):
            nonlocal done
            done += 1
            return rng.choice(legal)

        play_seats(m, choose)
        k += 1
    return done / (time.perf_counter() - start)


def wire_decisions_per_second(seconds: float) -> float:
    import grpc

    from referee.server import EmbeddedReferee
    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
    from rummybot.bots.base import PolicyBot
    from rummybot.policies import random_policy
    from rummybot.sdk import run_bot

    class Counting(PolicyBot):
        count = 0

        def decide(self, view, legal, request):
            Counting.count += 1
            return super().decide(view, legal, request)

    with EmbeddedReferee() as ref:
        async def go() -> float:
            bots = [asyncio.create_task(run_bot(Counting(f"b{i}", lambda v: random_policy, seed=i), ref.address,
                                                bot_token=f"bench{i}")) for i in range(2)]
            await asyncio.sleep(0.2)
            start = time.perf_counter()
            async with grpc.aio.insecure_channel(ref.address) as ch:
                stub = pb_grpc.RefereeStub(ch)
                k = 0
                while time.perf_counter() - start < seconds:
                    r = await stub.CreateMatch(pb.CreateMatchRequest(
                        variant="indian", seed=f"w{k}", max_hands=1,
                        seats=[pb.SeatSpec(name=f"b{i}", bot_token=f"bench{i}") for i in range(2)]))
                    await stub.GetResult(pb.GetResultRequest(match_id=r.match_id, wait=True))
                    k += 1
            elapsed = time.perf_counter() - start
            for b in bots:
                b.cancel()
            return Counting.count / elapsed

        return asyncio.run(go())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seconds", type=float, default=2.0)
    args = p.parse_args()
    from referee.logs import configure_logging

    configure_logging("warning")
    rows = []
    for v in all_variants():
        seats = 4 if v.team_play else v.min_seats
        rows.append((v.name, decisions_per_second(v.name, seats, args.seconds)))
    base = rows[0][1]
    print(f"{'variant':<18} {'decisions/s':>12} {'ratio':>8}")
    for name, rate in rows:
        print(f"{name:<18} {rate:>12.0f} {rate / base:>8.2f}")
    wire = wire_decisions_per_second(args.seconds)
    indian = dict(rows).get("indian", base)
    print(f"\nindian over gRPC (2 SDK bots): {wire:.0f} decisions/s = {wire / indian:.3f} x in-process")


if __name__ == "__main__":
    main()
