"""Move the Python modules into folders by layer and rewrite every reference to them (issue #33).

    python scripts/relayout.py            # in a clean checkout: git mv, then rewrite the tracked text files
    python scripts/relayout.py --check    # exit 1 and list what would change (nothing on a tree already moved)

Why a script and not a hand-made commit: other branches keep adding modules that import the old names, so the
move has to be replayable. It is idempotent: a second run moves nothing and rewrites only the files that still
name an old module (new ones). The one map below is the whole move; a module missing from the tree is skipped.

What it rewrites, in every tracked text file (not CHANGELOG.md, whose entries are history, nor this script):
dotted module names (``referee.cards``, ``python -m referee.replay``, ``mock.patch("referee.server.X")``,
``referee.cli:main``, mypyc source lists), ``from referee import cards, server`` (split by the new parents), and
the files' paths (``referee/cards.py``, ``referee/web/``, ``clients/python/rummy/``). Python files it changed are
then import-sorted by ruff (``ruff check --select I --fix``) so they stay lint-clean.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# old module -> new module. A package moves with everything in it; the longest old name wins.
MODULES: dict[str, str] = {
    # the rules core: pure, no third-party import, no I/O (its own distribution, rummy-rules)
    "referee.cards": "referee.rules.cards",
    "referee.melds": "referee.rules.melds",
    "referee.errors": "referee.rules.errors",
    "referee.match": "referee.rules.match",
    "referee.codec": "referee.rules.codec",  # the card text notation and the records' JSON of actions and events
    "referee.evaluate": "referee.rules.evaluate",
    "referee.variants": "referee.rules.variants",
    "referee.native": "referee.rules.native",  # the loader of the compiled rules core (the builder is split off)
    "rummybot.policies": "referee.rules.policies",  # greedy and random play: the SDK's bots and the search rollouts
    # the wire: the generated messages and their mapping to the rules core (rummy-protos: SDK and referee share it)
    "referee.protocodec": "rummy.wire.protocodec",
    "referee.loops": "rummy.wire.loops",
    # the gRPC service
    "referee.server": "referee.service.server",
    "referee.session": "referee.service.session",
    "referee.encoded": "referee.service.encoded",
    "referee.limits": "referee.service.limits",
    "referee.records": "referee.service.records",
    "referee.resume": "referee.service.resume",
    "referee.replay": "referee.service.replay",  # the service resumes matches by replaying records
    "referee.credentials": "referee.service.credentials",
    "referee.logs": "referee.service.logs",
    "referee.reasons": "referee.service.reasons",
    "referee.metrics": "referee.service.metrics",  # not on this branch yet: moved when it arrives
    # the tools
    "referee.cli": "referee.tools.cli",
    "referee.checkbot": "referee.tools.checkbot",
    "referee.timeline": "referee.tools.timeline",
    "referee.viewer": "referee.tools.viewer",
    "referee.viewer_process": "referee.tools.viewer_process",
    "referee.protogen": "referee.tools.protogen",
    "referee.testing": "referee.tools.testing",
}

# Where a module's file lives, by the first part of its name (the rest of the name is the path below that root).
ROOTS_BEFORE = {"rummybot": "clients/python", "rummy": "clients/python"}
ROOTS_AFTER = {"rummybot": "clients/python", "rummy": "protos/python"}

# Folders moved whole (not modules, or the generated code that keeps its import name): old path -> new path.
FOLDERS: dict[str, str] = {
    "referee/web": "referee/tools/web",
    "clients/python/rummy": "protos/python/rummy",
}

# A new package's ``__init__.py`` (created when absent, never rewritten).
NEW_PACKAGES: dict[str, str] = {
    "referee/rules": "The rules core: cards, melds, variants, a match; pure Python, no third-party import, no I/O.",
    "referee/service": "The gRPC referee service: sessions, clocks, limits, records and their resumption.",
    "referee/tools": "Tools over the rules core and the service: the CLI, replay viewer, timeline, bot checker.",
    "protos/python/rummy/wire": "The wire for Python: the generated messages mapped to the rules core's values.",
}

SKIP = {"CHANGELOG.md", "scripts/relayout.py"}
BINARY = {".png", ".svg", ".ico", ".jpg", ".gif", ".woff", ".woff2", ".pdf", ".gz", ".zip", ".jar", ".whl"}


def module_path(name: str, roots: dict[str, str]) -> str:
    """``referee.rules.cards`` -> ``referee/rules/cards``: the path without ``.py`` (a module or a package)."""
    root = roots.get(name.split(".")[0], "")
    return f"{root}/{name.replace('.', '/')}" if root else name.replace(".", "/")


def path_moves() -> dict[str, str]:
    """Every old path -> new path: a module file, a package folder, or a folder moved whole."""
    moves = dict(FOLDERS)
    for old, new in MODULES.items():
        before, after = module_path(old, ROOTS_BEFORE), module_path(new, ROOTS_AFTER)
        if Path(before).is_dir() or Path(after).is_dir():  # a package: its folder (decided the same on a rerun)
            moves[before] = after
        else:  # a module (not both: a module left at a package's old name, e.g. a re-export, stays)
            moves[before + ".py"] = after + ".py"
    return moves


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def tracked() -> list[str]:
    return [p for p in git("ls-files", "-z").split("\0") if p]


def move_files(dry: bool) -> list[str]:
    """``git mv`` every tracked file under an old path to its new path, one by one (idempotent: a moved file is
    no longer under the old path). Returns the moves done (or to do)."""
    moves = path_moves()
    done = []
    for path in tracked():
        for old in sorted(moves, key=len, reverse=True):
            if path == old or path.startswith(old + "/"):
                target = moves[old] + path[len(old):]
                done.append(f"{path} -> {target}")
                if not dry:
                    Path(target).parent.mkdir(parents=True, exist_ok=True)
                    git("mv", path, target)
                break
    if not dry:
        for old in moves:  # the emptied folders (left with __pycache__ only)
            folder = Path(old)
            if folder.is_dir() and not any(p.is_file() and "__pycache__" not in p.parts for p in folder.rglob("*")):
                shutil.rmtree(folder)
    return done


def create_packages(dry: bool) -> list[str]:
    made = []
    for folder, doc in NEW_PACKAGES.items():
        init = Path(folder) / "__init__.py"
        if Path(folder).is_dir() and not init.exists():
            made.append(str(init))
            if not dry:
                init.write_text(f'"""{doc}"""\n')
                git("add", str(init))
    return made


def _alternation(names: list[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


_DOTTED = re.compile(r"(?<![\w.])(" + _alternation(list(MODULES)) + r")(?![\w])")
_MOVES = path_moves()
_PATHS = re.compile(r"(?<![\w.-])(" + _alternation(list(_MOVES)) + r")(?![\w])")
# ``from referee import a, b as c`` (one line, or parenthesised over several)
_FROM = re.compile(r"^(?P<indent>[ \t]*)from (?P<pkg>[\w.]+) import (?:\((?P<many>[^)]*)\)|(?P<one>[^\n#(]+?))"
                   r"(?P<tail>[ \t]*(?:#[^\n]*)?)$", re.M)
_PARENTS = {old.rsplit(".", 1)[0] for old in MODULES}


def renamed(module: str) -> str:
    """The new name of ``module`` (or of its package), else ``module``."""
    for old in sorted(MODULES, key=len, reverse=True):
        if module == old or module.startswith(old + "."):
            return MODULES[old] + module[len(old):]
    return module


def _rewrite_from(m: re.Match[str]) -> str:
    pkg = m["pkg"]
    if pkg not in _PARENTS:
        return m[0]
    body = m["many"] if m["many"] is not None else m["one"]
    items = [i.strip() for i in re.sub(r"#[^\n]*", "", body).replace("\n", " ").split(",") if i.strip()]
    groups: dict[str, list[str]] = {}
    for item in items:
        name, _, alias = item.partition(" as ")
        new = renamed(f"{pkg}.{name.strip()}")
        parent, leaf = (new.rsplit(".", 1) if new != f"{pkg}.{name.strip()}" else (pkg, name.strip()))
        groups.setdefault(parent, []).append(leaf + (f" as {alias.strip()}" if alias else ""))
    if list(groups) == [pkg]:
        return m[0]
    lines = [f"{m['indent']}from {parent} import {', '.join(names)}" for parent, names in groups.items()]
    lines[0] += m["tail"]
    return "\n".join(lines)


def rewrite_text(text: str, python: bool) -> str:
    if python or "from " in text:
        text = _FROM.sub(_rewrite_from, text)
    text = _DOTTED.sub(lambda m: MODULES[m[1]], text)
    return _PATHS.sub(lambda m: _MOVES[m[1]], text)


def rewrite_files(dry: bool) -> list[str]:
    changed = []
    for path in tracked():
        p = Path(path)
        if path in SKIP or p.suffix in BINARY or not p.is_file():
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite_text(text, p.suffix in (".py", ".pyi"))
        if new != text:
            changed.append(path)
            if not dry:
                p.write_text(new, encoding="utf-8")
    return changed


def sort_imports(paths: list[str]) -> None:
    """ruff's import sorting on the Python files rewritten (a split ``from`` line may land out of order)."""
    py = [p for p in paths if p.endswith(".py")]
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if py and Path(ruff).exists():
        subprocess.run([ruff, "check", "--quiet", "--select", "I", "--fix", "--exit-zero", *py], check=True)
    elif py:
        print("relayout: ruff not found, imports left unsorted (run: ruff check --select I --fix)", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    args = parser.parse_args(argv)
    os.chdir(git("rev-parse", "--show-toplevel").strip())
    moved = move_files(args.check)
    made = [] if args.check else create_packages(False)
    changed = rewrite_files(args.check)
    if not args.check:
        sort_imports(changed)
        git("add", "-u")
    for line in moved:
        print(f"moved    {line}")
    for path in made:
        print(f"created  {path}")
    for path in changed:
        print(f"{'stale' if args.check else 'rewrote'}  {path}")
    return 1 if args.check and (moved or changed) else 0


if __name__ == "__main__":
    sys.exit(main())
