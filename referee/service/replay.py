"""Re-run a match record through the rules core (``referee replay RECORD``) and certify it (``--verify``).

``replay`` re-plays the recorded moves on the recorded decks and checks the scores and the result, as it always
has. ``verify`` is the certificate: it deals every hand again from the recorded seed (or the stacked decks of the
config), feeds the rules core only what came from outside it (each seat's move, a missed deadline, a forfeit, a
server's stop) and checks that everything else the rules core writes (each deal, every move, every event with
its audience, every score, the result) is the record line for line. Its verdict is one line and an exit code:

==  ===================  ==========================================================================
0   reproduces           every line is what the rules core writes
3   does not reproduce   the first line that differs, and its field
4   incomplete           the record stops (or the match was aborted) before the result
5   unreadable           the first line that is not a record entry
6   rules changed        the record's rules hash is not this referee's, and what the replay says
==  ===================  ==========================================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.rules.cards import parse_cards
from referee.rules.codec import action_from_json
from referee.rules.errors import IllegalAction, InvalidAction, RefereeError
from referee.rules.match import Match, config_from_json
from referee.rules.variants.base import Event, HandState
from referee.service.records import UnreadableRecord, read_numbered

__all__ = ["ReplayMismatch", "Verdict", "replay", "replay_file", "verify", "verify_file", "EXIT_CODES", "is_input",
           "feed", "NOTE_KINDS"]

Numbered = Sequence[tuple[int, dict[str, Any]]]

EXIT_CODES = {"reproduces": 0, "does not reproduce": 3, "incomplete": 4, "unreadable": 5, "rules changed": 6}

# Lines the referee writes about a record rather than the rules core about the match: ``header`` (who sat where,
# digests of the seat tokens) and ``resumed`` (the referee restarted and resumed the match from this record).
# They may come between any two steps; a check skips them.
NOTE_KINDS = frozenset({"header", "resumed"})

# Events that records written before rules hashes did not carry: a check of such a record skips them.
_UNRECORDED_BEFORE_HASHES = frozenset({"HAND_STARTED", "HAND_REVEALED", "HAND_ENDED", "MATCH_ENDED", "TIMED_OUT", "FORFEITED"})


class ReplayMismatch(Exception):
    """The record does not reproduce: the rules core gives another score or result, or refuses a move."""


# ---------------------------------------------------------------- plain replay


def replay(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Replay recorded actions with the recorded decks; return per-hand and final scores.

    :raises ReplayMismatch: naming the first hand or result that differs, or a recorded move the rules refuse.
    :raises UnreadableRecord: an entry lacks what its type needs.
    """
    return _replay(list(enumerate(entries, start=1)))


def replay_file(path: Path | str) -> dict[str, Any]:
    """:raises UnreadableRecord: :raises ReplayMismatch:"""
    numbered, cut = read_numbered(path)
    out = _replay(numbered)
    out["cut_line"] = cut
    return out


