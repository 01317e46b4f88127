"""Tournaments on a Dask cluster: ``tournament run CONFIG --cluster SCHEDULER_ADDRESS``.

The runner stays where it is: it plans, keeps the SQLite results and resumes exactly as without a cluster;
only the match function changes. Each Dask worker, through the :class:`RefereeOnWorker` plugin, runs an embedded
referee and the tournament's bot processes (started once, reused for every match the worker plays) and plays
the matches it is given; a match is one Dask task, so the scheduler spreads them over the workers and a worker
plays as many at once as it has threads. A lost worker's tasks fail and the runner's retry, like any failed
match, plays them again (or leaves them for the next run).

Bots run on the workers, so their commands must work there: the same checkout at the same path on every
machine (or commands on the PATH). Records and bot logs are written on each worker under the tournament's
output folder, in ``records/<worker>/`` and ``bots/<worker>/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import threading
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager
from typing import Any

from distributed import Client, WorkerPlugin, get_worker

from tournaments.config import TournamentConfig
from tournaments.matches import (
    Backend,
    MatchError,
    MatchFn,
    MatchOutcome,
    MatchRequest,
    Plan,
    grpc_backend,
    make_logger,
)

__all__ = ["PLUGIN", "RefereeOnWorker", "cluster_backend", "cluster_threads", "pin_process", "pin_workers"]

PLUGIN = "rummy-referee"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "worker"


class RefereeOnWorker(WorkerPlugin):
    """A Dask worker plugin: an embedded referee and the bots on this worker, for as long as it is registered.

    Everything asynchronous lives on one event loop in a thread of its own; the worker's task threads hand it
    matches with :meth:`play` and wait for their outcomes."""

    name = PLUGIN

    def __init__(self, config: TournamentConfig, plan: Plan) -> None:
        super().__init__()
        self.config = config
        self.plan = plan
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._match_fn: MatchFn | None = None
        self._backend: AbstractAsyncContextManager[MatchFn] | None = None
        self._referee: Any = None
        self._log_file: Any = None
        self._referee_log: Any = None

    def setup(self, worker: Any) -> None:
        from referee.service.server import EmbeddedReferee

        here = _slug(str(getattr(worker, "name", "") or getattr(worker, "address", "worker")))
        out = self.config.output
        out.mkdir(parents=True, exist_ok=True)
        from referee.service.logs import configure_logging

        self._referee_log = (out / f"referee-{here}.log").open("a", encoding="utf-8", buffering=1)
        configure_logging("info", json=True, stream=self._referee_log)  # the worker's own process: its referee's logs
        admin = secrets.token_urlsafe(32)  # this worker's referee: the backend's calls and its bots' tokens
        self._referee = EmbeddedReferee(records_dir=out / "records" / here, admin_token=admin)
        address = self._referee.start()
        self._log_file = (out / f"worker-{here}.log").open("a", encoding="utf-8", buffering=1)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rummy-referee-plugin", daemon=True)
        self._thread.start()
        self._backend = grpc_backend(self.config, address, self.plan, make_logger(self._log_file), out / "bots" / here,
                                     admin_token=admin)()
        self._match_fn = self._call(self._backend.__aenter__()).result(60)

    def _call(self, coro: Any) -> Future[Any]:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def play(self, req: MatchRequest) -> MatchOutcome:
        assert self._match_fn is not None, "the plugin is not set up on this worker"
        outcome: MatchOutcome = self._call(self._match_fn(req)).result(req.timeout_s + 60)
        return outcome

    def teardown(self, worker: Any) -> None:
        with contextlib.suppress(Exception):
            if self._backend is not None:
                self._call(self._backend.__aexit__(None, None, None)).result(30)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        if self._referee is not None:
            self._referee.stop()
        for f in (self._log_file, self._referee_log):
            if f is not None:
                f.close()


def _play_on_worker(req: MatchRequest) -> MatchOutcome:
    """The Dask task: play one match on this worker's referee."""
    plugin = get_worker().plugins[PLUGIN]
    assert isinstance(plugin, RefereeOnWorker)
    return plugin.play(req)


def pin_process(cpus: set[int]) -> set[int]:
    """Keep this whole process on ``cpus``: every thread it has now (Linux sets affinity per thread) and, by
    inheritance, every thread and process it starts later (the embedded referee, the bots). What it runs on.

    A worker's match is a ping-pong between its referee and bot processes; left to float, the two workers' matches
    on a small machine migrate between cores and wake each other's caches cold (measured: 2 floating workers on 2
    cores played 173k games/h, pinned 213k)."""
    import os

    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(tid), cpus)
    return os.sched_getaffinity(0)


def pin_workers(client: Client) -> dict[str, set[int]]:
    """Pin each worker of ``client``'s cluster to a core of its own (round-robin over this machine's cores): for a
    ``LocalCluster``; on several machines start each worker under ``taskset -c N``. Call it before the plugin is
    registered (a tournament run), so the referee and bots start pinned."""
    import os

    cores = sorted(os.sched_getaffinity(0))
    workers = sorted(client.scheduler_info()["workers"])
    return {w: client.run(pin_process, {cores[i % len(cores)]}, workers=[w])[w] for i, w in enumerate(workers)}


def cluster_threads(address: str) -> int:
    """How many matches the cluster at ``address`` plays at once: its workers' threads."""
    try:
        client = Client(address, timeout=30)
    except OSError as exc:  # a scheduler not there: an error to print, not a traceback
        raise MatchError(f"no Dask scheduler answering at {address}: {exc}") from exc
    with client:
        workers = client.scheduler_info()["workers"]
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))


def cluster_backend(config: TournamentConfig, address: str, plan: Plan) -> Backend:
    """Matches as Dask tasks on the cluster whose scheduler is at ``address``."""

    @contextlib.asynccontextmanager
    async def cm() -> AsyncIterator[MatchFn]:
        async with contextlib.AsyncExitStack() as stack:
            try:
                client = await stack.enter_async_context(Client(address, asynchronous=True, timeout=30))
            except OSError as exc:
                raise MatchError(f"no Dask scheduler answering at {address}: {exc}") from exc
            await client.register_plugin(RefereeOnWorker(config, plan), name=PLUGIN)
            try:
                async def match_fn(req: MatchRequest) -> MatchOutcome:
                    future = client.submit(_play_on_worker, req, pure=False, retries=0,
                                           key=f"match-{req.game.key}-{uuid.uuid4().hex[:8]}")
                    try:
                        outcome: MatchOutcome = await future
                    except asyncio.CancelledError:
                        await future.cancel()
                        raise
                    return outcome

                yield match_fn
            finally:
                with contextlib.suppress(Exception):
                    await client.unregister_worker_plugin(PLUGIN)

    return cm
