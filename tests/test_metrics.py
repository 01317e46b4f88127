"""Prometheus metrics (``referee.service.metrics``, ``referee serve --metrics-port``): each counter moves by what the match
did, as its record and result tell it; a hostile client cannot add label values; the HTTP side is bounded and
answers a wrong path 404 with a reason."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from referee.rules.policies import random_policy
from referee.rules.variants import all_variants
from referee.rules.variants.base import Action, Discard, SeatView
from referee.service.metrics import CLIENT_CONNECTIONS, END_REASONS, OTHER, Metrics
from referee.service.reasons import BY_CODE
from referee.service.records import read_record
from referee.service.server import EmbeddedReferee
from referee.tools.metrics_server import MetricsServer
from referee.tools.viewer import start_viewer
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire import loops
from rummybot.bots.base import PolicyBot
from rummybot.bots.misbehaving import _card_not_held
from rummybot.sdk import Request, run_bot
from tests.serving import free_port, kill, serve

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(page: str) -> Samples:
    """Every sample of a text-format page: (name, sorted labels) -> value."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(page) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def label_values(samples: Samples, prefix: str = "rummy_") -> dict[str, set[str]]:
    """Every label name of the rummy_ series, with the values it takes."""
    out: dict[str, set[str]] = {}
    for name, labels in samples:
        if name.startswith(prefix):
            for k, v in labels:
                out.setdefault(k, set()).add(v)
    return out


def get(url: str, accept: str = "") -> tuple[int, str, str]:
    """Status, content type and body of a GET (an error status is an answer too)."""
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read().decode()


def scrape_until(url: str, done: Callable[[Samples], bool], within_s: float = 20.0) -> Samples:
    """Scrape until ``done`` holds (the match's end reaches the counters a moment after the bots see it, and a
    page is kept for a second): the last page if it never does, for the assertion to show."""
    ends = time.monotonic() + within_s
    while True:
        samples = parse(get(url)[2])
        if done(samples) or time.monotonic() > ends:
            return samples
        time.sleep(0.2)


class TwiceIllegal(PolicyBot):
    """Plays at random, but answers its first two decisions with a discard of a card it does not hold; when that
    is refused it answers with a legal action. Keeps the codes it was told."""

    def __init__(self, seed: int) -> None:
        super().__init__("twice-illegal", lambda v: random_policy, seed)
        self.decisions = 0
        self.told: list[str] = []

    def decide(self, view: SeatView, legal: Sequence[Action], request: Request) -> Action:
        self.decisions += 1
        return Discard(_card_not_held(view)) if self.decisions <= 2 else super().decide(view, legal, request)

    def on_rejected(self, view: SeatView, legal: Sequence[Action], code: str, message: str) -> Action | None:
        self.told.append(code)
        return super().decide(view, legal, Request("", 0, 0, 0, pb.DecisionRequest()))


def play_one_match(address: str, seed: str) -> tuple[pb.MatchResult, TwiceIllegal]:
    """An Indian rummy match of one hand between the twice-illegal bot and a random one, over the SDK."""
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        created = stub.CreateMatch(pb.CreateMatchRequest(variant="indian", seats=[pb.SeatSpec(name="illegal"),
                                                                                  pb.SeatSpec(name="random")],
                                                         seed=seed, max_hands=1), timeout=10)
        bad = TwiceIllegal(seed=1)

        async def play() -> None:
            await asyncio.gather(run_bot(bad, address, match_id=created.match_id, token=created.seat_tokens[0]),
                                 run_bot(PolicyBot("random", lambda v: random_policy, seed=2), address,
                                         match_id=created.match_id, token=created.seat_tokens[1]))

        loops.run(asyncio.wait_for(play(), 60))
        return stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=30).result, bad