def _replay(numbered: Numbered) -> dict[str, Any]:
    head = next(((n, e) for n, e in numbered if e["type"] not in NOTE_KINDS), None)
    if head is None:  # nothing but notes, or nothing at all: cut short before its match line (as ``verify`` says)
        return {"variant": None, "hands": [], "result": None, "complete": False,
                "last_line": numbered[-1][0] if numbered else 0, "aborted": None}
    if head[1]["type"] != "match":
        raise UnreadableRecord(head[0], f"the first entry is a {head[1]['type']} line, not the match line")
    line = head[0]
    try:
        decks = tuple(tuple(parse_cards(" ".join(e["deck"]))) for _, e in numbered if e["type"] == "hand")
        config = replace(config_from_json(head[1]["config"]), decks=decks)
    except (KeyError, TypeError, ValueError, InvalidAction) as exc:
        raise UnreadableRecord(line, f"is not a match or hand entry ({exc})") from exc
    produced: list[dict[str, Any]] = []
    try:
        match = Match(config, on_record=produced.append)
    except RefereeError as exc:
        raise ReplayMismatch(f"line {head[0]}: {exc.code}: {exc.message}") from exc
    for line, e in numbered:
        try:
            if e["type"] == "forfeit":
                match.forfeit(e["with"] if "with" in e else e["seat"], e["reason"])
            elif e["type"] == "stopped":
                match.stop(e["reason"])
            elif e["type"] == "action":
                action = action_from_json(e["action"])
                match._apply(e["seat"], action, timed_out=e["timed_out"])
        except IllegalAction as exc:
            raise ReplayMismatch(f"line {line}: the rules core refuses the recorded move: {exc.code}: {exc.message}") from exc
        except (KeyError, TypeError, ValueError, InvalidAction) as exc:
            raise UnreadableRecord(line, f"is not a well-formed {e['type']} entry ({exc})") from exc
    want_hands = [e for _, e in numbered if e["type"] == "hand_score"]
    got_hands = [e for e in produced if e["type"] == "hand_score"]
    for want, got in zip(want_hands, got_hands, strict=False):
        if want.get("points") != got["points"] or want.get("totals") != got["totals"]:
            raise ReplayMismatch(f"hand {want.get('hand')}: recorded {want.get('points')}, replayed {got['points']}")
    want_result = next((e for _, e in numbered if e["type"] == "result"), None)
    if len(want_hands) > len(got_hands) or (want_result is not None and len(want_hands) != len(got_hands)):
        raise ReplayMismatch(f"the record has {len(want_hands)} scored hands, the replay {len(got_hands)}")
    got_result = next((e for e in produced if e["type"] == "result"), None)
    if want_result is not None:
        if got_result is None or want_result.get("ranking") != got_result["ranking"] or want_result.get("totals") != got_result["totals"]:
            raise ReplayMismatch(f"result: recorded {want_result}, replayed {got_result}")
    return {
        "variant": head[1].get("variant", config.variant),
        "hands": [{"hand": h["hand"], "points": h["points"], "totals": h["totals"], "reason": h["reason"]} for h in got_hands],
        "result": {k: got_result[k] for k in ("ranking", "totals", "reason", "forfeited")} if got_result else None,
        "complete": want_result is not None,
        "last_line": numbered[-1][0] if numbered else 0,
        "aborted": next((str(e.get("reason", "")) for _, e in numbered if e["type"] == "aborted"), None),
    }


# ---------------------------------------------------------------- certified replay


@dataclass(frozen=True)
class Verdict:
    """What ``verify`` found: ``outcome`` is a key of ``EXIT_CODES``; ``line`` and ``field`` locate a difference."""

    outcome: str
    detail: str
    line: int = 0
    field: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    def __str__(self) -> str:
        return f"{self.outcome}: {self.detail}"


StepHook = Callable[[Match, HandState | None, list[Event]], None]


def verify_file(path: Path | str, on_step: StepHook | None = None) -> Verdict:
    """``verify`` of the record at ``path``; a file that cannot be read is an ``unreadable`` verdict."""
    try:
        numbered, cut = read_numbered(path)
    except UnreadableRecord as exc:
        return Verdict("unreadable", str(exc), exc.line)
    return verify(numbered, cut, on_step)


def verify(numbered: Numbered, cut_line: int = 0, on_step: StepHook | None = None) -> Verdict:
    """Certify a record: re-deal, re-play and compare every line the rules core writes (see the module doc).

    ``numbered`` is ``(line number, entry)`` pairs; ``cut_line`` the number of a last line that was cut off.
    ``on_step(match, state_before, events)`` is called after each step with the events it made (``state_before``
    is the hand that was in play, None for the first deal): tests use it to follow what was public when.
    """
    return _Certifier(numbered, cut_line, on_step).run()


class _Difference(Exception):
    def __init__(self, verdict: Verdict) -> None:
        super().__init__(str(verdict))
        self.verdict = verdict


