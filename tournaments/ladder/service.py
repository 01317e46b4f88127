"""``tournament ladder serve CONFIG``: one process, one event loop, holding the referee, the house bots, the
matchmaker and the ratings; the web page runs in a process of its own (:mod:`.webproc`), started and ended with it.

- **The referee** is the project's own (``referee.service.server.create_server``) on ``listen`` (TLS with ``tls_cert``),
  plus a private Unix socket for the house bots' sandboxes and for the service's own admin calls. Its
  ``bot_token_known`` hook is given the registry: a Join's bot token is a ladder key of a bot not revoked, or the
  referee's own answer (the house bots' tokens, minted with the admin token that exists only in this process).
  Anything else is refused ``BOT_TOKEN_UNKNOWN``. A seat is named with the key its bot joined with, so a key
  seats only its own bot.
- **House bots** are started (sandboxed where the host can: ``tournaments.sandbox``) and restarted by
  ``tournaments.botproc.BotPool``; a bot registered while the service runs is started within a second.
- **Scheduling** never waits for a person: a bot is scheduled only while its stream is open; a deal is one game
  per seat rotation with the same cards (as a tournament's duplicate deals), played one after another; a deal whose
  bot went away stops there (what it played counts). Caps: ``per_bot_games`` at once and ``per_bot_per_hour``.
- **Storage** (:mod:`.store`): each finished game is written once, in one transaction; a game in flight when the
  service is killed is not written, and the restarted referee ends its record as aborted (``unfinished="abort"``),
  so nothing is lost that finished and nothing counts twice.
- **Ratings** are refit (warm-started) at most every ``refit_s`` seconds when games arrived, and each refit is kept
  as a rating run (a history per bot).
- **New versions** (:mod:`.versions`): a bot registered as a new version of a name gets an SPRT against the previous
  one, played on deals of its own scheduled beside the normal ones (at most ``sprt.share`` of the deals under way),
  its state stored after every unit and rebuilt from the stored games at start.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import random
import secrets
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
from rich.console import Console

from tournaments.ladder.config import LadderConfig
from tournaments.ladder.health import failed, log_tail, pause_length, pause_reason
from tournaments.ladder.keys import KEY_PREFIX, Registry
from tournaments.ladder.matchmaker import Candidate, Table, pick_sprt_table, pick_table
from tournaments.ladder.rating import Rater, Rating
from tournaments.ladder.store import BotRow, FaultSummary, GameRow, tally_game
from tournaments.ladder.stores import open_store
from tournaments.ladder.versions import VersionTest, previous_version, status_of

__all__ = ["LadderService", "serve"]

TICK_S = 0.2
REFRESH_S = 1.0  # the registry and the bots are read from the store this often (the CLI writes there)
KEY_REREAD_S = 0.2  # and the keys at most this often when an unknown ladder key joins
WEB_RESTART_S = 5.0  # a web page process that exited is started again at most this often


class LadderService:
    def __init__(self, cfg: LadderConfig, log: Any = None, rng: random.Random | None = None) -> None:
        self.cfg = cfg
        self.log = log or structlog.get_logger(component="ladder")
        self.rng = rng or random.Random()
        self.store = open_store(cfg.storage)
        self.registry = Registry(self.store.keys())
        self.bots: dict[int, BotRow] = {}
        self.rater = Rater()
        self.ratings: dict[int, Rating] = {}
        self.inflight: Counter[int] = Counter()  # deals under way per bot
        self.live: dict[str, tuple[int, ...]] = {}  # match id -> bot per seat, while it runs
        self.deals: set[asyncio.Task[None]] = set()
        self.tests: dict[int, VersionTest] = {}  # candidate id -> its SPRT against the previous version
        self._considered: set[int] = set()  # bots looked at for a test (a bot's previous version never changes)
        self.sprt_inflight = 0  # SPRT deals under way
        self.pools: dict[int, Any] = {}  # house bot id -> its BotPool
        self.cgroups: list[Any] = []
        self.referee: Any = None
        self.stub: Any = None
        self.address = ""  # the referee's address for remote bots (HOST:PORT)
        self.web_port = 0
        self.played = 0  # games stored by this run of the service
        self.stored = 0  # games in the store (counted at start, then as they are written)
        self.fault_summaries: dict[int, FaultSummary] = {}  # per bot, likewise: the leaderboard reads no game
        self.started = time.time()
        self._hour: tuple[float, Counter[int]] = (0.0, Counter())
        self._socket: Path | None = None
        self._admin = secrets.token_urlsafe(32)
        self.stop = asyncio.Event()
        self._keys_read = 0.0  # when the keys were last read for an unknown key (``_key_added_since``)
        self.web: Any = None  # the web page's process (webproc.LadderWebProcess)
        self._web_settings: dict[str, Any] = {}
        self._web_restart: asyncio.Task[None] | None = None
        self._web_tried = -math.inf
        self.client: Any = None  # the Dask client with ``cluster``: house bots' games go to its workers
        self.on_cluster = 0  # games this run played on the cluster

    # ------------------------------------------------------------ who is here

    def _key_added_since(self, token: str) -> bool:
        """A ladder key the registry does not know may have been added since it was last read (``bots add`` while
        the service runs, its bot started at once): read the keys again, at most every ``KEY_REREAD_S`` whatever
        made-up keys hostile clients send, and look again."""
        now = time.monotonic()
        if not token.startswith(KEY_PREFIX) or now - self._keys_read < KEY_REREAD_S:
            return False
        self._keys_read = now
        self.registry.replace(self.store.keys())
        return self.registry.check(token)

    def refresh(self) -> None:
        """The registry, the bots and the house bots' processes as the store has them now."""
        self.registry.replace(self.store.keys())
        self.bots = {b.id: b for b in self.store.bots()}
        for bot_id in [i for i in self.pools if i not in self.bots]:  # revoked: stop its processes
            pool = self.pools.pop(bot_id)
            asyncio.get_running_loop().create_task(pool.stop())
        for b in self.bots.values():
            if b.kind == "house" and b.id not in self.pools:
                self._start_house(b)
        self._start_tests()

    def _start_tests(self) -> None:
        """An SPRT for every bot that is a new version of a name (started once, rebuilt from its games at start)."""
        new = [b for b in self.bots.values() if b.id not in self._considered]
        if not new:
            return
        self._considered.update(b.id for b in new)
        everyone = {b.id: b for b in self.store.bots(include_revoked=True)}
        stored = {t.candidate_id: t for t in self.store.sprt_tests()}
        s = self.cfg.sprt
        for b in new:
            row = stored.get(b.id)
            if row is None:
                base = previous_version(everyone.values(), b)
                if base is None:
                    continue
                row = self.store.start_sprt(b.id, base.id, s.elo0, s.elo1, s.alpha, s.beta, self.cfg.table_size,
                                            s.max_deals)
                self.log.info("sprt_started", candidate=b.label, baseline=base.label, elo0=s.elo0, elo1=s.elo1)
            base_label = everyone[row.baseline_id].label if row.baseline_id in everyone else str(row.baseline_id)
            test = VersionTest.rebuilt(row, b.label, base_label, self.store.sprt_games(b.id))
            self.tests[b.id] = test
            state = test.tracker.state
            if (status_of(state), state.counts) != (row.status, row.counts):  # stopped between a game and its unit
                self.store.update_sprt(b.id, status_of(state), state.llr, state.counts)

    def _sprt_game(self, candidate: int, game: GameRow) -> None:
        test = self.tests.get(candidate)
        if test is None or not test.add(game):
            return
        state = test.tracker.state
        self.store.update_sprt(candidate, status_of(state), state.llr, state.counts)
        if test.decided:
            self.log.info("sprt_decided", summary=test.tracker.summary())

    def _start_house(self, b: BotRow) -> None:
        from tournaments.botproc import BotPool, isolations
        from tournaments.sandbox import modes

        spec = self._spec(b)
        game = dataclasses.replace(self.cfg.game, bots=(spec,))
        try:
            _, unsandboxed = modes(game)
            iso, cg = isolations(game, [spec], self._socket, hidden=[self.cfg.data])
        except Exception as exc:  # bwrap asked for and missing: the bot is paused with the reason, the ladder goes on
            self.store.pause(b.id, time.time() + 10 * 365 * 86400, f"cannot start: {exc}")
            self.log.error("house_bot_not_started", bot=b.label, error=str(exc))
            return
        if cg is not None:
            self.cgroups.append(cg)
        if unsandboxed:
            self.log.warning("house_bot_unsandboxed", bot=b.label, why=unsandboxed)
        pool = BotPool([spec], f"unix:{self._socket}", self.cfg.data / "bots", self.log, isolation=iso,
                       admin_token=self._admin)
        pool.start()
        self.pools[b.id] = pool
        self.log.info("house_bot_started", bot=b.label, sandboxed=spec.name in iso)

    def tokens(self, b: BotRow) -> list[str]:
        if b.kind == "house":
            pool = self.pools.get(b.id)
            return [p.token for p in pool.all() if p.alive] if pool is not None else []
        key = self.registry.key_of(b.id)
        return [key] if key else []

    def online(self, b: BotRow) -> bool:
        """The bot's stream to the referee is open now."""
        streams = self.referee.bots if self.referee is not None else {}
        return any((c := streams.get(t)) is not None and not c.closed for t in self.tokens(b))

    def presence_json(self) -> dict[str, Any]:
        """What the web page's process asks of the service (``webproc``): the bots whose stream is open, and the
        games being played with each seat's bot."""
        return {"online": [b.id for b in self.bots.values() if self.online(b)],
                "live": [[m, list(seats)] for m, seats in self.live.items()]}

    def games_last_hour(self) -> Counter[int]:
        now = time.time()
        if now - self._hour[0] > 5.0:
            self._hour = (now, self.store.games_since(now - 3600))
        return self._hour[1]

    # ------------------------------------------------------------ scheduling

    def field(self) -> list[Candidate]:
        """The bots that may be seated now."""
        hour = self.games_last_hour()
        now = time.time()
        out = []
        for b in self.bots.values():
            if b.paused(now) or not self.online(b) or self.inflight[b.id] >= self.cfg.per_bot_games:
                continue
            if hour[b.id] + self.inflight[b.id] * self.cfg.table_size >= self.cfg.per_bot_per_hour:
                continue
            r = self.ratings.get(b.id)
            out.append(Candidate(b.id, b.label, r.elo if r else 0.0, r.err if r else math.inf, r.games if r else 0))
        return out

    def schedule(self) -> None:
        cfg = self.cfg
        while len(self.deals) < cfg.concurrency and not self.stop.is_set():
            field = self.field()
            table = None
            running = [t.pair for t in self.tests.values() if not t.decided]
            sprt_slots = max(1, int(cfg.concurrency * cfg.sprt.share))
            if running and self.sprt_inflight < sprt_slots and (cfg.concurrency > 1 or self.rng.random() < cfg.sprt.share):
                table = pick_sprt_table(field, running, cfg.table_size, self.rng)
            if table is None:
                table = pick_table(field, cfg.table_size, self.rng, cfg.exploration)
            if table is None:
                return
            for b in table.bots:
                self.inflight[b] += 1
            if table.sprt is not None:
                self.sprt_inflight += 1
            task = asyncio.get_running_loop().create_task(self._deal(table))
            self.deals.add(task)
            task.add_done_callback(self.deals.discard)

    async def _deal(self, table: Table) -> None:
        from tournaments.matches import MatchError, MatchRequest
        from tournaments.schedule import Game

        key = f"{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{secrets.token_hex(4)}"
        try:
            if table.sprt is not None:
                self.store.add_sprt_deal(key, table.sprt)
            self.store.add_deal(key, table.bots, table.why)
            self.log.info("deal_scheduled", deal=key, bots=[self.bots[b].label for b in table.bots], why=table.why)
            g = self.cfg.game
            k = len(table.bots)
            for r in range(k):  # a duplicate deal: the same cards once per seat rotation
                seating = tuple(table.bots[(s + r) % k] for s in range(k))
                if self.stop.is_set() or not all(b in self.bots and self.online(self.bots[b]) for b in seating):
                    break
                labels = tuple(self.bots[b].label for b in seating)
                game = Game(f"{key}|r{r}", labels, 0, f"ladder/{key}", r, labels)
                req = MatchRequest(game, g.variant, dict(g.options), g.time_control, g.max_turns_per_hand, g.max_hands,
                                   g.forfeit_after, g.match_timeout_s)
                started = time.monotonic()
                if self.client is not None and all(self.bots[b].kind == "house" for b in seating):
                    out = await self._on_cluster(seating, req)
                else:
                    out = await self._here(seating, req)
                stored = self.store.record_game(game.key, key, r, seating, out.ranking, out.totals, out.reason,
                                                out.forfeited, out.match_id, out.record_path,
                                                time.monotonic() - started, out.faults)
                if stored:
                    self.played += 1
                    self.stored += 1
                    tally_game(self.fault_summaries, seating, out.forfeited, out.faults)
                    self.log.info("game_finished", game=game.key, match_id=out.match_id, seats=list(labels),
                                  ranking=[list(x) for x in out.ranking], forfeited=list(out.forfeited))
                    self._after_game(set(seating))
                    if table.sprt is not None:
                        self._sprt_game(table.sprt, GameRow(0, game.key, key, r, seating, out.ranking, out.forfeited,
                                                            out.totals, out.reason, out.match_id, time.time()))
        except (MatchError, TimeoutError) as exc:
            self.log.warning("deal_stopped", deal=key, error=str(exc) or type(exc).__name__)
        except asyncio.CancelledError:
            raise
        except Exception:
            self.log.exception("deal_failed", deal=key)
        finally:
            for b in table.bots:
                self.inflight[b] -= 1
            if table.sprt is not None:
                self.sprt_inflight -= 1

    async def _join_cluster(self, address: str) -> None:
        """Connect to the Dask scheduler and put :class:`.cluster.LadderOnWorker` on its workers.
        :raises ValueError: no scheduler answers there (told as an error, not a traceback)."""
        from distributed import Client

        from tournaments.ladder.cluster import PLUGIN, LadderOnWorker

        try:
            self.client = await Client(address, asynchronous=True, timeout=10)  # type: ignore[no-untyped-call]
        except OSError as exc:
            raise ValueError(f"--cluster: no Dask scheduler answering at {address}: {exc}") from exc
        await self.client.register_plugin(LadderOnWorker(self.cfg.game, hidden=[self.cfg.data]), name=PLUGIN)
        workers = self.client.scheduler_info()["workers"]
        self.log.info("cluster", address=address, workers=len(workers),
                      threads=sum(int(w.get("nthreads", 1)) for w in workers.values()))

    async def _here(self, seating: tuple[int, ...], req: Any) -> Any:
        """One game on the service's own referee (every game with a remote bot, and all of them without a
        cluster): house bots' seats from their pools, remote bots' by their keys."""
        from contextlib import ExitStack

        from tournaments.matches import CREATE_TIMEOUT_S, abort_quietly, await_result, create_request, outcome_of, rpc

        with ExitStack() as leases:
            tokens = []
            for b in seating:
                row = self.bots[b]
                if row.kind == "house":
                    (proc,) = leases.enter_context(self.pools[b].lease_seats([self.pools[b].all()[0].spec.name]))
                    tokens.append(proc.token)
                else:
                    tokens.append(self.registry.key_of(b) or "")
            created = await rpc("CreateMatch", self.stub.CreateMatch(create_request(req, tokens),
                                                                      timeout=CREATE_TIMEOUT_S))
            self.live[created.match_id] = seating
            try:
                result = await asyncio.wait_for(await_result(self.stub, created.match_id), req.timeout_s)
            except asyncio.CancelledError:
                await abort_quietly(self.stub, created.match_id)
                raise
            finally:
                self.live.pop(created.match_id, None)
        return outcome_of(result)

    async def _on_cluster(self, seating: tuple[int, ...], req: Any) -> Any:
        """One house bots' game on a Dask worker (:mod:`.cluster`); its record is kept in the service's folder."""
        from tournaments.ladder.cluster import play_on_cluster, store_record
        from tournaments.matches import MatchError

        try:
            out, text, worker = await play_on_cluster(self.client, [self._spec(self.bots[b]) for b in seating], req)
        except (asyncio.CancelledError, MatchError):
            raise
        except Exception as exc:  # a lost worker, a task that failed there: the deal stops, nothing is stored
            raise MatchError(f"on the cluster: {type(exc).__name__}: {exc}") from exc
        self.on_cluster += 1
        self.log.info("played_on_cluster", game=req.game.key, match_id=out.match_id, worker=worker)
        return await asyncio.to_thread(store_record, self.cfg.data / "records", out, text)

    @staticmethod
    def _spec(b: BotRow) -> Any:
        from tournaments.config import BotSpec

        return BotSpec(f"{b.name}-{b.version}", b.command, Path(b.cwd) if b.cwd else None, sandbox=b.sandbox or None)

    def _after_game(self, bots: set[int]) -> None:
        """Pause a bot whose last games all failed; a clean game ends a series of pauses."""
        for b in bots:
            row = self.bots.get(b)
            if row is None:
                continue
            recent = self.store.recent_games(b, self.cfg.pause_after)
            if recent and not failed(recent[0], b):
                if row.pauses:
                    self.store.unpause(b)
                continue
            tail = ""
            if row.kind == "house" and b in self.pools:
                tail = log_tail(self.pools[b].all()[0].log.path)
            faults = self._faults_of(recent, b)
            why = pause_reason(recent, b, self.cfg.pause_after, faults, tail)
            if why is not None and not row.paused():
                until = time.time() + pause_length(row.pauses, self.cfg.pause_s)
                self.store.pause(b, until, why)
                self.log.warning("bot_paused", bot=row.label, until=until, reason=why)
        self.bots = {b.id: b for b in self.store.bots()}

    def _faults_of(self, games: list[Any], bot: int) -> list[tuple[Counter[str], int, int]]:
        rows = self.store.db.execute(
            f"SELECT rejected, timed_out, disconnects FROM seat_faults WHERE bot_id = ? AND game_id IN "
            f"({','.join('?' * len(games))})", (bot, *(g.id for g in games))).fetchall() if games else []
        import json

        return [(Counter(json.loads(r)), int(t), int(d)) for r, t, d in rows]

    # ------------------------------------------------------------ ratings

    async def refit(self) -> bool:
        """Take in the games stored since the last refit and fit again; keep the run. False: nothing new."""
        new = self.store.games(self.rater.last_game)
        if not new:
            return False
        for g in new:
            self.rater.add(g.seats, g.ranking, g.forfeited, g.id)
        self.ratings = await asyncio.to_thread(self.rater.fit)
        self.store.add_rating_run(self.rater.count, self.rater.last_game,
                                  {b: (r.elo, r.err if math.isfinite(r.err) else -1.0, r.mu, r.sigma, r.games)
                                   for b, r in self.ratings.items()})
        return True

    # ------------------------------------------------------------ the whole service

    def _watch_web(self) -> None:
        """The web page's process gone (a crash, an out-of-memory kill): start another on the same port, at most every
        ``WEB_RESTART_S``; the ladder does not wait for it."""
        if self.web is None or self.web.proc.poll() is None or self._web_restart is not None:
            return
        if time.monotonic() - self._web_tried < WEB_RESTART_S:
            return
        self._web_tried = time.monotonic()
        self.log.error("ladder_web_exited", pid=self.web.pid, code=self.web.proc.returncode)
        self._web_restart = asyncio.get_running_loop().create_task(self._restart_web())

    async def _restart_web(self) -> None:
        from tournaments.ladder.webproc import LadderWebProcess, WebStartFailed

        old = self.web
        try:
            await asyncio.to_thread(old.close)
            self.web = await asyncio.to_thread(LadderWebProcess, {**self._web_settings, "port": self.web_port})
            self.log.info("ladder_web_started", pid=self.web.pid, port=self.web_port, again=True)
            self._write_addresses()
        except WebStartFailed as exc:  # tried again at the next watch (the old one stays, exited)
            self.log.error("ladder_web_not_restarted", error=str(exc))
        finally:
            self._web_restart = None

    def _write_addresses(self) -> None:
        """DATA/service.json: the ports the service got (a config may say port 0), for ``ladder status`` and tests."""
        import json
        import os

        host = self.cfg.web.rpartition(":")[0] or "127.0.0.1"
        host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        data = {"referee": self.address, "web": f"http://{host}:{self.web_port}" if self.web_port else "",
                "pid": os.getpid(), "web_pid": self.web.pid if self.web is not None else 0}
        tmp = self.cfg.data / (ADDRESSES_FILE + ".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(self.cfg.data / ADDRESSES_FILE)

    async def run(self, ready: Callable[[LadderService], None] | None = None) -> None:
        import grpc

        from referee.service.metrics import Metrics
        from referee.service.server import create_server, server_credentials
        from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
        from tournaments.ladder.webproc import LadderWebProcess, start_internal
        from tournaments.matches import admin_interceptors
        from tournaments.sandbox import private_socket_dir

        cfg = self.cfg
        (cfg.data / "records").mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as cleanup:
            self._socket = cleanup.enter_context(private_socket_dir()) / "referee.sock"
            creds = server_credentials(cfg.tls_cert, cfg.tls_key) if cfg.tls_cert and cfg.tls_key else None
            metrics = Metrics()  # the referee's counters: /metrics on the web port, asked of this process
            server, port, self.referee = await create_server(
                cfg.listen, str(cfg.data / "records"), admin_token=self._admin, credentials=creds, unfinished="abort",
                unix_path=str(self._socket), metrics=metrics)
            self.address = f"{cfg.listen.rsplit(':', 1)[0]}:{port}"
            known = self.referee.bot_token_known
            setattr(self.referee, "bot_token_known",  # noqa: B010
                    lambda token: self.registry.check(token) or known(token) or self._key_added_since(token))
            channel = grpc.aio.insecure_channel(f"unix:{self._socket}", interceptors=admin_interceptors(self._admin))
            self.stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
            internal = None
            web: asyncio.Future[Any] | None = None
            try:
                if cfg.cluster:
                    await self._join_cluster(cfg.cluster)
                if cfg.web:
                    inside = cleanup.enter_context(private_socket_dir()) / "service.sock"  # the page's way in
                    internal = await start_internal(inside, self.presence_json, metrics.render)
                    host, _, wport = cfg.web.rpartition(":")
                    self._web_settings = {
                        "database": str(cfg.storage), "records": str(cfg.data / "records"),
                        "host": host or "127.0.0.1", "port": int(wport), "limits": self.referee.limits,
                        "variant": cfg.game.variant, "internal": str(inside), "log": str(cfg.data / "ladder.log")}
                    # started now, awaited below: its interpreter's start overlaps the service's own
                    web = asyncio.ensure_future(asyncio.to_thread(LadderWebProcess, self._web_settings))
                self.rater = Rater.resume(self.store)  # the last rating run's totals, summed by the database
                self.stored, self.fault_summaries = self.store.game_count(), self.store.faults()
                await self.refit()
                if web is not None:
                    self.web = await web
                    self.web_port = self.web.port
                    self.log.info("ladder_web_started", pid=self.web.pid, port=self.web_port)
                self.refresh()
                self.log.info("ladder_started", referee=self.address, web=self.web_port, bots=len(self.bots),
                              games=self.stored)
                self._write_addresses()
                if ready is not None:
                    ready(self)
                last_refresh = last_refit = 0.0
                while not self.stop.is_set():
                    now = time.monotonic()
                    if now - last_refresh >= REFRESH_S:
                        self.refresh()
                        self._watch_web()
                        last_refresh = now
                    self.schedule()
                    if now - last_refit >= cfg.refit_s:
                        await self.refit()
                        last_refit = now
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.stop.wait(), TICK_S)
            finally:
                for t in list(self.deals):
                    t.cancel()
                await asyncio.gather(*self.deals, return_exceptions=True)
                with contextlib.suppress(Exception):
                    await self.refit()
                await asyncio.gather(*(p.stop() for p in self.pools.values()), return_exceptions=True)
                for cg in self.cgroups:
                    cg.remove_all()
                if self._web_restart is not None:
                    with contextlib.suppress(Exception):
                        await self._web_restart
                if web is not None and self.web is None:  # stopped before the page reported its port
                    with contextlib.suppress(Exception):
                        self.web = await web
                if self.web is not None:
                    await asyncio.to_thread(self.web.close)
                if internal is not None:
                    await internal.cleanup()
                if self.client is not None:
                    from tournaments.ladder.cluster import PLUGIN

                    with contextlib.suppress(Exception):
                        await self.client.unregister_worker_plugin(PLUGIN)
                    await self.client.close()
                await channel.close()
                await server.stop(1.0)
                for task in list(self.referee.tasks):
                    task.cancel()
                await asyncio.gather(*self.referee.tasks, return_exceptions=True)
                self.store.close()


