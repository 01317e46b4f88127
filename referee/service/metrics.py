"""Prometheus metrics of a referee (prometheus-client): the matches it runs, how fast bots answer, what it refuses.

``Metrics`` owns its own ``CollectorRegistry``, never the process-wide default, so tests and several referees in
one process keep apart. A referee counts into it from its event loop (``create_server(metrics=...)``); the HTTP
side reads it from anywhere:

- ``referee.tools.metrics_server.MetricsServer``: ``/metrics`` on a port of its own, served from its own thread and event loop, so a scrape
  (or a crowd of them) never runs on the loop that runs the matches; its connections are bounded as the viewer's
  are (``referee serve --metrics-port``);
- ``metrics_handler`` / ``add_metrics_route``: the same page mounted on another aiohttp app (the viewer's, a
  ladder's web page).

What the match loop pays: a decision answered is one ``bisect`` and three additions on plain Python numbers
(``_Decisions``, read at scrape time), not a prometheus-client ``Histogram.observe`` (a lock and a loop over the
buckets, some 5x dearer); a match started or ended and a refusal are one counter increment each; the gauges
(live matches, connected bots, Watch streams) are read off the referee when scraped and cost nothing between
scrapes. Label values come from fixed sets only (reason codes of ``referee.service.reasons``, variant names, ``END_REASONS``;
anything else is ``OTHER``), so no client can grow the number of series. The page itself is made at most once per
``cache_s`` (one second) whatever the number of scrapers.

The metric names are listed in docs/METRICS.md.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, GCCollector, PlatformCollector, ProcessCollector
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from referee.service.reasons import BY_CODE

if TYPE_CHECKING:
    from referee.service.server import RefereeService

__all__ = ["Metrics", "metrics_handler", "add_metrics_route", "create_metrics_app", "BUCKETS",
           "END_REASONS", "OTHER"]

# A decision's round trip, in seconds: from the request leaving the referee to the answer it accepts. On one host
# a bot answers in well under a millisecond; over the internet tens of ms; a thinking bot up to its move's time.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# How a match ended (``MatchSession.end``): the ``end`` label of rummy_matches_finished_total.
END_REASONS = ("completed", "all_forfeited", "time_limit", "record_limit", "aborted", "shutdown", "error",
               "records_unwritable")
OTHER = "OTHER"  # the label value of anything outside a label's fixed set
MAX_CONNECTIONS = 32  # connections open to a MetricsServer at once (a Prometheus server keeps one)
CLIENT_CONNECTIONS = 8  # from one address
CACHE_S = 1.0  # a page asked for again this soon is the last one made (Prometheus scrapes every 15-60 s)

_REASON_CODES = frozenset(BY_CODE)
_PLAIN = choose_encoder("")  # the text format 0.0.4, the default
_OPENMETRICS = choose_encoder("application/openmetrics-text; version=1.0.0")


def _variant_names() -> frozenset[str]:
    from referee.rules.variants import all_variants

    return frozenset(v.name for v in all_variants())


class _Decisions(Collector):
    """Decisions answered and their round trips, in plain numbers the match loop adds to (no lock: only the
    referee's loop writes them), exposed as a counter and a histogram when collected. A scrape copies the bucket
    list in one step (atomic under the GIL), so the count and the buckets always agree."""

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)  # per bucket (not cumulative); the last: above the largest
        self.sum = 0.0
        self.timeouts = 0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1
        self.sum += seconds

    def collect(self) -> Iterable[Metric]:
        counts, total = self.counts[:], self.sum
        n = sum(counts)
        yield CounterMetricFamily("rummy_decisions", "Decisions answered by bots with an action the referee accepted "
                                  "(rate() of it: decisions per second)", value=n)
        yield CounterMetricFamily("rummy_decision_timeouts", "Decisions the referee played the default move for: the "
                                  "deadline passed, or the bot flooded it with refused answers", value=self.timeouts)
        cumulative, buckets = 0, []
        for bound, c in zip((*BUCKETS, float("inf")), counts, strict=True):
            cumulative += c
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), float(cumulative)))
        yield HistogramMetricFamily("rummy_decision_round_trip_seconds", "From a decision request leaving the referee "
                                    "to the bot's accepted answer, refused answers in between included",
                                    buckets=buckets, sum_value=total)

    def describe(self) -> Iterable[Metric]:
        return self.collect()


class Metrics:
    """One referee's metrics and the registry that exposes them (``render``). Made before the referee and given
    to ``create_server`` (or ``EmbeddedReferee``), which ``bind`` it: the gauges then read that referee.

    Other code may register its own metrics in ``registry`` (a ladder's games per minute, say); they are on the
    same page."""

    def __init__(self, cache_s: float | None = None) -> None:
        self.registry = CollectorRegistry()
        self.cache_s = CACHE_S if cache_s is None else cache_s
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        self._variants = _variant_names()
        self._started = Counter("rummy_matches_started", "Matches started (created, or resumed after a restart)",
                                ["variant"], registry=self.registry)
        self._finished = Counter("rummy_matches_finished", "Matches ended, by how (label end: completed, "
                                 "all_forfeited, time_limit, record_limit, aborted, shutdown, error, records_unwritable)",
                                 ["variant", "end"], registry=self.registry)
        self._rejections = Counter("rummy_rejections", "Answers refused on the Play stream, by reason code "
                                   "(docs/REASON-CODES.md; OTHER: a code not in that list)", ["reason"],
                                   registry=self.registry)
        for variant in self._variants:  # every variant's series from the start, at 0: rate() sees its first game
            self._started.labels(variant)
            self._finished.labels(variant, "completed")
        self._rejected: dict[str, Callable[[], None]] = {}  # listed reason code -> its counter's inc (at first use)
        self._other = self._rejections.labels(OTHER).inc
        self.decisions = _Decisions()
        self.registry.register(self.decisions)
        self._service: RefereeService | None = None
        Gauge("rummy_live_matches", "Matches waiting for their seats or running", registry=self.registry
              ).set_function(lambda: len(self._service.tasks) if self._service is not None else 0)
        Gauge("rummy_connected_bots", "Play streams that have joined (a bot process holds one)", registry=self.registry
              ).set_function(lambda: self._service.playing if self._service is not None else 0)
        Gauge("rummy_watch_streams", "Watch streams open (gRPC spectators)", registry=self.registry
              ).set_function(lambda: self._service.watching if self._service is not None else 0)
        self._lock = threading.Lock()
        self._pages: dict[str, tuple[float, bytes]] = {}  # content type -> (when made, page): two at most

    def bind(self, service: RefereeService) -> None:
        """The referee whose live matches, bots and watchers the gauges show (the last one bound)."""
        self._service = service

    # ------------------------------------------------------------ counting (the referee's event loop)

    def match_started(self, variant: str) -> None:
        self._started.labels(variant if variant in self._variants else OTHER).inc()

    def match_finished(self, variant: str, end: str) -> None:
        self._finished.labels(variant if variant in self._variants else OTHER, end if end in END_REASONS else OTHER).inc()

    def decided(self, seconds: float) -> None:
        """A bot's answer was accepted ``seconds`` after its request went out."""
        self.decisions.observe(seconds)

    def timed_out(self) -> None:
        self.decisions.timeouts += 1

    def rejected(self, code: str) -> None:
        """An answer refused with ``code``: counted under it if ``referee.service.reasons`` lists it, else under OTHER."""
        inc = self._rejected.get(code)
        if inc is None:
            if code not in _REASON_CODES:
                inc = self._other
            else:  # only listed codes are kept: the dict is as bounded as the label set
                inc = self._rejected[code] = self._rejections.labels(code).inc
        inc()

    # ------------------------------------------------------------ exposition (any thread)

    def render(self, accept: str = "") -> tuple[bytes, str]:
        """The page in the format ``accept`` (an HTTP Accept header) asks for: OpenMetrics 1.0 if it names it,
        else the Prometheus text format 0.0.4; and its content type. Made at most once per ``cache_s``; while
        another thread makes one, the last one made is returned rather than waited for."""
        encoder, content_type = _OPENMETRICS if "application/openmetrics-text" in accept else _PLAIN
        cached = self._pages.get(content_type)
        if cached is not None and time.monotonic() - cached[0] < self.cache_s:
            return cached[1], content_type
        if not self._lock.acquire(blocking=cached is None):
            assert cached is not None
            return cached[1], content_type
        try:
            page = encoder(self.registry)
            self._pages[content_type] = (time.monotonic(), page)
        finally:
            self._lock.release()
        return page, content_type


# ---------------------------------------------------------------- HTTP


def metrics_handler(metrics: Metrics) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An aiohttp handler serving ``metrics`` (GET and HEAD), to mount on any app: ``app.router.add_get("/metrics",
    metrics_handler(m))``. The page is made on the calling loop at most once per ``cache_s`` (about a millisecond)."""

    async def handle(request: web.Request) -> web.Response:
        page, content_type = metrics.render(request.headers.get("Accept", ""))
        return web.Response(body=page, headers={"Content-Type": content_type, "Cache-Control": "no-store"})

    return handle


def add_metrics_route(app: web.Application, metrics: Metrics, path: str = "/metrics") -> None:
    """Mount ``metrics`` at ``path`` on ``app`` (the viewer does, when its referee has metrics)."""
    app.router.add_get(path, metrics_handler(metrics))


_STATUS_REASONS = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "TOO_LARGE"}


@web.middleware
async def _refusals(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                    ) -> web.StreamResponse:
    """A wrong path or method: its status with a JSON body ``{"error", "reason"}``, as the viewer answers."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        message = "this server serves /metrics only" if exc.status == 404 else exc.reason
        resp = web.json_response({"error": message, "reason": _STATUS_REASONS.get(exc.status, "HTTP_ERROR")},
                                 status=exc.status)
        if "Allow" in exc.headers:
            resp.headers["Allow"] = exc.headers["Allow"]
        return resp


def create_metrics_app(metrics: Metrics) -> web.Application:
    """An aiohttp app with ``/metrics`` and nothing else (any other path: 404 ``NOT_FOUND``)."""
    app = web.Application(middlewares=[_refusals], client_max_size=1024)
    add_metrics_route(app, metrics)
    return app
