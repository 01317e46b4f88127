"""When a bot keeps failing: pause it, say why, try again later.

A game *failed* for a bot when the referee forfeited its seat (it never joined, went away, or ran out of refusals
or missed deadlines: ``forfeit_after``). A bot whose last ``pause_after`` games all failed is paused: it is not
scheduled until its pause ends, so a broken bot is not rated down game after game while it is broken (its rating
keeps what it earned). The first pause lasts ``pause_s``; each pause that follows a failed retry doubles it, up to
a day; a clean game ends the series. The reason names the faults of those games and, for a house bot, the last
lines of its log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from tournaments.ladder.store import GameRow

__all__ = ["failed", "pause_reason", "pause_length", "log_tail", "MAX_PAUSE_S"]

MAX_PAUSE_S = 86400.0


def failed(game: GameRow, bot: int) -> bool:
    return any(0 <= s < len(game.seats) and game.seats[s] == bot for s in game.forfeited)


def pause_reason(recent: Sequence[GameRow], bot: int, n: int, faults: Sequence[tuple[Counter[str], int, int]] = (),
                 tail: str = "") -> str | None:
    """Why the bot is paused now, or None: its last ``n`` games (newest first) did not all fail.
    ``faults``: (refused by reason code, timed out, disconnects) of each of those games."""
    if len(recent) < n or not all(failed(g, bot) for g in recent[:n]):
        return None
    refused: Counter[str] = Counter()
    timed_out = disconnects = 0
    for r, t, d in faults:
        refused.update(r)
        timed_out += t
        disconnects += d
    parts = [f"forfeited its last {n} games"]
    if refused:
        parts.append("refused answers: " + ", ".join(f"{c} x{k}" for c, k in refused.most_common(4)))
    if timed_out:
        parts.append(f"{timed_out} missed deadlines")
    if disconnects:
        parts.append(f"{disconnects} disconnects")
    if not refused and not timed_out and not disconnects:
        parts.append("it did not join or answer in time")
    reason = "; ".join(parts)
    if tail:
        reason += f". Last log lines: {tail}"
    return reason


def pause_length(pauses: int, first_s: float) -> float:
    """The length of the bot's next pause, after ``pauses`` in a row already."""
    return float(min(MAX_PAUSE_S, first_s * 2 ** min(pauses, 20)))


def _is_note(line: str) -> bool:
    """A supervisor's note in a bot's log (``=== TIME start ... ===``, ``stopped``, ``restart``), not the bot's own."""
    return line.startswith("=== ") and line.endswith(" ===")


def _is_exit_note(line: str) -> bool:
    """The supervisor's note of how the bot's process ended: for a bot the kernel killed (out of memory) the only
    word of its failure, since it could say nothing itself."""
    return _is_note(line) and " exited with code " in line


def log_tail(path: Path, lines: int = 5, max_bytes: int = 16384) -> str:
    """The last lines of a house bot's log on one line: the bot's own last lines (what it said when it failed), the
    supervisor's latest note of how it ended, and its latest note. A bot restarted several times leaves a note per
    start and stop; the last lines alone could then be notes only, with the failure that matters pushed out."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    every = [ln.strip() for ln in data.splitlines() if ln.strip()]
    notes = [i for i, ln in enumerate(every) if _is_note(ln)]
    exits = [i for i in notes if _is_exit_note(every[i])][-1:]
    told = {*notes[-1:], *exits}
    own = [i for i, ln in enumerate(every) if not _is_note(ln)][-max(1, lines - len(told)):]
    kept = [every[i][:300] for i in sorted({*own, *told})]
    return " | ".join(kept)[:1200]
