"""Rummy Referee: a pure rules core (``cards``, ``melds``, ``variants``, ``match``) and thin layers over it.

``referee.rules.native`` puts the same rules core compiled by mypyc ahead of the sources when a fresh build exists.
"""

from referee.rules import native as _native

_native.extend(__path__, "referee")
_native.load()
