"""The rules core's records that write their own ``__init__`` (so that mypyc compiles it, see variants/base.py)
take exactly their fields, in order, with the same defaults, and set each one: read from the source, since the
compiled classes hide their signatures."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ("referee/rules/cards.py", "referee/rules/melds.py", "referee/rules/variants/base.py",
        "referee/search/knowledge.py", "environments/rummy_env/game.py")  # (the last two: an env makes one a step)


def _dataclasses_with_written_init() -> list[tuple[str, ast.ClassDef, ast.FunctionDef]]:
    found = []
    for rel in CORE:
        for node in ast.parse((ROOT / rel).read_text()).body:
            if not isinstance(node, ast.ClassDef) or not any("dataclass" in ast.unparse(d) for d in node.decorator_list):
                continue
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    found.append((rel, node, item))
    return found


WRITTEN = _dataclasses_with_written_init()


def test_the_hot_records_write_their_own_init() -> None:
    names = {cls.name for _, cls, _ in WRITTEN}
    assert {"Event", "Decision", "SeatView", "TableMeld", "Discard", "Offer", "Meld", "LayOff", "Group", "Placed",
            "MeldReading", "SeatRecord", "StepResult"} <= names


@pytest.mark.parametrize(("source", "cls", "init"), WRITTEN, ids=[c.name for _, c, _ in WRITTEN])
def test_a_written_init_takes_the_fields_in_order_with_their_defaults(source: str, cls: ast.ClassDef,
                                                                    init: ast.FunctionDef) -> None:
    fields = [(s.target.id, ast.unparse(s.value) if s.value is not None else None)
              for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
              and "field(" not in ast.unparse(s.value or ast.Constant(None))]
    args = init.args.args[1:]
    defaults: list[str | None] = [None] * (len(args) - len(init.args.defaults)) + [ast.unparse(d) for d in init.args.defaults]
    assert [(a.arg, d) for a, d in zip(args, defaults, strict=True)] == fields, f"{source}: {cls.name}.__init__"
    assigned = [ast.unparse(c.args[1]).strip("'\"") for c in ast.walk(init)
                if isinstance(c, ast.Call) and ast.unparse(c.func) == "object.__setattr__"]
    assigned += [t.attr for a in ast.walk(init) if isinstance(a, ast.Assign) for t in a.targets  # (not frozen)
                 if isinstance(t, ast.Attribute) and ast.unparse(t.value) == "self"]
    assert assigned == [name for name, _ in fields], f"{source}: {cls.name}.__init__ sets each field once"


def _actions() -> list[object]:
    from referee.rules.cards import parse_cards
    from referee.rules.variants import base as b

    a, b2, c = parse_cards("AS 2S JK")
    group = b.Group((a, b2), ((c, a),))
    return [b.DrawStock(), b.TakeDiscards(), b.TakeDiscards(0, group, None), b.TakeDiscards(2, None, 3), b.Meld((group,)),
            b.LayOff(1, (a,)), b.LayOff(1, (a,), ((c, a),)), b.ExchangeWild(2, a, c), b.Discard(a), b.Discard(b2),
            b.Declare((group,), a), b.Declare((group,)), b.Drop(), b.EndTurn(), b.Offer(a), b.AcceptOffer(),
            b.DeclineOffer(), group, b.Group((a, b2))]


def _fields(x: object) -> tuple[object, ...]:
    return tuple(getattr(x, f.name) for f in dataclasses.fields(x))  # type: ignore[arg-type]


def test_an_action_hashes_and_compares_as_the_generated_methods_would() -> None:
    """Written ``__hash__``/``__eq__`` (compiled): the hash of the fields' tuple, equal when of one class with equal
    fields; so sets and dicts of actions hold and order them as before."""
    actions = _actions()
    for x in actions:
        assert hash(x) == hash(_fields(x))
        for y in actions:
            assert (x == y) == (type(x) is type(y) and _fields(x) == _fields(y))
            assert (x != y) == (not x == y)
        rebuilt = type(x)(*_fields(x))
        assert rebuilt == x and hash(rebuilt) == hash(x) and rebuilt is not x