def test_a_served_match_moves_each_counter_by_what_its_record_shows(tmp_path: Path) -> None:
    """``referee serve --metrics-port --http``: one match with two refused answers, then the page says one match
    started and completed, as many decisions as the record has answered moves (each with its round trip), the
    refusals under the codes the bot was told, and nothing live any more."""
    records = tmp_path / "records"
    port = free_port()
    proc = serve(port, records, "--metrics-port", "0")
    try:
        assert proc.stdout is not None
        url = json.loads(proc.stdout.readline())["url"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics")
        result, bad = play_one_match(f"127.0.0.1:{port}", "metrics-1")
        assert result.status == pb.MATCH_STATUS_FINISHED and not result.forfeited
        samples = scrape_until(url, lambda s: value(s, "rummy_matches_finished_total", variant="indian", end="completed")
                               == 1 and value(s, "rummy_live_matches") == 0 and value(s, "rummy_connected_bots") == 0)
    finally:
        kill(proc)
    entries = read_record(records / f"{result.match_id}.jsonl")
    answered = sum(1 for e in entries if e["type"] == "action" and not e["timed_out"])
    assert answered > 0
    assert value(samples, "rummy_matches_started_total", variant="indian") == 1
    assert value(samples, "rummy_matches_finished_total", variant="indian", end="completed") == 1
    assert value(samples, "rummy_live_matches") == 0 and value(samples, "rummy_connected_bots") == 0
    assert value(samples, "rummy_watch_streams") == 0
    assert value(samples, "rummy_decisions_total") == answered
    assert value(samples, "rummy_decision_round_trip_seconds_count") == answered
    assert value(samples, "rummy_decision_round_trip_seconds_bucket", le="+Inf") == answered
    assert 0 < value(samples, "rummy_decision_round_trip_seconds_sum") < answered * 5  # seconds, not ms
    assert value(samples, "rummy_decision_timeouts_total") == 0
    # the refusals: the two the bot was told, by code, as the result's faults count them
    assert len(bad.told) == 2 and all(code in BY_CODE for code in bad.told)
    faults = {code: n for f in result.faults for code, n in f.rejected.items()}
    for code in set(bad.told):
        assert value(samples, "rummy_rejections_total", reason=code) == bad.told.count(code) == faults[code]
    assert sum(v for (name, _), v in samples.items() if name == "rummy_rejections_total") == 2
    assert value(samples, "process_resident_memory_bytes") > 0  # the process collector is on the page


def test_a_wrong_path_or_method_is_refused_with_a_reason_and_the_server_is_bounded() -> None:
    """A half-sent request is closed once idle; 404 NOT_FOUND on any path but /metrics, 405 for a POST; a client
    with more connections open than an address may have gets 503 LIMIT_CLIENT_CONNECTIONS; scraping goes on for
    the others; OpenMetrics when asked."""
    metrics = Metrics(cache_s=0.0)
    with MetricsServer(metrics, "127.0.0.1", 0, idle_s=1.0) as server:
        base = f"http://127.0.0.1:{server.port}"
        with socket.create_connection(("127.0.0.1", server.port), timeout=15) as slow:  # a slowloris: half a request
            slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            began = time.monotonic()
            assert slow.recv(4096) == b"" and time.monotonic() - began < 10  # closed, unanswered, once idle_s passed
        for path in ("/", "/metrics/", "/favicon.ico", "/metrics/../etc/passwd", "/" + "x" * 2000):
            status, ctype, body = get(base + path)
            assert status == 404 and ctype.startswith("application/json"), (path, status)
            assert json.loads(body)["reason"] == "NOT_FOUND"
        req = urllib.request.Request(base + "/metrics", data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 405 and json.loads(err.value.read())["reason"] == "METHOD_NOT_ALLOWED"
        status, ctype, body = get(base + "/metrics", accept="application/openmetrics-text; version=1.0.0")
        assert status == 200 and ctype.startswith("application/openmetrics-text") and body.endswith("# EOF\n")
        status, ctype, body = get(base + "/metrics")
        assert status == 200 and ctype.startswith("text/plain; version=0.0.4") and "rummy_decisions_total 0.0" in body

        held = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(CLIENT_CONNECTIONS)]
        try:
            time.sleep(0.2)  # the held connections are counted once the server has accepted them
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as extra:
                extra.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                answer = b""
                while chunk := extra.recv(4096):
                    answer += chunk
            assert answer.startswith(b"HTTP/1.1 503") and b"LIMIT_CLIENT_CONNECTIONS" in answer
        finally:
            for s in held:
                s.close()
        ends = time.monotonic() + 10
        while (status := get(base + "/metrics")[0]) != 200 and time.monotonic() < ends:
            time.sleep(0.1)  # the closed connections are counted back as the server sees them go
        assert status == 200


def test_hostile_input_adds_no_label_values(tmp_path: Path) -> None:
    """Made-up variant names, actions for matches that do not exist, and (called directly) reason codes nobody
    lists: the page's label values stay within the listed codes, the variants' names and the end reasons, and
    what is not listed is counted under OTHER."""
    metrics = Metrics(cache_s=0.0)
    with EmbeddedReferee(records_dir=tmp_path, metrics=metrics) as ref:
        with grpc.insecure_channel(ref.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            for name in ("x" * 100, " Indian\n", 'evil"} 1\nrummy_pwned 1', "../../etc"):
                try:  # refused, or (the one that names a variant) created under that variant's own name
                    stub.CreateMatch(pb.CreateMatchRequest(variant=name, seats=[pb.SeatSpec(), pb.SeatSpec()],
                                                           time_control=pb.TimeControl(connect_ms=200)), timeout=5)
                except grpc.RpcError as exc:
                    assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT
            created = stub.CreateMatch(pb.CreateMatchRequest(variant="fortune", seats=[pb.SeatSpec(), pb.SeatSpec()],
                                                             time_control=pb.TimeControl(connect_ms=200)), timeout=5)

            def hostile() -> Any:
                yield pb.PlayRequest(join=pb.Join(bot_name='evil"} 1', bot_token="made-up-token"))
                for i in range(20):
                    yield pb.PlayRequest(action=pb.ActionMessage(match_id=f"MADE_UP_{i}", request_id=i))

            seen = 0
            for msg in stub.Play(hostile(), timeout=10):
                for m in (msg.batch.messages if msg.WhichOneof("body") == "batch" else [msg]):
                    if m.WhichOneof("body") == "rejected":
                        assert m.rejected.code == "NO_SUCH_MATCH"
                        seen += 1
                if seen == 20:
                    break
            stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=30)
        for i in range(1000):
            metrics.rejected(f"MADE_UP_{i}")
        metrics.match_finished("not-a-variant", "not-an-end")
        page = metrics.render()[0].decode()
    samples = parse(page)
    assert value(samples, "rummy_rejections_total", reason="NO_SUCH_MATCH") == 20
    assert value(samples, "rummy_rejections_total", reason=OTHER) == 1000
    assert value(samples, "rummy_matches_finished_total", variant="fortune", end="all_forfeited") == 1
    assert value(samples, "rummy_matches_finished_total", variant=OTHER, end=OTHER) == 1
    labels = label_values(samples)
    assert set(labels) == {"reason", "variant", "end", "le"}
    assert labels["reason"] <= set(BY_CODE) | {OTHER}
    assert labels["variant"] <= {v.name for v in all_variants()} | {OTHER}
    assert labels["end"] <= set(END_REASONS) | {OTHER}
    assert "pwned" not in page and "MADE_UP" not in page and "etc" not in page


def test_an_aborted_match_and_a_stalling_bot_are_counted_by_how_they_went(tmp_path: Path) -> None:
    """A seat that never answers: its missed deadlines are timeouts; AbortMatch ends the match as ``aborted``;
    a Watch stream is counted while open; a joined bot is counted until its stream closes."""
    metrics = Metrics(cache_s=0.0)
    with EmbeddedReferee(records_dir=tmp_path, metrics=metrics) as ref:
        with grpc.insecure_channel(ref.address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            created = stub.CreateMatch(pb.CreateMatchRequest(
                variant="fortune", seats=[pb.SeatSpec(name="stall"), pb.SeatSpec(name="stall2")],
                time_control=pb.TimeControl(per_move_ms=50, connect_ms=5000), forfeit_after=1000), timeout=5)
            opened = threading.Event()
            stop = threading.Event()

            def stalling(token: str) -> Any:
                yield pb.PlayRequest(join=pb.Join(bot_name="stall", seat=pb.SeatCredential(
                    match_id=created.match_id, token=token)))
                opened.set()
                stop.wait(30)

            calls = [stub.Play(stalling(t), timeout=30) for t in created.seat_tokens]
            watch = stub.Watch(pb.WatchRequest(match_id=created.match_id), timeout=30)
            next(iter(watch))  # the watcher is in once it has its first event
            ends = time.monotonic() + 20
            while (metrics.decisions.timeouts < 3 or value(parse(metrics.render()[0].decode()), "rummy_connected_bots") < 2) \
                    and time.monotonic() < ends:
                time.sleep(0.05)
            during = parse(metrics.render()[0].decode())
            stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id, reason="test"), timeout=10)
            stop.set()
            for call in calls:
                for _ in call:
                    pass
            after = scrape_after(metrics, lambda s: value(s, "rummy_connected_bots") == 0
                                 and value(s, "rummy_watch_streams") == 0)
    assert value(during, "rummy_decision_timeouts_total") >= 3
    assert value(during, "rummy_live_matches") == 1 and value(during, "rummy_connected_bots") == 2
    assert value(during, "rummy_watch_streams") == 1
    assert value(after, "rummy_matches_finished_total", variant="fortune", end="aborted") == 1
    assert value(after, "rummy_live_matches") == 0 and value(after, "rummy_decisions_total") == 0


