"""Append-only match records (JSON lines): options, seed and deck order, every action and event, the result.

Lines are buffered and flushed once per move (``flush``, called by the session just after the request that
follows a move has gone out), not once per line: a referee crash loses at most the move in flight, and a move
costs one write, not one per line. Each flush opens the file, appends and closes it again, so a match waiting
for its seats (or between two moves) holds no file descriptor: a referee's live matches are not bounded by its
descriptor limit (an open-append-close costs ~6 us a move against ~3 us for a file kept open; see the README).
They are encoded by orjson (compact, UTF-8, ~10x ``json.dumps``): a record line is written for every move.

Records are private to the referee's user: a live record holds the deck order of the hand in play, so the folder
is made 0700 and every file in it 0600, whatever the umask. A record that cannot be written (a full disk, a
read-only or quota-bound folder) raises ``RecordsUnwritable``: its match ends with that reason
(``RECORDS_UNWRITABLE``), and what was written stays a record of whole lines (a write cut short is undone).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from referee.service.logs import get_logger

__all__ = ["RecordWriter", "RecordsUnwritable", "UnreadableRecord", "read_record", "read_numbered", "private_folder",
           "probe_folder", "REASON_UNWRITABLE", "FILE_MODE", "FOLDER_MODE"]

REASON_UNWRITABLE = "RECORDS_UNWRITABLE"  # the reason code of a match (and a CreateMatch) whose record cannot be written
FILE_MODE = 0o600  # a record holds the deck order of the hand in play: the referee's user alone reads it
FOLDER_MODE = 0o700
PROBE_BYTES = 16384  # what a probe writes: a few moves' worth, so a disk with a few bytes left is not "writable"
_OPEN_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC
_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
_private: set[str] = set()  # folders made private by this process (checked once, not at every record)


class RecordsUnwritable(OSError):
    """A record (or the records folder) cannot be written: ``message`` names the path and the system's reason."""

    code = REASON_UNWRITABLE

    def __init__(self, path: Path | str, exc: OSError, doing: str = "write") -> None:
        why = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
        self.message = f"cannot {doing} {path}: {why}"
        super().__init__(exc.errno or errno.EIO, self.message)
        self.path = str(path)

    def __str__(self) -> str:
        return self.message


