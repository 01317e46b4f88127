"""The event loop the referee serves on: uvloop where it is installed, else asyncio's own.

Why: on the live path every message costs a few trips through the event loop (a read completing, the match
task waking, the writer waking), and uvloop (libuv, in Cython) makes those steps several times cheaper than
asyncio's pure-Python loop; gRPC's asyncio stack runs on any asyncio loop. uvloop has no Windows build, so it is
optional: ``auto`` (the default) takes it when it can be imported.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LOOPS", "chosen", "new_event_loop", "run"]

LOOPS = ("auto", "uvloop", "asyncio")
T = TypeVar("T")


def chosen(kind: str = "auto") -> str:
    """The loop ``kind`` means here: ``uvloop`` or ``asyncio``. :raises ValueError: uvloop asked for, not installed."""
    if kind not in LOOPS:
        raise ValueError(f"no event loop {kind!r}: one of {', '.join(LOOPS)}")
    has_uvloop = importlib.util.find_spec("uvloop") is not None
    if kind == "uvloop" and not has_uvloop:
        raise ValueError("uvloop is not installed (pip install uvloop; it has no Windows build)")
    return "uvloop" if kind != "asyncio" and has_uvloop else "asyncio"


def new_event_loop(kind: str = "auto") -> asyncio.AbstractEventLoop:
    if chosen(kind) == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run(main: Coroutine[Any, Any, T], kind: str = "auto") -> T:
    """``asyncio.run`` on the chosen loop."""
    with asyncio.Runner(loop_factory=lambda: new_event_loop(kind)) as runner:
        return runner.run(main)
