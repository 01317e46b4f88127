"""Running a tournament: the schedule's missing games, several at once, each result committed as it ends.

Match execution is a function, ``MatchFn = async (MatchRequest) -> MatchOutcome``, so the same runner drives the
real referee over gRPC (:class:`GrpcMatches`, persistent bot processes; :class:`PerMatchProcesses`, a process per
seat), a fake in tests, or another dispatcher (a Dask cluster, say) for more than one machine. A backend is an
async context manager factory yielding a ``MatchFn``: it owns what must live while games run (bot processes,
the gRPC channel).

Faults: a bot that fails to start, crashes, stalls or sends garbage loses by the referee's rules (its seat is
forfeited and the match still ends with a result); the runner only restarts dead bot processes. What the
referee counted of each seat's faults (refused answers by reason code, moves it made on a missed deadline,
disconnects) comes with the match's result and is stored with the game; the restarts of each bot process are
stored with the run (``tournaments.faults``). A match that
fails outright (the referee unreachable, the match aborted, a timeout) is logged in the database's failures
table, retried once at the end of the run, and otherwise left missing, so the next run plays it. Ctrl-C
(SIGINT) or SIGTERM stops at once: finished games are committed, the ones in flight are dropped and replayed
by the next run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import signal
import sqlite3
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from tournaments.abtest import SprtTracker
from tournaments.config import ConfigError, TournamentConfig
from tournaments.faults import BotFaults, BotRun, SeatFaults
from tournaments.matches import (
    NOT_ANSWERING,
    RECORDS_UNWRITABLE,
    REFEREE_GONE,
    Backend,
    Backoff,
    GrpcMatches,
    MatchError,
    MatchFn,
    MatchOutcome,
    MatchRequest,
    PerMatchProcesses,
    Plan,
    grpc_backend,
    make_logger,
    static_backend,
)
from tournaments.schedule import Game, gauntlet, ladder, round_robin
from tournaments.store import DB_NAME, Store

if TYPE_CHECKING:
    from referee.service.metrics import Metrics

__all__ = [
    "MatchRequest",
    "MatchOutcome",
    "MatchError",
    "MatchFn",
    "Backend",
    "Plan",
    "RunStats",
    "plan",
    "play_games",
    "static_backend",
    "grpc_backend",
    "GrpcMatches",
    "PerMatchProcesses",
    "run_tournament",
    "make_logger",
]


class Progress(Protocol):
    def started(self, total: int, done: int) -> None: ...
    def finished(self, game: Game, outcome: MatchOutcome | None, error: str | None) -> None: ...


# ------------------------------------------------------------------------------------------ planning


def plan(config: TournamentConfig) -> Plan:
    """The full schedule of ``config``. :raises ConfigError: when it cannot be built (e.g. a ladder's pool)."""
    c = config
    try:
        if c.schedule == "round-robin":
            return Plan(round_robin(c.bot_names, c.seats, c.games_per_pairing, c.seed, c.team_play))
        if c.schedule == "sprt":  # the full cap of deals; the run stops early once the test decides
            return Plan(round_robin(c.bot_names, c.seats, c.games_per_pairing, c.seed, c.team_play))
        if c.schedule == "ladder" and c.pool is None:
            from tournaments import ladder as continuing

            return Plan(continuing.games(c))
        if c.schedule == "gauntlet":
            others = [b for b in c.bot_names if b not in c.candidates]
            return Plan(gauntlet(c.candidates, others, c.seats, c.games_per_pairing, c.seed, c.team_play))
        return _ladder_plan(c)
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError("tournament.schedule", str(exc)) from exc


def _ladder_plan(c: TournamentConfig) -> Plan:
    from tournaments.ratings import fit_elo

    assert c.pool is not None and c.games is not None
    try:
        with Store(c.pool, readonly=True) as pool_db:
            fp = pool_db.meta("fingerprint") or {}
            results = pool_db.results()
    except Exception as exc:
        raise ConfigError("tournament.pool", f"cannot read the pool's results database {c.pool}: {exc}") from exc
    if fp.get("variant") not in (None, c.variant):
        raise ConfigError("tournament.pool", f"the pool was rated on {fp.get('variant')}, not {c.variant}")
    if not results:
        raise ConfigError("tournament.pool", f"the pool's database {c.pool} has no results")
    try:
        fit = fit_elo(results)
    except ValueError as exc:
        raise ConfigError("tournament.pool", f"the pool cannot be rated: {exc}") from exc
    rated = sorted(fit.names, key=lambda n: -fit.rating(n))
    pool = [n for n in rated if n in c.bot_names]
    if not pool:
        raise ConfigError("tournament.pool", f"none of the configured bots is in the pool (rated there: {', '.join(rated)})")
    if c.candidates:
        again = [b for b in c.candidates if b in fit.names]
        if again:
            raise ConfigError("tournament.candidates", f"{', '.join(again)} already rated in the pool; a ladder rates new bots")
        new = list(c.candidates)
    else:
        new = [b for b in c.bot_names if b not in fit.names]
    if not new:
        raise ConfigError("bots", "a ladder needs new bots: every configured bot is already rated in the pool")
    return Plan(ladder(new, pool, c.seats, c.games, c.seed, c.team_play), new_bots=new, pool=pool)


# ------------------------------------------------------------------------------------------ running


@dataclass
class RunStats:
    scheduled: int = 0
    already_done: int = 0
    played: int = 0
    failed: int = 0
    interrupted: bool = False  # stopped by a signal: games in flight were dropped
    budget_reached: bool = False  # the time budget ran out: no new deal was begun
    stop_reason: str = ""
    elapsed_s: float = 0.0
    sprt: SprtTracker | None = None  # schedule "sprt": the test as it stands after this run
    faults: dict[str, BotFaults] = field(default_factory=dict)  # this run's, per bot (every bot that played)
    bot_runs: list[BotRun] = field(default_factory=list)  # this run's bot processes (persistent ones only)

    def faulty(self) -> list[BotFaults]:
        """The bots with any fault in this run, most faults first."""
        bad = [f for f in self.faults.values() if f.any]
        return sorted(bad, key=lambda f: (-(f.refused + f.timed_out + f.disconnects + f.restarts), f.bot))

    @property
    def missing(self) -> int:
        return self.scheduled - self.already_done - self.played

    @property
    def games_per_hour(self) -> float:
        return self.played / self.elapsed_s * 3600 if self.elapsed_s > 0 else 0.0


def request_for(config: TournamentConfig, game: Game) -> MatchRequest:
    return MatchRequest(
        game=game,
        variant=config.variant,
        options=dict(config.options),
        time_control=config.time_control,
        max_turns_per_hand=config.max_turns_per_hand,
        max_hands=config.max_hands,
        forfeit_after=config.forfeit_after,
        timeout_s=config.match_timeout_s,
    )


async def play_games(
    games: Sequence[Game],
    match_fn: MatchFn,
    store: Store,
    config: TournamentConfig,
    *,
    concurrency: int,
    stop: asyncio.Event | None = None,
    drain: asyncio.Event | None = None,
    progress: Progress | None = None,
    log: Any = None,
    retries: int = 1,
    max_consecutive_failures: int = 20,
    on_result: Callable[[Game, MatchOutcome], bool] | None = None,
    unavailable_give_up_s: float | None = None,
) -> RunStats:
    """Play ``games`` with at most ``concurrency`` at once, committing each result as it comes. Returns when
    all are done, ``stop`` is set (in-flight matches are cancelled, not recorded), ``drain`` is set and the
    deals already begun are complete (so every bot has played every seat of them), or too many matches in a
    row failed (the referee is probably gone). ``on_result`` sees each recorded game; when it returns True the
    run drains (an SPRT that has decided).

    A referee that cannot write its records (``RECORDS_UNWRITABLE``) stops the run at once, and so does a results
    database that cannot be written: what is stored stays. A referee that does not answer (``UNAVAILABLE``, say
    restarting) is not a failed match: its game is tried again after a backoff (``Backoff``), and the run stops
    only once it has not answered for ``unavailable_give_up_s`` (``referee_retry_s()``)."""
    stats = RunStats(faults={b: BotFaults(b) for g in games for b in g.seats})
    stop = stop or asyncio.Event()
    drain = drain or asyncio.Event()
    last_deal = -1
    queue: deque[tuple[Game, int]] = deque((g, 0) for g in games)
    consecutive = 0
    inflight = 0
    t0 = time.monotonic()
    instance = secrets.token_hex(6)  # this call's games: a later run (other bot tokens) makes matches of its own

    def halt(reason: str) -> None:
        if not stats.stop_reason:
            stats.stop_reason = reason
            if log is not None:
                log.error("run_stopped", reason=reason)
        stop.set()

    async def pause(delay: float) -> None:
        """Sleep ``delay`` seconds, or less if the run stops meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)

    async def worker() -> None:
        nonlocal consecutive, inflight, last_deal
        backoff = Backoff(unavailable_give_up_s)
        while queue and not stop.is_set():
            if drain.is_set() and queue[0][0].deal > last_deal:
                return
            game, attempt = queue.popleft()
            last_deal = max(last_deal, game.deal)
            started = time.monotonic()
            req = dataclasses.replace(request_for(config, game), idempotency_key=f"{instance}/{game.key}/{attempt}")
            inflight += 1
            try:
                out = await asyncio.wait_for(match_fn(req), req.timeout_s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                inflight -= 1
                err = f"{type(exc).__name__}: {exc}" if not isinstance(exc, MatchError) else str(exc)
                if isinstance(exc, TimeoutError):
                    err = f"no result after {req.timeout_s:g} s"
                gone = "; results finished so far are saved: run again once the referee answers"
                if isinstance(exc, MatchError) and exc.reason == REFEREE_GONE:
                    halt(err + gone)  # a wait for this match's result has already given up on the referee
                elif isinstance(exc, MatchError) and exc.code in NOT_ANSWERING and exc.reason != RECORDS_UNWRITABLE:
                    delay = backoff.next_delay(started)
                    if delay is not None:  # the referee restarting (or frozen): the same game again, after a while
                        queue.appendleft((game, attempt))
                        if log is not None:
                            log.warning("referee_unavailable", key=game.key, error=err, retry_in_s=round(delay, 2),
                                        unavailable_s=round(backoff.waited_s, 1))
                        await pause(delay)
                        continue
                    err = f"the referee has not answered for {backoff.waited_s:.0f} s; last: {err}"
                    halt(err + gone)
                stats.failed += 1
                consecutive += 1
                try:
                    store.record_failure(game.key, err)
                except (sqlite3.Error, OSError) as db_exc:  # a full disk: the log and the stop say it instead
                    halt(f"cannot write to {store.path}: {db_exc}; last failure: {err}")
                if log is not None:
                    log.warning("game_failed", key=game.key, seats=list(game.seats), error=err, attempt=attempt + 1)
                if attempt < retries:
                    queue.append((game, attempt + 1))
                if progress is not None:
                    progress.finished(game, None, err)
                if isinstance(exc, MatchError) and exc.reason == RECORDS_UNWRITABLE:
                    halt(f"the referee cannot write its match records, so no match can be played: {err}. Results "
                         "finished so far are saved; free space (or fix the records folder) and run again")
                if consecutive >= max_consecutive_failures:
                    halt(f"{consecutive} matches in a row failed; last: {err}")
                continue
            inflight -= 1
            consecutive = 0
            backoff.reset()
            duration = time.monotonic() - started
            if (kept := _seats_faults(out.faults, len(game.seats))) != out.faults:
                if log is not None:
                    log.warning("faults_dropped", key=game.key, reason="the referee gave faults for seats the game has not")
                out = dataclasses.replace(out, faults=kept)
            try:
                store.record(
                    game,
                    ranking=out.ranking,
                    totals=out.totals,
                    reason=out.reason,
                    forfeited=out.forfeited,
                    duration_s=duration,
                    record_path=out.record_path,
                    match_id=out.match_id,
                    variant=config.variant,
                    faults=out.faults,
                )
            except (sqlite3.Error, OSError) as exc:  # a full disk: what is stored stays, this game is played again
                halt(f"cannot store the result of game {game.key} in {store.path}: {exc}. Results stored so far are "
                     "kept; free space and run again")
                return
            stats.played += 1
            _count_faults(stats, game, out)
            if log is not None:
                log.info(
                    "game_finished",
                    key=game.key,
                    seats=list(game.seats),
                    ranking=[list(g) for g in out.ranking],
                    totals=list(out.totals),
                    reason=out.reason,
                    forfeited=list(out.forfeited),
                    duration_s=round(duration, 3),
                    match_id=out.match_id,
                    faults=[{"seat": f.seat, "refused": dict(f.rejected), "timed_out": f.timed_out,
                             "disconnects": f.disconnects} for f in out.faults if f.any],
                )
            if progress is not None:
                progress.finished(game, out, None)
            if on_result is not None and on_result(game, out):
                drain.set()

    workers = [asyncio.create_task(worker(), name=f"worker-{i}") for i in range(max(1, min(concurrency, len(games))))]
    stopper = asyncio.create_task(stop.wait())
    try:
        pending: set[asyncio.Task[Any]] = set(workers)
        while pending:
            done, pending_now = await asyncio.wait({*pending, stopper}, return_when=asyncio.FIRST_COMPLETED)
            pending = {t for t in pending_now if t is not stopper}
            for t in done:
                if t is not stopper and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]
            if stopper in done:
                break
    finally:
        stopper.cancel()
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, stopper, return_exceptions=True)
    stats.interrupted = stop.is_set() and not stats.stop_reason and (bool(queue) or inflight > 0)
    stats.budget_reached = drain.is_set() and not stop.is_set() and bool(queue)
    stats.elapsed_s = time.monotonic() - t0
    return stats


def _seats_faults(faults: tuple[SeatFaults, ...], seats: int) -> tuple[SeatFaults, ...]:
    """The faults of the game's seats, one per seat (a referee of another version could give others)."""
    by_seat = {f.seat: f for f in faults if 0 <= f.seat < seats}
    kept = tuple(by_seat[s] for s in sorted(by_seat))
    return faults if kept == faults else kept


def _count_faults(stats: RunStats, game: Game, out: MatchOutcome) -> None:
    """Add a stored game's faults to the run's, per bot."""
    if not out.faults:
        return
    by_seat = {f.seat: f for f in out.faults}
    for bot in dict.fromkeys(game.seats):
        mine = [by_seat[i] for i, b in enumerate(game.seats) if b == bot and i in by_seat]
        stats.faults.setdefault(bot, BotFaults(bot)).add_game(mine)


# ------------------------------------------------------------------------------------------ the whole run


def run_tournament(
    config: TournamentConfig,
    *,
    referee: str | None = None,
    concurrency: int | None = None,
    backend: Backend | None = None,
    progress: Progress | None = None,
    handle_signals: bool = True,
    time_budget_s: float | None = None,
    label: str = "run",
    cluster: str | None = None,
    metrics_at: tuple[str, int] | None = None,
) -> RunStats:
    """Play every missing game of ``config``'s schedule. Starts an embedded referee unless ``referee``
    (HOST:PORT) is given or a ``backend`` replaces the gRPC one. With ``time_budget_s``, no new deal is begun
    once that much time has passed (the rest is left for a rerun). With ``cluster`` (a Dask scheduler's address)
    the matches are played on that cluster's workers (:mod:`tournaments.cluster`). A run that played games keeps the ratings
    it ends with as a rating run called ``label``. ``metrics_at`` (host, port): the embedded referee's Prometheus
    metrics are served there (``referee.service.metrics``). :raises ConfigError: before anything starts."""
    from tournaments import ladder as continuing

    if continuing.is_continuing(config):
        config = continuing.with_entries(config)
    p = plan(config)
    unsandboxed: str | None = None
    if cluster is None and backend is None:  # bots started here (a cluster's workers start their own)
        from tournaments.botproc import cannot_start
        from tournaments.sandbox import modes

        for i, spec in enumerate(config.bots):
            if (why := cannot_start(spec)) is not None:
                raise ConfigError(f"bots[{i}].command", f"bot {spec.name!r} cannot start: {why}")
        _, unsandboxed = modes(config)  # raises when a bot asks for bwrap and this host has none
    out = config.output
    out.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as cleanup:
        log = make_logger(cleanup.enter_context((out / "tournament.log").open("a", encoding="utf-8", buffering=1)))
        if unsandboxed is not None:
            from tournaments.sandbox import UNSANDBOXED_WARNING

            warning = UNSANDBOXED_WARNING.format(why=unsandboxed)
            log.warning("unsandboxed", message=warning)
            print(f"WARNING: {warning}", file=sys.stderr)
        store = cleanup.enter_context(Store(out / DB_NAME))
        if cluster is not None and backend is None:
            from tournaments.cluster import cluster_backend, cluster_threads

            backend = cluster_backend(config, cluster, p)
            concurrency = concurrency or cluster_threads(cluster)
            log.info("cluster", address=cluster, concurrency=concurrency)
        stats = _run(config, p, store, log, cleanup, referee, concurrency, backend, progress, handle_signals, time_budget_s,
                     label, metrics_at)
        if stats.played:
            r = config.ratings
            continuing.keep_ratings(store, label, r.anchor, r.anchor_rating, r.average)
        return stats


def _run(
    config: TournamentConfig, p: Plan, store: Store, log: Any, cleanup: contextlib.ExitStack, referee: str | None,
    concurrency: int | None, backend: Backend | None, progress: Progress | None, handle_signals: bool,
    time_budget_s: float | None, label: str = "run", metrics_at: tuple[str, int] | None = None,
) -> RunStats:
    out = config.output
    store.claim(config.fingerprint())
    store.set_meta("bots", {b.name: list(b.command) for b in config.bots})
    if config.pool is not None:
        store.import_pool(config.pool)
    if p.pool:
        store.set_meta("ladder", {"pool": p.pool, "new": p.new_bots})
    done = store.done_keys()
    todo = [g for g in p.games if g.key not in done]
    conc = concurrency or config.concurrency
    stats = RunStats(scheduled=len(p.games), already_done=len(p.games) - len(todo))
    on_result = None
    if config.sprt is not None:
        tracker = _sprt_tracker(config, p, store)
        stats.sprt = tracker
        if tracker.decided:
            todo = []
            stats.scheduled = stats.already_done
        else:
            def on_result(game: Game, outcome: MatchOutcome) -> bool:
                decided = tracker.add(game.deal, game.rotation, game.seats, outcome.ranking)
                log.info("sprt", llr=round(tracker.state.llr, 4), units=tracker.state.units, status=tracker.state.status)
                note = getattr(progress, "note", None)
                if note is not None:
                    note(f"LLR {tracker.state.llr:+.2f} ({tracker.state.params.lower_bound:+.2f}, {tracker.state.params.upper_bound:+.2f})")
                return decided
    log.info("run_started", scheduled=stats.scheduled, done=stats.already_done, todo=len(todo), concurrency=conc,
             config=str(config.source or ""), referee=referee or ("embedded" if backend is None else "custom"))
    if progress is not None:
        progress.started(stats.scheduled, stats.already_done)
    if not todo:
        return stats
    embedded = None
    if backend is None:
        address = referee
        if address is None:
            from referee.service.logs import configure_logging
            from referee.service.server import EmbeddedReferee

            # the referee's own structured logs go to a file beside ours, not over the progress bar; the
            # global structlog configuration is put back afterwards
            saved = structlog.get_config()
            cleanup.callback(lambda: structlog.configure(**saved))
            ref_log = cleanup.enter_context((out / "referee.log").open("a", encoding="utf-8", buffering=1))
            configure_logging("info", json=True, stream=ref_log)
            from tournaments.sandbox import private_socket_dir

            # the bots' way in: a Unix socket in a private folder outside the output (sandboxes have no network)
            socket = cleanup.enter_context(private_socket_dir()) / "referee.sock"
            # its admin token exists only in this process: the runner's calls and the bots' minted tokens
            admin = secrets.token_urlsafe(32)
            metrics = _serve_metrics(metrics_at, cleanup, log) if metrics_at is not None else None
            embedded = EmbeddedReferee(records_dir=out / "records", unix_path=str(socket), admin_token=admin,
                                       metrics=metrics)
            address = embedded.start()
            log.info("referee_started", address=address, unix=str(socket))
        else:
            socket, admin = None, None
        backend = grpc_backend(config, address, p, log, unix_socket=socket, admin_token=admin)
    started_at, began = time.time(), time.monotonic()  # the run's wall time takes in starting and stopping the bots
    try:
        run = asyncio.run(_main(todo, backend, store, config, conc, progress, log, handle_signals, time_budget_s, on_result))
    finally:
        if embedded is not None:
            embedded.stop()
    stats.played, stats.failed, stats.interrupted = run.played, run.failed, run.interrupted
    stats.faults, stats.bot_runs = run.faults, run.bot_runs
    for r in run.bot_runs:
        stats.faults.setdefault(r.bot, BotFaults(r.bot)).add_run(r)
    try:
        store.add_run(label, started_at, time.monotonic() - began, run.played, conc, dataclasses.asdict(config.time_control),
                      run.stop_reason, run.bot_runs)
    except (sqlite3.Error, OSError) as exc:  # a full disk: the games are stored; the run's own line is not
        log.error("run_not_stored", error=str(exc))
    stats.stop_reason, stats.elapsed_s, stats.budget_reached = run.stop_reason, run.elapsed_s, run.budget_reached
    if stats.sprt is not None and stats.sprt.decided:  # the test stopped the run, not the clock
        stats.budget_reached = False
        stats.scheduled = stats.already_done + stats.played
    log.info("run_ended", played=stats.played, failed=stats.failed, missing=stats.missing, interrupted=stats.interrupted,
             budget_reached=stats.budget_reached, stop_reason=stats.stop_reason, elapsed_s=round(stats.elapsed_s, 2), games_per_hour=round(stats.games_per_hour))
    return stats


def _serve_metrics(at: tuple[str, int], cleanup: contextlib.ExitStack, log: Any) -> Metrics:
    """The embedded referee's metrics, served at ``at`` until the run ends (``tournament run --metrics-port``).
    :raises ConfigError: the port cannot be bound."""
    from referee.service.metrics import Metrics
    from referee.tools.metrics_server import MetricsServer

    metrics = Metrics()
    server = MetricsServer(metrics, *at)
    try:
        port = server.start()
    except OSError as exc:
        raise ConfigError("--metrics-port", f"cannot serve metrics on {at[0]}:{at[1]}: {exc.strerror or exc}") from exc
    cleanup.callback(server.stop)
    url = f"http://{at[0]}:{port}/metrics"
    log.info("metrics_serving", url=url)
    print(f"metrics: {url}", file=sys.stderr, flush=True)
    return metrics


def _sprt_tracker(config: TournamentConfig, p: Plan, store: Store) -> SprtTracker:
    """The SPRT as the stored results of this schedule leave it (every game of a complete deal counts)."""
    assert config.sprt is not None
    keys = {g.key for g in p.games}
    rows = [r for r in store.rows() if r.source == "played" and r.key in keys]
    return SprtTracker.from_results(config.sprt, rotations=2, cap=config.games_per_pairing,
                                    games=[(r.deal, r.rotation, r.seats, r.ranking) for r in rows])


async def _main(
    todo: list[Game], backend: Backend, store: Store, config: TournamentConfig, concurrency: int,
    progress: Progress | None, log: Any, handle_signals: bool, time_budget_s: float | None = None,
    on_result: Callable[[Game, MatchOutcome], bool] | None = None,
) -> RunStats:
    stop = asyncio.Event()
    drain = asyncio.Event()
    loop = asyncio.get_running_loop()
    if time_budget_s is not None:
        loop.call_later(time_budget_s, drain.set)
    installed: list[signal.Signals] = []
    if handle_signals:
        def on_signal(signame: str) -> None:
            if not stop.is_set():
                log.warning("stopping", signal=signame)
                print(f"\n{signame}: stopping; finished games are saved, the ones in flight will be replayed next run",
                      file=sys.stderr)
            stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, on_signal, sig.name)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or not Unix
                pass
    try:
        async with backend() as match_fn:
            stats = await play_games(todo, match_fn, store, config, concurrency=concurrency, stop=stop, drain=drain,
                                     progress=progress, log=log, on_result=on_result)
        runs = getattr(match_fn, "bot_runs", None)  # read once the backend has stopped its bots: final counts
        if callable(runs):
            stats.bot_runs = list(runs())
        return stats
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
