"""Search support for bots: deals consistent with a seat's knowledge, and the rules core as a forward model.

``seat_record(match, seat)`` collects what a live seat was shown (never the hidden truth); ``sample_states``
deals the cards it has not seen, uniformly among the consistent deals; ``simulate`` applies actions to a sample
with the full rules. ``TokenCodec`` turns search states into signed tokens for the wire, and
``referee.search.service`` serves all of it as ``rummy.search.v1.SearchService``, the work done in worker processes
(``referee.search.pool`` runs ``referee.search.work``), never on the event loop that runs the matches.
``knowledge`` is compiled with the rules core when the build is fresh (the environments feed it at every step).
"""

from referee.rules import native as _native

_native.extend(__path__, "referee.search")
_native.load("referee.search")

from referee.search.errors import BadToken, KnowledgeMismatch, NotSearchable, SearchError  # noqa: E402 - after the compiled modules are put first
from referee.search.knowledge import (  # noqa: E402
    Knowledge,
    KnowledgeTracker,
    SeatRecord,
    know,
    public_state,
    seat_record,
)
from referee.search.sampling import Deal, deal, sample_states  # noqa: E402
from referee.search.simulate import (  # noqa: E402
    Position,
    Rejection,
    Rollout,
    RolloutPolicy,
    SearchState,
    Simulation,
    position,
    simulate,
)
from referee.search.tokens import TokenCodec  # noqa: E402

__all__ = [
    "SeatRecord", "Knowledge", "KnowledgeTracker", "seat_record", "public_state", "know",
    "Deal", "deal", "sample_states",
    "SearchState", "Rollout", "RolloutPolicy", "Rejection", "Position", "Simulation", "simulate", "position",
    "TokenCodec",
    "SearchError", "BadToken", "NotSearchable", "KnowledgeMismatch",
]
