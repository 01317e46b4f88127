"""Environment steps per second (``rummy_env``), with the observation tensor and mask of every step, beside OpenSpiel's
gin_rummy through its RL environment and RLCard's gin-rummy env, measured in the same run.

One env: the PettingZoo AEC env driven by ``last()`` and a random allowed id; batched: ``BatchEnv`` of 32 games
stepped in one call, and ``ProcessBatchEnv`` of 32 games over two worker processes. A step is one action id
(OpenSpiel's and RLCard's are one action too). Rates are per second of the process's CPU time (the workers' rate
per second of wall time), and each variant's loops run in turns with the peers' (``interleaved_rates``), so the
ratios to the peers hold on a busy machine.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

Rate = float

SEATS = {"indian": 2, "500-rum": 2, "500-partnership": 4, "persian": 4, "fortune": 2, "arlington": 2, "skarney": 4,
         "skarney-singles": 2, "iceberg": 2}


def _timed(step: Callable[[], int], seconds: float, clock: Callable[[], float] = time.process_time) -> Rate:
    """Steps per second of ``clock``: by default the process's CPU time, so that on a shared machine the figure is
    the step's own cost, not how often the process got a core (wall time, at a load of 8 on 2 cores, divided every
    rate by about four, and the peers, measured at other moments, by other amounts)."""
    n, start = 0, clock()
    while clock() - start < seconds:
        n += step()
    return n / (clock() - start)


Step = Callable[[], int]  # one step of a loop: 1 for a step taken, 0 for a reset (a batch: its games' steps)


def interleaved_rates(loops: dict[str, Step], seconds: float, turn: float = 0.25, warm: float = 0.5) -> dict[str, Rate]:
    """Each loop's steps per CPU second, the loops run in turns of ``turn`` seconds until each has run ``seconds``,
    after ``warm`` seconds each (a training run is long: the rules core's memories are warm).

    Loops measured one after another are not comparable here: on this shared machine one loop's rate moved from
    4,961 to 9,354 steps/s between two 1.5-second measurements in one process (OpenSpiel's, 2026-12-07), so a
    ratio of two rates taken seconds apart was mostly the machine's. Taken in turns, every loop sees the same
    slow and fast spells, and their ratio holds where their rates do not."""
    for step in loops.values():
        _timed(step, warm)
    steps = dict.fromkeys(loops, 0)
    spent = dict.fromkeys(loops, 0.0)
    while min(spent.values()) < seconds:
        for name, step in loops.items():
            n, start = 0, time.process_time()
            while (took := time.process_time() - start) < turn:
                n += step()
            steps[name] += n
            spent[name] += took
    return {name: steps[name] / spent[name] for name in loops}


def single_steps(variant: str) -> Step:
    """The PettingZoo AEC env of ``variant`` driven by ``last()`` and a random allowed id."""
    import rummy_env

    env = rummy_env.make(variant, num_players=SEATS[variant])
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def step() -> int:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.reset()
            return 0
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return 1

    return step


class _StubAEC:
    """An env that does nothing: ``last()`` hands back one observation (a mask allowing ``allowed`` ids of 700, as
    a decision under random play does), ``step`` takes the id. What ``single_steps``' loop costs by itself."""

    def __init__(self, allowed: int = 12) -> None:
        mask = np.zeros(700, dtype=np.int8)
        mask[np.linspace(0, 699, allowed).astype(int)] = 1
        obs: dict[str, np.ndarray] = {"observation": np.zeros(3000, dtype=np.float32), "action_mask": mask}
        self._last: tuple[dict[str, np.ndarray], float, bool, bool, dict[str, object]] = (obs, 0.0, False, False, {})

    def last(self) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, object]]:
        return self._last

    def step(self, action: int) -> None:
        pass


def harness_steps() -> Step:
    """The single-env loop over an env that does nothing (``_StubAEC``): the loop's own cost, the ``last()`` call and
    the random choice among the allowed ids, which every figure here pays (the peers' too)."""
    env = _StubAEC()
    rng = np.random.default_rng(0)

    def step() -> int:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            return 0
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return 1

    return step


def harness_rate(seconds: float) -> Rate:
    return _timed(harness_steps(), seconds)


