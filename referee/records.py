"""Append-only match records (JSON lines): options, seed and deck order, every action and event, the result.

Each line is flushed as it is written, so a referee crash loses at most the move in flight.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

__all__ = ["RecordWriter", "read_record"]


class RecordWriter:
    """Writes one match's record to ``<folder>/<match_id>.jsonl``."""

    def __init__(self, folder: Path | str, match_id: str, header: dict[str, Any] | None = None,
                 max_bytes: int | None = None) -> None:
        self.path = Path(folder) / f"{match_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = self.path.open("a", encoding="utf-8")
        self.size = 0
        self.max_bytes = max_bytes
        if header:
            self.write({"type": "header", "match_id": match_id, **header})

    @property
    def full(self) -> bool:
        """The record has reached its size limit: the session then ends the match (a few closing lines follow)."""
        return self.max_bytes is not None and self.size >= self.max_bytes

    def write(self, entry: dict[str, Any]) -> None:
        if self._file is None:
            return
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        self._file.write(line)
        self._file.flush()
        self.size += len(line)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_record(path: Path | str) -> list[dict[str, Any]]:
    """The entries of a record file, in order."""
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
