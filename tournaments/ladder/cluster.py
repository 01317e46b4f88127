"""``tournament ladder serve CONFIG --cluster SCHEDULER``: house bots' games on Dask workers.

A ladder's remote bots hold one stream each to the service's own referee (the address their participants were
given): their games can only be played there. A game whose every seat is a house bot needs nothing of the
service but its result, so it can go anywhere: with ``--cluster`` it is one Dask task, played on a worker by the
:class:`LadderOnWorker` plugin, which runs an embedded referee (on a Unix socket of its own, for the sandbox) and
each house bot's processes, started the first time the worker plays that bot and kept for its next games. The
service keeps everything else: matchmaking, the store, ratings, the web page, and the games with a remote bot.

The worker sends back the outcome and the match's record (a few kilobytes of JSON lines), which the service
writes into its own records folder (written aside, then renamed) before it stores the game: a replay link opens
whichever machine played the game, and no worker writes into the folder that the service's restart scans for
unfinished matches. A game whose worker is lost, or in flight when the service is killed, is not stored (the
deal stops there, as a deal whose bot went away does), so nothing is counted twice.

House bots run on the workers as they do on the service's host (same command, same folder, same sandbox), so
the bot's folder must exist at the same path on every worker: the same checkout and data paths on every machine,
or one machine's ``LocalCluster``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import shutil
import tempfile
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin, get_worker

from tournaments.config import BotSpec, TournamentConfig
from tournaments.matches import MatchOutcome, MatchRequest

__all__ = ["PLUGIN", "LadderOnWorker", "play_on_cluster", "store_record"]

PLUGIN = "rummy-ladder"


class LadderOnWorker(WorkerPlugin):
    """A Dask worker plugin: an embedded referee and the house bots this worker has played, for as long as it is
    registered. Everything asynchronous lives on one event loop in a thread of its own; the worker's task threads
    hand it games with :meth:`play` and wait for their outcomes."""

    name = PLUGIN

    def __init__(self, game: TournamentConfig, hidden: Sequence[Path] = ()) -> None:
        super().__init__()
        self.game = game  # the ladder's game: variant, time control, sandbox mode and limits
        self.hidden = tuple(hidden)  # folders a sandboxed bot must not see (the ladder's data)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._referee: Any = None
        self._stub: Any = None
        self._channel: Any = None
        self._pools: dict[tuple[str, tuple[str, ...], str, str], Any] = {}  # by what starts the bot
        self._cgroups: list[Any] = []
        self._folder: Path | None = None
        self._admin = ""

    def setup(self, worker: Any) -> None:
        from referee.service.server import EmbeddedReferee

        name = getattr(worker, "name", None)  # (a LocalCluster names its workers 0, 1, ...: 0 is a name)
        self.worker_name = str(name if name not in (None, "") else getattr(worker, "address", ""))
        self._folder = Path(tempfile.mkdtemp(prefix="rummy-ladder-worker-"))  # records, logs, the socket
        self._folder.chmod(0o700)
        self._admin = secrets.token_urlsafe(32)
        socket = self._folder / "referee.sock"
        self._referee = EmbeddedReferee(records_dir=self._folder / "records", admin_token=self._admin,
                                        unix_path=socket)
        self._referee.start()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rummy-ladder-worker", daemon=True)
        self._thread.start()
        self._call(self._connect()).result(30)

    async def _connect(self) -> None:
        import grpc

        from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
        from tournaments.matches import admin_interceptors

        assert self._folder is not None
        self._channel = grpc.aio.insecure_channel(f"unix:{self._folder / 'referee.sock'}",
                                                  interceptors=admin_interceptors(self._admin))
        self._stub = pb_grpc.RefereeServiceStub(self._channel)  # type: ignore[no-untyped-call]

    def _call(self, coro: Any) -> Future[Any]:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def play(self, seats: Sequence[BotSpec], req: MatchRequest) -> tuple[MatchOutcome, str]:
        """Play one game, seat i held by house bot ``seats[i]``; its outcome and its record's text."""
        result: tuple[MatchOutcome, str] = self._call(self._play(seats, req)).result(req.timeout_s + 60)
        return result

    worker_name = ""  # set up: this worker's name, said with each game (the service logs where a game ran)

    def _pool(self, spec: BotSpec) -> Any:
        """The house bot's processes on this worker, started the first time it plays here (sandboxed as the
        service would: ``tournaments.botproc.isolations``)."""
        from tournaments.botproc import BotPool, isolations

        key = (spec.name, spec.command, str(spec.cwd or ""), spec.sandbox or "")
        pool = self._pools.get(key)
        if pool is None:
            assert self._folder is not None
            game = dataclasses.replace(self.game, bots=(spec,))
            iso, cg = isolations(game, [spec], self._folder / "referee.sock", hidden=[*self.hidden, self._folder])
            if cg is not None:
                self._cgroups.append(cg)
            pool = BotPool([spec], f"unix:{self._folder / 'referee.sock'}", self._folder / "bots", None,
                           isolation=iso, admin_token=self._admin)
            pool.start()
            self._pools[key] = pool
        return pool

    async def _play(self, seats: Sequence[BotSpec], req: MatchRequest) -> tuple[MatchOutcome, str]:
        from tournaments.matches import (
            CREATE_TIMEOUT_S,
            abort_quietly,
            await_result,
            create_request,
            outcome_of,
            rpc,
        )

        with contextlib.ExitStack() as leases:
            tokens = []
            for spec in seats:
                (proc,) = leases.enter_context(self._pool(spec).lease_seats([spec.name]))
                tokens.append(proc.token)
            created = await rpc("CreateMatch", self._stub.CreateMatch(create_request(req, tokens),
                                                                      timeout=CREATE_TIMEOUT_S))
            try:
                result = await asyncio.wait_for(await_result(self._stub, created.match_id), req.timeout_s)
            except (asyncio.CancelledError, TimeoutError):
                await abort_quietly(self._stub, created.match_id)
                raise
        out = outcome_of(result)
        record = Path(out.record_path)
        text = await asyncio.to_thread(record.read_text, encoding="utf-8")
        record.unlink(missing_ok=True)  # the service keeps the copy; the worker's folder does not grow
        return out, text

    def teardown(self, worker: Any) -> None:
        async def stop() -> None:
            await asyncio.gather(*(p.stop() for p in self._pools.values()), return_exceptions=True)
            if self._channel is not None:
                await self._channel.close()

        with contextlib.suppress(Exception):
            self._call(stop()).result(30)
        for cg in self._cgroups:
            with contextlib.suppress(Exception):
                cg.remove_all()
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        if self._referee is not None:
            self._referee.stop()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def _play_on_worker(seats: Sequence[BotSpec], req: MatchRequest) -> tuple[MatchOutcome, str, str]:
    """The Dask task: play one house bots' game on this worker's referee; the worker's name with it."""
    plugin = get_worker().plugins[PLUGIN]
    assert isinstance(plugin, LadderOnWorker)
    return (*plugin.play(seats, req), plugin.worker_name)


async def play_on_cluster(client: Any, seats: Sequence[BotSpec],
                          req: MatchRequest) -> tuple[MatchOutcome, str, str]:
    """One game as a Dask task: its outcome, its record's text, the worker that played it. Cancelled with the
    caller (a stopping service)."""
    future = client.submit(_play_on_worker, tuple(seats), req, pure=False, retries=0,
                           key=f"ladder-{req.game.key.replace('|', '-')}-{uuid.uuid4().hex[:8]}")
    try:
        result: tuple[MatchOutcome, str, str] = await future
    except asyncio.CancelledError:
        await future.cancel()
        raise
    return result


def store_record(records: Path, out: MatchOutcome, text: str) -> MatchOutcome:
    """The worker's record written into the service's records folder, whole or not at all (aside, then renamed:
    the service's restart takes only ``*.jsonl`` for matches that may be unfinished); the outcome names it."""
    path = records / f"{Path(out.record_path).name or out.match_id + '.jsonl'}"
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return dataclasses.replace(out, record_path=str(path))