def rules_core_rate(variant: str, seconds: float) -> Rate:
    """Ids per second of the rules core's own calls alone, at the env's random play: each decision's ``legal_actions``,
    the acting seat's ``view`` and the ``submit`` of the move the ids spelled, replayed on fresh matches of the
    same seeds. The env can step no faster than this (its mask, tensor and bookkeeping come on top): the floor
    the targets are read against."""
    import rummy_env
    from rummy_env._core import Match

    env = rummy_env.make(variant, num_players=SEATS[variant])
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    games: list[tuple[object, list[tuple[int, object]]]] = []
    ids = 0
    start = time.process_time()
    while time.process_time() - start < seconds or not games:
        g = env.game
        assert g is not None
        moves: list[tuple[int, object]] = []
        while not g.over:
            seat = g.current_seat
            result = g.step(int(rng.choice(g.legal_ids())))
            ids += 1
            if result.action is not None:
                moves.append((seat, result.action))
        games.append((g.match.config, moves))
        env.reset()
    spent = 0.0
    for config, moves in games:
        m = Match(config)  # type: ignore[arg-type]
        t0 = time.process_time()
        for seat, action in moves:
            m.legal_actions(seat)
            m.view(seat)
            m.submit(seat, action)  # type: ignore[arg-type]
        spent += time.process_time() - t0
    return ids / spent


def batched_steps(variant: str, num_envs: int = 32) -> Step:
    """``BatchEnv`` of ``num_envs`` games, a random allowed id for each: one call steps them all."""
    from rummy_env.vector import BatchEnv

    env = BatchEnv(variant, num_envs, SEATS[variant])
    env.reset()
    rng = np.random.default_rng(0)

    def step() -> int:
        env.step(env.random_ids(rng))
        return num_envs

    return step


def processes_rate(variant: str, seconds: float, num_envs: int = 32, workers: int = 2) -> Rate:
    from rummy_env.vector import ProcessBatchEnv

    with ProcessBatchEnv(variant, num_envs, SEATS[variant], workers=workers) as env:
        env.reset()
        rng = np.random.default_rng(0)

        def step() -> int:
            env.step(env.random_ids(rng))
            return num_envs

        return _timed(step, seconds, time.perf_counter)  # wall time: the work is in the workers


def openspiel_steps() -> Step | None:
    """OpenSpiel's gin_rummy through its RL environment, a random legal action a step (None: not installed)."""
    try:
        from open_spiel.python import rl_environment
    except ImportError:
        return None
    env = rl_environment.Environment("gin_rummy")
    rng = np.random.default_rng(0)
    ts = env.reset()

    def step() -> int:
        nonlocal ts
        if ts.last():
            ts = env.reset()
            return 0
        p = ts.observations["current_player"]
        ts = env.step([int(rng.choice(ts.observations["legal_actions"][p]))])
        return 1

    return step


def rlcard_steps() -> Step | None:
    """RLCard's gin-rummy env, a random legal action a step (None: not installed)."""
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("gin-rummy", config={"seed": 0})
    rng = np.random.default_rng(0)
    state, _ = env.reset()

    def step() -> int:
        nonlocal state
        if env.is_over():
            state, _ = env.reset()
            return 0
        legal = list(state["legal_actions"].keys())
        state, _ = env.step(int(rng.choice(legal)))
        return 1

    return step


def loop(name: str) -> Step | None:
    """A single-stream loop by name: ``openspiel``, ``rlcard``, ``harness`` or a variant."""
    if name == "openspiel":
        return openspiel_steps()
    if name == "rlcard":
        return rlcard_steps()
    if name == "harness":
        return harness_steps()
    return single_steps(name)


def run_steps(step: Step, steps: int, warm: int = 300) -> None:
    """``warm`` steps, then ``steps`` more (resets not counted)."""
    for count in (warm, steps):
        taken = 0
        while taken < count:
            taken += step()


