"""The sandbox a tournament's bot processes run in: Debian's bubblewrap (``bwrap``), plus per-process limits.

Why: bots on one host are adversaries. Unsandboxed, a bot can read every other process's command line, the
records folder (the deck of the hand in play), the config and the other bots' folders. In a sandbox a bot sees:

- its own PID namespace (a fresh ``/proc``: only its own processes), no network (``--unshare-all``; a remote TCP
  referee is the one exception, ``--share-net``), its own session (``--new-session``: no TIOCSTI into a terminal),
  killed with its parent (``--die-with-parent``);
- an unprivileged uid (65534) in its own user namespace with every capability dropped: a root-owned sandbox
  could otherwise unmount the masks below (tested);
- read-only: ``/usr``, ``/etc`` (less ``shadow``, ``gshadow``, ``ssh``), ``/opt``, the Python installation the
  runner runs on and the ``rummybot``/``rummy``/``referee`` packages (not the folders that hold them), the bot's
  program if it lives outside its folder, and the bot's ``binds``;
- read-write: its own folder (its ``cwd``) only; a private tmpfs ``/tmp`` (also ``HOME``); a minimal ``/dev``;
- the referee's Unix socket at :data:`SOCKET_IN_SANDBOX`;
- never: the output folder (records, logs, results), the config file, the other bots' folders, the socket's
  host folder: each is covered by an empty tmpfs (or ``/dev/null`` for a file) wherever a bind above shows it.

Limits (:class:`Limits`) are kernel-enforced per bot process, children included: memory and process count by a
cgroup per process (v1 ``memory``/``pids``/``cpu`` controllers, or v2 where delegated), CPU share by the cgroup's
CFS quota, CPU time by ``RLIMIT_CPU``. Without a writable cgroup, memory falls back to ``RLIMIT_DATA`` (counts
committed heap, not reserved address space, so the JVM and Go start; ``RLIMIT_AS`` does not) and the process
count is not bounded (``RLIMIT_NPROC`` counts every process of the uid, and root ignores it). docs/THREAT-MODEL.md
has the measurements.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tournaments.config import BotSpec, TournamentConfig

__all__ = [
    "MODES",
    "SOCKET_IN_SANDBOX",
    "Limits",
    "Sandbox",
    "Cgroups",
    "bwrap_path",
    "bwrap_problem",
    "unix_socket_of",
    "private_socket_dir",
    "UNSANDBOXED_WARNING",
    "modes",
    "limits_for",
    "hidden_paths",
]

MODES = ("bwrap", "none")
SOCKET_DIR_IN_SANDBOX = "/run/rummy"
SOCKET_IN_SANDBOX = f"{SOCKET_DIR_IN_SANDBOX}/referee.sock"
SANDBOX_UID = 65534  # nobody: a non-zero uid is what makes bwrap drop every capability, even when run by root
UNSANDBOXED_WARNING = (
    "bots run WITHOUT a sandbox ({why}): every bot on this host can read the others' processes, tokens, folders "
    "and the records of the games in play, and so the other bots' hands (docs/THREAT-MODEL.md)"
)
INSTALL_HINT = "install bubblewrap: `bash scripts/apt-install.sh bubblewrap`"

# system folders every program needs, read-only; a symlink (/bin -> usr/bin on merged-/usr systems) is recreated
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# what /etc holds that no bot needs and some host would rather keep (password hashes, host keys)
_ETC_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssh", "/etc/sudoers", "/etc/sudoers.d")
# what the Python SDK imports (the runner's copy): ``referee.rules`` apart, as ``referee`` may be a namespace package
# (installed editable, or only rummy-rules) whose folders are the distributions' own
_PACKAGES = ("rummybot", "rummy", "referee", "referee.rules")


@dataclass(frozen=True)
class Limits:
    """What one bot process (with all its children and threads) may use. 0 turns a limit off.

    ``memory_mb``: resident memory (cgroup; else RLIMIT_DATA per process); ``processes``: processes and threads
    (cgroup pids); ``cpu_cores``: CPU share (cgroup CFS quota), so a spinning bot cannot starve the referee;
    ``cpu_time_s``: CPU seconds per process (RLIMIT_CPU, then SIGKILL; a persistent bot is restarted)."""

    memory_mb: int = 2048
    processes: int = 256
    cpu_cores: float = 1.0
    cpu_time_s: int = 3600

    KEYS = ("memory_mb", "processes", "cpu_cores", "cpu_time_s")

    def merged(self, overrides: Mapping[str, Any]) -> Limits:
        return replace(self, **{k: overrides[k] for k in self.KEYS if k in overrides})


# ------------------------------------------------------------------------------------------ bwrap


@functools.cache
def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def bwrap_problem() -> str | None:
    """Why bwrap cannot be used here (missing, or the kernel refuses its namespaces), or None. Tried once."""
    path = bwrap_path()
    if path is None:
        return "bwrap is not installed"
    argv = [path, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--cap-drop", "ALL", "--die-with-parent", "--new-session", *_system_binds(), "--proc", "/proc",
            "--dev", "/dev", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not run: {exc}"
    if done.returncode != 0:
        return f"bwrap does not work here: {done.stderr.decode(errors='replace').strip()[:300]}"
    return None


def _system_binds() -> list[str]:
    args: list[str] = []
    for d in _SYSTEM:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    return args


def unix_socket_of(address: str) -> Path | None:
    """The socket path of a gRPC ``unix:PATH`` / ``unix:///PATH`` address, else None."""
    if not address.startswith("unix:"):
        return None
    rest = address[len("unix:"):]
    if rest.startswith("//"):
        rest = rest[2:]
    return Path(rest)


