"""``bench.env`` (run on demand by ``make bench``): one short round names every figure the docs quote, each a
rate read from a real run, and the ceiling is below both of its parts (the rules core alone, the loop alone)."""

from __future__ import annotations

import shutil
from collections.abc import Callable

import pytest

from bench.env import harness_rate, instructions_per_step, interleaved_rates, loop, rules_core_rate, run, run_steps


def test_one_short_round_gives_every_figure() -> None:
    res = run(0.05, ("indian",), workers=1)
    for key in ("env_steps_per_s", "env_batched_steps_per_s", "env_rules_core_steps_per_s", "env_ceiling_steps_per_s",
                "env_share_in_rules_core"):
        assert set(res[key]) == {"indian"}, key  # type: ignore[call-overload]
        assert res[key]["indian"] > 0, key  # type: ignore[index]
    floor, harness = res["env_rules_core_steps_per_s"]["indian"], res["env_harness_steps_per_s"]  # type: ignore[index]
    assert res["env_ceiling_steps_per_s"]["indian"] < min(floor, harness)  # type: ignore[index]
    for peer in ("openspiel", "rlcard"):
        if res[f"env_{peer}_gin_rummy_steps_per_s"] is not None:  # installed by ``.[envs]``
            assert res[f"env_ratio_to_{peer}"]["indian"] > 0  # type: ignore[index]
            low, high = res["env_spread"][f"{peer} ratio indian"]  # type: ignore[index]
            assert 0 < low <= high


def test_loops_measured_in_turns_each_run_many_turns_and_count_every_step() -> None:
    """The ratios are taken over loops run in turns: each loop runs again after the others, not once for all its
    time, and a batch's step counts all its games."""
    order: list[str] = []

    def loop_of(name: str, steps: int) -> Callable[[], int]:
        def step() -> int:
            if not order or order[-1] != name:
                order.append(name)
            return steps
        return step

    rates = interleaved_rates({"a": loop_of("a", 1), "b": loop_of("b", 32)}, seconds=0.06, turn=0.01, warm=0.01)
    assert order[:2] == ["a", "b"] and order.count("a") >= 4 and order.count("b") >= 4  # warm-up, then >= 3 turns
    assert rates["a"] > 0 and rates["b"] > rates["a"]


def test_the_floor_replays_whole_games_of_random_ids() -> None:
    assert rules_core_rate("skarney-singles", 0.05) > 0
    assert harness_rate(0.05) > 0


def test_a_loop_by_name_runs_its_steps_and_valgrind_counts_them() -> None:
    step = loop("indian")
    assert step is not None
    run_steps(step, 20, warm=5)
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed: the instruction counts are an option of bench.env")
    per_step = instructions_per_step("harness", 2000)  # (start-up varies by a few million: 100 steps drowned in it)
    assert per_step is not None and 1_000 < per_step < 10_000_000
