"""Bot processes: started once, kept alive, restarted only if they die.

A bot is any command line. It is run with ``--referee ADDRESS`` appended, its bot token in the environment only
(``RUMMY_BOT_TOKEN``, with ``RUMMY_REFEREE``; a command line is readable by every process on the host, an
environment only by its own user's, and not at all from a sandbox); it connects once and the referee seats it in
match after match over that one stream, several matches at once if the tournament runs them concurrently.
Starting a Python gRPC bot costs about as much as playing a fast game, which is why tournaments keep bots alive
(see ``bench/tournament_throughput.py``).

Each process runs in the bot's sandbox (:mod:`tournaments.sandbox`: bwrap, its own PID namespace, no network, a
read-only system, its own folder writable, memory/CPU/process limits) unless its config says ``sandbox =
"none"`` or the host has no bwrap; a sandboxed bot reaches the referee at ``unix:/run/rummy/referee.sock``.

Each bot process's stderr (and stdout) is kept, capped to its last ``log_cap`` bytes, in
``<output>/bots/<bot>-<n>.log``, with a line at every start and exit. Bots run in their own session (Ctrl-C
in the terminal reaches only the runner, which then stops them in order) and, on Linux, get SIGTERM if the
runner itself dies (even by SIGKILL), so a killed tournament leaves no orphans.

:class:`OneShot` runs a bot for a single seat instead (``--match ID``, the seat token in ``RUMMY_SEAT_TOKEN``),
for bots that cannot play several matches over one stream and for measuring what persistence saves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import sys
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.service.credentials import mint_bot_token
from tournaments.config import BotSpec, TournamentConfig
from tournaments.sandbox import SOCKET_IN_SANDBOX, Cgroups, Sandbox, bwrap_path, hidden_paths, limits_for, modes

__all__ = ["TailLog", "BotProcess", "BotPool", "OneShot", "Isolation", "isolations", "LOG_CAP"]

LOG_CAP = 64 * 1024


# Linux: the bot is started through a tiny launcher (``python -S``, about 25 ms) that asks the kernel to send it
# SIGTERM when the runner dies (PR_SET_PDEATHSIG survives the exec), then execs the bot's command (or bwrap,
# which then runs it with --die-with-parent). A ``preexec_fn`` would do the same without the launcher, but it
# runs Python between fork and exec in a process full of gRPC threads (unsafe, and gRPC complains about it), and
# it forbids the faster vfork. The launcher also enters the process's cgroups and sets its rlimits (sandbox.py),
# so they bind bwrap and everything the bot starts; its second argument says which, as JSON (no secret in it).
_LAUNCHER = """
import ctypes, json, os, resource, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):  # the runner died before prctl: do not start at all
    sys.exit(0)
setup = json.loads(sys.argv[2])
for procs in setup.get("cgroups", ()):
    try:
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    except OSError as exc:
        print(f"sandbox: cannot enter {procs}: {exc}", file=sys.stderr)
for name, value in setup.get("rlimits", {}).items():
    try:
        resource.setrlimit(getattr(resource, name), tuple(value))
    except (OSError, ValueError, AttributeError) as exc:
        print(f"sandbox: cannot set {name}: {exc}", file=sys.stderr)
try:
    os.execvp(sys.argv[3], sys.argv[3:])
except OSError as exc:
    print(f"cannot start {sys.argv[3]!r}: {exc}", file=sys.stderr)
    sys.exit(127)