@contextlib.contextmanager
def private_socket_dir() -> Any:
    """A fresh 0700 folder in the system's temp folder (short: a socket path has at most 107 bytes) for the
    referee's Unix socket, removed afterwards. Never inside the output folder: a bot must not find the records by
    following the socket."""
    d = Path(tempfile.mkdtemp(prefix="rummy-referee-"))
    os.chmod(d, 0o700)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------------------------------ cgroups


def _own_cgroups() -> dict[str, str]:
    """controller -> this process's cgroup path ("" for v2), from /proc/self/cgroup."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                out[c] = path
    return out


def _counters(path: Path) -> dict[str, int]:
    """A cgroup file of ``key value`` lines (``memory.events``, ``memory.oom_control``)."""
    return {k: int(v) for k, v in (ln.split() for ln in path.read_text().splitlines() if ln.strip())}


class Cgroups:
    """Creates one cgroup per bot process under the runner's own, in every controller it may write; a probe at
    construction says which limits hold here (``self.kinds``)."""

    ROOT = Path("/sys/fs/cgroup")

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or self.ROOT
        self.prefix = f"rummy-{os.getpid()}-"
        self.parents: dict[str, Path] = {}  # limit kind ("memory", "pids", "cpu") -> folder to create children in
        self._created: set[str] = set()
        self._released: set[str] = set()  # created, its process gone, not yet removed
        self._probe()

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted(self.parents))

    def _probe(self) -> None:
        own = _own_cgroups()
        v1 = {"memory": "memory.limit_in_bytes", "pids": "pids.max", "cpu": "cpu.cfs_quota_us"}
        for kind, knob in v1.items():
            if kind in own:
                self._try(kind, self.root / kind / own[kind].lstrip("/"), knob)
        if "" in own:  # v2: the unified hierarchy (mounted at the root or at unified/)
            for base in (self.root, self.root / "unified"):
                if (base / "cgroup.controllers").exists():
                    parent = base / own[""].lstrip("/")
                    for kind, knob in {"memory": "memory.max", "pids": "pids.max", "cpu": "cpu.max"}.items():
                        if kind not in self.parents:
                            self._try(kind, parent, knob)
                    break
        self._sweep()

    def _try(self, kind: str, parent: Path, knob: str) -> None:
        probe = parent / f"{self.prefix}probe"
        try:
            probe.mkdir()
        except FileExistsError:
            pass
        except OSError:
            return
        try:
            if (probe / knob).exists() and os.access(probe / knob, os.W_OK) and os.access(probe / "cgroup.procs", os.W_OK):
                self.parents[kind] = parent
        finally:
            with contextlib.suppress(OSError):
                probe.rmdir()

    def _sweep(self) -> None:
        """Remove the empty cgroups a killed runner left (named after its pid, which is gone)."""
        for parent in set(self.parents.values()):
            with contextlib.suppress(OSError):
                for d in parent.iterdir():
                    if d.name.startswith("rummy-") and d.is_dir():
                        pid = d.name.split("-")[1]
                        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                            with contextlib.suppress(OSError):
                                d.rmdir()

    def create(self, name: str, limits: Limits) -> list[str]:
        """Cgroups for one process, limits written; returns their ``cgroup.procs`` files for the launcher."""
        self._remove_released()
        procs: list[str] = []
        for kind, parent in self.parents.items():
            d = parent / f"{self.prefix}{name}"
            with contextlib.suppress(FileExistsError):
                d.mkdir()
            self._created.add(str(d))
            try:
                if kind == "memory" and limits.memory_mb:
                    limit = str(limits.memory_mb * 1024 * 1024)
                    if (d / "memory.limit_in_bytes").exists():
                        (d / "memory.limit_in_bytes").write_text(limit)
                        if (d / "memory.memsw.limit_in_bytes").exists():  # no escape into swap
                            with contextlib.suppress(OSError):
                                (d / "memory.memsw.limit_in_bytes").write_text(limit)
                    else:
                        (d / "memory.max").write_text(limit)
                        with contextlib.suppress(OSError):
                            (d / "memory.swap.max").write_text("0")
                elif kind == "pids" and limits.processes:
                    (d / "pids.max").write_text(str(limits.processes))
                elif kind == "cpu" and limits.cpu_cores:
                    quota = max(1000, int(limits.cpu_cores * 100_000))
                    if (d / "cpu.cfs_quota_us").exists():
                        (d / "cpu.cfs_period_us").write_text("100000")
                        (d / "cpu.cfs_quota_us").write_text(str(quota))
                    else:
                        (d / "cpu.max").write_text(f"{quota} 100000")
            except OSError:
                continue  # this limit does not hold; the others still do
            procs.append(str(d / "cgroup.procs"))
        return procs

    def hit_memory_limit(self, name: str) -> bool:
        """Whether this process's cgroup met its memory limit or had a process killed for memory: a SIGKILL alone
        does not say it was memory (a CPU limit or a stop kill too); the cgroup's counters do. Read before
        :meth:`remove` (each start has a cgroup of its own, so the counters are this start's)."""
        parent = self.parents.get("memory")
        if parent is None:
            return False
        d = parent / f"{self.prefix}{name}"
        try:
            if (d / "memory.oom_control").exists():  # v1
                return _counters(d / "memory.oom_control").get("oom_kill", 0) > 0 or \
                    int((d / "memory.failcnt").read_text()) > 0
            events = _counters(d / "memory.events")  # v2
            return any(events.get(k, 0) > 0 for k in ("max", "oom", "oom_kill"))
        except (OSError, ValueError):
            return False

    def remove(self, name: str) -> None:
        """Remove one process's cgroups once its process group is gone; one the kernel has not emptied yet (a
        killed process is torn down after it is reaped) is tried again at each later :meth:`create`."""
        for parent in self.parents.values():
            self._released.add(str(parent / f"{self.prefix}{name}"))
        self._remove_released()

    def _remove_released(self) -> None:
        for d in list(self._released):
            try:
                Path(d).rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                continue
            self._released.discard(d)
            self._created.discard(d)

    def remove_all(self) -> None:
        for d in list(self._created):
            with contextlib.suppress(OSError):
                Path(d).rmdir()
                self._created.discard(d)


# ------------------------------------------------------------------------------------------ the sandbox


def _python_binds() -> list[Path]:
    """What a Python bot on the runner's interpreter needs read-only: the interpreter's installation and
    virtual environment, and the SDK's packages themselves (not the checkout that holds them)."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(os.path.realpath(sys.executable)).parent}
    for name in _PACKAGES:
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(name)
            if spec is not None:
                paths.update(Path(p) for p in spec.submodule_search_locations or ())
    with contextlib.suppress(ImportError):
        from referee.rules.native import NATIVE_DIR  # the compiled rules core, when built

        if NATIVE_DIR.is_dir():
            paths.add(NATIVE_DIR)
    return sorted(p for p in paths if p.exists())


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _node_packages(argv: Sequence[str], cwd: Path) -> set[Path]:
    """The Node packages the command's scripts belong to (the nearest folder above each ``.js`` file with a
    ``package.json``): a script needs its package (``node_modules``, its SDK), even when the bot's folder is inside it."""
    out: set[Path] = set()
    for arg in argv[1:]:
        if not arg.endswith((".js", ".mjs", ".cjs")):
            continue
        script = Path(os.path.realpath(arg if os.path.isabs(arg) else cwd / arg))
        folder = next((f for f in script.parents if (f / "package.json").is_file()), None)
        if folder is not None and script.is_file():
            out.add(folder)
    return out


