"""The ladder's web page in a process of its own, at a lower CPU priority, as ``referee serve --http`` runs the
referee's viewer (``referee.tools.viewer_process``).

On the service's event loop, every web request (a page, a replay, a crowd of live streams) took a share of the loop
and of the interpreter's lock that matchmaking and the games needed. In its own process, niced, a crowd of
spectators competes with the ladder only for the CPU, and the kernel gives the ladder the larger share.

What the page process reads:

- the store (:class:`.web.StoreSource`): the SQLite file read-only (WAL: readers never block the service's writes)
  or the same PostgreSQL database; bots, ratings, rating history, SPRTs, recent games, fault tallies;
- the records folder: replays, and live games followed as their records are written (the viewer without a
  referee);
- the service, over a Unix socket in a private 0700 folder (:func:`start_internal`), for what only its memory
  holds: ``/presence`` (the bots whose stream is open, the games being played) and ``/metrics`` (the embedded
  referee's Prometheus counters: decisions, rejections, latency; they live in the referee, so they are asked of it
  rather than rebuilt from the store). Each is asked at most once a second whatever the number of web clients
  (``ASK_S``), so the service serves one small request a second, never the crowd.

The process ends with the service, however the service ends: its stdin is a pipe only the service holds open (its
first line is the process's settings, so a PostgreSQL URL never shows on a command line), and end of file stops it.

    python -m tournaments.ladder.webproc   # what ``ladder serve`` starts; settings: one JSON line on stdin
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import asdict
from pathlib import Path
from typing import Any

import structlog
from aiohttp import ClientError, ClientSession, ClientTimeout, UnixConnector, web

from referee.service.limits import ServerLimits
from referee.tools.viewer_process import VIEWER_NICE, ChildServer, serve_until_stopped
from tournaments.ladder.web import UNKNOWN, Presence, StoreSource, routes

__all__ = ["LadderWebProcess", "WebStartFailed", "start_internal", "PresenceClient", "ASK_S", "WEB_NICE"]

WEB_NICE = VIEWER_NICE  # web clients yield to the ladder
ASK_S = 1.0  # the service is asked for presence and metrics at most this often
ASK_TIMEOUT_S = 3.0
PRESENCE_KEPT_S = 10.0  # the last presence shown while the service does not answer; then "not known"


class WebStartFailed(RuntimeError):
    """The page process did not report its port (a port in use, a store it cannot read)."""


# ---------------------------------------------------------------- the service's side


async def start_internal(path: Path, presence: Callable[[], dict[str, Any]],
                         metrics: Callable[[str], tuple[bytes, str]] | None) -> web.AppRunner:
    """Serve ``/presence`` (JSON) and ``/metrics`` on the Unix socket ``path`` (its folder private to this user):
    what the page process asks of the service. Small, and asked at most once a second each."""

    async def get_presence(request: web.Request) -> web.Response:
        return web.Response(body=json.dumps(presence(), separators=(",", ":")), content_type="application/json")

    async def get_metrics(request: web.Request) -> web.Response:
        if metrics is None:
            return web.Response(status=404, text="no metrics")
        page, content_type = metrics(request.headers.get("Accept", ""))
        return web.Response(body=page, headers={"Content-Type": content_type})

    app = web.Application(client_max_size=1024)
    app.add_routes([web.get("/presence", get_presence), web.get("/metrics", get_metrics)])
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0, keepalive_timeout=30.0)
    await runner.setup()
    await web.UnixSite(runner, str(path)).start()
    os.chmod(path, 0o600)
    return runner


class LadderWebProcess(ChildServer):
    """A running page process: its ``port`` and ``pid``; ``close()`` stops it (so does the service's death).
    ``settings``: database, records, host, port, limits (ServerLimits), variant, internal (the socket), log.
    :raises WebStartFailed: it did not report its port within ``START_TIMEOUT_S`` (what it said is on stderr)."""

    def __init__(self, settings: dict[str, Any], nice: int = WEB_NICE) -> None:
        argv = [sys.executable, "-m", "tournaments.ladder.webproc", "--nice", str(nice)]
        self._start(argv, "the ladder's web page", WebStartFailed,
                    json.dumps({**settings, "limits": asdict(settings["limits"])}))


# ---------------------------------------------------------------- the page process's side


class PresenceClient:
    """Asks the service (its Unix socket) for presence and metrics, each at most once per ``ASK_S`` however many
    readers wait (one request at a time, shared). The service not answering: the last presence for
    ``PRESENCE_KEPT_S``, then :data:`.web.UNKNOWN` (online shown as not known); metrics a 503."""

    def __init__(self, socket: str) -> None:
        self.socket = socket
        self._session: ClientSession | None = None
        self._presence: tuple[float, Presence] = (-PRESENCE_KEPT_S, UNKNOWN)
        self._answered = -PRESENCE_KEPT_S
        self._metrics: dict[str, tuple[float, bytes, str]] = {}
        self._asking: dict[str, asyncio.Task[Any]] = {}
        self.log = structlog.get_logger(component="ladder-web")

    def _client(self) -> ClientSession:
        if self._session is None:
            self._session = ClientSession(connector=UnixConnector(path=self.socket, limit=4),
                                          timeout=ClientTimeout(total=ASK_TIMEOUT_S))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _once(self, key: str, ask: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        task = self._asking.get(key)
        if task is None:
            task = self._asking[key] = asyncio.get_running_loop().create_task(ask())
            task.add_done_callback(lambda _t: self._asking.pop(key, None))
        return await asyncio.shield(task)

    async def __call__(self) -> Presence:
        if time.monotonic() - self._presence[0] < ASK_S:
            return self._presence[1]
        return await self._once("presence", self._ask_presence)  # type: ignore[no-any-return]

    async def _ask_presence(self) -> Presence:
        now = time.monotonic()
        try:
            async with self._client().get("http://ladder/presence") as resp:
                resp.raise_for_status()
                presence = Presence.from_json(json.loads(await resp.read()))
            self._answered = now
        except (ClientError, OSError, TimeoutError, ValueError) as exc:
            self.log.warning("ladder_presence_unanswered", error=repr(exc)[:200])
            presence = self._presence[1] if now - self._answered < PRESENCE_KEPT_S else UNKNOWN
        self._presence = (now, presence)
        return presence

    async def metrics(self, request: web.Request) -> web.Response:
        """``/metrics`` of the service, as it renders it (OpenMetrics when the Accept header asks for it)."""
        kind = "application/openmetrics-text" if "application/openmetrics-text" in request.headers.get("Accept", "") else ""
        hit = self._metrics.get(kind)
        if hit is None or time.monotonic() - hit[0] >= ASK_S:
            hit = await self._once(f"metrics/{kind}", lambda: self._ask_metrics(kind)) or hit
        if hit is None:
            return web.json_response({"error": "the ladder service does not answer for its metrics now",
                                      "reason": "UNAVAILABLE"}, status=503)
        return web.Response(body=hit[1], headers={"Content-Type": hit[2], "Cache-Control": "no-store"})

    async def _ask_metrics(self, kind: str) -> tuple[float, bytes, str] | None:
        try:
            async with self._client().get("http://ladder/metrics", headers={"Accept": kind}) as resp:
                resp.raise_for_status()
                hit = (time.monotonic(), await resp.read(), resp.headers.get("Content-Type", "text/plain"))
        except (ClientError, OSError, TimeoutError) as exc:
            self.log.warning("ladder_metrics_unanswered", error=repr(exc)[:200])
            return None
        self._metrics[kind] = hit
        return hit


async def _serve(settings: dict[str, Any], limits: ServerLimits) -> None:
    from referee.tools.viewer import start_viewer

    presence = PresenceClient(settings["internal"])
    source = StoreSource(settings["database"], settings["variant"], presence)
    try:
        await source.open()
        runner, bound = await start_viewer(settings["records"], None, settings["host"], int(settings["port"]), limits,
                                           routes=[*routes(source), web.get("/metrics", presence.metrics)])
        structlog.get_logger(component="ladder-web").info("ladder_web_serving", port=bound, pid=os.getpid())
        await serve_until_stopped(runner, bound)
    finally:
        await presence.close()
        source.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--nice", type=int, default=WEB_NICE)
    args = p.parse_args(argv)
    try:
        settings = json.loads(sys.stdin.readline())
        limits = ServerLimits(**settings["limits"])
    except (ValueError, KeyError, TypeError) as exc:
        print(f"ladder web: bad settings on stdin: {exc}", file=sys.stderr)
        return 2
    if args.nice:
        os.nice(args.nice)
    from referee.service.logs import configure_logging
    from rummy.wire import loops
    from tournaments.ladder.store import StoreTooNew, StoreUnavailable

    log = Path(settings["log"]).open("a", encoding="utf-8", buffering=1) if settings.get("log") else None
    configure_logging("info", json=True, stream=log)
    where = f"{settings['host']}:{settings['port']}"
    try:
        loops.run(_serve(settings, limits))
    except (StoreUnavailable, StoreTooNew, FileNotFoundError) as exc:
        print(f"ladder web: cannot read the ladder's results: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # the port is taken, or cannot be bound
        print(f"ladder web: cannot serve on {where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    finally:
        if log is not None:
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
