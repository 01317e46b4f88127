"""The referee serves on uvloop where it is installed (``rummy.wire.loops``), on asyncio's loop when asked."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys

import pytest

from referee.service.server import EmbeddedReferee
from rummy.wire import loops

HAS_UVLOOP = importlib.util.find_spec("uvloop") is not None


def test_auto_means_uvloop_where_it_is_installed() -> None:
    assert loops.chosen("auto") == ("uvloop" if HAS_UVLOOP else "asyncio")
    assert loops.chosen("asyncio") == "asyncio"
    with pytest.raises(ValueError, match="no event loop"):
        loops.chosen("trio")


def test_run_returns_what_the_coroutine_returns_on_either_loop() -> None:
    async def answer() -> str:
        return type(asyncio.get_running_loop()).__module__.split(".")[0]

    assert loops.run(answer(), "asyncio") == "asyncio"
    assert loops.run(answer()) == loops.chosen("auto")


def test_the_embedded_referee_runs_on_the_chosen_loop() -> None:
    ref = EmbeddedReferee()
    ref.start()
    try:
        assert ref._loop is not None
        assert type(ref._loop).__module__.split(".")[0] == loops.chosen("auto")
    finally:
        ref.stop()


@pytest.mark.parametrize("kind", ["asyncio", "auto"])
def test_serve_says_which_loop_it_serves_on(kind: str, tmp_path: object) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--records", str(tmp_path),
                             "--loop", kind, "--log-level", "warning"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = json.loads(proc.stdout.readline())
        assert line["event"] == "serving" and line["loop"] == loops.chosen(kind)
    finally:
        proc.terminate()
        proc.wait(10)
