"""Soak (slow): 200 matches at once, played by random bots over 127.0.0.1 for a bounded time, against a
``referee serve`` process whose memory (RSS) and open file descriptors are measured when it is idle after a
warm-up and again when it is idle after the soak: no descriptor leaks, memory grows by no more than the finished
matches the referee keeps for ``GetResult`` (``--max-finished-kept``) allow, and every match created has its result.

``RUMMY_SOAK_SECONDS`` (default 120) sets how long matches keep being started. The warm-up plays
``RUMMY_SOAK_WARMUP_MATCHES`` (default 15,000) first: the rules core's memo caches (``referee.rules.melds`` and the
variants' verdicts) are bounded but large, and fill as ever more positions are seen; measured here, the serving
referee's memory rises for some 15,000 such matches and then stays flat (144 MiB after 2,181, 288 after 14,790,
287 after 20,907), which a short warm-up took for a leak.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from referee.rules.policies import random_policy
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot
from tests.serving import free_port, kill, serve

CONCURRENT = 200
PAIRS = 20  # bot connections: 2 per pair, each pair playing CONCURRENT / PAIRS matches at a time
VARIANTS = ("fortune", "indian", "arlington", "500-rum", "skarney-singles", "iceberg")
KEEP_FINISHED = 100  # fewer than the warm-up plays: growth after it is not the kept matches


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class Tally:
    created: list[str] = field(default_factory=list)
    results: dict[str, pb.MatchResult] = field(default_factory=dict)


async def _wave(stub, seconds: float, tally: Tally, counter: itertools.count, until: int | None = None) -> None:
    """Keep CONCURRENT matches going for ``seconds`` (or until match number ``until``); return once the last of
    them has ended."""
    ends = time.monotonic() + seconds

    async def slot(i: int) -> None:
        pair = i % PAIRS
        while time.monotonic() < ends:
            n = next(counter)
            if until is not None and n >= until:
                return
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                variant=VARIANTS[n % len(VARIANTS)], seed=f"soak-{n}", max_hands=1, max_turns_per_hand=40,
                seats=[pb.SeatSpec(name=f"p{pair}a", bot_token=f"soak-{pair}-a"),
                       pb.SeatSpec(name=f"p{pair}b", bot_token=f"soak-{pair}-b")]))
            tally.created.append(created.match_id)
            result = (await stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=600)).result
            tally.results[created.match_id] = result

    await asyncio.gather(*(slot(i) for i in range(CONCURRENT)))


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_two_hundred_matches_at_once_for_minutes_leak_nothing_and_lose_no_result(tmp_path, capsys):
    seconds = float(os.environ.get("RUMMY_SOAK_SECONDS", "120"))
    port = free_port()
    referee = serve(port, tmp_path / "records", "--per-move-ms", "10000", "--max-finished-kept", str(KEEP_FINISHED))
    address = f"127.0.0.1:{port}"
    figures: dict[str, float] = {}
    try:
        async def go():
            bots = [asyncio.create_task(run_bot(PolicyBot(f"p{p}{side}", lambda v: random_policy, seed=p * 2 + k), address,
                                                bot_token=f"soak-{p}-{side}"))
                    for p in range(PAIRS) for k, side in enumerate("ab")]
            await asyncio.sleep(1.0)
            tally = Tally()
            counter = itertools.count()
            async with grpc.aio.insecure_channel(address) as ch:
                stub = pb_grpc.RefereeServiceStub(ch)
                figures["rss_start_kib"], figures["fds_start"] = rss_kib(referee.pid), open_fds(referee.pid)
                started = time.monotonic()
                warm_up = int(os.environ.get("RUMMY_SOAK_WARMUP_MATCHES", "15000"))
                await _wave(stub, 1200.0, tally, counter, until=warm_up)  # warm-up: caches fill, pools, the first matches
                await asyncio.sleep(2.0)
                figures["warm_matches"] = len(tally.results)
                figures["rss_warm_kib"], figures["fds_warm"] = rss_kib(referee.pid), open_fds(referee.pid)
                await _wave(stub, seconds, tally, counter)
                await asyncio.sleep(2.0)
                figures["seconds"] = time.monotonic() - started
                figures["rss_end_kib"], figures["fds_end"] = rss_kib(referee.pid), open_fds(referee.pid)
            for b in bots:
                b.cancel()
            await asyncio.gather(*bots, return_exceptions=True)
            return tally

        tally = asyncio.run(go())
    finally:
        kill(referee)
    done = len(tally.results)
    finished = sum(r.status == pb.MATCH_STATUS_FINISHED for r in tally.results.values())
    forfeits = sum(bool(r.forfeited) for r in tally.results.values())
    grew_kib = figures["rss_end_kib"] - figures["rss_warm_kib"]
    with capsys.disabled():
        print(f"\nsoak: {done} matches in {figures['seconds']:.0f} s ({CONCURRENT} at once), {finished} finished, "
              f"{forfeits} with a forfeit; referee RSS {figures['rss_start_kib'] / 1024:.0f} MiB at start, "
              f"{figures['rss_warm_kib'] / 1024:.0f} MiB after the warm-up ({figures['warm_matches']:.0f} matches), "
              f"{figures['rss_end_kib'] / 1024:.0f} MiB at the end ({grew_kib / 1024:+.1f} MiB); open fds "
              f"{figures['fds_start']:.0f} / {figures['fds_warm']:.0f} / {figures['fds_end']:.0f}")
    assert len(tally.created) == done == len(set(tally.created)), "a match without its result"
    assert finished == done and forfeits == 0
    assert figures["fds_end"] <= figures["fds_warm"] + 5, "file descriptors leak"
    assert grew_kib <= 64 * 1024, "memory grows past what the kept finished matches account for"
