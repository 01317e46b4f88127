"""Search support for bots: deals consistent with a seat's knowledge, and the rules core as a forward model.

``seat_record(match, seat)`` collects what a live seat was shown (never the hidden truth); ``sample_states``
deals the cards it has not seen, uniformly among the consistent deals; ``simulate`` applies actions to a sample
with the full rules. ``TokenCodec`` turns search states into signed tokens for the wire, and
``referee.search.service`` serves all of it as ``rummy.search.v1.SearchService``, the work done in worker processes
(``referee.search.pool`` runs ``referee.search.work``), never on the event loop that runs the matches.
"""

from referee.search.errors import BadToken, KnowledgeMismatch, NotSearchable, SearchError
from referee.search.knowledge import Knowledge, KnowledgeTracker, SeatRecord, know, public_state, seat_record
from referee.search.sampling import Deal, deal, sample_states
from referee.search.simulate import (
    Position,
    Rejection,
    Rollout,
    RolloutPolicy,
    SearchState,
    Simulation,
    position,
    simulate,
)
from referee.search.tokens import TokenCodec

__all__ = [
    "SeatRecord", "Knowledge", "KnowledgeTracker", "seat_record", "public_state", "know",
    "Deal", "deal", "sample_states",
    "SearchState", "Rollout", "RolloutPolicy", "Rejection", "Position", "Simulation", "simulate", "position",
    "TokenCodec",
    "SearchError", "BadToken", "NotSearchable", "KnowledgeMismatch",
]
