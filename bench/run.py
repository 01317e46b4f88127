"""Benchmarks, run on demand (``make bench``), never in the unit suite: every figure beside its baseline measured
in the same run, as a ratio, so results compare across machines and loads.

1. in process: random self-play decisions/s and games/s per variant, against OpenSpiel's gin_rummy and RLCard's
   gin-rummy (the ``bench`` extra installs both);
2. over gRPC on 127.0.0.1: the per-decision round trip (p50/p99) in full-length games and the match set-up
   cost, against a bare grpc.aio bidi ping-pong of the same message size; decisions/s and p99 with 1, 10 and
   100 concurrent matches;
3. tournament games/hour of the bundled bots at concurrency 1 and 2, bot processes reused and restarted;
4. resident memory per live match (1 against 100);
5. growth: decisions/s at 2, 4 and 6 seats; meld search and least-points grouping as the hand grows;
6. on demand only (``--only ladder``, minutes): the ladder with 1,000 bots and 1,000,000 stored games
   (:mod:`bench.ladder`: refit, matchmaking round, leaderboard p99), in a process of its own.

    python -m bench.run [--quick] [--only inprocess wire ... ladder] [--out bench-results.json]

Prints a table and writes ``bench-results.json`` (keys listed in ``REQUIRED_KEYS`` always present; a peer that
is not installed is null).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from referee.rules import native

SECTIONS = ("inprocess", "wire", "concurrency", "tournament", "memory", "scaling", "env")
ON_DEMAND = ("ladder",)  # run only when named in --only
REQUIRED_KEYS = ("inprocess_decisions_per_s", "openspiel_decisions_per_s", "rlcard_decisions_per_s", "wire_p50_us",
                 "bare_grpc_p50_us", "wire_overhead_ratio", "concurrent_100_p99_ms")


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def bench_inprocess(res: dict[str, Any], seconds: float, repeat: int) -> None:
    from bench import inprocess

    got = inprocess.run(seconds, repeat)
    variants: dict[str, tuple[float, float]] = got["variants"]  # type: ignore[assignment]
    res["inprocess_decisions_per_s"] = {k: v[0] for k, v in variants.items()}
    res["inprocess_games_per_s"] = {k: v[1] for k, v in variants.items()}
    res["inprocess_indian_no_drops_decisions_per_s"] = got["indian_no_drops"][0]  # type: ignore[index]
    os_rate, rl_rate = got["openspiel"], got["rlcard"]
    res["openspiel_decisions_per_s"] = os_rate[0] if os_rate else None  # type: ignore[index]
    res["openspiel_games_per_s"] = os_rate[1] if os_rate else None  # type: ignore[index]
    res["rlcard_decisions_per_s"] = rl_rate[0] if rl_rate else None  # type: ignore[index]
    res["rlcard_games_per_s"] = rl_rate[1] if rl_rate else None  # type: ignore[index]
    res["ratio_to_rlcard"] = {k: _ratio(v[0], res["rlcard_decisions_per_s"]) for k, v in variants.items()}
    res["ratio_to_openspiel"] = {k: _ratio(v[0], res["openspiel_decisions_per_s"]) for k, v in variants.items()}
    if res["machine"]["rules_core"] == "fresh":  # the compiled core ran: the plain modules beside it
        plain = inprocess.plain_rates(seconds, repeat)
        res["inprocess_plain_decisions_per_s"] = plain
        res["compiled_speedup"] = {k: _ratio(v[0], plain.get(k)) for k, v in variants.items()}


def bench_wire(res: dict[str, Any], quick: bool) -> None:
    """The referee's round trip against the bare ping-pong, measured in turns (``rounds`` of each, alternating):
    this machine's speed drifts by tens of percent within minutes, and the ratio is taken within each round."""
    import statistics

    from bench import wire
    from rummy.wire import loops

    rounds = 1 if quick else 3
    runs, bares, floors, ratios = [], [], [], []
    for _ in range(rounds):
        one = wire.wire_run(3 if quick else 10, 1)
        size = max(1, int(one["request_bytes_mean"]))
        bare = wire.bare_pingpong(size, 1000 if quick else 4000)
        floors.append(wire.protocol_floor(500 if quick else 2000))
        runs.append(one)
        bares.append(bare)
        ratios.append(one["round_trip_p50_us"] / bare["p50_us"])
    middle = sorted(range(rounds), key=lambda i: ratios[i])[rounds // 2]  # the round with the median ratio
    one, bare, floor = runs[middle], bares[middle], floors[middle]
    unbatched = wire.wire_run(3 if quick else 10, 1, batch=False)  # a client that reads one message at a time
    res["wire_unbatched_p50_us"] = unbatched["round_trip_p50_us"]
    asyncio_bare = wire.bare_pingpong(size, 1000 if quick else 4000, loop="asyncio")
    res["event_loop"] = loops.chosen("auto")
    res["wire"] = one
    res["wire_p50_us"] = one["round_trip_p50_us"]
    res["wire_p99_us"] = one["round_trip_p99_us"]
    res["wire_setup_p50_ms"] = one["setup_p50_ms"]
    res["wire_message_bytes"] = size
    res["bare_grpc_p50_us"] = bare["p50_us"]
    res["bare_grpc_p99_us"] = bare["p99_us"]
    res["bare_grpc_round_trips_per_s"] = bare["round_trips_per_s"]
    res["bare_grpc_asyncio_loop_p50_us"] = asyncio_bare["p50_us"]
    res["wire_overhead_ratio"] = one["round_trip_p50_us"] / bare["p50_us"]
    res["wire_overhead_ratios_per_round"] = ratios
    res["wire_overhead_ratio_median"] = statistics.median(ratios)
    res["wire_p99_ratio"] = one["round_trip_p99_us"] / bare["p99_us"]
    res["wire_setup_over_round_trip"] = one["setup_p50_ms"] * 1000 / bare["p50_us"]
    # a referee that cost nothing: what is left of 1.5x the bare round trip for all the referee's own work
    res["protocol_floor_p50_us"] = floor["p50_us"]
    res["protocol_floor_ratio"] = floor["p50_us"] / bare["p50_us"]
    res["protocol_floor_ratios_per_round"] = [f["p50_us"] / b["p50_us"] for f, b in zip(floors, bares, strict=True)]
    res["referee_budget_at_1_5x_us"] = 1.5 * bare["p50_us"] - floor["p50_us"]
    res["referee_work_p50_us"] = one["round_trip_p50_us"] - floor["p50_us"]


def bench_concurrency(res: dict[str, Any], quick: bool) -> None:
    from bench import wire

    turns = 60 if quick else 100
    for n in (1, 10, 100):
        got = wire.wire_run(max(n, 4), n, turns=turns)
        res[f"concurrent_{n}_decisions_per_s"] = got["decisions_per_s"]
        res[f"concurrent_{n}_p50_ms"] = got["round_trip_p50_us"] / 1000
        res[f"concurrent_{n}_p99_ms"] = got["round_trip_p99_us"] / 1000
    size = int(res.get("wire_message_bytes", 400))
    bare = wire.bare_pingpong(size, 50 if quick else 200, streams=100)
    res["bare_grpc_concurrent_100_p99_ms"] = bare["p99_us"] / 1000


def bench_tournament(res: dict[str, Any], quick: bool) -> None:
    from bench import tournament_throughput

    res["tournament"] = tournament_throughput.run("indian", 2 if quick else 4, (1, 2))


def bench_memory(res: dict[str, Any], quick: bool) -> None:
    from bench import wire

    got = wire.rss_per_match((1, 100))
    res["memory"] = got
    res["rss_per_live_match_kib"] = got["rss_per_live_match_kib"]


def bench_scaling(res: dict[str, Any], seconds: float, repeat: int, quick: bool) -> None:
    from bench import scaling

    res["scaling"] = scaling.run(seconds, repeat, 20 if quick else 80)


def bench_env(res: dict[str, Any], seconds: float, repeat: int) -> None:
    """rummy_env's steps/s (observation and mask each step), single and batched, beside OpenSpiel's and RLCard's;
    each figure the median of ``repeat`` rounds, the ratios taken over loops run in turns."""
    from bench import env

    res.update(env.run(seconds, repeat=repeat))


def bench_ladder(res: dict[str, Any], quick: bool) -> None:
    """bench.ladder in a process of its own (its BLAS set to one thread before numpy loads, as `ladder serve`)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ladder.json"
        subprocess.run([sys.executable, "-m", "bench.ladder", "--out", str(out),
                        *(["--games", "100000"] if quick else [])], check=False)
        res["ladder"] = json.loads(out.read_text()).get("ladder") if out.is_file() else None


def _fmt(x: Any, spec: str = ",.0f") -> str:
    return "-" if x is None else format(x, spec)


def table(res: dict[str, Any]) -> str:
    lines: list[str] = []
    if res.get("inprocess_decisions_per_s") is not None:  # a section left out (--only) is None
        speedup = res.get("compiled_speedup") or {}
        lines.append(f"in process, rules core {res['machine']['rules_core']} (random self-play)")
        lines.append(f"{'variant':<30} {'decisions/s':>12} {'games/s':>9} {'x RLCard':>9} {'x OpenSpiel':>12} {'x plain':>8}")
        for name, rate in res["inprocess_decisions_per_s"].items():
            lines.append(f"{name:<30} {_fmt(rate):>12} {_fmt(res['inprocess_games_per_s'][name], ',.1f'):>9} "
                         f"{_fmt(res['ratio_to_rlcard'][name], '.2f'):>9} {_fmt(res['ratio_to_openspiel'][name], '.2f'):>12} "
                         f"{_fmt(speedup.get(name), '.2f'):>8}")
        lines.append(f"{'indian, never dropping':<30} {_fmt(res['inprocess_indian_no_drops_decisions_per_s']):>12}")
        lines.append(f"{'RLCard gin-rummy':<30} {_fmt(res['rlcard_decisions_per_s']):>12} {_fmt(res['rlcard_games_per_s'], ',.1f'):>9}")
        lines.append(f"{'OpenSpiel gin_rummy':<30} {_fmt(res['openspiel_decisions_per_s']):>12} {_fmt(res['openspiel_games_per_s'], ',.1f'):>9}")
    if res.get("wire_p50_us") is not None:  # a section left out (--only) is None
        lines.append("")
        lines.append(f"over gRPC, Indian, {res['wire_message_bytes']} B requests: round trip p50 {_fmt(res['wire_p50_us'])} us, "
                     f"p99 {_fmt(res['wire_p99_us'])} us; bare ping-pong p50 {_fmt(res['bare_grpc_p50_us'])} us, "
                     f"p99 {_fmt(res['bare_grpc_p99_us'])} us")
        lines.append(f"wire overhead ratio (p50 / bare p50, median of rounds, {res['event_loop']} loop): "
                     f"{res['wire_overhead_ratio']:.2f}x; match set-up p50 "
                     f"{res['wire_setup_p50_ms']:.1f} ms = {res['wire_setup_over_round_trip']:.0f} bare round trips")
        if res.get("protocol_floor_p50_us") is not None:
            lines.append(f"protocol floor (a Play answering at once with canned referee messages): p50 "
                         f"{_fmt(res['protocol_floor_p50_us'])} us = {res['protocol_floor_ratio']:.2f}x bare; the referee's "
                         f"own work {_fmt(res['referee_work_p50_us'])} us per round trip against "
                         f"{_fmt(res['referee_budget_at_1_5x_us'])} us left under 1.5x")
    if res.get("concurrent_100_p99_ms") is not None:  # a section left out (--only) is None
        for n in (1, 10, 100):
            lines.append(f"{n:>3} concurrent matches: {_fmt(res[f'concurrent_{n}_decisions_per_s'])} decisions/s, "
                         f"p50 {res[f'concurrent_{n}_p50_ms']:.2f} ms, p99 {res[f'concurrent_{n}_p99_ms']:.2f} ms")
        lines.append(f"bare ping-pong, 100 concurrent streams: p99 {res['bare_grpc_concurrent_100_p99_ms']:.2f} ms")
    if "tournament" in res:
        lines.append("")
        t = res["tournament"]
        for c in (1, 2):
            lines.append(f"tournament, concurrency {c}: {_fmt(t[f'games_per_hour_c{c}_reused'])} games/hour reused, "
                         f"{_fmt(t[f'games_per_hour_c{c}_restarted'])} restarted ({t[f'reused_over_restarted_c{c}']:.1f}x)")
    if "memory" in res:
        m = res["memory"]
        lines.append(f"referee RSS: idle {m['idle_rss_mib']:.1f} MiB, 1 live match {m['rss_1_live_mib']:.1f} MiB, "
                     f"100 live {m['rss_100_live_mib']:.1f} MiB: {m['rss_per_live_match_kib']:.0f} KiB per live match")
    if res.get("ladder"):
        lad = res["ladder"]
        lines.append(f"ladder, {lad['bots']:,} bots, {lad['games']:,} games ({lad['backend']}): refit {lad['refit_s']:.2f} s, "
                     f"matchmaking {lad['matchmaking_ms']:.1f} ms, leaderboard p99 {lad['leaderboard_p99_ms']:.1f} ms")
    if "scaling" in res:
        lines.append("")
        for name, by_seats in res["scaling"]["seats"].items():
            lines.append(f"{name} decisions/s by seats: " + ", ".join(f"{n}: {_fmt(r)}" for n, r in by_seats.items()))
        for name, by_size in res["scaling"]["hands"].items():
            lines.append(f"{name} by hand size: " + ", ".join(f"{n}: {_fmt(t)}" for n, t in by_size.items()))
    if res.get("env_steps_per_s"):
        lines.append("")
        procs = res.get("env_batched_2_processes_steps_per_s", {})
        lines.append(f"{'environment steps/s':<30} {'single':>10} {'batched':>10} {'2 procs':>10} {'x RLCard':>9} "
                     f"{'x OpenSpiel':>12}")
        for name, rate in res["env_steps_per_s"].items():
            lines.append(f"{name:<30} {_fmt(rate):>10} {_fmt(res['env_batched_steps_per_s'][name]):>10} "
                         f"{_fmt(procs.get(name)):>10} {_fmt(res['env_ratio_to_rlcard'][name], '.2f'):>9} "
                         f"{_fmt(res['env_ratio_to_openspiel'][name], '.2f'):>12}")
        lines.append(f"{'RLCard gin-rummy env':<30} {_fmt(res['env_rlcard_gin_rummy_steps_per_s']):>10}")
        lines.append(f"{'OpenSpiel gin_rummy rl_env':<30} {_fmt(res['env_openspiel_gin_rummy_steps_per_s']):>10}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="short runs (a smoke test of the suite)")
    p.add_argument("--only", nargs="+", choices=SECTIONS + ON_DEMAND, default=list(SECTIONS))
    p.add_argument("--seconds", type=float, default=None, help="seconds per in-process measurement")
    p.add_argument("--repeat", type=int, default=None, help="best of N for in-process rates")
    p.add_argument("--out", type=Path, default=Path("bench-results.json"))
    args = p.parse_args(argv)
    from referee.service.logs import configure_logging

    configure_logging("warning")
    seconds = args.seconds or (0.5 if args.quick else 2.0)
    repeat = args.repeat or (1 if args.quick else 3)
    res: dict[str, Any] = {key: None for key in REQUIRED_KEYS}
    res["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "load_avg": os.getloadavg(),
                      "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "rules_core": native.status()}
    started = time.monotonic()
    for section in SECTIONS + ON_DEMAND:
        if section not in args.only:
            continue
        print(f"== {section}", file=sys.stderr, flush=True)
        if section == "inprocess":
            bench_inprocess(res, seconds, repeat)
        elif section == "wire":
            bench_wire(res, args.quick)
        elif section == "concurrency":
            bench_concurrency(res, args.quick)
        elif section == "tournament":
            bench_tournament(res, args.quick)
        elif section == "memory":
            bench_memory(res, args.quick)
        elif section == "env":
            bench_env(res, seconds, repeat)
        elif section == "ladder":
            bench_ladder(res, args.quick)
        else:
            bench_scaling(res, seconds, repeat, args.quick)
    res["machine"]["load_avg_end"] = os.getloadavg()
    res["machine"]["seconds"] = round(time.monotonic() - started, 1)
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    print(table(res))
    print(f"\nwrote {args.out} (load average {res['machine']['load_avg'][0]:.1f} at the start on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
