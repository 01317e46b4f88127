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
import random
import secrets
import signal
import sqlite3
import sys
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

import structlog

from tournaments.abtest import SprtTracker
from tournaments.config import ConfigError, TimeControl, TournamentConfig
from tournaments.faults import BotFaults, BotRun, SeatFaults
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


@dataclass(frozen=True)
class MatchRequest:
    game: Game
    variant: str
    options: Mapping[str, str] = field(default_factory=dict)
    time_control: TimeControl = TimeControl()
    max_turns_per_hand: int | None = None
    max_hands: int | None = None
    forfeit_after: int | None = None
    timeout_s: float = 3600.0
    # names this try of the game to the referee: a CreateMatch asked again after a lost answer (a restart) gets the
    # match the first made instead of a second, orphaned one
    idempotency_key: str = ""


@dataclass(frozen=True)
class MatchOutcome:
    """A finished match as the referee reports it: ``ranking`` is groups of tied seats, best first."""

    ranking: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    reason: str
    forfeited: tuple[int, ...] = ()
    match_id: str = ""
    record_path: str = ""
    faults: tuple[SeatFaults, ...] = ()  # per seat, as the referee counted them (none from an older referee)


class MatchError(Exception):
    """The match could not be played to a result (not a bot's fault): it is not recorded, so it is replayed.
    ``code``: the gRPC status's name when a call failed (``UNAVAILABLE``: the referee is restarting or gone);
    ``reason``: the referee's reason code (``RECORDS_UNWRITABLE``: it cannot record matches, so the run stops)."""

    def __init__(self, message: str, *, code: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


RECORDS_UNWRITABLE = "RECORDS_UNWRITABLE"  # the referee's reason code for a records folder it cannot write
# A referee that does not answer (UNAVAILABLE: restarting, or gone) is retried with exponential backoff and jitter,
# from BACKOFF_BASE_S doubling to BACKOFF_CAP_S, for at most UNAVAILABLE_GIVE_UP_S in a row; then the run stops.
BACKOFF_BASE_S = 0.25
BACKOFF_CAP_S = 8.0
UNAVAILABLE_GIVE_UP_S = 60.0  # RUMMY_REFEREE_RETRY_S sets another bound
REFEREE_GONE = "REFEREE_NOT_ANSWERING"  # a MatchError's reason once the backoff has given up on the referee
_NOT_ANSWERING = ("UNAVAILABLE", "DEADLINE_EXCEEDED")  # a call's codes that say the referee is away, not the match
RESULT_POLL_S = 30.0  # a GetResult(wait) is asked again this often, and the referee checked to answer at all
CREATE_TIMEOUT_S = 10.0  # a CreateMatch writes a record's first lines: a referee that takes longer is not answering
LIVENESS_TIMEOUT_S = 5.0


def referee_retry_s() -> float:
    """How long a referee that does not answer is retried: RUMMY_REFEREE_RETRY_S, else ``UNAVAILABLE_GIVE_UP_S``."""
    import os

    try:
        return max(0.0, float(os.environ.get("RUMMY_REFEREE_RETRY_S", UNAVAILABLE_GIVE_UP_S)))
    except ValueError:
        return UNAVAILABLE_GIVE_UP_S


class Backoff:
    """Exponential backoff with jitter for one streak of failures, bounded by the time since the streak began."""

    def __init__(self, give_up_s: float | None = None, base_s: float | None = None, cap_s: float | None = None) -> None:
        self.give_up_s = referee_retry_s() if give_up_s is None else give_up_s
        self.base_s = BACKOFF_BASE_S if base_s is None else base_s
        self.cap_s = BACKOFF_CAP_S if cap_s is None else cap_s
        self.since: float | None = None
        self.failures = 0

    def reset(self) -> None:
        self.since, self.failures = None, 0

    def next_delay(self, began: float | None = None) -> float | None:
        """The wait before the next try, or None: the streak has lasted ``give_up_s`` (give up). Half the doubled
        delay is fixed, half random, so workers that failed together do not come back together. ``began``: when
        the first failed call of a streak was made (a call that timed out counts from its start)."""
        now = time.monotonic()
        if self.since is None:
            self.since = now if began is None else min(began, now)
        left = self.since + self.give_up_s - now
        if left <= 0:
            return None
        delay = min(self.cap_s, self.base_s * float(2 ** min(self.failures, 30)))
        self.failures += 1
        return min(left, delay / 2 + random.uniform(0, delay / 2))

    @property
    def waited_s(self) -> float:
        return 0.0 if self.since is None else time.monotonic() - self.since


MatchFn = Callable[[MatchRequest], Awaitable[MatchOutcome]]
Backend = Callable[[], AbstractAsyncContextManager[MatchFn]]


class Progress(Protocol):
    def started(self, total: int, done: int) -> None: ...
    def finished(self, game: Game, outcome: MatchOutcome | None, error: str | None) -> None: ...


def static_backend(fn: MatchFn) -> Backend:
    """A backend for a match function that needs no setup (fakes in tests)."""

    @contextlib.asynccontextmanager
    async def cm() -> AsyncIterator[MatchFn]:
        yield fn

    return cm


# ------------------------------------------------------------------------------------------ planning


@dataclass
class Plan:
    games: list[Game]
    new_bots: list[str] = field(default_factory=list)  # ladder: the bots being rated
    pool: list[str] = field(default_factory=list)  # ladder: the rated pool, best first

    def bots_used(self) -> set[str]:
        return {b for g in self.games for b in g.seats}

    def seats_per_bot(self) -> dict[str, int]:
        """The most seats one bot holds in one match (partners need two processes: COM-6)."""
        out: dict[str, int] = {}
        for g in self.games:
            for b, n in Counter(g.seats).items():
                out[b] = max(out.get(b, 0), n)
        return out


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
                elif isinstance(exc, MatchError) and exc.code in _NOT_ANSWERING and exc.reason != RECORDS_UNWRITABLE:
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


# ------------------------------------------------------------------------------------------ gRPC backends


def _create_request(req: MatchRequest, tokens: Sequence[str]) -> Any:
    from rummy.referee.v1 import referee_pb2 as pb

    tc = req.time_control
    return pb.CreateMatchRequest(
        variant=req.variant,
        options=dict(req.options),
        seats=[pb.SeatSpec(name=bot, bot_token=tok) for bot, tok in zip(req.game.seats, tokens, strict=True)],
        seed=req.game.seed,
        time_control=pb.TimeControl(per_move_ms=tc.per_move_ms, bank_ms=tc.bank_ms, grace_ms=tc.grace_ms,
                                    connect_ms=tc.connect_ms),
        max_turns_per_hand=req.max_turns_per_hand or 0,
        max_hands=req.max_hands or 0,
        forfeit_after=req.forfeit_after or 0,
        idempotency_key=req.idempotency_key,
    )


def _outcome(result: Any) -> MatchOutcome:
    from rummy.referee.v1 import referee_pb2 as pb

    if result.status != pb.MATCH_STATUS_FINISHED:
        # a match the referee could not record ends ABORTED with a reason that starts with the code
        reason = RECORDS_UNWRITABLE if result.reason.startswith(f"{RECORDS_UNWRITABLE}:") else ""
        raise MatchError(f"match {result.match_id} ended {pb.MatchStatus.Name(result.status)}: "
                         f"{result.reason or 'no reason given'}", reason=reason)
    return MatchOutcome(
        ranking=tuple(tuple(p.seats) for p in result.ranking),
        totals=tuple(result.totals),
        reason=result.reason,
        forfeited=tuple(result.forfeited),
        match_id=result.match_id,
        record_path=result.record_path,
        faults=tuple(SeatFaults.from_pb(f) for f in result.faults),
    )


def _with_logs(out: MatchOutcome, logs: Sequence[str]) -> MatchOutcome:
    """The outcome with each seat's faults naming the log of the bot process that held the seat."""
    faults = tuple(dataclasses.replace(f, log_path=logs[f.seat]) if 0 <= f.seat < len(logs) else f for f in out.faults)
    return dataclasses.replace(out, faults=faults)


async def _rpc(what: str, call: Awaitable[Any]) -> Any:
    import grpc

    try:
        return await call
    except grpc.aio.AioRpcError as exc:
        raise MatchError(f"{what}: {exc.code().name}: {exc.details()}", code=exc.code().name,
                         reason=_reason_of(exc)) from exc


def _reason_of(exc: Any) -> str:
    """The referee's reason code of a failed call (trailing metadata ``rummy-reason``), or ""."""
    try:
        return next((str(v) for k, v in exc.trailing_metadata() or () if k == "rummy-reason"), "")
    except Exception:  # no metadata (the call never reached a referee)
        return ""


async def _await_result(stub: Any, match_id: str, poll_s: float | None = None,
                        give_up_s: float | None = None) -> Any:
    """The match's result: GetResult(wait), asked again every ``poll_s`` (``RESULT_POLL_S``) with a quick check
    that the referee answers at all, so a referee that is gone (or stopped) is noticed instead of waited on until
    the match's timeout. A referee that drops the call (UNAVAILABLE: restarting) is asked again with backoff: a
    restarted referee that resumed the match gives its result; one that did not answers NOT_FOUND (MatchError).
    :raises MatchError: ``code`` UNAVAILABLE once it has not answered for ``give_up_s``."""
    import grpc

    from rummy.referee.v1 import referee_pb2 as pb

    poll = poll_s or RESULT_POLL_S
    backoff = Backoff(give_up_s)
    while True:
        asked = time.monotonic()
        try:
            result = (await stub.GetResult(pb.GetResultRequest(match_id=match_id, wait=True), timeout=poll)).result
            return result
        except grpc.aio.AioRpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:  # the match runs on; does the referee still answer?
                asked = time.monotonic()
                try:
                    now = (await stub.GetResult(pb.GetResultRequest(match_id=match_id), timeout=LIVENESS_TIMEOUT_S)).result
                except grpc.aio.AioRpcError as again:
                    exc, code = again, again.code()
                else:
                    backoff.reset()
                    if now.status in (pb.MATCH_STATUS_FINISHED, pb.MATCH_STATUS_ABORTED):
                        return now
                    continue
            if code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise MatchError(f"GetResult: {code.name}: {exc.details()}", code=code.name, reason=_reason_of(exc)) from exc
            delay = backoff.next_delay(asked)
            if delay is None:
                raise MatchError(f"GetResult: the referee has not answered for {backoff.waited_s:.0f} s "
                                 f"({code.name}: {exc.details()})", code="UNAVAILABLE", reason=REFEREE_GONE) from exc
            await asyncio.sleep(delay)


async def _abort_quietly(stub: Any, match_id: str) -> None:
    """Stop a match this run will not wait for (Ctrl-C), so the referee does not play it on unseen."""
    from rummy.referee.v1 import referee_pb2 as pb

    try:
        await asyncio.wait_for(stub.AbortMatch(pb.AbortMatchRequest(match_id=match_id, reason="tournament stopped")), 5)
    except Exception:  # the referee may be gone already; the game is replayed on resume either way
        pass


class GrpcMatches:
    """Matches on a referee, seated with the persistent bot processes' bot tokens."""

    def __init__(self, stub: Any, pool: Any) -> None:
        self.stub = stub
        self.pool = pool

    async def __call__(self, req: MatchRequest) -> MatchOutcome:

        with self.pool.lease_seats(req.game.seats) as procs:
            created = await _rpc("CreateMatch", self.stub.CreateMatch(_create_request(req, [p.token for p in procs]),
                                                                   timeout=CREATE_TIMEOUT_S))
            try:
                result = await _await_result(self.stub, created.match_id)
            except asyncio.CancelledError:
                await _abort_quietly(self.stub, created.match_id)
                raise
        return _with_logs(_outcome(result), [str(p.log.path) for p in procs])

    def bot_runs(self) -> list[BotRun]:
        """Each bot process's starts and unasked-for exits so far (final once the pool has stopped)."""
        out = []
        for p in self.pool.all():
            deaths = [c for c in p.exits if c is not None]
            out.append(BotRun(p.spec.name, p.index, p.starts, len(deaths), len(p.exits) - len(deaths),
                              deaths[-1] if deaths else None, str(p.log.path)))
        return out


class PerMatchProcesses:
    """Matches on a referee with a fresh bot process per seat (``--match ID --token T``): for bots that play one
    match per process, and to measure what persistent processes save."""

    def __init__(self, stub: Any, oneshot: Any) -> None:
        self.stub = stub
        self.oneshot = oneshot

    async def __call__(self, req: MatchRequest) -> MatchOutcome:

        created = await _rpc("CreateMatch", self.stub.CreateMatch(_create_request(req, [""] * len(req.game.seats)),
                                                               timeout=CREATE_TIMEOUT_S))
        procs = [await self.oneshot.play(bot, created.match_id, tok) for bot, tok in zip(req.game.seats, created.seat_tokens, strict=True)]
        try:
            result = await _await_result(self.stub, created.match_id)
        finally:
            await self.oneshot.finish(procs)
        return _with_logs(_outcome(result), [str(self.oneshot.logs[bot].path) for bot in req.game.seats])


def admin_token_from_env() -> str | None:
    """For a referee run with ``--admin-token-file``: its token from RUMMY_ADMIN_TOKEN (or the file named by
    RUMMY_ADMIN_TOKEN_FILE)."""
    import os
    from pathlib import Path

    token = os.environ.get("RUMMY_ADMIN_TOKEN", "").strip()
    if not token and os.environ.get("RUMMY_ADMIN_TOKEN_FILE"):
        token = Path(os.environ["RUMMY_ADMIN_TOKEN_FILE"]).read_text(encoding="utf-8").strip()
    return token or None


def _admin_interceptors(token: str | None) -> list[Any]:
    """``authorization: Bearer TOKEN`` on every call the runner makes: its calls are the admin's, which never
    compete with the bots' budgets on the referee."""
    import grpc

    if not token:
        return []

    class Bearer(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]  # grpc is untyped
        async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
            metadata = grpc.aio.Metadata(*(details.metadata or ()), ("authorization", f"Bearer {token}"))
            return await continuation(details._replace(metadata=metadata), request)

    return [Bearer()]


def grpc_backend(config: TournamentConfig, address: str, plan_: Plan, log: Any = None, bot_logs: Path | None = None,
                 unix_socket: Path | None = None, admin_token: str | None = None) -> Backend:
    """The real thing: bot processes (persistent, or per match) and a gRPC channel to the referee at
    ``address``. Bot logs go to ``bot_logs`` (default: the output's ``bots/``). Sandboxed bots reach the referee
    through ``unix_socket`` (or ``address`` itself if it is ``unix:PATH``), bound into their sandbox; without
    one, over TCP, so their sandbox keeps the network. ``admin_token`` (else ``admin_token_from_env``): the
    runner's calls carry it, and the bots' tokens are minted with it (``referee.service.credentials``), so the referee
    seats them and refuses tokens anyone else makes up."""
    admin = admin_token or admin_token_from_env()

    @contextlib.asynccontextmanager
    async def cm() -> AsyncIterator[MatchFn]:
        import grpc

        from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
        from tournaments.botproc import BotPool, OneShot, isolations
        from tournaments.sandbox import unix_socket_of

        log_dir = bot_logs or config.output / "bots"
        socket = unix_socket or unix_socket_of(address)
        # reconnect soon after a referee restart (gRPC's own default backoff grows to 120 s between attempts)
        channel = grpc.aio.insecure_channel(address, interceptors=_admin_interceptors(admin), options=[
            ("grpc.initial_reconnect_backoff_ms", 250), ("grpc.min_reconnect_backoff_ms", 250),
            ("grpc.max_reconnect_backoff_ms", int(BACKOFF_CAP_S * 1000))])
        try:
            try:
                await asyncio.wait_for(channel.channel_ready(), 15)
            except TimeoutError as exc:
                raise MatchError(f"no referee answering at {address}") from exc
            stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]  # generated stub
            used = plan_.bots_used()
            specs = [b for b in config.bots if b.name in used]
            isolation, cgroups = isolations(config, specs, socket, hidden=[log_dir])
            if log is not None and isolation:
                first = next(iter(isolation.values())).sandbox
                assert first is not None
                log.info("sandbox", bots=sorted(isolation), network=first.share_net,
                         limits=cgroups.kinds if cgroups is not None else [], referee=str(socket or address))
            try:
                if config.process_per_match:
                    oneshot = OneShot(specs, address, log_dir, isolation=isolation)
                    try:
                        yield PerMatchProcesses(stub, oneshot)
                    finally:
                        oneshot.flush()
                else:
                    need = plan_.seats_per_bot()
                    pool = BotPool(specs, address, log_dir, log, min_processes=need, isolation=isolation,
                                   admin_token=admin)
                    pool.start()
                    try:
                        yield GrpcMatches(stub, pool)
                    finally:
                        await pool.stop()
            finally:
                if cgroups is not None:
                    cgroups.remove_all()
        finally:
            await channel.close()

    return cm


# ------------------------------------------------------------------------------------------ the whole run


def make_logger(f: TextIO) -> Any:
    """A structlog logger writing JSON lines to ``f`` (the output folder's ``tournament.log``, appended across
    resumed runs). Not the global structlog configuration: that belongs to the referee's own logs."""
    return structlog.wrap_logger(
        structlog.WriteLogger(f),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.BoundLogger,
        context_class=dict,
    )


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
    from referee.service.metrics import Metrics, MetricsServer

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
