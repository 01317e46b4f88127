"""``/metrics`` on a port of its own (``referee serve --metrics-port``, ``tournament run --metrics-port``): an HTTP
server in the tools layer, beside the viewer whose connection guard it shares; what it serves is
``referee.service.metrics``."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

from aiohttp import web

from referee.service.limits import DEFAULT_LIMITS
from referee.service.logs import get_logger
from referee.service.metrics import CLIENT_CONNECTIONS, MAX_CONNECTIONS, Metrics, create_metrics_app
from referee.tools.viewer import Tuning, ViewerStats, _Connections, _GuardedSite

__all__ = ["MetricsServer"]


class MetricsServer:
    """``/metrics`` on ``host:port`` from a thread and event loop of its own: a scrape, or a crowd of scrapers,
    never waits on the matches nor makes them wait on it (beyond the GIL). Bounded as the viewer is: at most
    ``MAX_CONNECTIONS`` connections (``CLIENT_CONNECTIONS`` per address; more are answered 503 after a second),
    each closed when idle or slow to send its headers for ``idle_s``, or aborted when its peer stops reading."""

    def __init__(self, metrics: Metrics, host: str = "127.0.0.1", port: int = 0,
                 idle_s: float = DEFAULT_LIMITS.viewer_idle_s) -> None:
        self.metrics, self.host, self.port, self.idle_s = metrics, host, port, idle_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    async def _boot(self) -> None:
        limits = dataclasses.replace(DEFAULT_LIMITS, viewer_max_connections=MAX_CONNECTIONS,
                                     viewer_client_connections=CLIENT_CONNECTIONS)
        conns = _Connections(limits, Tuning(refusing=16, stall_s=10.0, sndbuf=64 * 1024), ViewerStats(),
                             "the metrics server")
        self._runner = web.AppRunner(create_metrics_app(self.metrics), shutdown_timeout=1.0, access_log=None,
                                     keepalive_timeout=float(self.idle_s), lingering_time=1.0, max_line_size=8190,
                                     max_field_size=8190)
        await self._runner.setup()
        await _GuardedSite(self._runner, self.host, self.port, conns).start()
        self.port = int(self._runner.addresses[0][1])

    def start(self) -> int:
        """Serve; returns the port (``port`` 0 picks one). :raises OSError: it cannot be bound."""
        ready = threading.Event()
        failed: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._boot())
            except BaseException as exc:  # handed to start(), which raises it
                failed.append(exc)
                if self._runner is not None:
                    loop.run_until_complete(self._runner.cleanup())
                loop.close()
                ready.set()
                return
            self._loop = loop
            ready.set()
            loop.run_forever()
            try:
                if self._runner is not None:
                    loop.run_until_complete(self._runner.cleanup())
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="metrics-http", daemon=True)
        self._thread.start()
        if not ready.wait(30):
            raise RuntimeError("the metrics server did not start")
        if failed:
            raise failed[0]
        get_logger(component="metrics").info("metrics_serving", host=self.host, port=self.port)
        return self.port

    def stop(self) -> None:
        """Close every connection and end the thread (at most a few seconds)."""
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MetricsServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