def scrape_after(metrics: Metrics, done: Callable[[Samples], bool], within_s: float = 10.0) -> Samples:
    ends = time.monotonic() + within_s
    while not done(samples := parse(metrics.render()[0].decode())) and time.monotonic() < ends:
        time.sleep(0.05)
    return samples


def test_the_viewer_serves_metrics_when_its_referee_counts(tmp_path: Path) -> None:
    """A viewer on the referee's own loop (the ladder's page) with metrics on has /metrics too; without, a 404.
    (``referee serve --http`` runs its viewer in a process of its own: metrics are on ``--metrics-port``.)"""
    with_metrics = Metrics()
    for metrics, expected in ((with_metrics, 200), (None, 404)):
        with EmbeddedReferee(records_dir=tmp_path, metrics=metrics) as ref:
            assert ref.service is not None and ref._loop is not None

            async def start() -> tuple[Any, int]:
                assert ref.service is not None
                return await start_viewer(tmp_path, ref.service)

            runner, port = asyncio.run_coroutine_threadsafe(start(), ref._loop).result(10)
            try:
                status, ctype, body = get(f"http://127.0.0.1:{port}/metrics")
                assert status == expected, body
                if expected == 200:
                    assert ctype.startswith("text/plain") and "rummy_live_matches 0.0" in body
            finally:
                asyncio.run_coroutine_threadsafe(runner.cleanup(), ref._loop).result(10)