"""
_GUARD = sys.platform.startswith("linux")


class TailLog:
    """The last ``cap`` bytes written, mirrored to ``path`` (rewritten at most every ``interval`` s)."""

    def __init__(self, path: Path, cap: int = LOG_CAP, interval: float = 0.5) -> None:
        self.path = path
        self.cap = cap
        self.interval = interval
        self.buf = bytearray()
        self._last = 0.0
        self._dirty = False
        self._timer: asyncio.TimerHandle | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():  # a resumed tournament keeps the previous run's tail
            with contextlib.suppress(OSError):
                self.buf = bytearray(path.read_bytes()[-cap:])

    def write(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) > self.cap:
            del self.buf[: len(self.buf) - self.cap]
        self._dirty = True
        now = time.monotonic()
        if now - self._last >= self.interval:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._timer = loop.call_later(self.interval, self.flush)

    def note(self, text: str) -> None:
        self.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} {text} ===\n".encode())

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._dirty:
            return
        self._dirty = False
        self._last = time.monotonic()
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        with contextlib.suppress(OSError):
            tmp.write_bytes(bytes(self.buf))
            os.replace(tmp, self.path)


async def _pump(stream: asyncio.StreamReader | None, log: TailLog) -> None:
    if stream is None:
        return
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        log.write(chunk)


def resolve_command(command: Sequence[str]) -> list[str]:
    """A bot command starting with ``python`` or ``python3`` runs on the runner's own interpreter, so configs
    work the same inside and outside an activated virtual environment."""
    if command and command[0] in ("python", "python3"):
        return [sys.executable, *command[1:]]
    if command and command[0] == "referee-bridge":  # the stdio bridge, on the same interpreter
        return [sys.executable, "-m", "rummybot.stdio", *command[1:]]
    return list(command)


def cannot_start(spec: BotSpec) -> str | None:
    """Why ``spec``'s program cannot be started, or None: checked before a tournament begins, so a mistyped
    path is a config error naming the bot instead of a run of forfeits. A program with a ``/`` is looked for
    from the bot's working folder (the config file's folder unless ``cwd`` says otherwise), a bare name on the
    ``PATH`` the bot is given."""
    program = resolve_command(spec.command)[0]
    if os.sep not in program:
        search = spec.env.get("PATH", os.environ.get("PATH", os.defpath))
        return None if shutil.which(program, path=search) else f"{program!r} is not on the PATH"
    path = Path(program) if os.path.isabs(program) else (spec.cwd or Path.cwd()) / program
    if not path.is_file():
        where = "" if os.path.isabs(program) else f" (a relative path is taken from the bot's cwd, {spec.cwd or Path.cwd()})"
        return f"no such program: {path}{where}"
    if not os.access(path, os.X_OK):
        return f"{path} is not executable (chmod +x, or name its interpreter first)"
    return None


@dataclass(frozen=True)
class Isolation:
    """How one bot's processes are started: in ``sandbox`` (None: as they are, with the warning the runner gave)
    with the limits ``cgroups`` can enforce here (None: rlimits only). See :mod:`tournaments.sandbox`."""

    sandbox: Sandbox | None = None
    cgroups: Cgroups | None = None

    def referee_for(self, address: str) -> str:
        """The address the bot is told: the socket bound into its sandbox, else the referee's own."""
        if self.sandbox is not None and self.sandbox.socket is not None:
            return f"unix:{SOCKET_IN_SANDBOX}"
        return address

    def setup(self, name: str) -> dict[str, Any]:
        """The launcher's setup for one process called ``name``: its cgroups (created now) and rlimits."""
        if self.sandbox is None:
            return {}
        limits = self.sandbox.limits
        cgroups = self.cgroups.create(name, limits) if self.cgroups is not None else []
        kinds = set(self.cgroups.kinds) if self.cgroups is not None else set()
        rlimits: dict[str, list[int]] = {}
        if limits.cpu_time_s:  # SIGXCPU first (a bot may catch it), SIGKILL a second later
            rlimits["RLIMIT_CPU"] = [limits.cpu_time_s, limits.cpu_time_s + 1]
        if limits.memory_mb and "memory" not in kinds:
            rlimits["RLIMIT_DATA"] = [limits.memory_mb * 1024 * 1024] * 2
        return {"cgroups": cgroups, "rlimits": rlimits}

    def release(self, name: str) -> None:
        if self.sandbox is not None and self.cgroups is not None:
            self.cgroups.remove(name)

    def why_it_ended(self, name: str) -> str:
        """What the process's limits say of its end (before :meth:`release`): its memory limit, which it met."""
        if self.sandbox is None or self.cgroups is None or not self.cgroups.hit_memory_limit(name):
            return ""
        return f"; it reached its memory limit ({self.sandbox.limits.memory_mb} MB)"


