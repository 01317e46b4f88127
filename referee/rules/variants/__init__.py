"""The variant registry: ``find("oklahoma")`` returns Arlington, ``all_variants()`` lists every game.

Each variant module exposes ``VARIANTS``, a tuple of ``Variant`` instances.
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache

from referee.rules import native

native.extend(__path__, "referee.rules.variants")  # the compiled variants, when fresh, ahead of these sources

from referee.rules.errors import InvalidOption  # noqa: E402 - after the path is set
from referee.rules.variants.base import Variant  # noqa: E402

__all__ = ["all_variants", "find"]

_MODULES = ("indian", "five_hundred", "oklahoma", "skarney", "iceberg")


@cache
def all_variants() -> tuple[Variant, ...]:
    found: list[Variant] = []
    for name in _MODULES:
        qualified = f"referee.rules.variants.{name}"
        if importlib.util.find_spec(qualified) is None:
            continue
        found.extend(importlib.import_module(qualified).VARIANTS)
    return tuple(found)


def find(name: str) -> Variant:
    """The variant called ``name`` or one of its aliases (case and ``-``/``_`` do not matter).

    :raises InvalidOption: ``UNKNOWN_VARIANT`` listing the known names.
    """
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    for v in all_variants():
        if key == v.name or key in v.aliases:
            return v
    names = ", ".join(v.name for v in all_variants())
    raise InvalidOption("UNKNOWN_VARIANT", f"no variant {name!r}; known: {names}")
