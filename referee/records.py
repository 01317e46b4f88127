"""Append-only match records (JSON lines): options, seed and deck order, every action and event, the result.

Lines are buffered and flushed once per move (``flush``, called by the session just after the request that
follows a move has gone out), not once per line: a referee crash loses at most the move in flight, and a move
costs one write, not one per line.
They are encoded by orjson (compact, UTF-8, ~10x ``json.dumps``): a record line is written for every move.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import orjson

__all__ = ["RecordWriter", "UnreadableRecord", "read_record", "read_numbered"]


class UnreadableRecord(ValueError):
    """A record that cannot be read as one: ``line`` is the first bad line (1-based, 0 for the whole file)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.message = message


class RecordWriter:
    """Writes one match's record to ``<folder>/<match_id>.jsonl``."""

    def __init__(self, folder: Path | str, match_id: str, header: dict[str, Any] | None = None,
                 max_bytes: int | None = None, opening: Iterable[dict[str, Any]] = ()) -> None:
        """A new record (``header``) starts on disk whole: the header and ``opening`` lines are written to a side
        file that is then renamed into place, so a referee killed at that moment leaves no empty or header-only
        record for its restart to trip over. Without a header, lines are appended to the existing record."""
        self.path = Path(folder) / f"{match_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.size = 0
        self.max_bytes = max_bytes
        if header:
            part = self.path.with_name(self.path.name + ".part")
            self._file: IO[bytes] | None = part.open("wb")
            for entry in ({"type": "header", "match_id": match_id, **header}, *opening):
                self.write(entry)
            self._file.close()
            os.replace(part, self.path)
        self._file = self.path.open("ab")

    @property
    def full(self) -> bool:
        """The record has reached its size limit: the session then ends the match (a few closing lines follow)."""
        return self.max_bytes is not None and self.size >= self.max_bytes

    def write(self, entry: dict[str, Any]) -> None:
        if self._file is None:
            return
        line = orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE)
        self._file.write(line)
        self.size += len(line)

    def flush(self) -> None:
        """Hand the lines written so far to the operating system (after each move)."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_numbered(path: Path | str) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The entries of a record file with their line numbers, and the number of a last line cut off (0: none).

    A last line with no newline that is not JSON is a record cut short (a crash, a copy stopped half way): it
    is dropped and its number returned, so a reader can say "incomplete" rather than "unreadable".

    :raises UnreadableRecord: the file cannot be opened or decoded, or a line is not a JSON object with a type.
    """
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise UnreadableRecord(0, f"cannot open {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        line = _line_of(exc.object[:exc.start])
        raise UnreadableRecord(line, "is not UTF-8 text") from exc
    lines = text.split("\n")
    out: list[tuple[int, dict[str, Any]]] = []
    cut = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError as exc:
            if number == len(lines):  # the last line, with no newline after it: cut short
                cut = number
                break
            raise UnreadableRecord(number, f"is not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise UnreadableRecord(number, "is not a record entry (a JSON object with a \"type\")")
        out.append((number, entry))
    return out, cut


def _line_of(prefix: bytes) -> int:
    """The 1-based line number of the byte that follows ``prefix``."""
    return prefix.count(b"\n") + 1


def read_record(path: Path | str) -> list[dict[str, Any]]:
    """The entries of a record file, in order. :raises UnreadableRecord: naming the first bad line."""
    return [entry for _, entry in read_numbered(path)[0]]