def _program_binds(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[Path]:
    """The bot's program and the files its command names, when they live outside its folder."""
    out: list[Path] = []
    for i, arg in enumerate(argv):
        if arg.startswith("-"):
            continue
        if i == 0 and os.sep not in arg:
            found = shutil.which(arg, path=env.get("PATH", os.defpath))
            candidates = [Path(found)] if found else []
        else:
            candidates = [Path(arg) if os.path.isabs(arg) else cwd / arg]
        for c in candidates:
            with contextlib.suppress(OSError):
                if c.exists():
                    out.append(c.absolute())
                    real = Path(os.path.realpath(c))
                    if real != c.absolute():
                        out.append(real)
                        if real.parent.name == "bin":  # a toolchain's bin/node needs its lib/ too
                            out.append(real.parent.parent)
    return out


@dataclass(frozen=True)
class Sandbox:
    """How to wrap one bot's command in bwrap. ``hidden``: paths no bot may see (the output folder, the config,
    the socket's folder); ``others``: the other bots' folders; ``socket``: the referee's Unix socket on the host
    (bound at :data:`SOCKET_IN_SANDBOX`), or None for a TCP referee, which then needs the network."""

    bwrap: str
    limits: Limits = Limits()
    hidden: tuple[Path, ...] = ()
    others: tuple[Path, ...] = ()
    socket: Path | None = None
    binds: tuple[Path, ...] = ()
    python: tuple[Path, ...] = field(default_factory=lambda: tuple(_python_binds()))

    @property
    def share_net(self) -> bool:
        return self.socket is None

    def argv(self, command: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]:
        """The bwrap command line running ``command`` in ``cwd``. No secret goes on it: tokens stay in the
        environment, which bwrap passes on."""
        cwd = Path(os.path.abspath(cwd))
        args = [self.bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
                "--cap-drop", "ALL", "--die-with-parent", "--new-session"]
        if self.share_net:
            args.append("--share-net")
        args += _system_binds()
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SOCKET_DIR_IN_SANDBOX]
        system = [Path(d) for d in _SYSTEM if os.path.isdir(d) and not os.path.islink(d)]
        bound: list[Path] = list(system)
        packages = _node_packages(command, cwd)
        extra = [*self.python, *self.binds, *_program_binds(command, cwd, env), *packages]
        for p in sorted({Path(os.path.abspath(x)) for x in extra}, key=lambda x: len(x.parts)):
            if any(_under(p, b) for b in bound) or _under(cwd, p) and p != cwd and p not in packages:
                continue  # already visible, or a parent of the bot's folder (which would show its siblings)
            if _under(p, cwd):
                continue
            args += ["--ro-bind", str(p), str(p)]
            bound.append(p)
        masks = [Path(s) for s in _ETC_SECRETS]
        masks += [Path(os.path.abspath(h)) for h in self.hidden]
        masks += [Path(os.path.abspath(o)) for o in self.others if not _under(cwd, Path(os.path.abspath(o)))]
        args += self._masks(masks, bound)
        args += ["--bind", str(cwd), str(cwd)]
        args += self._masks(masks, [cwd])  # what to hide inside the bot's own folder (the output, the config)
        if self.socket is not None:
            args += ["--bind", str(self.socket), SOCKET_IN_SANDBOX]
        args += ["--chdir", str(cwd), "--setenv", "HOME", "/tmp", "--"]
        return args + list(command)

    @staticmethod
    def _masks(paths: Iterable[Path], within: Sequence[Path]) -> list[str]:
        args: list[str] = []
        done: list[Path] = []
        for p in sorted(set(paths), key=lambda x: len(x.parts)):
            if not any(_under(p, w) for w in within) or not os.path.lexists(p) or any(_under(p, d) for d in done):
                continue
            done.append(p)
            if os.path.isdir(p) and not os.path.islink(p):
                args += ["--tmpfs", str(p)]
            else:
                args += ["--ro-bind", "/dev/null", str(p)]
        return args


