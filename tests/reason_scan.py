"""Where the sources give a reason code: an ``ast`` walk over the referee and the stdio bridge.

The patterns are the ones the code really uses (read it before adding one): the typed errors' first argument
(``IllegalAction("CODE", ...)``), ``require(cond, "CODE", ...)``, the servers' ``_abort(context, status, "CODE",
...)`` and the search service's ``_Refused(status, "CODE", ...)``, ``Connection.drop("CODE", ...)``,
``_reject(seat, rid, "CODE", ...)``, Simulate's ``Rejection(i, "CODE", ...)``, a ``code="CODE"`` keyword (an
``ActionRejected`` built in place), a ``code = ...`` or ``refusal = (rid, "CODE", ...)`` assignment,
``check_range("name", ...)`` (which raises ``LIMIT_NAME``), a module constant ``REASON_... = "CODE"``, and the
verdict codes Evaluate returns (``_why_invalid`` and ``judge_declaration`` in Indian, ``reason`` in a tuple
assignment). Each hit carries the gRPC status it ends a call with, or None where it travels inside a message.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "referee", ROOT / "protos" / "python" / "rummy" / "wire",
           ROOT / "clients" / "python" / "rummybot" / "stdio.py")

CODE = re.compile(r"^[A-Z][A-Z0-9_]*[A-Z0-9]$")

# the status each typed error maps to (referee.service.server.STATUS_FOR, referee.search.work.STATUS)
ERROR_STATUS = {
    "IllegalAction": "FAILED_PRECONDITION",
    "InvalidAction": "INVALID_ARGUMENT",
    "InvalidOption": "INVALID_ARGUMENT",
    "LimitExceeded": "RESOURCE_EXHAUSTED",
    "BadToken": "PERMISSION_DENIED",
    "NotSearchable": "FAILED_PRECONDITION",
    "KnowledgeMismatch": "INTERNAL",
    "OutOfTime": "DEADLINE_EXCEEDED",
    "KeyReused": "ALREADY_EXISTS",
}
# the browser viewer answers HTTP with its own codes (HTTP statuses, not gRPC): not in this list
EXCLUDED = {"referee/tools/viewer.py", "referee/service/reasons.py"}  # and the list itself
VERDICT_FUNCTIONS = {"_why_invalid", "judge_declaration"}
GRPC_STATUS = {"INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "PERMISSION_DENIED", "UNAUTHENTICATED",
               "NOT_FOUND", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "ALREADY_EXISTS"}


@dataclass(frozen=True)
class Hit:
    code: str
    status: str | None  # the gRPC status it ends a call with; None: it travels in a message (ActionRejected, ...)
    where: str


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _codes(node: ast.expr | None) -> Iterator[str]:
    """The code constants ``node`` may evaluate to (a constant, or either branch of ``a if c else b``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _codes(node.body)
        yield from _codes(node.orelse)


def _status(node: ast.expr) -> str | None:
    """``grpc.StatusCode.NAME`` -> ``NAME``."""
    return node.attr if isinstance(node, ast.Attribute) and _name(node.value) == "StatusCode" else None


def _arg(call: ast.Call, i: int) -> ast.expr | None:
    return call.args[i] if len(call.args) > i else None


class _Scan(ast.NodeVisitor):
    def __init__(self, path: Path) -> None:
        self.path = path.relative_to(ROOT).as_posix()
        self.hits: list[Hit] = []
        self.dynamic: list[str] = []  # a typed error whose code is built at run time (only check_range may)
        self.function: list[str] = []

    def add(self, node: ast.AST, codes: Iterator[str], status: str | None) -> None:
        for code in codes:
            self.hits.append(Hit(code, status, f"{self.path}:{getattr(node, 'lineno', 0)}"))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.function.append(node.name)
        self.generic_visit(node)
        self.function.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        name = _name(node.func)
        first = _arg(node, 0)
        if name in ERROR_STATUS:
            if isinstance(first, ast.JoinedStr):
                self.dynamic.append(f"{self.path}:{node.lineno}")
            self.add(node, _codes(first), ERROR_STATUS[name])
        elif name == "require":
            self.add(node, _codes(_arg(node, 1)), ERROR_STATUS["IllegalAction"])
        elif name == "_abort" and len(node.args) >= 3:
            self.add(node, _codes(_arg(node, 2)), _status(node.args[1]))
        elif name == "_Refused" and len(node.args) >= 2:
            self.add(node, _codes(_arg(node, 1)), _status(node.args[0]))
        elif name == "_refused" and len(node.args) >= 2:  # the search branch's pool: _refused("STATUS", "CODE", ...)
            status = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
            self.add(node, _codes(_arg(node, 1)), status if isinstance(status, str) else None)
        elif name == "drop" and isinstance(node.func, ast.Attribute):
            self.add(node, _codes(first), "RESOURCE_EXHAUSTED")  # the Play stream ends with it (server.Play)
        elif name == "_reject":
            self.add(node, _codes(_arg(node, 2)), None)
        elif name == "Rejection":
            self.add(node, _codes(_arg(node, 1)), None)
        elif name == "check_range" and isinstance(first, ast.Constant) and isinstance(first.value, str):
            self.add(node, iter([f"LIMIT_{first.value.upper()}"]), ERROR_STATUS["InvalidOption"])
        for kw in node.keywords:
            if kw.arg == "code":
                self.add(node, _codes(kw.value), None)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                if target.id == "code" or (target.id.startswith("REASON_") and not self.function):
                    self.add(node, _codes(node.value), None)
                elif target.id == "refusal" and isinstance(node.value, ast.Tuple):
                    for elt in node.value.elts:
                        self.add(node, _codes(elt), None)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                for t, v in zip(target.elts, node.value.elts, strict=False):
                    if isinstance(t, ast.Name) and t.id == "reason":
                        self.add(node, _codes(v), None)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name) and node.target.id == "refusal" and isinstance(node.value, ast.Tuple):
            for elt in node.value.elts:
                self.add(node, _codes(elt), None)
        self.generic_visit(node)

    def visit_Tuple(self, node: ast.Tuple) -> None:
        """A refusal written out as ``("STATUS", "CODE", message)`` (the search pool's admission answers)."""
        elts = node.elts
        if len(elts) >= 2 and isinstance(elts[0], ast.Constant) and elts[0].value in GRPC_STATUS:
            self.add(node, _codes(elts[1]), str(elts[0].value))
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if self.function and self.function[-1] in VERDICT_FUNCTIONS:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for v in values:
                self.add(node, _codes(v), None)
        self.generic_visit(node)


def _files(root: Path = ROOT) -> Iterator[Path]:
    for src in SOURCES:
        src = root / src.relative_to(ROOT)
        if src.is_file():
            yield src
        elif src.is_dir():
            yield from sorted(p for p in src.rglob("*.py") if "__pycache__" not in p.parts
                              and p.relative_to(root).as_posix() not in EXCLUDED)


def scan(root: Path = ROOT) -> tuple[list[Hit], list[str]]:
    """Every reason code the sources under ``root`` give, and the typed errors built with a run-time code."""
    hits: list[Hit] = []
    dynamic: list[str] = []
    for path in _files(root):
        s = _Scan(path if root == ROOT else ROOT / path.relative_to(root))
        s.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        hits += s.hits
        dynamic += s.dynamic
    return hits, dynamic


if __name__ == "__main__":  # an inventory: code, statuses, where
    import sys

    found, built = scan(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
    by: dict[str, list[Hit]] = {}
    for h in found:
        by.setdefault(h.code, []).append(h)
    for code in sorted(by):
        statuses = sorted({str(h.status) for h in by[code]})
        print(f"{code:28} {','.join(statuses):40} {by[code][0].where}")
    print("dynamic:", built)