def instructions_per_step(name: str, steps: int = 2000) -> float | None:
    """Machine instructions per step of loop ``name``, counted by valgrind (cachegrind, no cache model): the loop
    run for ``steps`` steps less the same process run for none (start-up, imports, warm-up). Unlike a rate it does
    not move with the machine's load; unlike a rate it does not see how fast the instructions run (a C++ engine's
    run faster than an interpreter's). None when valgrind is not installed."""
    import re
    import shutil
    import subprocess
    import sys

    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    counts = []
    for n in (0, steps):
        done = subprocess.run([valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                               sys.executable, "-m", "bench.env", "--loop", name, "--steps", str(n)],
                              capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if found is None:
            raise RuntimeError(f"no instruction count in valgrind's output: {done.stderr[-500:]}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[1] - counts[0]) / steps


def instructions(variants: tuple[str, ...], steps: int = 2000) -> dict[str, object]:
    """Instructions per step of every loop, and our variants' ratio to the peers' (fewer is better: a ratio
    above 1 is fewer instructions than the peer's)."""
    names = ("openspiel", "rlcard", "harness", *variants)
    got = {name: instructions_per_step(name, steps) for name in names}

    def ratio(peer: float | None, ours: float | None) -> float | None:
        return peer / ours if peer and ours else None

    return {
        "env_instructions_per_step": got,
        "env_instructions_ratio_to_openspiel": {v: ratio(got["openspiel"], got[v]) for v in variants},
        "env_instructions_ratio_to_rlcard": {v: ratio(got["rlcard"], got[v]) for v in variants},
    }


def run(seconds: float, variants: tuple[str, ...] = tuple(SEATS), workers: int = 2, repeat: int = 1) -> dict[str, object]:
    """``repeat`` rounds; in each, every variant's single env, its batch and the two peers run in turns
    (``interleaved_rates``), so each ratio is taken over the same spells of the machine's load; every figure is the
    median of the rounds' (a ratio: of the rounds' ratios). The rules core alone, the loop alone and the worker
    processes (wall time) are measured on their own, the median of the rounds' too."""
    rounds: dict[str, list[float]] = {}

    def keep(key: str, rate: Rate | None) -> None:
        if rate is not None:
            rounds.setdefault(key, []).append(rate)

    for _ in range(repeat):
        peers = {name: peer for name in ("openspiel", "rlcard") if (peer := loop(name)) is not None}  # installed ones
        keep("harness", harness_rate(seconds))
        for v in variants:
            got = interleaved_rates({"single": single_steps(v), "batched": batched_steps(v), **peers}, seconds,
                                    turn=min(0.25, seconds), warm=min(0.5, seconds))
            keep(f"single {v}", got["single"])
            keep(f"batched {v}", got["batched"])
            keep(f"batched over single {v}", got["batched"] / got["single"])
            for name in peers:
                keep(name, got[name])
                keep(f"{name} ratio {v}", got["single"] / got[name])
            keep(f"rules core {v}", rules_core_rate(v, seconds))
            keep(f"processes {v}", processes_rate(v, seconds, workers=workers))
    best = {key: float(np.median(values)) for key, values in rounds.items()}
    single = {v: best[f"single {v}"] for v in variants}
    batched = {v: best[f"batched {v}"] for v in variants}
    processes = {v: best[f"processes {v}"] for v in variants}
    floor = {v: best[f"rules core {v}"] for v in variants}
    harness = best["harness"]
    return {
        "env_steps_per_s": single,
        "env_batched_steps_per_s": batched,
        "env_batched_over_single": {v: best[f"batched over single {v}"] for v in variants},
        f"env_batched_{workers}_processes_steps_per_s": processes,
        "env_processes_over_single_per_core": {v: processes[v] / single[v] / workers for v in variants},
        "env_rules_core_steps_per_s": floor,
        "env_share_in_rules_core": {v: single[v] / floor[v] for v in variants},
        "env_harness_steps_per_s": harness,
        # no env can step faster than its rules core's calls plus the loop that drives it
        "env_ceiling_steps_per_s": {v: 1.0 / (1.0 / floor[v] + 1.0 / harness) for v in variants},
        "env_openspiel_gin_rummy_steps_per_s": best.get("openspiel"),
        "env_rlcard_gin_rummy_steps_per_s": best.get("rlcard"),
        "env_ratio_to_openspiel": {v: best.get(f"openspiel ratio {v}") for v in variants},
        "env_ratio_to_rlcard": {v: best.get(f"rlcard ratio {v}") for v in variants},
        "env_spread": {key: [min(values), max(values)] for key, values in rounds.items() if "ratio" in key},
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.env [--seconds S] [--repeat N] [--variants ...] [--write bench-results.json]``: prints the figures;
    ``--write`` merges them into the results file ``make bench`` writes (its other sections' figures kept), with
    the load average before and after the run (the machine is shared: figures from a busy one are low)."""
    import argparse
    import json
    from pathlib import Path

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--seconds", type=float, default=1.0, help="seconds per measurement")
    p.add_argument("--variants", nargs="+", default=list(SEATS), choices=list(SEATS))
    p.add_argument("--repeat", type=int, default=1, help="rounds; each figure is the median of them")
    p.add_argument("--write", type=Path, default=None, help="merge the figures into this JSON file")
    p.add_argument("--instructions", action="store_true",
                   help="also count each single-stream loop's instructions per step with valgrind (minutes)")
    p.add_argument("--loop", default=None, help=argparse.SUPPRESS)  # one loop for --steps steps (what valgrind runs)
    p.add_argument("--steps", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.loop is not None:
        step = loop(args.loop)
        if step is None:
            raise SystemExit(f"{args.loop} is not installed")
        run_steps(step, args.steps)
        return 0
    load = os.getloadavg()
    res = run(args.seconds, tuple(args.variants), repeat=max(1, args.repeat))
    if args.instructions:
        res.update(instructions(tuple(args.variants)))
    res["env_machine"] = {"cpus": os.cpu_count(), "load_avg": load, "load_avg_end": os.getloadavg(),
                          "seconds_each": args.seconds, "rounds": max(1, args.repeat)}
    print(json.dumps(res, indent=1))
    if args.write is not None:
        old = json.loads(args.write.read_text()) if args.write.exists() else {}
        args.write.write_text(json.dumps({**old, **res}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