class _Certifier:
    def __init__(self, numbered: Numbered, cut_line: int, on_step: StepHook | None) -> None:
        self.lines = list(numbered)
        self.cut_line = cut_line
        self.on_step = on_step
        self.cursor = 0
        self.produced: list[dict[str, Any]] = []
        self.legacy = False

    def run(self) -> Verdict:
        try:
            return self._run()
        except _Difference as d:
            return d.verdict

    def _run(self) -> Verdict:
        while self.cursor < len(self.lines) and self.lines[self.cursor][1]["type"] in NOTE_KINDS:
            self.cursor += 1
        if self.cursor == len(self.lines):
            return self._incomplete("before its match line")
        line, head = self.lines[self.cursor]
        if head["type"] != "match":
            return Verdict("unreadable", f"line {line}: the first entry is a {head['type']} line, not the match line", line)
        try:
            config = config_from_json(head["config"])
        except (KeyError, TypeError, ValueError, InvalidAction) as exc:
            return Verdict("unreadable", f"line {line}: not a well-formed match config ({exc})", line, "config")
        try:
            match = Match(config, on_record=self.produced.append)
        except RefereeError as exc:
            return Verdict("does not reproduce", f"line {line}, field config: {exc.code}: {exc.message}", line, "config")
        self.legacy = "rules_hash" not in head
        recorded_hash = str(head.get("rules_hash", ""))
        inner = self._play(match)
        if self.legacy or recorded_hash == match.rules_hash:
            return inner
        also = {"reproduces": "the moves still reproduce under this referee's rules",
                "does not reproduce": f"under this referee's rules it does not reproduce ({inner.detail})",
                "incomplete": f"and it is incomplete ({inner.detail})",
                "unreadable": f"and it is unreadable ({inner.detail})"}[inner.outcome]
        return Verdict("rules changed", f"line {line}, field rules_hash: the record was made under {recorded_hash or '(none)'}, "
                       f"this referee's {match.variant.name} rules with these options are {match.rules_hash}; {also}",
                       line, "rules_hash")

    def _play(self, match: Match) -> Verdict:
        if self.on_step is not None:
            self.on_step(match, None, list(match.log))
        self._compare()
        while not match.over:
            if self.cursor == len(self.lines):
                return self._incomplete(f"hand {match.game.hands_played + 1} in play")
            line, e = self.lines[self.cursor]
            kind = e["type"]
            if kind in NOTE_KINDS:
                self.cursor += 1
                continue
            if kind == "aborted":
                rest = self.lines[self.cursor + 1:]
                if rest:
                    return self._differs(rest[0][0], "type", "a line after the match was aborted")
                return Verdict("incomplete", f"the match was aborted at line {line} ({e.get('reason', 'no reason')}) in "
                               f"hand {match.game.hands_played + 1}: it has no result to certify; every line before "
                               "reproduces", line)
            before = match.state
            try:
                events = self._step(match, line, e)
            except IllegalAction as exc:
                return self._differs(line, "action", f"the rules core refuses the recorded move: {exc.code}: {exc.message}")
            except (KeyError, TypeError, ValueError, InvalidAction) as exc:
                return Verdict("unreadable", f"line {line}: not a well-formed {kind} entry ({exc})", line)
            if self.on_step is not None:
                self.on_step(match, before, events)
            self._compare()
        if self.cursor < len(self.lines):
            return self._differs(self.lines[self.cursor][0], "type", "the record goes on after the match's result")
        if self.cut_line:
            return self._differs(self.cut_line, "type", "the record goes on after the match's result (a line cut off)")
        hands = match.game.hands_played
        note = ("; an older record (no rules hash, no events at hand ends, timeouts and forfeits) checked against this "
                "referee's rules") if self.legacy else f"; rules {match.rules_hash[:23]}..."
        return Verdict("reproduces", f"{match.variant.name}, {hands} hand{'s' * (hands != 1)}, {self.lines[-1][0]} lines: "
                       f"every deal, move, event with its audience, score and the result{note}")

    def _step(self, match: Match, line: int, e: dict[str, Any]) -> list[Event]:
        """Feed the rules core one thing that came from outside it, named by the record's next line."""
        if is_input(e):
            return feed(match, e)
        kind = e["type"]
        what = f"a {e.get('kind')} event" if kind == "event" else f"a {kind} line"
        raise _Difference(self._differs(line, "type", f"{what} where the rules core writes nothing: the next line must "
                                        "be a move, a missed deadline, a forfeit or a stop"))

    def _compare(self) -> None:
        """Check the lines the rules core wrote since the last step against the record's next lines."""
        for got in self.produced:
            if self.legacy and got["type"] == "event" and got["kind"] in _UNRECORDED_BEFORE_HASHES:
                continue
            if self.cursor == len(self.lines):
                raise _Difference(self._incomplete(f"inside a move (the rules core writes {_what(got)} next)"))
            line, want = self.lines[self.cursor]
            ignore = {"rules_hash"} if got["type"] == "match" else set()
            diff = _first_difference(want, got, "", ignore)
            if diff is not None:
                field, had, gives = diff
                raise _Difference(self._differs(line, field or "type", f"the record has {had}, the rules core gives {gives} "
                                                f"({_what(got)})"))
            self.cursor += 1
        self.produced.clear()

    def _differs(self, line: int, field: str, detail: str) -> Verdict:
        return Verdict("does not reproduce", f"line {line}, field {field}: {detail}", line, field)

    def _incomplete(self, why: str) -> Verdict:
        last = self.lines[-1][0] if self.lines else 0
        cut = f"; line {self.cut_line} is cut off" if self.cut_line else ""
        return Verdict("incomplete", f"the record ends at line {last}, {why}, with no result{cut}: it was cut short, or "
                       "the referee stopped before the match ended; every line before reproduces", last)


