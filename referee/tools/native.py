"""``referee native build|status``: compile the rules core with mypyc into ``build/native/`` (``make`` does it).

The builder, apart from the loader (``referee.rules.native``) that every import of the rules core runs: it needs the
``native`` extra (mypy with mypyc, setuptools) and a C compiler, and the rules core must not import them.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from referee.rules import native as loader

FAILED = loader.NATIVE_DIR / "failed.json"  # a build that failed, for these sources and ABI: ``--if-stale`` does not retry it


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
    """Compile the loader's ``MODULES`` with mypyc into ``NATIVE_DIR``; the manifest last (a cut build stays absent)."""
    from mypyc.build import mypycify  # the ``native`` extra: mypy with mypyc
    from setuptools import Distribution

    sources = loader.digests()
    shutil.rmtree(loader.NATIVE_DIR, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="referee-native-") as tmp:
        cwd = os.getcwd()
        os.chdir(loader.ROOT)  # mypyc names modules by their paths from here
        try:
            # a module whose source is not here (environments/ beside a rules-only install) is left out
            paths = [str(loader.source_of(m).relative_to(loader.ROOT)) for m in loader.MODULES
                     if loader.source_of(m).is_file()]
            ext = mypycify(paths, opt_level="3", multi_file=True, group_name=loader.GROUP,
                           target_dir=os.path.join(tmp, "c"), verbose=verbose)
            dist = Distribution({"name": "referee-native", "ext_modules": ext})
            cmd: Any = dist.get_command_obj("build_ext")
            cmd.build_lib = str(loader.NATIVE_DIR)
            cmd.build_temp = os.path.join(tmp, "o")
            cmd.parallel = os.cpu_count() or 1
            dist.run_command("build_ext")
            loader.LIB_DIR.mkdir()
            for lib in loader.NATIVE_DIR.glob(f"{loader.GROUP}__mypyc*"):  # see LIB_DIR
                lib.rename(loader.LIB_DIR / lib.name)
        finally:
            os.chdir(cwd)
    loader.MANIFEST.write_text(json.dumps({"abi": loader.abi(), "sources": sources}, indent=1) + "\n")
    return loader.NATIVE_DIR


def _compiled(module: str) -> bool:
    """Whether ``module`` runs compiled (False when it cannot be imported here: the environments without their
    ``envs`` extra, or not installed)."""
    try:
        return loader.compiled(importlib.import_module(module))
    except ImportError:
        return False


def main(action: str, optional: bool = False, if_stale: bool = False, verbose: bool = False) -> int:
    """``referee native build|status``: the exit code. ``if_stale`` builds only when the build is not fresh (what
    ``make`` asks, so this module's list of sources is the only one); ``optional`` makes a failed build exit 0."""
    if action == "status":
        state = loader.status()
        used = [m for m in loader.MODULES if _compiled(m)]
        print(f"{state}; compiled modules in use: {len(used)} of {len(loader.MODULES)}")
        return 0
    if if_stale and loader.status() in ("fresh", "disabled"):
        return 0
    attempt = {"abi": loader.abi(), "sources": loader.digests()}
    if if_stale and (failed := _failed_before(attempt)) is not None:
        print(f"referee native: not compiled (it failed before for these sources: {failed}); the plain Python rules "
              "core runs; `referee native build` tries again", file=sys.stderr)
        return 0 if optional else 1
    try:
        build(verbose=verbose)
    except Exception as exc:  # noqa: BLE001 - the plain modules still work: say why and go on
        reason = f"{type(exc).__name__}: {exc}"
        print(f"referee native: not compiled ({reason}); the plain Python rules core runs", file=sys.stderr)
        loader.NATIVE_DIR.mkdir(parents=True, exist_ok=True)
        FAILED.write_text(json.dumps({**attempt, "reason": reason}, indent=1) + "\n")
        return 0 if optional else 1
    print(f"referee native: compiled {len(loader.MODULES)} modules into {loader.NATIVE_DIR.relative_to(loader.ROOT)}")
    return 0
