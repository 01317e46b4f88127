"""The search service's typed errors (each maps to one gRPC status in ``referee.search.service``)."""

from __future__ import annotations

from referee.rules.errors import RefereeError

__all__ = ["SearchError", "BadToken", "NotSearchable", "KnowledgeMismatch", "OutOfTime"]


class SearchError(RefereeError):
    """Base of the search errors."""


class BadToken(SearchError):
    """A state token this server did not sign, or one that was altered (maps to ``PERMISSION_DENIED``)."""


class NotSearchable(SearchError):
    """Nothing to sample or simulate now: the hand is over, or the state holds something the sampler does not
    know how to redact (maps to ``FAILED_PRECONDITION``)."""


class KnowledgeMismatch(SearchError):
    """The seat's record does not add up to its view (a sampler bug, never the client's fault: ``INTERNAL``)."""


class OutOfTime(SearchError):
    """The call's time ran out (its deadline or the server's ``--max-search-ms``) before its work was done: the
    work stops there, wherever it was (maps to ``DEADLINE_EXCEEDED``)."""
