"""Every reason code the referee gives, with its gRPC status and one line of meaning: the one list bot authors read.

A code names one fault in every variant (a card not held is ``CARD_NOT_IN_HAND`` in all of them). The list is
checked against the sources by ``tests/test_reason_codes.py`` (an ``ast`` scan: a code raised but not listed, or
listed but raised nowhere, fails), and ``docs/REASON-CODES.md`` is made from it::

    python -m referee.service.reasons > docs/REASON-CODES.md

``pending`` marks a code another branch raises that this tree cannot yet show (the test exempts it until the
merge, when the mark is removed).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reason", "GROUPS", "REASONS", "BY_CODE", "markdown"]

FP = ("FAILED_PRECONDITION",)
IA = ("INVALID_ARGUMENT",)
RE = ("RESOURCE_EXHAUSTED",)
NONE: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason code: its group (``GROUPS``), the gRPC statuses a call ends with when it carries this code (empty:
    it only travels inside a message), and what it means."""

    code: str
    group: str
    status: tuple[str, ...]
    meaning: str
    pending: str = ""  # raised on another branch, not yet in this tree: where


GROUPS: dict[str, tuple[str, str]] = {
    "illegal": ("Illegal play", "The action is well formed, but the rules forbid it now; the state is unchanged. On the "
                "Play stream it comes back as `ActionRejected.code` and the same request stays open (answer again "
                "before the deadline); in Simulate it is `Rejection.code`; in Evaluate a group's `reason`. The message "
                "cites the clause (see docs/rules/)."),
    "malformed": ("Malformed input", "The message cannot be read or names something that does not exist. A call ends "
                  "with `INVALID_ARGUMENT`; on the Play stream a malformed action is an `ActionRejected` like an "
                  "illegal one."),
    "verdict": ("Evaluate verdicts", "Returned by Evaluate for Indian rummy (a group's `reason`, the declaration's "
                "`declaration_reason`), never raised: why a group or a declaration is not valid (IND-4, IND-5, IND-7)."),
    "limits": ("Limits", "A request past one of the server's limits (`referee serve --help` lists them), or a client "
               "that reads or writes too slowly or too much. A value out of range is `INVALID_ARGUMENT`; no room now is "
               "`RESOURCE_EXHAUSTED` (try later, or close something)."),
    "credentials": ("Credentials", "A token is missing, wrong, or already in use."),
    "service": ("Service", "The match, the seat or the hand asked about is not there (any more), or the referee "
                "itself cannot go on."),
}

