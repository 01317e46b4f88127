"""The folders by layer hold: who may import whom (an AST walk of every module), one version for the four Python
distributions, and the SDK installable alone (its wheel in an empty virtual environment plays a match)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# import roots (the folders on sys.path) and the top-level packages under each
TREES = {ROOT: ("referee", "tournaments"), ROOT / "clients" / "python": ("rummybot",),
         ROOT / "protos" / "python": ("rummy",)}
SERVER_ONLY = ("numpy", "scipy", "matplotlib", "aiohttp", "rich", "openskill", "structlog")
PYPROJECTS = {"rummy-referee": ROOT / "pyproject.toml", "rummy-rules": ROOT / "referee" / "rules" / "pyproject.toml",
              "rummy-protos": ROOT / "protos" / "python" / "pyproject.toml",
              "rummybot": ROOT / "clients" / "python" / "pyproject.toml"}


# ------------------------------------------------------------------------------------------ the import graph


def modules(trees: dict[Path, tuple[str, ...]]) -> dict[str, Path]:
    """Every module's dotted name and file (a package by its ``__init__.py``)."""
    out: dict[str, Path] = {}
    for base, tops in trees.items():
        for top in tops:
            for path in sorted((base / top).rglob("*.py")):
                rel = path.relative_to(base).with_suffix("")
                out[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """What ``name`` imports when it runs (function-level imports too; ``if TYPE_CHECKING:`` blocks are not run):
    the module itself for ``from pkg import module``, else the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    unrun = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
             for stmt in node.body for n in ast.walk(stmt)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in unrun:
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for a in node.names:
                yield f"{base}.{a.name}" if f"{base}.{a.name}" in known else base


def _under(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def violations(trees: dict[Path, tuple[str, ...]]) -> list[str]:
    """Every import that crosses a layer the wrong way, and every import circle."""
    known = modules(trees)
    first_party = {m.split(".")[0] for m in known}
    stdlib = set(sys.stdlib_module_names)
    clients = {m for m, p in known.items() if ROOT / "clients" in p.parents}
    out: list[str] = []
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        graph[name] = set()
        for target in imports(name, path, known):
            top = target.split(".")[0]
            if target in known and target != name:
                graph[name].add(target)
            if _under(name, "referee", "tournaments") and (target in clients or _under(target, "rummybot")):
                out.append(f"{name} imports {target}: nothing of the server imports from clients/")
            if _under(name, "rummybot") and (top not in first_party | stdlib | {"grpc", "google"}
                                             or _under(target, "referee", "tournaments")
                                             and not _under(target, "referee.rules")):
                out.append(f"{name} imports {target}: the SDK takes grpc, protobuf, the rules core, rummy only")
            if _under(name, "referee.rules") and top not in stdlib and not _under(target, "referee.rules"):
                out.append(f"{name} imports {target}: the rules core imports the standard library only")
            if _under(name, "rummy.wire") and top not in stdlib | {"grpc", "google", "uvloop", "rummy"} \
                    and not _under(target, "referee.rules"):
                out.append(f"{name} imports {target}: the wire takes protobuf and the rules core only")
    out += [f"import circle: {' -> '.join(c)}" for c in cycles(graph)]
    return out


def test_no_layer_imports_the_wrong_way_and_there_is_no_import_circle() -> None:
    assert violations(TREES) == []


def test_the_import_check_catches_each_kind_of_break(tmp_path: Path) -> None:
    """The checker itself, on a small tree with one of each fault."""
    files = {
        "referee/__init__.py": "",
        "referee/rules/__init__.py": "",
        "referee/rules/cards.py": "import numpy\nfrom referee.service import server\n",
        "referee/service/__init__.py": "",
        "referee/service/server.py": "def f():\n    from rummybot.sdk import run_bot\n",
        "tournaments/__init__.py": "",
        "tournaments/runner.py": "from tournaments import cluster\n",
        "tournaments/cluster.py": "from tournaments.runner import plan\n"
                                  "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import rummybot\n",
        "rummybot/__init__.py": "import structlog\nfrom referee.rules import cards\nfrom referee.service import server\n",
        "rummybot/sdk.py": "import grpc\nfrom rummy.wire import protocodec\n",
        "rummy/__init__.py": "",
        "rummy/wire/__init__.py": "",
        "rummy/wire/protocodec.py": "from google.protobuf import message\nimport referee.rules\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = violations({tmp_path: ("referee", "tournaments", "rummybot", "rummy")})
    assert sorted(found) == sorted([
        "referee.rules.cards imports numpy: the rules core imports the standard library only",
        "referee.rules.cards imports referee.service.server: the rules core imports the standard library only",
        "referee.service.server imports rummybot.sdk: nothing of the server imports from clients/",
        "rummybot imports structlog: the SDK takes grpc, protobuf, the rules core, rummy only",
        "rummybot imports referee.service.server: the SDK takes grpc, protobuf, the rules core, rummy only",
        "import circle: tournaments.cluster -> tournaments.runner",
    ])


# ------------------------------------------------------------------------------------------ one version


def test_the_four_distributions_have_the_project_version_and_pin_each_other_to_it() -> None:
    version = (ROOT / "VERSION").read_text().strip()
    for name, path in PYPROJECTS.items():
        project = tomllib.loads(path.read_text())["project"]
        assert (project["name"], project["version"]) == (name, version), path
        for dep in project.get("dependencies", []):
            dist = dep.split(";")[0].split("==")[0].split(">")[0].split("<")[0].strip()
            if dist in PYPROJECTS:
                assert dep.split("#")[0].strip() == f"{dist}=={version}", f"{path}: {dep}"


def _xml_text(path: Path, tag: str) -> str:
    """The text of a top-level element of a Maven pom (its namespace ignored)."""
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    ns = root.tag.split("}")[0] + "}" if root.tag.startswith("{") else ""
    found = root.find(ns + tag)
    assert found is not None and found.text, f"{path}: no <{tag}>"
    return found.text.strip()


def _match(path: Path, pattern: str) -> str:
    """The first group of ``pattern`` in the file (one line each, so a moved or reworded line fails loudly)."""
    import re

    found = re.findall(pattern, path.read_text(encoding="utf-8"), re.M)
    assert len(found) == 1, f"{path}: expected one match of {pattern!r}, found {found}"
    return str(found[0])


def sdk_versions() -> dict[str, str]:
    """Where each package and SDK states its version, and what it says: the package manifests of every ecosystem,
    their lock files' entry for the package itself, and the ``sdk`` string each SDK sends in Join."""
    clients = ROOT / "clients"
    node_lock = json.loads((clients / "node" / "package-lock.json").read_text())
    cargo_lock = tomllib.loads((clients / "rust" / "Cargo.lock").read_text())
    return {
        "clients/node/package.json": json.loads((clients / "node" / "package.json").read_text())["version"],
        "clients/node/package-lock.json": node_lock["version"],
        "clients/node/package-lock.json packages['']": node_lock["packages"][""]["version"],
        "clients/node/src/sdk.ts SDK_VERSION": _match(clients / "node/src/sdk.ts",
                                                      r'^export const SDK_VERSION = "node/(.+)";$'),
        "clients/rust/Cargo.toml": tomllib.loads((clients / "rust" / "Cargo.toml").read_text())["package"]["version"],
        "clients/rust/Cargo.lock": next(p["version"] for p in cargo_lock["package"] if p["name"] == "rummybot"),
        "clients/java/pom.xml": _xml_text(clients / "java" / "pom.xml", "version"),
        "clients/java RummyBot.SDK_VERSION": _match(clients / "java/src/main/java/io/rummyreferee/bot/RummyBot.java",
                                                    r'SDK_VERSION = "java/(.+)";$'),
        "clients/cpp/CMakeLists.txt": _match(clients / "cpp/CMakeLists.txt", r"^project\(rummybot VERSION (\S+) "),
        "clients/cpp kSdkVersion": _match(clients / "cpp/include/rummybot/sdk.h", r'kSdkVersion = "cpp/(.+)";$'),
        "clients/go rummybot.Version": _match(clients / "go/rummybot/bot.go", r'^const Version = "(.+)"$'),
        "clients/python SDK_VERSION": _match(clients / "python/rummybot/sdk.py", r'^SDK_VERSION = "python/(.+)"$'),
        "referee/service/server.py VERSION": _match(ROOT / "referee/service/server.py", r'^VERSION = "(.+)"$'),
    }


def test_every_sdk_carries_the_project_version() -> None:
    """One version for the whole project: every SDK's manifest (npm, Cargo, Maven, CMake, the Go module's constant),
    its lock file and the ``sdk`` string it sends say what VERSION says (the Rust SDK's string is built from
    its manifest by the compiler, ``concat!("rust/", env!("CARGO_PKG_VERSION"))``)."""
    version = (ROOT / "VERSION").read_text().strip()
    found = sdk_versions()
    assert {where.split("/")[1].split()[0] for where in found if where.startswith("clients/")} == {
        "node", "rust", "java", "cpp", "go", "python"}
    assert {where: v for where, v in found.items() if v != version} == {}, f"VERSION is {version}"
    sdk_rs = (ROOT / "clients" / "rust" / "src" / "sdk.rs").read_text()
    assert 'SDK_VERSION: &str = concat!("rust/", env!("CARGO_PKG_VERSION"));' in sdk_rs


def test_the_version_check_sees_a_stale_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the Go SDK's file with an older version: the check reads it and reports it (so a bump that misses
    one SDK fails the test above)."""
    go = tmp_path / "clients" / "go" / "rummybot"
    go.mkdir(parents=True)
    (go / "bot.go").write_text('package rummybot\n\nconst Version = "0.0.9"\n')
    assert _match(go / "bot.go", r'^const Version = "(.+)"$') == "0.0.9"
    with pytest.raises(AssertionError, match="expected one match"):
        _match(go / "bot.go", r'^const SDKVersion = "(.+)"$')


# ------------------------------------------------------------------------------------------ the SDK alone


def _copy(src: Path, dst: Path) -> Path:
    """A distribution's folder copied out of the checkout, so its build leaves nothing behind in it."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    return dst


