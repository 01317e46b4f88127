"""A throwaway PostgreSQL server from the host's own binaries (Debian's ``postgresql`` package: initdb and pg_ctl in
/usr/lib/postgresql/VERSION/bin), for the PostgreSQL store's tests and ``bench.ladder``.

``initdb`` into a temporary folder, the server on a free port of 127.0.0.1 (and its Unix socket in that folder),
a random superuser password (scram: no other local user gets in), fsync off (nothing here outlives the run),
stopped and deleted at the end. PostgreSQL refuses to run as root: as root, the server runs as the ``postgres``
user that the package creates (``runuser``), its folder handed to that user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["TempPostgres", "find_bin", "missing", "INSTALL_HINT"]

INSTALL_HINT = "apt-get install postgresql (or `make postgres`; Debian's package: initdb and pg_ctl)"


def find_bin() -> Path | None:
    """The folder of initdb and pg_ctl: the newest /usr/lib/postgresql/*/bin, else the PATH's."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]) if
                   Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    which = shutil.which("initdb")
    return Path(which).parent if which and shutil.which("pg_ctl") else None


def missing() -> str | None:
    """Why a PostgreSQL server cannot be started here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: pip install -e '.[dev]' (or the postgres extra)"
    if find_bin() is None:
        return f"PostgreSQL is not installed: {INSTALL_HINT}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no `postgres` user to run the server as (initdb refuses root)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TempPostgres:
    """One server for a test session (or a benchmark); :meth:`create_database` gives each test a database of its own."""

    def __init__(self) -> None:
        self.bin = find_bin()
        if self.bin is None:
            raise RuntimeError(f"PostgreSQL is not installed: {INSTALL_HINT}")
        self.dir = Path(tempfile.mkdtemp(prefix="rummy-pg-"))
        self.data = self.dir / "data"
        self.password = secrets.token_urlsafe(18)
        self.port = 0
        self._as: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]
        self._started = False

    def _run(self, *cmd: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self._as, *cmd], capture_output=True, text=True, timeout=timeout, check=False,
                              cwd=self.dir)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(cmd[0]).name} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
        return done

    def start(self) -> TempPostgres:
        assert self.bin is not None
        pwfile = self.dir / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as:
            user = pwd.getpwnam("postgres")
            os.chown(pwfile, user.pw_uid, user.pw_gid)
        pwfile.chmod(0o600)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--pwfile", str(pwfile),
                  "-A", "scram-sha-256", "-E", "UTF8", "--locale", "C", "--no-sync")
        pwfile.unlink()
        last = ""
        for _ in range(5):  # a free port can be taken between the look and the bind: try another
            self.port = _free_port()
            opts = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync=off "
                    "-c synchronous_commit=off -c full_page_writes=off -c max_connections=40")
            try:
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.dir / "log"),
                          "-w", "-t", "60", "start")
                self._started = True
                return self
            except RuntimeError as exc:
                last = f"{exc}; log: {self.log_tail()}"
        raise RuntimeError(f"the PostgreSQL server did not start: {last}")

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return (self.dir / "log").read_text(errors="replace")[-1500:]
        return ""

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres:{self.password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = name or f"t_{secrets.token_hex(6)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self._started and self.bin is not None:
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
            self._started = False
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def temp_postgres() -> Iterator[TempPostgres]:
    server = TempPostgres()
    try:
        yield server.start()
    finally:
        server.stop()