def test_a_page_is_made_at_most_once_per_cache_period() -> None:
    """Scrapers in a loop cost one page a second: within ``cache_s`` the same page is served (counts made since
    show on the next); a made-up Accept header gets one of the two formats and adds no cached page."""
    metrics = Metrics(cache_s=60.0)
    first, ctype = metrics.render()
    metrics.decided(0.002)
    assert metrics.render()[0] is first
    for i in range(50):
        assert metrics.render(f"text/plain; version=9.{i}; escaping=x{i}")[1] == ctype
        metrics.render(f"application/openmetrics-text; version=1.{i}.0")
    assert len(metrics._pages) == 2
    fresh = Metrics(cache_s=0.0)
    fresh.decided(0.002)
    fresh.decided(0.3)
    fresh.decided(120.0)
    samples = parse(fresh.render()[0].decode())
    assert value(samples, "rummy_decisions_total") == 3
    assert value(samples, "rummy_decision_round_trip_seconds_bucket", le="0.0025") == 1
    assert value(samples, "rummy_decision_round_trip_seconds_bucket", le="0.5") == 2
    assert value(samples, "rummy_decision_round_trip_seconds_bucket", le="60.0") == 2
    assert value(samples, "rummy_decision_round_trip_seconds_bucket", le="+Inf") == 3