NO_ISOLATION = Isolation()


def isolations(config: TournamentConfig, specs: Sequence[BotSpec], socket: Path | None,
               hidden: Sequence[Path] = ()) -> tuple[dict[str, Isolation], Cgroups | None]:
    """Each bot's :class:`Isolation` for this run (``socket``: the referee's Unix socket on the host, None for a
    TCP referee); the cgroups they share, for :meth:`Cgroups.remove_all` at the end."""
    chosen, _ = modes(config)
    if not any(chosen.get(b.name) == "bwrap" for b in specs):
        return {}, None
    cgroups = Cgroups()
    bwrap = bwrap_path()
    assert bwrap is not None  # modes() said bwrap works
    hide = hidden_paths(config, hidden)
    folders = {b.name: Path(os.path.abspath(b.cwd or Path.cwd())) for b in config.bots}
    out: dict[str, Isolation] = {}
    for b in specs:
        if chosen.get(b.name) != "bwrap":
            continue
        others = tuple(f for n, f in folders.items() if n != b.name and f != folders[b.name])
        sandbox = Sandbox(bwrap, limits_for(config, b), hide, others, socket, b.binds)
        out[b.name] = Isolation(sandbox, cgroups)
    return out, cgroups


async def _spawn(argv: Sequence[str], spec: BotSpec, env_extra: dict[str, str], log: TailLog,
                 isolation: Isolation = NO_ISOLATION, name: str = "") -> asyncio.subprocess.Process:
    """Start the bot. Its secrets (tokens) are in ``env_extra``, which reaches it through the environment only:
    a command line is readable by every process on the host (/proc/PID/cmdline), an environment only by its
    own user's."""
    env = {**os.environ, **spec.env, **env_extra}
    cwd = spec.cwd or Path.cwd()
    if isolation.sandbox is not None:
        argv = isolation.sandbox.argv(argv, cwd, env)
    if _GUARD:
        setup = isolation.setup(name)
        argv = [sys.executable, "-S", "-c", _LAUNCHER, str(os.getpid()), json.dumps(setup), *argv]
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )


def _why(code: int | None) -> str:
    """What an exit code says about a limit: a sandboxed bot killed for memory, CPU time or by a signal."""
    if code is None or code >= 0 and code <= 128:
        return ""
    sig = -code if code < 0 else code - 128
    reason = {signal.SIGKILL: "killed: out of memory, past its CPU time, or stopped", signal.SIGXCPU: "past its CPU time"}
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return ""
    return f" ({name}{': ' + reason[signal.Signals(sig)] if signal.Signals(sig) in reason else ''})"


