"""Server-side limits: what one client may ask of the referee, so no request can hold it hostage.

Every number a client sends (caps, times, sizes, lengths) is checked here before a match exists. A value past
a limit is refused with ``INVALID_ARGUMENT`` and a reason code naming the limit (``LIMIT_MAX_HANDS``, ...);
too many live matches is ``RESOURCE_EXHAUSTED`` (``LIMIT_LIVE_MATCHES``, ``LIMIT_CLIENT_MATCHES``). Messages
quote client input only through ``shown``, so an error never echoes an unbounded string.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from referee.rules.errors import InvalidOption, RefereeError

__all__ = ["ServerLimits", "DEFAULT_LIMITS", "LimitExceeded", "shown", "check_text", "check_range"]


class LimitExceeded(RefereeError):
    """The server has no room for this request now (maps to ``RESOURCE_EXHAUSTED``)."""


def _limit(default: int, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class ServerLimits:
    """The limits a server enforces; each is a ``referee serve`` flag of the same name (``--max-hands``, ...)."""

    max_hands: int = _limit(1000, "hands per match a client may ask for (asking none gives 100)")
    max_turns_per_hand: int = _limit(2000, "turns per hand a client may ask for (asking none gives 400)")
    max_match_seconds: int = _limit(4 * 3600, "wall-clock seconds of one match; then it ends, ranked by totals")
    min_per_move_ms: int = _limit(10, "the shortest time per decision")
    max_per_move_ms: int = _limit(10 * 60_000, "the longest time per decision")
    max_bank_ms: int = _limit(60 * 60_000, "the largest time bank")
    max_grace_ms: int = _limit(10 * 60_000, "the longest grace period for a disconnected seat")
    min_connect_ms: int = _limit(100, "the shortest wait for seats to join")
    max_connect_ms: int = _limit(10 * 60_000, "the longest wait for seats to join")
    max_forfeit_after: int = _limit(1000, "the most consecutive missed turns before a forfeit")
    max_record_bytes: int = _limit(64 * 2**20, "bytes of one match's record; then the match ends, ranked by totals")
    max_live_matches: int = _limit(1000, "matches waiting or running, over all clients")
    max_client_matches: int = _limit(256, "matches waiting or running created from one client address")
    max_id_length: int = _limit(128, "characters of a match id, token, seed or variant name")
    max_name_length: int = _limit(64, "characters of a seat or bot name, an option name or value")
    max_options: int = _limit(32, "options of one match")
    max_stacked_decks: int = _limit(1000, "stacked decks in one CreateMatch")
    max_deck_cards: int = _limit(512, "cards in one stacked deck")
    max_message_bytes: int = _limit(4 * 2**20, "bytes of one message a client sends (larger ones are refused by gRPC)")
    max_client_streams: int = _limit(1024, "long-lived calls with no credential (Watch, GetResult with wait but no admin "
                                     "token, Play by an unknown bot token) open from one client address")
    max_joining: int = _limit(1024, "Play streams that have not yet sent their Join, over all clients; past it the oldest "
                              "is closed")
    max_unclaimed_streams: int = _limit(64, "Play streams by bot tokens no match names and no admin minted (a server "
                                        "with no admin token), over all clients")
    max_match_watchers: int = _limit(4, "Watch streams on one match, the admin's aside (each event is one write per "
                                     "watcher on the process that runs the matches: a crowd of spectators belongs on "
                                     "the viewer's shared event stream, in a process of its own)")
    max_watchers: int = _limit(1024, "Watch streams over all matches, the admin's aside")
    max_watch_queue: int = _limit(4096, "events waiting for one Watch stream; a slower reader is dropped (WATCH_TOO_SLOW)")
    max_outbox_bytes: int = _limit(8 * 2**20, "bytes waiting for one Play stream; a client that reads slower is dropped "
                                   "(SLOW_READER) and may rejoin")
    idle_connection_s: int = _limit(300, "seconds a connection with no call open is kept")
    keepalive_s: int = _limit(30, "seconds between keepalive pings on a quiet connection; a peer that does not answer "
                              "within 20 s is dropped")
    max_finished_kept: int = _limit(10_000, "finished matches kept in memory for GetResult; older ones are forgotten "
                                    "(their records stay)")
    # Search (rummy.search.v1.SearchService): its work runs in a pool of processes, each client served in turn.
    search_workers: int = _limit(0, "processes doing search work (SampleDeals, Simulate); 0: one per core")
    max_search_client_calls: int = _limit(32, "search calls of one seat (or, without a seat, one address) queued or "
                                          "running; more are refused LIMIT_SEARCH_CLIENT_CALLS")
    max_search_calls: int = _limit(256, "search calls queued or running over all clients; more are refused "
                                   "LIMIT_SEARCH_CALLS")
    max_search_ms: int = _limit(10_000, "milliseconds one search call may take, waiting and working (less if the "
                                "call's own deadline is nearer); then it ends DEADLINE_EXCEEDED, LIMIT_SEARCH_TIME")
    # the HTTP viewer (`--http`): it shares the event loop that runs every match
    viewer_max_connections: int = _limit(256, "HTTP connections open to the viewer at once (more are answered 503 "
                                         "LIMIT_CONNECTIONS and closed)")
    viewer_client_connections: int = _limit(64, "HTTP connections open to the viewer from one client address")
    viewer_idle_s: int = _limit(15, "seconds an HTTP connection may stay idle, or take to send a request's headers, "
                                "before the viewer closes it")
    viewer_sse_streams: int = _limit(128, "live-match event streams (SSE) open at once")
    viewer_client_sse_streams: int = _limit(16, "live-match event streams (SSE) open from one client address")
    viewer_jobs: int = _limit(1, "viewer jobs (reading or replaying a record, encoding a page) run at once, off the "
                              "event loop; 16 more may wait, then the viewer answers 503 VIEWER_BUSY")
    viewer_cached_frames: int = _limit(60_000, "replayed frames the viewer keeps over all records, about 4 KB each "
                                       "(older records are replayed again when asked)")

    @classmethod
    def flags(cls) -> Iterable[tuple[str, int, str]]:
        """(field, default, what it bounds) of every limit, for the command line and the README."""
        return ((f.name, f.default, f.metadata["doc"]) for f in fields(cls))  # type: ignore[misc]


DEFAULT_LIMITS = ServerLimits()


def shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters: messages never echo unbounded input."""
    return repr(text if len(text) <= limit else text[:limit] + "...") + (f" ({len(text)} characters)" if len(text) > limit else "")


def check_text(what: str, text: str, limit: int) -> str:
    """:raises InvalidOption: ``LIMIT_LENGTH`` when ``text`` is longer than ``limit``."""
    if len(text) > limit:
        raise InvalidOption("LIMIT_LENGTH", f"{what} is {len(text)} characters long; the most this server accepts is {limit}")
    return text


def check_range(name: str, value: int, low: int, high: int, unit: str = "") -> int:
    """:raises InvalidOption: ``LIMIT_<NAME>`` when ``value`` is outside ``[low, high]``."""
    if not low <= value <= high:
        raise InvalidOption(f"LIMIT_{name.upper()}", f"{name} = {value}{unit} is outside this server's limits "
                            f"[{low}{unit}, {high}{unit}] (see `referee serve --help`)")
    return value


def check_options(options: Mapping[str, str], limits: ServerLimits) -> None:
    if len(options) > limits.max_options:
        raise InvalidOption("LIMIT_OPTIONS", f"{len(options)} options given; the most this server accepts is {limits.max_options}")
    for key, value in options.items():
        check_text("an option name", key, limits.max_name_length)
        check_text(f"option {shown(key)}", value, limits.max_name_length)