def is_input(entry: dict[str, Any]) -> bool:
    """The record line names something that came from outside the rules core: a seat's move, a missed deadline,
    a forfeit or a server's stop. Every other line is one the rules core writes itself."""
    kind = entry.get("type")
    return kind in ("action", "forfeit", "stopped") or (kind == "event" and entry.get("kind") == "TIMED_OUT")


def feed(match: Match, entry: dict[str, Any]) -> list[Event]:
    """Give ``match`` the input a record line names (``is_input``) and return the events it makes: how a certified
    replay and a restarted referee (``referee.service.resume``) bring a match to where its record stops.

    :raises IllegalAction: the rules core refuses the recorded move. :raises KeyError, TypeError, ValueError,
        InvalidAction: the line is not well formed.
    """
    kind = entry["type"]
    if kind == "action":
        seat = int(entry["seat"])
        if not entry["timed_out"]:
            return match.submit(seat, action_from_json(entry["action"]))
        if match.on_autopilot(seat):
            return match.autoplay(seat)
        return match.timeout(seat)  # a record without TIMED_OUT lines (written before rules hashes)
    if kind == "event" and entry.get("kind") == "TIMED_OUT":
        return match.timeout(int(entry["seat"]))
    if kind == "forfeit":
        return match.forfeit(entry["with"] if "with" in entry else entry["seat"], str(entry["reason"]))
    if kind == "stopped":
        return match.stop(str(entry["reason"]))
    raise ValueError(f"a {kind} line is not an input to the rules core")


def _what(entry: dict[str, Any]) -> str:
    kind = entry["type"]
    if kind == "event":
        return f"a {entry['kind']} event"
    if kind == "hand":
        return f"the deal of hand {entry['hand']}"
    if kind == "hand_score":
        return f"the score of hand {entry['hand']}"
    return f"the {kind} line"


def _shown(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":")) if not isinstance(value, _Missing) else "nothing"
    return text if len(text) <= 60 else text[:57] + "..."


class _Missing:
    pass


_MISSING = _Missing()


def _first_difference(want: Any, got: Any, path: str, ignore: set[str]) -> tuple[str, str, str] | None:
    """The first path where ``want`` (recorded) and ``got`` (replayed) differ, with both values shown."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in [*got, *(k for k in want if k not in got)]:
            if key in ignore:
                continue
            sub = f"{path}.{key}" if path else str(key)
            d = _first_difference(want.get(key, _MISSING), got.get(key, _MISSING), sub, set())
            if d is not None:
                return d
        return None
    if isinstance(want, list) and isinstance(got, list):
        for i in range(max(len(want), len(got))):
            d = _first_difference(want[i] if i < len(want) else _MISSING, got[i] if i < len(got) else _MISSING,
                                  f"{path}[{i}]", set())
            if d is not None:
                return d
        return None
    if type(want) is type(got) and want == got:
        return None
    return path, _shown(want), _shown(got)
