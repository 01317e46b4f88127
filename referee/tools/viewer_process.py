"""The browser viewer of ``referee serve --http`` in a process of its own, at a lower CPU priority.

The viewer reads only the records folder (live pages follow a record as it is written), so it needs nothing of
the referee's memory. Run beside the matches on one event loop, every web request (a page, a listing, a thousand
event streams) took a share of the loop and of the interpreter's lock that the matches needed; in its own
process, niced, a crowd of web clients competes with the matches only for the CPU, and the kernel gives the
matches the larger share. The process ends with its parent: it watches a pipe that only the parent holds open.

    python -m referee.tools.viewer_process --records DIR --host H --port P --limits JSON   # what ``serve`` starts
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import signal
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from referee.service.limits import ServerLimits

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["ChildServer", "ViewerProcess", "serve_until_stopped", "VIEWER_NICE", "START_TIMEOUT_S"]

VIEWER_NICE = 5  # web clients yield to the matches (the search pool runs at 10: it may hold a core for seconds)
START_TIMEOUT_S = 30.0


class ViewerStartFailed(RuntimeError):
    """The viewer process did not report its port (a port in use, a records folder it cannot read)."""


class ChildServer:
    """A server in a child process of its own session: it prints its port as one JSON line and ends when its stdin,
    a pipe only this process holds, reaches end of file (so a kill -9 of the parent ends it too). ``port``, ``pid``;
    ``close()`` stops it."""

    def _start(self, argv: list[str], what: str, failed: type[RuntimeError], settings: str | None = None) -> None:
        """Start ``argv``, give it ``settings`` (one line on its stdin: nothing secret on a command line) and wait at
        most ``START_TIMEOUT_S`` for its port line (a child stuck before it serves must not hang its parent).

        :raises failed: it ended or said nothing of its port (what it said is on stderr)."""
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     start_new_session=True)  # a Ctrl-C at the terminal reaches the parent only
        assert self.proc.stdin is not None and self.proc.stdout is not None
        line = ""
        try:
            if settings is not None:
                self.proc.stdin.write(settings + "\n")
                self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], START_TIMEOUT_S)
            line = self.proc.stdout.readline() if ready else ""
        except BrokenPipeError:  # it ended before reading its settings
            pass
        try:
            self.port = int(json.loads(line)["port"])
        except (ValueError, KeyError, TypeError) as exc:
            self.close()
            raise failed(f"{what} did not start (exit {self.proc.returncode}); see its error above") from exc
        self.pid = self.proc.pid

    def close(self, timeout: float = 5.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                try:
                    f.close()
                except BrokenPipeError:
                    pass


class ViewerProcess(ChildServer):
    """A running viewer process: its ``port`` and ``pid``; ``close()`` stops it (so does the parent's death)."""

    def __init__(self, records: str | Path | None, host: str, port: int, limits: ServerLimits,
                 nice: int = VIEWER_NICE, log_level: str = "info", log_format: str = "json") -> None:
        argv = [sys.executable, "-m", "referee.tools.viewer_process", "--host", host, "--port", str(port),
                "--limits", json.dumps(asdict(limits)), "--nice", str(nice), "--log-level", log_level,
                "--log-format", log_format]
        if records:
            argv += ["--records", str(records)]
        self._start(argv, "the viewer", ViewerStartFailed)


async def serve_until_stopped(runner: web.AppRunner, port: int) -> None:
    """The child's side of :class:`ChildServer`: say the bound ``port`` (the parent reads it), serve until SIGINT,
    SIGTERM or the parent's exit (the end of this process's stdin, the pipe the parent holds), then clean up."""
    print(json.dumps({"port": port}), flush=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    parent_gone = loop.run_in_executor(None, sys.stdin.read)  # returns at end of file: the parent has exited
    await asyncio.wait([asyncio.ensure_future(stop.wait()), parent_gone], return_when=asyncio.FIRST_COMPLETED)
    await runner.cleanup()


async def _serve(records: str | None, host: str, port: int, limits: ServerLimits) -> None:
    from referee.tools.viewer import start_viewer

    runner, bound = await start_viewer(records, None, host, port, limits)
    await serve_until_stopped(runner, bound)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--records")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--limits", default="{}", help="the referee's ServerLimits as JSON")
    p.add_argument("--nice", type=int, default=VIEWER_NICE)
    p.add_argument("--log-level", default="info")
    p.add_argument("--log-format", choices=("json", "console"), default="json")
    args = p.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    from referee.service.logs import configure_logging
    from rummy.wire import loops

    configure_logging(args.log_level, json=args.log_format == "json")
    limits = ServerLimits(**json.loads(args.limits))
    try:
        loops.run(_serve(args.records, args.host, args.port, limits))
    except OSError as exc:  # the port is taken, or cannot be bound
        print(f"referee viewer: cannot serve on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