# ------------------------------------------------------------------------------------------ a tournament's choice


def modes(config: TournamentConfig) -> tuple[dict[str, str], str | None]:
    """Each bot's sandbox ("bwrap" or "none") and, when some bot runs without one, why (for the warning).

    :raises ConfigError: a bot (or the tournament) asks for bwrap and this host cannot run it."""
    from tournaments.config import ConfigError

    problem = bwrap_problem()
    out: dict[str, str] = {}
    why: str | None = None
    for i, b in enumerate(config.bots):
        asked = b.sandbox or config.sandbox
        if asked == "bwrap" and problem is not None:
            key = f"bots[{i}].sandbox" if b.sandbox else "tournament.sandbox"
            raise ConfigError(key, f"bot {b.name!r} must run in a bwrap sandbox, but {problem} ({INSTALL_HINT})")
        if asked is None:
            asked = "none" if problem is not None else "bwrap"
            if problem is not None:
                why = f"{problem}; {INSTALL_HINT}"
        elif asked == "none" and why is None:
            why = f'the config says sandbox = "none" for {b.name}'
        out[b.name] = asked
    return out, why


def limits_for(config: TournamentConfig, bot: BotSpec) -> Limits:
    return Limits().merged(config.limits).merged(bot.limits)


def hidden_paths(config: TournamentConfig, extra: Iterable[Path] = ()) -> tuple[Path, ...]:
    """What no bot may see: the output folder (records, logs, results), the config file, a ladder's pool."""
    paths = [config.output, *extra]
    if config.source is not None:
        paths.append(Path(config.source))
    if config.pool is not None:
        paths.append(config.pool)
    return tuple(Path(os.path.abspath(p)) for p in paths)