def _deps_folder(tmp: Path) -> Path:
    """grpcio, protobuf (and grpcio's typing-extensions) as this environment has them, linked into a folder of
    their own: the empty environment sees those and nothing else of ours, with no network."""
    import google.protobuf
    import grpc
    import typing_extensions

    folder = tmp / "deps"
    (folder / "google").mkdir(parents=True)
    site = Path(grpc.__file__).parents[1]
    links = {folder / "grpc": Path(grpc.__file__).parent,
             folder / "google" / "protobuf": Path(google.protobuf.__file__).parent,
             folder / "typing_extensions.py": Path(typing_extensions.__file__)}
    for info in [*site.glob("grpcio-*.dist-info"), *site.glob("protobuf-*.dist-info"),
                 *site.glob("typing_extensions-*.dist-info")]:
        links[folder / info.name] = info
    upb = Path(google.protobuf.__file__).parents[1] / "_upb"
    if upb.is_dir():
        links[folder / "google" / "_upb"] = upb
    for link, target in links.items():
        link.symlink_to(target)
    return folder


def _run(argv: list[str], cwd: Path, timeout: float = 120, env: dict[str, str] | None = None) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    done = subprocess.run(argv, cwd=cwd, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.timeout(240)
def test_the_sdk_wheel_installs_alone_and_its_greedy_bot_plays_a_match(tmp_path: Path) -> None:
    """rummybot's wheel, with the rules core's and the generated modules' wheels, in an empty virtual environment:
    none of the server's dependencies come with it, and its greedy bot plays a match on a referee run from here."""
    wheels = tmp_path / "wheels"
    for name, src in (("rules", ROOT / "referee" / "rules"), ("protos", ROOT / "protos" / "python"),
                      ("sdk", ROOT / "clients" / "python")):
        folder = _copy(src, tmp_path / "src" / name)
        # `python -m build`, as a release does (no isolation: this environment's setuptools, no network)
        _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(wheels), str(folder)],
             cwd=tmp_path)
    assert sorted(w.name.split("-")[0] for w in wheels.glob("*.whl")) == ["rummy_protos", "rummy_rules", "rummybot"]
    venv = tmp_path / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    except (subprocess.CalledProcessError, OSError) as exc:
        pytest.skip(f"cannot create a virtual environment here: {exc}")
    py = venv / "bin" / "python"
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=tmp_path).strip())
    (site / "deps.pth").write_text(f"{_deps_folder(tmp_path)}\n")
    _run([str(py), "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(wheels), "rummybot"],
         cwd=tmp_path)

    installed = json.loads(_run([str(py), "-m", "pip", "list", "--format", "json"], cwd=tmp_path))
    names = {d["name"].lower().replace("_", "-") for d in installed} - {"pip", "setuptools"}
    assert names == {"rummybot", "rummy-rules", "rummy-protos", "grpcio", "protobuf", "typing-extensions"}
    probe = ("import importlib.util, json, referee, rummybot, rummybot.bots.greedy;"
             f"print(json.dumps([[m for m in {list(SERVER_ONLY)!r} if importlib.util.find_spec(m)],"
             " importlib.util.find_spec('referee.service') is not None, list(referee.__path__)]))")
    server_deps, has_service, referee_path = json.loads(_run([str(py), "-c", probe], cwd=tmp_path))
    assert server_deps == [] and not has_service
    assert all(Path(p).is_relative_to(venv) for p in referee_path), "referee.rules comes from the venv only"
    assert (venv / "bin" / "referee-bridge").is_file()

    from tests.serving import free_port, kill, serve

    port = free_port()
    referee = serve(port, tmp_path / "records")
    bots: list[subprocess.Popen[str]] = []
    try:
        result = _play(port, py, tmp_path, bots)
    finally:
        for b in bots:
            b.kill()
            b.wait()
        kill(referee)
    assert result["status"] == "MATCH_STATUS_FINISHED", result
    assert not result.get("forfeited"), result


def _play(port: int, py: Path, tmp: Path, bots: list[subprocess.Popen[str]]) -> dict[str, object]:
    """Two of the venv's greedy bots seated in a one-hand match; the match's result as JSON."""
    import asyncio

    import grpc
    from google.protobuf.json_format import MessageToDict

    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    tokens = [f"venv-greedy-{i}-{os.getpid()}" for i in range(2)]
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for i, token in enumerate(tokens):
        log = (tmp / f"bot-{i}.log").open("w")
        bots.append(subprocess.Popen([str(py), "-m", "rummybot.bots.greedy", "--referee", f"127.0.0.1:{port}"],
                                     cwd=tmp, env={**clean, "RUMMY_BOT_TOKEN": token}, stdout=log, stderr=log,
                                     text=True))

    async def play() -> dict[str, object]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            created = await stub.CreateMatch(pb.CreateMatchRequest(
                variant="indian", seats=[pb.SeatSpec(name=f"greedy-{i}", bot_token=t) for i, t in enumerate(tokens)],
                seed="layout", max_hands=1, time_control=pb.TimeControl(per_move_ms=5000, connect_ms=60000)))
            result = (await stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=150)).result
            return MessageToDict(result)

    return asyncio.run(play())