def _signal_group(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    """Signal the bot's whole process group (it leads its own session): a shell or bridge's children would
    otherwise outlive it, holding its output pipe open."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close the process's transport now, while the loop runs: left to the garbage collector, it would close
    after the loop has (``Event loop is closed`` from ``BaseSubprocessTransport.__del__``)."""
    transport = getattr(proc, "_transport", None)  # asyncio.subprocess.Process has no public close
    if transport is not None:
        transport.close()


async def _terminate(proc: asyncio.subprocess.Process, grace: float) -> int | None:
    """SIGTERM to the bot's process group, then SIGKILL after ``grace`` seconds; its pipes closed. Returns the
    exit code."""
    if proc.returncode is None:
        _signal_group(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            pass
    _signal_group(proc, signal.SIGKILL)  # whatever of the group is left, even once the leader has exited
    code = await proc.wait()
    _close_pipes(proc)
    return code


class BotProcess:
    """One persistent process of a bot, with its own bot token; restarted (with backoff) whenever it dies."""

    def __init__(self, spec: BotSpec, index: int, referee: str, log_dir: Path, logger: Any = None, log_cap: int = LOG_CAP,
                 isolation: Isolation = NO_ISOLATION, admin_token: str | None = None) -> None:
        self.spec = spec
        self.index = index
        self.isolation = isolation
        self.referee = isolation.referee_for(referee)
        # minted with the referee's admin token, the referee knows it as one of the admin's bots before any match
        # names it; a referee with no admin token takes any token (within its budget for tokens nothing names)
        self.token = (mint_bot_token(admin_token, f"{spec.name}-{index}") if admin_token
                      else f"{spec.name}-{index}-{secrets.token_urlsafe(12)}")
        self.log = TailLog(log_dir / f"{spec.name}-{index}.log", log_cap)
        self.logger = logger
        self.proc: asyncio.subprocess.Process | None = None
        self.active = 0  # matches leased to it right now
        self.starts = 0
        self.exits: list[int | None] = []
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    @property
    def argv(self) -> list[str]:
        """The bot's command line: its token is NOT on it (RUMMY_BOT_TOKEN carries it)."""
        return [*resolve_command(self.spec.command), "--referee", self.referee]

    @property
    def seed(self) -> int:
        """A seed for the bot's own random choices (RUMMY_BOT_SEED), the same on every run of a tournament."""
        return zlib.crc32(f"{self.spec.name}:{self.index}:{self.starts}".encode())

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._supervise(), name=f"bot {self.spec.name}-{self.index}")

    async def _supervise(self) -> None:
        quick_failures = 0
        while not self._stopping:
            self.starts += 1
            started = time.monotonic()
            what = "start" if self.starts == 1 else f"restart #{self.starts - 1}"
            where = "sandboxed" if self.isolation.sandbox is not None else "NOT sandboxed"
            self.log.note(f"{what} ({where}): {' '.join(self.spec.command)} --referee {self.referee}")
            # a cgroup of its own for each start: its counters (``why_it_ended``) are then this start's alone, and
            # a killed process's cgroup, not yet emptied by the kernel, is never joined by the next start
            cgroup = f"{self.spec.name}-{self.index}-{self.starts}"
            try:
                env = {"RUMMY_REFEREE": self.referee, "RUMMY_BOT_TOKEN": self.token, "RUMMY_BOT_SEED": str(self.seed)}
                self.proc = await _spawn(self.argv, self.spec, env, self.log, self.isolation, cgroup)
            except OSError as exc:
                self.proc = None
                self.log.note(f"cannot start: {exc}")
                self._event("bot_start_failed", error=str(exc))
                code: int | None = None
            else:
                self._event("bot_started", pid=self.proc.pid, start=self.starts)
                pump = asyncio.ensure_future(_pump(self.proc.stdout, self.log))
                try:
                    code = await self.proc.wait()
                    # what it left behind (a shell's children) goes with it, or it would hold the pipe open
                    _signal_group(self.proc, signal.SIGKILL)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(pump), 1.0)
                finally:
                    pump.cancel()
                    _close_pipes(self.proc)
                    limit = self.isolation.why_it_ended(cgroup)
                    self.isolation.release(cgroup)
                if self._stopping:
                    break
                self.log.note(f"exited with code {code}{_why(code)}{limit}")
                self._event("bot_died", code=code, start=self.starts)
            self.exits.append(code)
            if self._stopping:
                break
            quick_failures = quick_failures + 1 if time.monotonic() - started < 2.0 else 0
            await asyncio.sleep(min(5.0, 0.05 * 2**quick_failures) if quick_failures else 0.0)
        self.log.flush()

    async def stop(self, grace: float = 3.0) -> None:
        self._stopping = True
        if self.proc is not None and self.proc.returncode is None:
            code = await _terminate(self.proc, grace)
            self.log.note(f"stopped (exit code {code})")
        self.isolation.release(f"{self.spec.name}-{self.index}-{self.starts}")
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.log.flush()

    def _event(self, event: str, **kw: Any) -> None:
        if self.logger is not None:
            self.logger.info(event, bot=self.spec.name, process=self.index, **kw)


