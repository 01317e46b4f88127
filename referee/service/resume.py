"""After a restart: the matches a referee left unfinished in its records folder, resumed or ended with a clear status.

A record is flushed once per move, so a referee killed at any moment leaves each running match's record at the
end of a move, or part way into one (a line cut off, or some of a move's lines missing). ``recover`` certifies
such a record (``referee.service.replay.verify``: every line it has is what the rules core writes), repairs its tail (a
cut line is dropped; the lines of a move the rules core had made but not yet written are written now, so the
record ends between two moves) and returns what a session needs to take the match up again: its config, its
inputs (moves, missed deadlines, forfeits, stops) to feed a fresh ``Match``, and the digests of its seat tokens,
so the bots that held the seats can rejoin with the same tokens. The record never holds a token itself, only its
SHA-256 (tokens are random, 144 bits for seat tokens: a digest cannot be turned back into one).

A record that cannot be resumed (unreadable, made by other rules, written before token digests, or one that does
not reproduce) is ended instead: ``mark_aborted`` appends an ``aborted`` line whose reason starts "referee
restarted:", so ``referee replay --verify`` calls it incomplete and names why.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.rules.errors import RefereeError
from referee.rules.match import Match, MatchConfig, config_from_json
from referee.service.records import UnreadableRecord, read_numbered
from referee.service.replay import NOTE_KINDS, feed, is_input, verify

__all__ = ["RESUMED", "Unfinished", "Unresumable", "token_digest", "unfinished_records", "recover", "mark_aborted",
           "RESTARTED"]

RESUMED = "resumed"  # the record line a resumed session writes before it plays on
RESTARTED = "referee restarted"  # how the reason of a match ended by a restart begins
_ENDINGS = (b'"type":"result"', b'"type":"aborted"')
_TAIL_BYTES = 16384


def token_digest(token: str) -> str:
    """What a record keeps of a seat or bot token: ``sha256:HEX``, enough to check a rejoining token, not to forge
    one."""
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Unfinished:
    """A match its record can take up again: feed ``inputs`` to ``Match(config)`` and it stands where the record
    stops; the record then has ``lines`` lines written by the rules core (headers and markers aside)."""

    path: Path
    match_id: str
    config: MatchConfig
    seat_names: tuple[str, ...]
    seat_token_digests: tuple[str, ...]  # "" for a seat given to a bot token
    bot_token_digests: tuple[str, ...]  # "" for a seat with its own seat token
    time_control: Mapping[str, int]
    inputs: tuple[dict[str, Any], ...]
    lines: int
    restarts: int  # restarts already resumed from this record (``resumed`` lines)
    idempotency: tuple[str, str] | None = None  # the CreateMatch idempotency key and request digest, if it had one


@dataclass(frozen=True)
class Unresumable:
    """A record left unfinished that cannot be taken up again, and why."""

    path: Path
    match_id: str
    reason: str


def unfinished_records(folder: Path | str) -> Iterator[Path]:
    """The records in ``folder`` whose last line is neither a result nor an abort. Only each file's tail is read,
    so a folder of many finished records is scanned quickly."""
    root = Path(folder)
    if not root.is_dir():
        return
    for path in sorted(root.glob("*.jsonl")):
        try:
            with path.open("rb") as f:
                f.seek(0, 2)
                size = f.tell()
                f.seek(max(0, size - _TAIL_BYTES))
                tail = f.read()
        except OSError:
            continue
        last = next((line for line in reversed(tail.split(b"\n")) if line.strip()), b"")
        if not any(end in last for end in _ENDINGS):
            yield path


def recover(path: Path | str) -> Unfinished | Unresumable | None:
    """Certify and repair an unfinished record (see the module doc). None: the record is finished (or its repair
    finished it: the move in flight was the last)."""
    path = Path(path)
    match_id = path.stem
    try:
        numbered, cut = read_numbered(path)
    except UnreadableRecord as exc:
        return Unresumable(path, match_id, f"its record is unreadable ({exc})")
    entries = [e for _, e in numbered]
    if any(e["type"] in ("result", "aborted") for e in entries):
        return None
    header = next((e for e in entries if e["type"] == "header"), {})
    match_id = str(header.get("match_id") or match_id)
    verdict = verify(numbered, cut)
    if verdict.outcome != "incomplete":
        return Unresumable(path, match_id, f"its record {verdict}")
    seat_digests = header.get("seat_token_sha256")
    bot_digests = header.get("bot_token_sha256")
    names = header.get("seat_names")
    if not isinstance(seat_digests, list) or not isinstance(bot_digests, list) or not isinstance(names, list):
        return Unresumable(path, match_id, "its record has no seat token digests (an older referee wrote it), so no "
                           "seat could prove it is the one rejoining")
    head = next(e for e in entries if e["type"] == "match")  # verify found it
    config = config_from_json(head["config"])
    _clean_tail(path, cut)
    lines = [e for e in entries if e["type"] not in NOTE_KINDS]
    produced: list[dict[str, Any]] = []
    try:
        match = Match(config, on_record=produced.append)
        inputs: list[dict[str, Any]] = []
        at = len(produced)
        while at < len(lines):
            entry = lines[at]
            if not is_input(entry):
                return Unresumable(path, match_id, f"its record has a {entry['type']} line where a move belongs")
            feed(match, entry)
            inputs.append(entry)
            at = len(produced)
    except (RefereeError, KeyError, TypeError, ValueError) as exc:  # verify passed: only a bug gets here
        return Unresumable(path, match_id, f"its record does not replay ({type(exc).__name__}: {exc})")
    if produced[:len(lines)] != lines:
        return Unresumable(path, match_id, "its record does not replay line for line")
    missing = produced[len(lines):]  # the move in flight: the rules core made these lines, the kill lost them
    if missing:
        with path.open("a", encoding="utf-8") as f:
            f.writelines(json.dumps(e, separators=(",", ":")) + "\n" for e in missing)
    if match.over:
        return None
    tc = header.get("time_control")
    seats = config.seats
    if len(seat_digests) != seats or len(bot_digests) != seats or len(names) != seats:
        return Unresumable(path, match_id, f"its header names {len(names)} seats for a {seats}-seat match")
    return Unfinished(path, match_id, config, tuple(map(str, names)), tuple(map(str, seat_digests)),
                      tuple(map(str, bot_digests)), dict(tc) if isinstance(tc, dict) else {}, tuple(inputs),
                      len(produced), sum(1 for e in entries if e["type"] == RESUMED),
                      (str(key), str(header.get("request_sha256", ""))) if (key := header.get("idempotency_key")) else None)


def mark_aborted(path: Path | str, reason: str) -> bool:
    """End an unfinished record: an ``aborted`` line (after a cut line is dropped). False: the record cannot be
    written (a full or read-only disk); it is left as it is, and the next start tries again."""
    path = Path(path)
    try:
        _, cut = read_numbered(path)
    except UnreadableRecord:
        cut = 0
    try:
        _clean_tail(path, cut)
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"type": "aborted", "reason": reason}, separators=(",", ":")) + "\n")
    except OSError:
        return False
    return True


def _clean_tail(path: Path, cut: int) -> None:
    """Make the file end with a whole line: drop a last line cut off (``cut``), or end a whole last line."""
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    with path.open("r+b") as f:
        if cut:
            f.truncate(data.rfind(b"\n") + 1)
        else:
            f.seek(0, 2)
            f.write(b"\n")
