"""Re-run a match record through the rules core and check that it reproduces (``referee replay RECORD``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from referee.cards import parse_cards
from referee.codec import action_from_json
from referee.match import Match, config_from_json

__all__ = ["ReplayMismatch", "replay"]


class ReplayMismatch(Exception):
    """The record does not reproduce: the rules core gives another score or result."""


def replay(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Replay recorded actions with the recorded decks; return per-hand and final scores.

    :raises ReplayMismatch: naming the first hand or result that differs.
    """
    head = next((e for e in entries if e["type"] == "match"), None)
    if head is None:
        raise ReplayMismatch("the record has no match entry")
    decks = tuple(tuple(parse_cards(" ".join(e["deck"]))) for e in entries if e["type"] == "hand")
    config = replace(config_from_json(head["config"]), decks=decks)
    produced: list[dict[str, Any]] = []
    match = Match(config, on_record=produced.append)
    for e in entries:
        if e["type"] == "forfeit":
            match.forfeit(e.get("with", e["seat"]), e["reason"])
        elif e["type"] == "stopped":
            match.stop(e["reason"])
        elif e["type"] == "action":
            match._apply(e["seat"], action_from_json(e["action"]), timed_out=e["timed_out"])
    want_hands = [e for e in entries if e["type"] == "hand_score"]
    got_hands = [e for e in produced if e["type"] == "hand_score"]
    for want, got in zip(want_hands, got_hands, strict=False):
        if want["points"] != got["points"] or want["totals"] != got["totals"]:
            raise ReplayMismatch(f"hand {want['hand']}: recorded {want['points']}, replayed {got['points']}")
    if len(want_hands) != len(got_hands):
        raise ReplayMismatch(f"the record has {len(want_hands)} scored hands, the replay {len(got_hands)}")
    want_result = next((e for e in entries if e["type"] == "result"), None)
    got_result = next((e for e in produced if e["type"] == "result"), None)
    if want_result is not None:
        if got_result is None or want_result["ranking"] != got_result["ranking"] or want_result["totals"] != got_result["totals"]:
            raise ReplayMismatch(f"result: recorded {want_result}, replayed {got_result}")
    return {
        "variant": head["variant"],
        "hands": [{"hand": h["hand"], "points": h["points"], "totals": h["totals"], "reason": h["reason"]} for h in got_hands],
        "result": {k: got_result[k] for k in ("ranking", "totals", "reason", "forfeited")} if got_result else None,
        "complete": want_result is not None,
    }


def replay_file(path: Path | str) -> dict[str, Any]:
    from referee.records import read_record

    return replay(read_record(path))