REASONS: tuple[Reason, ...] = (
    # ------------------------------------------------------------ illegal play (IllegalAction)
    Reason("NOT_YOUR_TURN", "illegal", FP, "another seat is to act (COM-4)"),
    Reason("HAND_OVER", "illegal", FP, "the hand (deal) is over: nothing more can be played in it"),
    Reason("WRONG_PHASE", "illegal", FP, "the action belongs to another part of the turn: draw first, or you have drawn "
           "already, or a card on offer must be answered first"),
    Reason("NOT_IN_VARIANT", "illegal", FP, "this variant has no such action (a Declare outside Indian rummy, a "
           "discard in Skarney, a take from the pile in Iceberg, ...)"),
    Reason("DRAW_IS_AUTOMATIC", "illegal", FP, "the referee draws for you at the start of the turn (SKA-4, ICE-2)"),
    Reason("CARD_NOT_IN_HAND", "illegal", FP, "a card the action names is not in your hand (for a 500 Rum take: nor "
           "among the cards taken), or not as many copies of it"),
    Reason("STOCK_EMPTY", "illegal", FP, "drawing from an empty stock (closed deck)"),
    Reason("DISCARD_PILE_EMPTY", "illegal", FP, "taking from an empty discard pile (open deck)"),
    Reason("BAD_TAKE_COUNT", "illegal", FP, "a TakeDiscards count this variant does not allow: exactly 1 in Indian "
           "rummy (IND-6), the whole pile (0 or its size) in Fortune and Arlington (FOR-4), at most the pile's size "
           "in 500 Rum (FH-3)"),
    Reason("MUST_DRAW", "illegal", FP, "500 Rum: ending the turn at the draw while the stock still has cards (FH-3, "
           "FH-11)"),
    Reason("MUST_DISCARD", "illegal", FP, "500 Rum: a turn ends with a discard or by going out, not EndTurn (FH-4, "
           "FH-7)"),
    Reason("MUST_MELD_BOTTOM_DISCARD", "illegal", FP, "500 Rum: the bottom-most card taken from the pile is not melded "
           "at once (no meld and no lay_off_on, both, or they do not make a valid meld) (FH-3)"),
    Reason("MUST_MELD_TOP_DISCARD", "illegal", FP, "Fortune and Arlington: taking the pile, its top card is not melded "
           "at once as the variant asks (with two or more hand cards, or laid off under pile_take = any-meld) (FOR-4, "
           "ARL-8)"),
    Reason("NO_MELDING", "illegal", FP, "Indian rummy: a take with a meld or lay_off_on; nothing is melded on the "
           "table (IND-6)"),
    Reason("JOKER_PICKUP_FORBIDDEN", "illegal", FP, "Indian rummy: the open deck's top card is a joker and "
           "take_discarded_joker = forbidden (IND-15)"),
    Reason("EMPTY_GROUP", "illegal", FP, "Indian rummy: a declaration with no groups or an empty group (IND-7)"),
    Reason("BAD_DECLARATION_SIZE", "illegal", FP, "Indian rummy: a declaration must group exactly 13 cards, the 14th "
           "put away (IND-7)"),
    Reason("NO_SUCH_MELD", "illegal", FP, "no meld on the table has that id (the view lists them)"),
    Reason("NOT_YOUR_MELD", "illegal", FP, "a lay-off on a meld you may not build on: your own only in Fortune, "
           "Arlington and Skarney Singles (FOR-5, SKS-1), your side's in Skarney (SKA-6)"),
    Reason("INVALID_MELD", "illegal", FP, "the cards are not a valid meld in this variant (too few, not a set or run, "
           "a set too large, ...)"),
    Reason("AMBIGUOUS_WILD", "illegal", FP, "the wilds could stand for different cards: say which in stands_for"),
    Reason("WILD_CANNOT_STAND_THERE", "illegal", FP, "the stands_for given does not make a valid meld"),
    Reason("CANNOT_LAY_OFF", "illegal", FP, "the cards do not extend that meld"),
    Reason("DEUCES_ONLY_MELD", "illegal", FP, "Fortune: a meld of deuces alone (FOR-2)"),
    Reason("DEUCE_AS_QUEEN_OF_SPADES", "illegal", FP, "Arlington: a deuce stands for the queen of spades in a meld "
           "that is not otherwise natural (ARL-3)"),
    Reason("QUEEN_OF_SPADES_DISCARD", "illegal", FP, "discarding the queen of spades while holding another card "
           "(FOR-10, ARL-4)"),
    Reason("NO_JOKER", "illegal", FP, "Arlington with joker = off: there is no joker to take back (ARL-7)"),
    Reason("ONLY_JOKER_EXCHANGES", "illegal", FP, "Arlington: only the joker may be taken back from a meld, not a "
           "deuce (ARL-7)"),
    Reason("WILD_NOT_THERE", "illegal", FP, "the meld holds no such wild standing for that card (ARL-7, SKA-5)"),
    Reason("NOT_THE_MELDER", "illegal", FP, "Arlington with joker_retrieval = melder: only the seat that melded the "
           "joker may take it back (ARL-7)"),
    Reason("WRONG_NATURAL", "illegal", FP, "Arlington: the natural card given is not the one the joker stands for "
           "(ARL-7)"),
    Reason("CONTRACT_NOT_MET", "illegal", FP, "Skarney: before your side's contract is laid, only the contract itself "
           "(exactly three or four sets of 3, or runs of 3, at once) may be melded; no lay-offs (SKA-3)"),
    Reason("TOO_MANY_WILDS", "illegal", FP, "Skarney: more than one wild card in a meld (SKA-2)"),
    Reason("MIXED_WILD_MELD", "illegal", FP, "Skarney: a meld of wilds only mixes 2s and jokers (SKA-2)"),
    Reason("NOT_A_WILD", "illegal", FP, "Skarney: the card to take from the meld is not a wild (SKA-5)"),
    Reason("NOT_NATURAL", "illegal", FP, "Skarney: the card given for the wild is itself wild (SKA-5)"),
    Reason("OWN_SIDE_MELD", "illegal", FP, "Skarney: wilds are taken only from opponents' melds (SKA-5, SKS-1)"),
    Reason("WILD_ONLY_MELD", "illegal", FP, "Skarney: a meld of wilds only gives up no card (SKA-5)"),
    Reason("LAY_OFF_LIMIT", "illegal", FP, "Skarney: 1 or 2 cards on each meld per turn (SKA-6)"),
    Reason("MUST_OFFER", "illegal", FP, "Skarney: holding more than one card, offer one before the turn ends (SKA-7)"),
    Reason("ONE_CARD", "illegal", FP, "Skarney: holding one card you offer nothing; end the turn (SKA-7)"),
    Reason("NO_OFFER_AFTER_LAST_CARD", "illegal", FP, "Skarney: who drew the last stock card offers nothing; end the "
           "turn (SKA-9)"),
    Reason("NO_JOKERS", "illegal", FP, "Skarney with jokers = off: a joker given to Evaluate (SKA-14)"),
    Reason("NO_WILDS", "illegal", FP, "Iceberg has no wild cards: no stands_for (ICE-3)"),
    Reason("ACES_NEVER_MELD", "illegal", FP, "Iceberg: aces go in front of you, never into melds (ICE-3)"),
    Reason("SPECIAL_MELD_CLOSED", "illegal", FP, "Iceberg: a special meld is laid whole and never laid off on (ICE-4)"),
    # ------------------------------------------------------------ malformed input (InvalidAction, InvalidOption)
    Reason("BAD_CARD", "malformed", IA, "not a card (the text notation is rank then suit: QS, TH, 2C, JK): on the "
           "wire a Card with its rank or suit unset (RANK_UNSPECIFIED, SUIT_UNSPECIFIED), a suited joker or a suitless "
           "natural (a joker is RANK_JOKER with SUIT_NONE); or a discard naming none"),
    Reason("BAD_ACTION", "malformed", IA, "an action that cannot be read (an unknown kind, a negative take count, a "
           "field of the wrong type)"),
    Reason("NO_ACTION", "malformed", IA, "the Action message names no action"),
    Reason("EMPTY_MELD", "malformed", IA, "a Meld with no groups (in 500 Rum, Fortune and Arlington also a group "
           "with no cards)"),
    Reason("EMPTY_LAY_OFF", "malformed", IA, "a LayOff with no cards"),
    Reason("BAD_RANK", "malformed", IA, "Evaluate: a wild rank that is unset (RANK_UNSPECIFIED) or no rank"),
    Reason("NOT_IN_THE_DECK", "malformed", IA, "Evaluate: a card this variant's deck does not hold (or more copies "
           "than it holds)"),
    Reason("HAND_TOO_LARGE", "malformed", IA, "Evaluate, Indian rummy: more than 14 cards (IND-1)"),
    Reason("UNKNOWN_VARIANT", "malformed", IA, "no variant by that name or alias (ListVariants has them)"),
    Reason("UNKNOWN_OPTION", "malformed", IA, "the variant has no option by that name"),
    Reason("BAD_OPTION_VALUE", "malformed", IA, "an option value the variant does not take"),
    Reason("BAD_SEAT_COUNT", "malformed", IA, "the variant is not played by that many seats"),
    Reason("BAD_TEAMS", "malformed", IA, "the teams list does not give one team per seat"),
    Reason("SHORT_DECK", "malformed", IA, "a stacked deck too short to deal the hands"),
    Reason("NO_SEATS", "malformed", IA, "CreateMatch without one SeatSpec per seat"),
    Reason("STACKED_DECKS_DISABLED", "malformed", IA, "stacked decks need a referee started with "
           "--allow-stacked-decks"),
    Reason("NO_JOIN", "malformed", IA, "the first message of a Play stream is not a Join"),
    Reason("NO_SOURCE", "malformed", IA, "search LegalActions with neither a state token nor a seat"),
    Reason("BAD_POLICY", "malformed", IA, "Simulate: a rollout whose policy is unset (ROLLOUT_POLICY_UNSPECIFIED: "
           "leave the rollout unset for none) or no such policy"),
    Reason("BAD_CHARACTERS", "malformed", IA, "search: a seed or id with characters other than printable ASCII"),
    Reason("BAD_LEGAL_INDEX", "malformed", NONE, "stdio bridge: legal_index is not an index of the decision's "
           "legal actions (sent back to the bot as a rejected line)"),
    Reason("MALFORMED_ANSWER", "malformed", NONE, "stdio bridge: a line that is not a JSON answer to an open "
           "decision (sent back to the bot as a rejected line)"),
    # ------------------------------------------------------------ Evaluate verdicts (returned, not raised)
    Reason("VALID", "verdict", NONE, "Indian rummy: the groups make a valid declaration (IND-7)"),
    Reason("WRONG_CARD_COUNT", "verdict", NONE, "a declaration arranges exactly 13 cards (IND-7)"),
    Reason("INVALID_GROUP", "verdict", NONE, "a group is neither a sequence nor a set (IND-4, IND-5)"),
    Reason("TOO_FEW_SEQUENCES", "verdict", NONE, "fewer than two sequences (IND-7)"),
    Reason("NO_PURE_SEQUENCE", "verdict", NONE, "no sequence without a joker (IND-7)"),
    Reason("TOO_FEW_CARDS", "verdict", NONE, "a group of fewer than 3 cards (IND-4, IND-5)"),
    Reason("SET_TOO_LARGE", "verdict", NONE, "a set of more than 4 cards (IND-5)"),
    Reason("DUPLICATE_SUIT", "verdict", NONE, "a set with two cards of one suit (IND-5)"),
    Reason("NOT_CONSECUTIVE", "verdict", NONE, "cards of one suit with gaps the jokers cannot fill (IND-4)"),
    Reason("NOT_A_SET_OR_SEQUENCE", "verdict", NONE, "mixed ranks and suits (IND-4, IND-5)"),
    # ------------------------------------------------------------ limits
    Reason("LIMIT_LENGTH", "limits", IA, "a name, id, token, seed or option longer than the server takes"),
    Reason("LIMIT_OPTIONS", "limits", IA, "more options than max_options"),
    Reason("LIMIT_SEATS", "limits", IA, "more than 8 seats"),
    Reason("LIMIT_MAX_HANDS", "limits", IA, "max_hands outside [0, max_hands]"),
    Reason("LIMIT_MAX_TURNS_PER_HAND", "limits", IA, "max_turns_per_hand outside [0, max_turns_per_hand]"),
    Reason("LIMIT_FORFEIT_AFTER", "limits", IA, "forfeit_after outside [0, max_forfeit_after]"),
    Reason("LIMIT_PER_MOVE_MS", "limits", IA, "per_move_ms outside [min_per_move_ms, max_per_move_ms]"),
    Reason("LIMIT_CONNECT_MS", "limits", IA, "connect_ms outside [min_connect_ms, max_connect_ms]"),
    Reason("LIMIT_BANK_MS", "limits", IA, "bank_ms outside [0, max_bank_ms]"),
    Reason("LIMIT_GRACE_MS", "limits", IA, "grace_ms outside [0, max_grace_ms]"),
    Reason("LIMIT_STACKED_DECKS", "limits", IA, "more stacked decks than max_stacked_decks"),
    Reason("LIMIT_DECK_CARDS", "limits", IA, "a stacked deck of more than max_deck_cards cards"),
    Reason("LIMIT_EVALUATE_CARDS", "limits", IA, "Evaluate: more cards or groups than it takes"),
    Reason("LIMIT_RESUME", "limits", IA, "a Join naming more matches to resume than max_live_matches"),
    Reason("LIMIT_SAMPLES", "limits", IA, "SampleDeals: n outside 1 to the server's most"),
    Reason("LIMIT_ACTIONS", "limits", IA, "Simulate: more actions than the server takes"),
    Reason("LIMIT_ROLLOUT", "limits", IA, "Simulate: a rollout longer than the server plays"),
    Reason("LIMIT_LIVE_MATCHES", "limits", RE, "max_live_matches are waiting or running; try later"),
    Reason("LIMIT_CLIENT_MATCHES", "limits", RE, "this client address has max_client_matches live matches"),
    Reason("LIMIT_CLIENT_STREAMS", "limits", RE, "this client address has max_client_streams long-lived calls with no "
           "credential open"),
    Reason("LIMIT_JOINING", "limits", RE, "max_joining newer streams were waiting to Join: this one was closed; send "
           "the Join at once"),
    Reason("LIMIT_UNCLAIMED_STREAMS", "limits", RE, "max_unclaimed_streams streams wait with bot tokens no match names"),
    Reason("LIMIT_MATCH_WATCHERS", "limits", RE, "max_match_watchers Watch streams are open on this match"),
    Reason("LIMIT_WATCHERS", "limits", RE, "max_watchers Watch streams are open on the server"),
    Reason("LIMIT_SEARCH_CALLS", "limits", RE, "this client has the most search calls running at once"),
    Reason("LIMIT_SEARCH_CLIENT_CALLS", "limits", RE, "this client has the most search calls running at once"),
    Reason("LIMIT_SEARCH_TIME", "limits", ("DEADLINE_EXCEEDED",), "a search call ran out of time (its deadline or "
           "the server's)"),
    Reason("FLOODING", "limits", NONE, "more answers are waiting than the referee queues; this one is dropped "
           "(ActionRejected; enough of them count as a missed deadline)"),
    Reason("SLOW_READER", "limits", RE, "more than max_outbox_bytes waited for this Play stream to read: it was "
           "dropped; rejoin with Join.resume and read as messages come"),
    Reason("WATCH_TOO_SLOW", "limits", RE, "more than max_watch_queue events waited for this Watch stream: it was "
           "dropped"),
    # ------------------------------------------------------------ credentials
    Reason("ADMIN_TOKEN_MISSING", "credentials", ("UNAUTHENTICATED",), "an admin call without 'authorization: Bearer "
           "TOKEN'"),
    Reason("ADMIN_TOKEN_WRONG", "credentials", ("PERMISSION_DENIED",), "the admin token given is not this server's"),
    Reason("NO_CREDENTIAL", "credentials", ("UNAUTHENTICATED",), "a Join with neither a seat token nor a bot token"),
    Reason("BAD_SEAT_TOKEN", "credentials", ("PERMISSION_DENIED",), "that token is not a seat of this match (the "
           "referee never says which part was wrong)"),
    Reason("SEAT_TAKEN", "credentials", ("PERMISSION_DENIED",), "another live stream holds this seat; join again once "
           "it has closed"),
    Reason("BOT_TOKEN_UNKNOWN", "credentials", ("UNAUTHENTICATED",), "no match names this bot token and the admin did "
           "not mint it"),
    Reason("BOT_TOKEN_TWICE", "credentials", IA, "CreateMatch gives one bot token to two seats of a match"),
    Reason("BAD_SEARCH_TOKEN", "credentials", ("INVALID_ARGUMENT", "PERMISSION_DENIED"), "not a search state token "
           "(INVALID_ARGUMENT), or one this server did not sign or that was altered (PERMISSION_DENIED)"),
    # ------------------------------------------------------------ service
    Reason("NO_SUCH_MATCH", "service", ("NOT_FOUND",), "no live match by that id (on Play: an ActionRejected for an "
           "answer naming another match)"),
    Reason("IDEMPOTENCY_KEY_REUSED", "service", ("ALREADY_EXISTS",), "CreateMatch: this idempotency key made a match "
           "from a different request; a new match needs a new key"),
    Reason("MATCH_OVER", "service", FP, "the match is over; GetResult has its result"),
    Reason("STALE_REQUEST", "service", NONE, "an answer to a request that is no longer open (ActionRejected)"),
    Reason("NO_HAND", "service", FP, "search: no hand is in play in this match (or the match is over)"),
    Reason("NO_SUCH_SEAT", "service", FP, "search: the match has no such seat"),
    Reason("UNKNOWN_STATE_FIELD", "service", FP, "search cannot redact this variant's state (a referee bug: report it)"),
    Reason("UNKNOWN_EVENT", "service", FP, "search does not know an event of this match (a referee bug: report it)"),
    Reason("NOT_EXTENDED", "service", FP, "search: a knowledge tracker was given a record of another hand or seat "
           "than the one it reads (a caller's bug: start a tracker per seat and hand)"),
    Reason("MIXED_RESTRICTIONS", "service", FP, "search cannot sample this position's hidden cards"),
    Reason("KNOWLEDGE_MISMATCH", "service", ("INTERNAL",), "search: the seat's record does not add up to its view (a "
           "referee bug, never the client's fault)"),
    Reason("RECORDS_UNWRITABLE", "service", FP, "the referee cannot write match records: CreateMatch is refused and "
           "a running match ends aborted"),
    Reason("SEARCH_STOPPED", "service", ("UNAVAILABLE",), "search: the server is stopping; its search calls end"),
    Reason("SEARCH_WORKER_LOST", "service", ("UNAVAILABLE",), "search: the worker process running the call died; the "
           "pool restarts, call again"),
    Reason("SEARCH_FAILED", "service", ("INTERNAL",), "search: the work failed in its worker (a referee bug: see the "
           "server's log)"),
)