class UnreadableRecord(ValueError):
    """A record that cannot be read as one: ``line`` is the first bad line (1-based, 0 for the whole file)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.message = message


def private_folder(folder: Path | str) -> Path:
    """``folder``, made if missing, mode 0700; an existing one is made so (once per folder per process), or a
    warning says it cannot be (another user's folder, a read-only mount).

    :raises RecordsUnwritable: the folder cannot be made."""
    path = Path(folder)
    try:
        path.mkdir(mode=FOLDER_MODE, parents=True)
    except FileExistsError:
        if str(path) in _private:
            return path
    except OSError as exc:
        raise RecordsUnwritable(path, exc, "make the records folder") from exc
    mode = -1
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode != FOLDER_MODE:
            path.chmod(FOLDER_MODE)
    except OSError as exc:
        get_logger(component="records").warning(
            "records_folder_not_private", folder=str(path), mode=oct(mode) if mode >= 0 else "unknown",
            error=exc.strerror or str(exc), hint="other local users may read the deck of a hand in play")
    _private.add(str(path))
    return path


def probe_folder(folder: Path | str) -> RecordsUnwritable | None:
    """Can a record be written in ``folder`` now? Writes ``PROBE_BYTES`` to a private side file and removes it
    (tens of microseconds). None: yes; else why not."""
    path = Path(folder) / f".probe-{os.getpid()}.tmp"
    try:
        private_folder(folder)
        fd = os.open(path, _OPEN_NEW, FILE_MODE)
        try:
            _write_all(fd, bytes(PROBE_BYTES))
        finally:
            os.close(fd)
    except OSError as exc:
        return exc if isinstance(exc, RecordsUnwritable) else RecordsUnwritable(folder, exc, "write in the records folder")
    finally:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
    return None


def _write_all(fd: int, data: bytes | bytearray) -> None:
    """Write all of ``data``. :raises OSError: with ``written`` set to the bytes that went before the failure."""
    view = memoryview(data)
    done = 0
    while done < len(view):
        try:
            done += os.write(fd, view[done:])
        except OSError as exc:
            exc.written = done  # type: ignore[attr-defined]
            raise


def _append(path: Path, data: bytes, create: bool = False) -> None:
    """Append ``data`` to ``path`` in one open-write-close. A write cut short (the disk filled part way) is undone,
    so the file still ends with a whole line. :raises OSError: as the system raised it."""
    flags = _OPEN_APPEND | (os.O_CREAT if create else 0)
    fd = os.open(path, flags, FILE_MODE)
    try:
        _write_all(fd, data)
    except OSError as exc:
        if written := getattr(exc, "written", 0):  # what went in before the disk filled: taken out again
            with contextlib.suppress(OSError):
                os.ftruncate(fd, os.fstat(fd).st_size - written)
        raise
    finally:
        os.close(fd)


class RecordWriter:
    """Writes one match's record to ``<folder>/<match_id>.jsonl``; holds no open file between flushes."""

    def __init__(self, folder: Path | str, match_id: str, header: dict[str, Any] | None = None,
                 max_bytes: int | None = None, opening: Iterable[dict[str, Any]] = ()) -> None:
        """A new record (``header``) starts on disk whole: the header and ``opening`` lines are written to a side
        file (0600) that is then renamed into place, so a referee killed at that moment leaves no empty or
        header-only record for its restart to trip over. Without a header, lines are appended to the existing
        record (made 0600 if it was not).

        :raises RecordsUnwritable: the record cannot be started (the side file is removed)."""
        self.path = Path(folder) / f"{match_id}.jsonl"
        self.size = 0
        self.max_bytes = max_bytes
        self.failed: RecordsUnwritable | None = None  # the write that failed: nothing more is written
        self._buffer = bytearray()
        private_folder(folder)
        if header:
            part = self.path.with_name(self.path.name + ".part")
            for entry in ({"type": "header", "match_id": match_id, **header}, *opening):
                self.write(entry)
            try:
                fd = os.open(part, _OPEN_NEW, FILE_MODE)
                try:
                    os.fchmod(fd, FILE_MODE)  # the umask may have taken bits from 0600: it gets what it asked
                    _write_all(fd, self._buffer)
                finally:
                    os.close(fd)
                os.replace(part, self.path)
            except OSError as exc:
                try:
                    part.unlink(missing_ok=True)
                except OSError:
                    pass
                raise RecordsUnwritable(self.path, exc, "start the record") from exc
            self._buffer.clear()
        else:
            try:
                if stat.S_IMODE(self.path.stat().st_mode) != FILE_MODE:
                    self.path.chmod(FILE_MODE)
            except OSError as exc:
                get_logger(component="records").warning("record_not_private", path=str(self.path),
                                                        error=exc.strerror or str(exc))

    @property
    def full(self) -> bool:
        """The record has reached its size limit: the session then ends the match (a few closing lines follow)."""
        return self.max_bytes is not None and self.size >= self.max_bytes

    def write(self, entry: dict[str, Any]) -> None:
        """Buffer a line (written at the next ``flush``); nothing, once a write has failed."""
        if self.failed is not None:
            return
        line = orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE)
        self._buffer += line
        self.size += len(line)

    def flush(self) -> None:
        """Append the lines written so far to the file (after each move): open, write, close.

        :raises RecordsUnwritable: the write failed (the file is left as it was: whole lines); later writes and
            flushes do nothing (``failed``) but ``salvage``."""
        if self.failed is not None or not self._buffer:
            return
        data = bytes(self._buffer)
        self._buffer.clear()
        try:
            _append(self.path, data)
        except OSError as exc:
            self.failed = RecordsUnwritable(self.path, exc)
            raise self.failed from exc

    def salvage(self, entry: dict[str, Any]) -> bool:
        """After a failed write: try once to end the record with ``entry`` (an ``aborted`` line), so a restart
        does not take it for a match to resume. False: that failed too (the disk is still full)."""
        try:
            _append(self.path, orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))
        except OSError:
            return False
        return True

    def close(self) -> None:
        """The last flush. :raises RecordsUnwritable: as ``flush``."""
        self.flush()


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
