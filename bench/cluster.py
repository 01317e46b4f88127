"""Tournament throughput on a Dask LocalCluster of 1 and 2 workers (one thread each): games/hour and the
scaling ratio (2 workers / 2 x 1 worker; 1.0 is linear), with the workers pinned a core each and floating. Run
on demand: ``python -m bench.cluster``.

The same round-robin (greedy, noisy and random on Indian rummy) is played from scratch on each cluster size, so
the ratio compares like with like on this machine; on a machine with fewer free cores than workers it measures
the cores, not the runner.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _config(out: Path, deals: int) -> Any:
    from tournaments.config import parse_config

    bots = [{"name": n, "command": [sys.executable, "-m", f"rummybot.bots.{m}"]}
            for n, m in (("greedy", "greedy"), ("noisy", "noisy"), ("random", "random_bot"))]
    t = {"variant": "indian", "games_per_pairing": deals, "seed": "bench-cluster", "output": str(out), "max_hands": 3,
         "time_control": {"per_move_ms": 2000, "grace_ms": 1000, "connect_ms": 30000}}
    return parse_config({"tournament": t, "bots": bots}, base_dir=out.parent)


def games_per_hour(workers: int, deals: int, pin: bool = True) -> float:
    """Games/hour of one fresh round-robin on a LocalCluster of ``workers`` single-thread workers, each pinned to
    a core of its own (``pin``) or left to float."""
    from distributed import Client, LocalCluster

    from tournaments.cluster import pin_workers
    from tournaments.runner import run_tournament

    with tempfile.TemporaryDirectory() as tmp, LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                           host="127.0.0.1", dashboard_address=None,
                                                           silence_logs=40) as cluster:
        if pin:
            with Client(cluster.scheduler_address) as client:
                pin_workers(client)
        config = _config(Path(tmp) / "out", deals)
        run_tournament(_config(Path(tmp) / "warm", 1), cluster=cluster.scheduler_address, handle_signals=False)
        t0 = time.monotonic()
        stats = run_tournament(config, cluster=cluster.scheduler_address, handle_signals=False)
        return stats.played / (time.monotonic() - t0) * 3600


def measure(deals: int = 6) -> dict[str, Any]:
    """Both ways: workers pinned one core each (``tournaments.cluster.pin_workers``: the scaling of the runner
    and the cluster) and floating (what an unpinned cluster on this machine gets)."""
    out: dict[str, Any] = {}
    for pin, suffix in ((True, ""), (False, "_floating")):
        one = games_per_hour(1, deals, pin)
        two = games_per_hour(2, deals, pin)
        out |= {f"cluster_1_worker_games_per_h{suffix}": round(one), f"cluster_2_workers_games_per_h{suffix}": round(two),
                f"cluster_scaling_ratio{suffix}": round(two / (2 * one), 3) if one else None}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=6, help="deals per pairing (3 pairings, 2 games a deal)")
    args = p.parse_args()
    print(json.dumps(measure(args.deals), indent=2))


if __name__ == "__main__":
    main()
