"""The rules core: cards, melds, variants, a match; pure Python, no third-party import, no I/O.

Its own distribution (rummy-rules, ``referee/rules/pyproject.toml``), imported by the referee, the Python SDK, the
search service and the environments alike: one copy of every rule. ``referee.rules.native`` puts the same modules
compiled by mypyc ahead of these sources when a fresh build exists (a checkout after ``make``; never a wheel).
"""

from referee.rules import native as _native

_native.extend(__path__, "referee.rules")
_native.load("referee.rules")
