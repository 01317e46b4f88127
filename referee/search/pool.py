"""The search pool: search work in worker processes, clients served in turn, every call within its time.

Why processes: the rules core is Python, and a thread doing search holds the interpreter lock that the event loop
running every match needs. With the work on two threads, 32 parallel Simulate calls (rollouts of 4,000 decisions)
slowed a running match 15x (issue #30, ``bench/search.py --load``). Worker processes, at a lower priority than
the server, leave the loop its interpreter and its share of the CPU.

Why a queue of its own in front of the executor: the executor is given at most one job per worker, so a job not
yet started can still be dropped (its call cancelled, its deadline passed) and the next one is chosen fairly:
each client (a seat, by its credential or the owner tag of its state tokens) has a queue, and a free worker goes
to the waiting client served longest ago, so clients with work waiting take turns. One client may run at most ``client_workers`` jobs at once (all workers but one, so
another client always finds a worker free within one job's time), may have ``client_calls`` calls queued or
running, and all clients together ``calls``; past those a call is refused at once (``RESOURCE_EXHAUSTED``,
``LIMIT_SEARCH_CLIENT_CALLS`` / ``LIMIT_SEARCH_CALLS``). A job carries its deadline (the call's own, or the
server's ``max_search_ms`` from the call's arrival) and the worker stops there (``referee.search.work``): a
cancelled call's job is dropped if it has not started, and otherwise ends by its deadline, counted against its
client until then.

The workers start on the first search call, off the event loop ('forkserver': one clean process, started by
exec, with the rules core imported once, forks each worker; gRPC and a plain fork of the server do not mix), and
stop with the server (``close``).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from referee.search import work
from referee.search.work import Answer, Refusal
from referee.service.logs import get_logger

__all__ = ["PoolLimits", "SearchPool", "cores", "START_METHOD"]

START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class PoolLimits:
    workers: int = 0  # processes; 0: one per core
    client_workers: int = 0  # jobs of one client running at once; 0: all workers but one (at least one)
    client_calls: int = 32  # calls of one client queued or running
    calls: int = 256  # calls queued or running, all clients
    call_ms: int = 10_000  # a call's longest time, waiting and working
    nice: int = 10  # the workers' priority below the server's (0: the same)
    start_method: str = START_METHOD

    @property
    def processes(self) -> int:
        return self.workers or cores()

    @property
    def per_client(self) -> int:
        return self.client_workers or max(1, self.processes - 1)


@dataclass(eq=False)
class _Job:
    client: str
    fn: Callable[..., Answer]
    args: tuple[Any, ...]
    deadline: float
    future: asyncio.Future[Answer]
    started: bool = False
    released: bool = False


def _refused(status: str, code: str, message: str) -> Answer:
    return None, (status, code, message)


@dataclass
class _Counts:
    calls: Counter[str] = field(default_factory=Counter)  # queued or running, per client
    running: Counter[str] = field(default_factory=Counter)
    total: int = 0
    busy: int = 0


class SearchPool:
    """``await pool.run(client, fn, args, deadline)``: ``fn(*args, deadline)`` in a worker, fairly, in time."""

    def __init__(self, key: bytes, limits: PoolLimits = PoolLimits()) -> None:
        self.limits = limits
        self._key = key
        self._executor: ProcessPoolExecutor | None = None
        self._starting: asyncio.Task[None] | None = None
        self._queues: dict[str, deque[_Job]] = {}
        self._served: dict[str, float] = {}  # when each client with calls in the pool last had a job started
        self.counts = _Counts()
        self._closed = False
        self.start_s: float | None = None  # how long the workers took to start, the last time they did
        self.log = get_logger(component="search_pool")

    # ------------------------------------------------------------ calls

    async def run(self, client: str, fn: Callable[..., Answer], args: tuple[Any, ...], deadline: float) -> Answer:
        """The answer of ``fn(*args, deadline)`` run in a worker, or a refusal (full, out of time, stopped)."""
        if (full := self.refusal(client)) is not None:
            return None, full
        counts = self.counts
        loop = asyncio.get_running_loop()
        job = _Job(client, fn, args, deadline, loop.create_future())
        counts.calls[client] += 1
        counts.total += 1
        self._queues.setdefault(client, deque()).append(job)
        self._dispatch()
        try:
            return await job.future
        finally:
            if not job.started:  # cancelled or refused while waiting: it never reaches a worker
                self._drop(job)

    def refusal(self, client: str) -> Refusal | None:
        """Why a call of ``client`` would be refused now (the pool is full or stopping), or None: a caller checks
        before it prepares a call's input."""
        lim, counts = self.limits, self.counts
        if self._closed:
            return "UNAVAILABLE", "SEARCH_STOPPED", "the server is stopping"
        if counts.calls[client] >= lim.client_calls:
            return ("RESOURCE_EXHAUSTED", "LIMIT_SEARCH_CLIENT_CALLS", f"this seat has {lim.client_calls} search calls "
                    "waiting or running, the most one client may have; wait for some to finish")
        if counts.total >= lim.calls:
            return ("RESOURCE_EXHAUSTED", "LIMIT_SEARCH_CALLS", f"the server has {lim.calls} search calls waiting or "
                    "running; try again later")
        return None

    def _drop(self, job: _Job) -> None:
        queue = self._queues.get(job.client)
        if queue is not None and job in queue:
            queue.remove(job)
            if not queue:
                del self._queues[job.client]
        self._release(job)

    def _release(self, job: _Job) -> None:
        if job.released:
            return
        job.released = True
        counts = self.counts
        counts.total -= 1
        counts.calls[job.client] -= 1
        if counts.calls[job.client] <= 0:
            del counts.calls[job.client]
            self._served.pop(job.client, None)

    def _next(self) -> _Job | None:
        """The next job: of the clients with work waiting and a worker share free, the one served longest ago."""
        best: str | None = None
        for client in self._queues:
            if self.counts.running[client] < self.limits.per_client and \
                    (best is None or self._served.get(client, 0.0) < self._served.get(best, 0.0)):
                best = client
        if best is None:
            return None
        queue = self._queues[best]
        job = queue.popleft()
        if not queue:
            del self._queues[best]
        self._served[best] = time.monotonic()
        return job

    def _dispatch(self) -> None:
        """Hand jobs to free workers (at most one each: what waits, waits here, where it can still be dropped)."""
        if self._executor is None:
            self._start()
            return
        counts = self.counts
        while counts.busy < self.limits.processes and (job := self._next()) is not None:
            if job.future.done():  # its call was cancelled; ``run`` releases it
                continue
            if time.monotonic() >= job.deadline:
                self._release(job)
                job.future.set_result(_refused("DEADLINE_EXCEEDED", "LIMIT_SEARCH_TIME",
                                               "the call's time ran out while it waited for a search worker"))
                continue
            try:
                done = self._executor.submit(job.fn, *job.args, job.deadline)
            except (BrokenProcessPool, RuntimeError) as exc:
                self._lost(exc)
                self._release(job)
                job.future.set_result(_refused("UNAVAILABLE", "SEARCH_WORKER_LOST",
                                               "a search worker stopped; the pool restarts: try again"))
                return
            job.started = True
            counts.busy += 1
            counts.running[job.client] += 1
            done.add_done_callback(self._on_done(job))

    def _on_done(self, job: _Job) -> Callable[[Future[Answer]], None]:
        """The executor's callback (on its own thread): the rest happens on the loop."""
        loop = job.future.get_loop()

        def done(f: Future[Answer]) -> None:
            _call_soon(loop, self._finished, job, f)

        return done

    def _finished(self, job: _Job, done: Future[Answer]) -> None:
        counts = self.counts
        counts.busy -= 1
        counts.running[job.client] -= 1
        if counts.running[job.client] <= 0:
            del counts.running[job.client]
        self._release(job)
        answer: Answer
        if done.cancelled():
            answer = _refused("UNAVAILABLE", "SEARCH_STOPPED", "the server is stopping")
        elif (exc := done.exception()) is not None:
            if isinstance(exc, BrokenProcessPool):
                self._lost(exc)
                answer = _refused("UNAVAILABLE", "SEARCH_WORKER_LOST", "a search worker stopped; the pool restarts: "
                                  "try again")
            else:  # a bug in the search code: the call fails, the pool goes on
                self.log.error("search_failed", error=f"{type(exc).__name__}: {exc}")
                answer = _refused("INTERNAL", "SEARCH_FAILED", "the search work failed (see the server's log)")
        else:
            answer = done.result()
        if not job.future.done():
            job.future.set_result(answer)
        if not self._closed:
            self._dispatch()

    # ------------------------------------------------------------ workers

    def _start(self) -> None:
        """Start the workers off the event loop (a process start blocks), then serve what waits."""
        if self._starting is not None or self._closed:
            return

        async def start() -> None:
            began = time.perf_counter()
            try:
                executor = await asyncio.get_running_loop().run_in_executor(None, self._new_executor)
            except Exception as exc:  # noqa: BLE001 - no workers: every waiting call is told, the next try starts again
                self.log.error("search_pool_failed", error=f"{type(exc).__name__}: {exc}")
                self._fail_waiting("UNAVAILABLE", "SEARCH_UNAVAILABLE", "the search workers could not start")
                return
            finally:
                self._starting = None
            if self._closed:
                _stop(executor)
                return
            self._executor = executor
            self.start_s = time.perf_counter() - began
            self.log.info("search_pool_started", workers=self.limits.processes, method=self.limits.start_method,
                          seconds=round(self.start_s, 3))
            self._dispatch()

        self._starting = asyncio.get_running_loop().create_task(start())

    def _new_executor(self) -> ProcessPoolExecutor:
        """A pool with every worker started and ready (the imports done), so no call waits for a process start."""
        ctx = multiprocessing.get_context(self.limits.start_method)
        if self.limits.start_method == "forkserver":
            ctx.set_forkserver_preload(["referee.search.work"])
        n = self.limits.processes
        executor = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=work.init,
                                       initargs=(self._key, self.limits.nice))
        try:
            with _without_main():  # every worker starts here: the pings come faster than a process starts
                pings = [executor.submit(work.ping) for _ in range(n)]
            for p in pings:
                p.result(timeout=120)
        except BaseException:
            _stop(executor)
            raise
        return executor

    def _lost(self, exc: BaseException) -> None:
        """A worker died (killed, out of memory): this executor is broken for good; the next call starts another."""
        if self._executor is not None:
            self.log.error("search_worker_lost", error=f"{type(exc).__name__}: {exc}")
            _stop(self._executor)
            self._executor = None

    def _fail_waiting(self, status: str, code: str, message: str) -> None:
        for queue in list(self._queues.values()):
            for job in list(queue):
                self._drop(job)
                if not job.future.done():
                    job.future.set_result(_refused(status, code, message))

    def close(self) -> None:
        """Refuse what waits and stop the workers, at once (their answers would have nowhere to go)."""
        self._closed = True
        self._fail_waiting("UNAVAILABLE", "SEARCH_STOPPED", "the server is stopping")
        if self._starting is not None:
            self._starting.cancel()
        if self._executor is not None:
            _stop(self._executor)
            self._executor = None

    def worker_pids(self) -> list[int]:
        """The workers' process ids (tests, the health of the pool)."""
        processes = getattr(self._executor, "_processes", None) or {}
        return [p.pid for p in processes.values() if p.pid is not None]


@contextlib.contextmanager
def _without_main() -> Iterator[None]:
    """Workers that do not run the program's main script again. A process started by 'spawn' or 'forkserver'
    imports the parent's ``__main__`` (as ``__mp_main__``) unless it was run as ``python -m x`` with ``x`` a
    ``__main__`` module; a script that starts a referee without an ``if __name__ == "__main__"`` guard would then
    start another one in every worker. The workers run only ``referee.search.work``, so the main module is hidden
    from multiprocessing while they start (on the pool's start thread, for the moment it takes)."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    missing = object()
    spec, file = getattr(main, "__spec__", None), getattr(main, "__file__", missing)
    try:
        main.__spec__ = None
        if file is not missing:
            del main.__file__
        yield
    finally:
        main.__spec__ = spec
        if file is not missing:
            main.__file__ = file  # type: ignore[assignment]


def _stop(executor: ProcessPoolExecutor) -> None:
    """Shut ``executor`` down without waiting, its workers ended now rather than at their jobs' deadlines."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()


def _call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: Any) -> None:
    """From the executor's thread to the loop; a loop already closed (the server stopped) has no one to tell."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:
        pass
