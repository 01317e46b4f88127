"""``referee serve`` as a separate process for the tests that kill it (SIGKILL) and start it again."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path


def free_port() -> int:
    """A port nothing listens on now (the referee is then started, and restarted, on it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(port: int, records: Path, *extra: str) -> subprocess.Popen[str]:
    """``referee serve`` on ``port`` in a process group of its own; returns once it says it is serving."""
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", str(port), "--records", str(records),
                             "--log-level", "warning", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line and json.loads(line)["event"] == "serving", line
    return proc


def kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL: no goodbye, no record line written; what the OS had of each record stays."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