ADDRESSES_FILE = "service.json"


def read_addresses(cfg: LadderConfig) -> dict[str, str]:
    """What the running (or last) service wrote of its addresses: ``referee`` (HOST:PORT) and ``web`` (a URL)."""
    import json

    try:
        data = json.loads((cfg.data / ADDRESSES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def serve(cfg: LadderConfig, err: Console) -> int:
    """Run the ladder until SIGINT or SIGTERM. The referee's and the service's logs: DATA/ladder.log (JSON lines)."""
    from referee.service.logs import configure_logging

    cfg.data.mkdir(parents=True, exist_ok=True)
    with (cfg.data / "ladder.log").open("a", encoding="utf-8", buffering=1) as logf:
        configure_logging("info", json=True, stream=logf)

        async def main() -> None:
            service = LadderService(cfg)
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, service.stop.set)

            def ready(s: LadderService) -> None:
                web = f"http://{cfg.web.rpartition(':')[0] or '127.0.0.1'}:{s.web_port}/" if s.web_port else "none"
                err.print(f"ladder serving: referee {s.address}{' (TLS)' if cfg.tls_cert else ''}, web {web}, "
                          f"{len(s.bots)} bots, {s.stored} games stored; Ctrl-C stops", highlight=False)

            await service.run(ready)

        from rummy.wire import loops
        from tournaments.ladder.webproc import WebStartFailed

        try:
            loops.run(main())
        except WebStartFailed as exc:  # its own line (a port in use, ...) is above this one
            err.print(f"ladder serve: {exc}", highlight=False)
            return 1
    err.print("ladder stopped: finished games are stored; games in flight were dropped", highlight=False)
    return 0
