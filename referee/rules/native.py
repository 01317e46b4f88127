"""The rules core compiled: the same typed modules built by mypyc into ``build/native/``, used only while fresh.

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

ROOT = Path(__file__).resolve().parent.parent
NATIVE_DIR = ROOT / "build" / "native"
MANIFEST = NATIVE_DIR / "manifest.json"
FAILED = NATIVE_DIR / "failed.json"  # a build that failed, for these sources and ABI: ``--if-stale`` does not retry it
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
)


def _source(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def _digests() -> dict[str, str]:
    return {m: hashlib.sha256(_source(m).read_bytes()).hexdigest() for m in MODULES}


def _abi() -> str:
    return str(sysconfig.get_config_var("EXT_SUFFIX"))


def status() -> str:
    """``fresh``, ``stale: WHY``, ``absent`` or ``disabled``: whether the compiled modules may be used."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return "disabled"
    try:
        manifest = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        return "absent"
    if manifest.get("abi") != _abi():
        return f"stale: built for {manifest.get('abi')}, this Python loads {_abi()}"
    built = manifest.get("sources", {})
    changed = [m for m, d in _digests().items() if built.get(m) != d]
    return f"stale: {', '.join(changed)} changed since the build" if changed else "fresh"


_FRESH: bool | None = None


def extend(path: list[str], package: str) -> None:
    """Put the compiled modules of ``package`` ahead of its sources (a package ``__init__`` calls this first)."""
    global _FRESH
    if _FRESH is None:
        _FRESH = status() == "fresh"
        if _FRESH and str(NATIVE_DIR) not in sys.path:
            sys.path.append(str(NATIVE_DIR))  # the shared library, a top-level module
    if _FRESH:
        folder = NATIVE_DIR.joinpath(*package.split("."))
        if folder.is_dir() and str(folder) not in path:
            path.insert(0, str(folder))


def load() -> None:
    """Import the compiled modules and make their frozen dataclasses copyable (``referee`` does this when fresh)."""
    if _FRESH:
        for name in MODULES:
            make_frozen_copyable(importlib.import_module(name))


def compiled(module: ModuleType) -> bool:
    """Whether ``module`` was loaded from a compiled extension."""
    return str(getattr(module, "__file__", "")).endswith(_abi())


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


def _failed_before(attempt: dict[str, Any]) -> str | None:
    """Why the last build failed, if it was of these very sources for this ABI (a machine with no C compiler then
    pays for the failed try once, not at every ``make``)."""
    try:
        failed = json.loads(FAILED.read_text())
    except (OSError, ValueError):
        return None
    same = failed.get("abi") == attempt["abi"] and failed.get("sources") == attempt["sources"]
    return str(failed.get("reason", "unknown")) if same else None


def build(verbose: bool = False) -> Path:
    """Compile ``MODULES`` with mypyc into ``NATIVE_DIR`` and write the manifest last (a cut build stays absent)."""
    import shutil  # build-time only: every ``import referee`` loads this module
    import tempfile

    from mypyc.build import mypycify  # the ``native`` extra: mypy with mypyc
    from setuptools import Distribution

    digests = _digests()
    shutil.rmtree(NATIVE_DIR, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="referee-native-") as tmp:
        cwd = os.getcwd()
        os.chdir(ROOT)  # mypyc names modules by their paths from here
        try:
            ext = mypycify([str(_source(m).relative_to(ROOT)) for m in MODULES], opt_level="3", multi_file=True,
                           group_name=GROUP, target_dir=os.path.join(tmp, "c"), verbose=verbose)
            dist = Distribution({"name": "referee-native", "ext_modules": ext})
            cmd: Any = dist.get_command_obj("build_ext")
            cmd.build_lib = str(NATIVE_DIR)
            cmd.build_temp = os.path.join(tmp, "o")
            cmd.parallel = os.cpu_count() or 1
            dist.run_command("build_ext")
        finally:
            os.chdir(cwd)
    MANIFEST.write_text(json.dumps({"abi": _abi(), "sources": digests}, indent=1) + "\n")
    return NATIVE_DIR


def main(action: str, optional: bool = False, if_stale: bool = False, verbose: bool = False) -> int:
    """``referee native build|status``: the exit code. ``if_stale`` builds only when the build is not fresh (what
    ``make`` asks, so this module's list of sources is the only one); ``optional`` makes a failed build exit 0."""
    if action == "status":
        state = status()
        used = [m for m in MODULES if compiled(importlib.import_module(m))]
        print(f"{state}; compiled modules in use: {len(used)} of {len(MODULES)}")
        return 0
    if if_stale and status() in ("fresh", "disabled"):
        return 0
    attempt = {"abi": _abi(), "sources": _digests()}
    if if_stale and (failed := _failed_before(attempt)) is not None:
        print(f"referee.rules.native: not compiled (it failed before for these sources: {failed}); the plain Python rules "
              "core runs; `referee native build` tries again", file=sys.stderr)
        return 0 if optional else 1
    try:
        build(verbose=verbose)
    except Exception as exc:  # noqa: BLE001 - the plain modules still work: say why and go on
        reason = f"{type(exc).__name__}: {exc}"
        print(f"referee.rules.native: not compiled ({reason}); the plain Python rules core runs", file=sys.stderr)
        NATIVE_DIR.mkdir(parents=True, exist_ok=True)
        FAILED.write_text(json.dumps({**attempt, "reason": reason}, indent=1) + "\n")
        return 0 if optional else 1
    print(f"referee.rules.native: compiled {len(MODULES)} modules into {NATIVE_DIR.relative_to(ROOT)}")
    return 0
