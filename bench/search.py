"""Search service throughput over gRPC: samples/s and simulated decisions/s, per variant.

    python bench/search.py [--variants indian 500-rum] [--seconds 3]

On an embedded referee, for a live seat of a match (two seats, at the deal and again some moves in), it times
SampleDeals (32 samples a call), Simulate one decision a call (a client-side search's step), and Simulate with
a rollout to the end of the hand (random and greedy moves played by the server), one client, calls in a row.
The same work in process, without gRPC, is printed beside it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc  # noqa: E402

from referee.match import Match, MatchConfig  # noqa: E402
from referee.search import Rollout, RolloutPolicy, TokenCodec, sample_states, seat_record, simulate  # noqa: E402
from referee.server import EmbeddedReferee  # noqa: E402
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
        ref = pb_grpc.RefereeStub(ch)
        search = spb_grpc.SearchStub(ch)
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--variants", nargs="+", default=["indian", "500-rum"])
    p.add_argument("--seconds", type=float, default=3.0)
    args = p.parse_args()
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