class BotPool:
    """Every bot's persistent processes. ``lease_seats(seats)`` picks, for each seat, the least busy process
    of its bot, never the same process twice in one match (the referee seats one connection once per match:
    partners must not share a process, COM-6); ``min_processes`` says how many a bot then needs."""

    def __init__(
        self,
        bots: Sequence[BotSpec],
        referee: str,
        log_dir: Path,
        logger: Any = None,
        log_cap: int = LOG_CAP,
        min_processes: dict[str, int] | None = None,
        isolation: Mapping[str, Isolation] | None = None,
        admin_token: str | None = None,
    ) -> None:
        need = min_processes or {}
        iso = isolation or {}
        self.procs: dict[str, list[BotProcess]] = {
            b.name: [BotProcess(b, i, referee, log_dir, logger, log_cap, iso.get(b.name, NO_ISOLATION), admin_token)
                     for i in range(max(b.processes, need.get(b.name, 1)))]
            for b in bots
        }

    def start(self) -> None:
        for ps in self.procs.values():
            for p in ps:
                p.start()

    @contextlib.contextmanager
    def lease_seats(self, seats: Sequence[str]) -> Iterator[list[BotProcess]]:
        """One process per seat (bot names per seat), distinct within the match, least busy first."""
        chosen: list[BotProcess] = []
        for name in seats:
            free = [p for p in self.procs[name] if p not in chosen]
            if not free:
                raise RuntimeError(f"bot {name} holds more seats than it has processes")
            chosen.append(min(free, key=lambda q: (q.active, q.index)))
        for p in chosen:
            p.active += 1
        try:
            yield chosen
        finally:
            for p in chosen:
                p.active -= 1

    async def stop(self, grace: float = 3.0) -> None:
        await asyncio.gather(*(p.stop(grace) for ps in self.procs.values() for p in ps))

    def all(self) -> list[BotProcess]:
        return [p for ps in self.procs.values() for p in ps]


class OneShot:
    """Runs a bot for one seat of one match: ``command --referee ADDRESS --match ID``, its seat token in
    RUMMY_SEAT_TOKEN (never on the command line)."""

    def __init__(self, bots: Sequence[BotSpec], referee: str, log_dir: Path, log_cap: int = LOG_CAP,
                 isolation: Mapping[str, Isolation] | None = None) -> None:
        self.specs = {b.name: b for b in bots}
        self.referee = referee
        self.isolation = dict(isolation or {})
        self.logs = {b.name: TailLog(log_dir / f"{b.name}-per-match.log", log_cap) for b in bots}
        self._names: dict[int, tuple[str, str]] = {}  # process id -> (bot, its cgroup name)
        self._count = 0

    async def play(self, name: str, match_id: str, token: str) -> asyncio.subprocess.Process | None:
        spec = self.specs[name]
        log = self.logs[name]
        iso = self.isolation.get(name, NO_ISOLATION)
        referee = iso.referee_for(self.referee)
        argv = [*resolve_command(spec.command), "--referee", referee, "--match", match_id]
        self._count += 1
        cgroup = f"{name}-m{self._count}"
        try:
            proc = await _spawn(argv, spec, {"RUMMY_REFEREE": referee, "RUMMY_MATCH": match_id, "RUMMY_SEAT_TOKEN": token},
                                log, iso, cgroup)
        except OSError as exc:
            iso.release(cgroup)
            log.note(f"match {match_id}: cannot start: {exc}")
            return None
        self._names[proc.pid] = (name, cgroup)
        asyncio.get_running_loop().create_task(_pump(proc.stdout, log))
        return proc

    def release(self, proc: asyncio.subprocess.Process) -> None:
        """Remove an ended seat process's cgroups."""
        name, cgroup = self._names.pop(proc.pid, ("", ""))
        if name:
            self.isolation.get(name, NO_ISOLATION).release(cgroup)

    async def finish(self, procs: Sequence[asyncio.subprocess.Process | None], grace: float = 5.0) -> None:
        """Wait for the seat processes to leave after their match (they should exit by themselves)."""
        async def one(p: asyncio.subprocess.Process | None) -> None:
            if p is None:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(p.wait(), grace)
            await _terminate(p, 1.0)  # what is left of its group, and its pipes
            self.release(p)

        await asyncio.gather(*(one(p) for p in procs))

    def flush(self) -> None:
        for log in self.logs.values():
            log.flush()
