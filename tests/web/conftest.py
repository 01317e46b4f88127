"""Fixtures for the viewer's tests: records of every variant, a viewer served from them, and headless Chromium
(Debian's package, installed by scripts/install-browser.sh when it is missing)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from pathlib import Path

import pytest

from referee.rules.variants import all_variants

from .helpers import play_record

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
VARIANTS = [v.name for v in all_variants()]


@pytest.fixture(scope="session")
def records_dir(tmp_path_factory) -> Path:
    """One finished record of each variant, ``<variant>-web.jsonl``: two hands of greedy bots."""
    folder = tmp_path_factory.mktemp("records")
    for name in VARIANTS:
        play_record(name, seed="web", folder=folder)
    return folder


class ServedViewer:
    """The viewer app on a background thread with its own event loop, as ``referee view`` serves it."""

    def __init__(self, records: Path) -> None:
        self.records = records
        self.loop = asyncio.new_event_loop()
        self.url = ""
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="viewer", daemon=True)

    def _run(self) -> None:
        from referee.tools.viewer import start_viewer

        asyncio.set_event_loop(self.loop)
        self.runner, port = self.loop.run_until_complete(start_viewer(self.records))
        self.url = f"http://127.0.0.1:{port}"
        self._ready.set()
        self.loop.run_forever()

    def __enter__(self) -> ServedViewer:
        self._thread.start()
        assert self._ready.wait(10), "the viewer did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


@pytest.fixture(scope="session")
def viewer(records_dir):
    with ServedViewer(records_dir) as served:
        yield served


def _no_browser(why: str) -> None:
    if os.environ.get("RUMMY_REQUIRE_BROWSER") == "1":
        pytest.fail(f"RUMMY_REQUIRE_BROWSER=1 but {why}")
    pytest.skip(f"no headless Chromium: {why} (run scripts/install-browser.sh)")


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium, installed by the project's own script on first use."""
    if not CHROMIUM.exists():
        try:
            done = subprocess.run(["bash", str(REPO / "scripts" / "install-browser.sh")], capture_output=True,
                                  text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            _no_browser(f"scripts/install-browser.sh did not finish: {exc}")
        if not CHROMIUM.exists():
            _no_browser(f"scripts/install-browser.sh could not install it: {(done.stderr or done.stdout)[-500:]}")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium):
    """Playwright's sync API keeps an event loop running in this thread while it is open: closed with the module,
    so the tests collected after it may call asyncio.run again."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _no_browser("the playwright package is missing (pip install -e '.[dev]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    """A fresh page; any script error on it fails the test."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, f"script errors on the page: {errors}"


def pytest_terminal_summary(terminalreporter):
    shot = ARTIFACTS / "hand.png"
    if shot.exists():
        terminalreporter.write_line(f"viewer screenshot for review: {shot}")
