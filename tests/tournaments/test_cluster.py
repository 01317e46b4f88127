"""Tournaments on a Dask cluster: matches play on the workers (each with its own referee and bots), results
land in the runner's SQLite exactly once, and a rerun resumes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from tournaments.config import parse_config  # noqa: E402
from tournaments.runner import plan, run_tournament  # noqa: E402
from tournaments.store import DB_NAME, Store  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes of one thread each, on 127.0.0.1."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as c:
        yield c


def _config(out: Path):
    bots = [{"name": n, "command": [sys.executable, "-m", f"rummybot.bots.{m}"]}
            for n, m in (("greedy", "greedy"), ("random", "random_bot"), ("noisy", "noisy"))]
    t = {"variant": "indian", "games_per_pairing": 2, "seed": "cluster", "output": str(out), "max_hands": 2,
         "time_control": {"per_move_ms": 2000, "grace_ms": 1000, "connect_ms": 20000}}
    return parse_config({"tournament": t, "bots": bots}, base_dir=out.parent)


def test_a_tournament_on_two_workers_records_every_game_once_and_resumes(tmp_path: Path, cluster) -> None:
    """Every scheduled game is in the results once, played on both workers; a rerun plays nothing."""
    config = _config(tmp_path / "out")
    stats = run_tournament(config, cluster=cluster.scheduler_address, handle_signals=False)
    keys = {g.key for g in plan(config).games}
    assert stats.played == len(keys) == 12 and stats.failed == 0
    with Store(tmp_path / "out" / DB_NAME, readonly=True) as store:
        rows = list(store.rows())
        history = store.rating_history()
    assert {r.key for r in rows} == keys and len(rows) == len(keys)
    assert not [r for r in rows if r.forfeited], [(r.key, r.reason) for r in rows if r.forfeited]
    workers = {Path(r.record_path).parent.name for r in rows}
    assert len(workers) == 2, workers  # records/<worker>/ID.jsonl: both workers played
    assert all(Path(r.record_path).is_file() for r in rows)
    assert len(history) == 1 and set(history[0].ratings) == {"greedy", "random", "noisy"}
    again = run_tournament(config, cluster=cluster.scheduler_address, handle_signals=False)
    assert again.played == 0 and again.already_done == 12


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_pinned_workers_each_run_on_a_core_of_their_own_and_their_bots_inherit_it(tmp_path: Path) -> None:
    """pin_workers puts each worker on one core, every thread of it, and the processes it starts later (the bots)
    run there too."""
    import ast
    import os
    import subprocess

    from tournaments.cluster import pin_workers

    cores = sorted(os.sched_getaffinity(0))

    def child_affinity() -> set[int]:
        out = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                             capture_output=True, text=True, check=True).stdout
        return set(ast.literal_eval(out))

    def thread_affinities() -> list[set[int]]:
        return [os.sched_getaffinity(int(t)) for t in os.listdir("/proc/self/task")]

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as c, distributed.Client(c) as client:
        pinned = pin_workers(client)
        assert sorted(map(sorted, pinned.values())) == sorted([[cores[0]], [cores[1 % len(cores)]]])
        for worker, cpus in pinned.items():
            assert client.run(child_affinity, workers=[worker])[worker] == cpus
            assert all(a == cpus for a in client.run(thread_affinities, workers=[worker])[worker])