BY_CODE: dict[str, Reason] = {r.code: r for r in REASONS}


def markdown() -> str:
    """docs/REASON-CODES.md: one table per group, in the list's order."""
    out = [
        "# Reason codes",
        "",
        "<!-- generated by `python -m referee.service.reasons > docs/REASON-CODES.md`; tests/test_reason_codes.py checks it -->",
        "",
        "Every refusal the referee sends carries one of these stable codes: in the gRPC status message as "
        "`CODE: message` and in the `rummy-reason` trailing metadata when a call ends, or in the `code` field of "
        "`ActionRejected` (Play), `Rejection` (Simulate) and the stdio bridge's `rejected` lines. A code names one "
        "fault in every variant. Messages are for people and may change; codes do not. Clause ids in messages "
        "(FH-3, SKA-9, ...) are explained in [docs/rules/](rules/README.md).",
        "",
    ]
    for key, (title, intro) in GROUPS.items():
        out += [f"## {title}", "", intro, "", "| code | gRPC status | meaning |", "|---|---|---|"]
        for r in REASONS:
            if r.group == key:
                status = " or ".join(f"`{s}`" for s in r.status) or "(in a message)"
                out.append(f"| <a id=\"{r.code.lower()}\"></a>`{r.code}` | {status} | {r.meaning} |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    print(markdown(), end="")


if __name__ == "__main__":
    main()