def test_a_metrics_port_in_use_stops_serve_with_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--records",
                               str(tmp_path), "--metrics-port", str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().startswith(f"referee serve: cannot serve metrics on 127.0.0.1:{port}")
    assert "Traceback" not in done.stderr


def test_tournament_run_serves_its_embedded_referees_metrics_while_it_runs(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``tournament run --metrics-port``: while the games are played the embedded referee's page counts them;
    when the run ends its port is closed. With ``--referee`` (a referee of its own) the flag is refused."""
    import sys

    import referee.service.metrics

    monkeypatch.setattr(referee.service.metrics, "CACHE_S", 0.0)  # every scrape a fresh page: these games take under a second

    from tournaments.cli import main as tournament_main
    from tournaments.config import parse_config
    from tournaments.runner import run_tournament

    bot = [sys.executable, "-m", "rummybot.bots.random_bot"]
    config = parse_config({"tournament": {"variant": "fortune", "games_per_pairing": 1, "concurrency": 1, "seed": "m",
                                          "output": str(tmp_path / "out"), "max_hands": 1},
                           "bots": [{"name": "a", "command": bot}, {"name": "b", "command": bot}]}, base_dir=tmp_path)
    port = free_port()
    pages: list[Samples] = []
    running = threading.Event()

    def scrape() -> None:
        while running.is_set():
            try:
                pages.append(parse(get(f"http://127.0.0.1:{port}/metrics")[2]))
            except OSError:  # not serving yet, or any more
                pass
            time.sleep(0.02)

    scraper = threading.Thread(target=scrape, daemon=True)
    running.set()
    scraper.start()
    try:
        stats = run_tournament(config, handle_signals=False, metrics_at=("127.0.0.1", port))
    finally:
        running.clear()
        scraper.join(timeout=15)
    assert stats.played == stats.scheduled >= 1
    assert pages, "the metrics page was never served during the run"
    started = [value(p, "rummy_matches_started_total", variant="fortune") for p in pages]
    assert max(started) >= 1 and all(n <= stats.played for n in started)
    assert started == sorted(started)  # a counter: never down
    assert max(value(p, "rummy_decisions_total") for p in pages) > 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    cfg = tmp_path / "t.toml"
    cfg.write_text('[tournament]\nvariant = "indian"\noutput = "o"\n[[bots]]\nname = "a"\ncommand = ["true"]\n'
                   '[[bots]]\nname = "b"\ncommand = ["true"]\n', encoding="utf-8")
    assert tournament_main(["run", str(cfg), "--referee", "127.0.0.1:9", "--metrics-port", "0", "--no-progress"]) == 2


@pytest.mark.parametrize("port", ["70000", "-1", "http", "9" * 30])
def test_a_metrics_port_that_is_no_port_is_refused_by_the_parser(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    from referee.tools.cli import main as referee_main

    with pytest.raises(SystemExit) as exited:
        referee_main(["serve", "--metrics-port", port])
    assert exited.value.code == 2
    assert "--metrics-port: a port from 0 to 65535" in capsys.readouterr().err
