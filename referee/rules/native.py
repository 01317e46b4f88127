"""The rules core compiled: the same typed modules built by mypyc into ``build/native/``, used only while fresh.

This is the loader, the part every import of the rules core runs (stdlib only); the builder, which needs mypyc and
a C compiler, is ``referee.tools.native``.

Why: the rules core is pure, typed Python and should stay so (it is the readable statement of the rules), but a
bot developer's tens of thousands of games pay for every attribute look-up. mypyc compiles those very sources to
C extension modules (3x to 4x faster here, see the README's Benchmarks) with no second implementation to keep in
step. The compiled modules live outside the source tree and carry a manifest of the sources' digests: an edited
source file, another Python or ``RUMMY_PURE_PYTHON=1`` means the plain modules run, never a stale build.

    referee native build     # compile (``make`` does it after installing and when a source changed); needs gcc
    referee native status    # fresh and in use, stale (which source changed), absent or disabled
"""

from __future__ import annotations

import copyreg
import dataclasses
import hashlib
import importlib
import json
import os
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the checkout (or, installed from a wheel, a folder with no build)
NATIVE_DIR = ROOT / "build" / "native"
MANIFEST = NATIVE_DIR / "manifest.json"
# the shared library (a top-level module) in a folder of its own on sys.path: NATIVE_DIR itself there would make
# its ``referee/`` a portion of a namespace ``referee`` (an editable rummy-rules) and hide the sources' packages
LIB_DIR = NATIVE_DIR / "lib"
PURE_ENV = "RUMMY_PURE_PYTHON"
GROUP = "referee_native"  # the shared library mypyc builds beside the modules: ``referee_native__mypyc``

# The pure rules core (no I/O but the match's optional recorder callback): what the hot paths run through.
MODULES = (
    "referee.rules.errors",
    "referee.rules.cards",
    "referee.rules.melds",
    "referee.rules.variants.base",
    "referee.rules.variants.indian",
    "referee.rules.variants.five_hundred",
    "referee.rules.variants.oklahoma",
    "referee.rules.variants.skarney",
    "referee.rules.variants.iceberg",
    "referee.rules.codec",  # the record lines of every move
    "referee.rules.match",
    "referee.service.encoded",  # not rules, but pure too: the live path's messages, joined from encoded pieces
    "referee.search.knowledge",  # the cards a seat knows of other hands: fed at every environment step
    "rummy_env.observation",  # the environments' observation tensor (environments/), built at every step
    "rummy_env.actions",  # the environments' action ids: spelled and masked at every step
    "rummy_env.game",  # the environments' game: a step of every env goes through it
)
# a package outside the referee's tree: its folder in the checkout (``source_of``)
_FOLDERS = {"rummy_env": Path("environments")}


def source_of(module: str) -> Path:
    parts = module.split(".")
    return ROOT.joinpath(_FOLDERS.get(parts[0], Path()), *parts).with_suffix(".py")


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:  # a module of a distribution not installed here (rummy-rules alone): never fresh
        return "missing"


def digests() -> dict[str, str]:
    return {m: _digest(source_of(m)) for m in MODULES}


def abi() -> str:
    return str(sysconfig.get_config_var("EXT_SUFFIX"))


def status() -> str:
    """``fresh``, ``stale: WHY``, ``absent`` or ``disabled``: whether the compiled modules may be used."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return "disabled"
    try:
        manifest = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        return "absent"
    if manifest.get("abi") != abi():
        return f"stale: built for {manifest.get('abi')}, this Python loads {abi()}"
    built = manifest.get("sources", {})
    changed = [m for m, d in digests().items() if built.get(m) != d]
    return f"stale: {', '.join(changed)} changed since the build" if changed else "fresh"


_FRESH: bool | None = None


def extend(path: list[str], package: str) -> None:
    """Put the compiled modules of ``package`` ahead of its sources (a package ``__init__`` calls this first)."""
    global _FRESH
    if _FRESH is None:
        _FRESH = status() == "fresh"
        if _FRESH and str(LIB_DIR) not in sys.path:
            sys.path.append(str(LIB_DIR))
    if _FRESH:
        folder = NATIVE_DIR.joinpath(*package.split("."))
        if folder.is_dir() and str(folder) not in path:
            path.insert(0, str(folder))


def load(package: str) -> None:
    """Import the compiled modules of ``package`` and make their frozen dataclasses copyable (its ``__init__`` does
    this when fresh; a package loads only its own, so the rules core never imports the service)."""
    if _FRESH:
        for name in MODULES:
            if name.startswith(package + "."):
                make_frozen_copyable(importlib.import_module(name))


def compiled(module: ModuleType) -> bool:
    """Whether ``module`` was loaded from a compiled extension."""
    return str(getattr(module, "__file__", "")).endswith(abi())


def make_frozen_copyable(module: ModuleType) -> None:
    """Pickle and copy frozen dataclasses by their fields.

    A compiled frozen dataclass restores its state by assigning each field, which frozen forbids; registered in
    ``copyreg`` (read by both ``pickle`` and ``copy``), it is rebuilt through its constructor instead. Harmless
    for the plain modules: the result is the same object graph."""
    for obj in vars(module).values():
        if (isinstance(obj, type) and obj.__module__ == module.__name__ and dataclasses.is_dataclass(obj)
                and obj.__dataclass_params__.frozen):  # type: ignore[attr-defined]
            copyreg.pickle(obj, _reduce_frozen)


def _reduce_frozen(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """The constructor's arguments: a field it does not take is derived in ``__post_init__`` (``Card``'s code)."""
    return type(obj), tuple(getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init)
