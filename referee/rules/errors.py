"""The two kinds of bad action, kept apart as python-chess keeps invalid and illegal moves apart.

``InvalidAction``: the message itself is malformed (no such card, an empty meld, an unknown option); maps to
gRPC ``INVALID_ARGUMENT``. ``IllegalAction``: well formed, but the rules forbid it now; maps to
``FAILED_PRECONDITION``. Both carry a stable upper-case reason code and a message that names the rule.
"""

from __future__ import annotations

__all__ = ["RefereeError", "InvalidAction", "IllegalAction", "InvalidOption"]


class RefereeError(Exception):
    """Base of the referee's typed errors: ``code`` is stable, ``message`` is for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class InvalidAction(RefereeError):
    """The action or its cards cannot be read at all."""


class IllegalAction(RefereeError):
    """The action is well formed but breaks a rule in the current state; the state is unchanged."""


class InvalidOption(RefereeError):
    """A match option or seat count that the variant does not accept."""
