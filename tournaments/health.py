"""Which bots failed to start or died during the last run, and where their logs are: read from the output
folder's ``tournament.log`` so the terminal names every troubled bot instead of only counting forfeits."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BotTrouble", "SilentBot", "bot_troubles", "silent_bots", "describe"]


@dataclass(frozen=True)
class BotTrouble:
    bot: str
    process: int
    deaths: int  # exits while the tournament still needed it
    failed_starts: int  # the command could not be run at all
    last_code: int | None
    log_path: Path
    last_words: str  # the last line the bot printed (often the reason it died)


def _last_words(log_path: Path) -> str:
    try:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    said = [line.strip() for line in lines if line.strip() and not line.startswith("===")]
    return said[-1][:200] if said else ""


@dataclass(frozen=True)
class SilentBot:
    """A bot alive all along that forfeited every game it played: it never joined, or never answered in time."""

    bot: str
    games: int
    log_path: Path


def _last_run_events(output: Path) -> list[dict[str, Any]]:
    log = output / "tournament.log"
    if not log.is_file():
        return []
    events = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    last_run = max((i for i, e in enumerate(events) if e.get("event") == "run_started"), default=0)
    return events[last_run:]


def silent_bots(output: Path) -> list[SilentBot]:
    """Bots that forfeited each of their seats in every game of the most recent run (at least one game)."""
    games: dict[str, int] = {}
    lost: dict[str, int] = {}
    for e in _last_run_events(output):
        if e.get("event") != "game_finished":
            continue
        seats, forfeited = list(e.get("seats", [])), set(e.get("forfeited", []))
        for bot in set(seats):
            games[bot] = games.get(bot, 0) + 1
            if all(i in forfeited for i, b in enumerate(seats) if b == bot):
                lost[bot] = lost.get(bot, 0) + 1
    return [SilentBot(b, n, output / "bots" / f"{b}-0.log") for b, n in sorted(games.items()) if lost.get(b) == n]


def bot_troubles(output: Path) -> list[BotTrouble]:
    """Troubled bot processes of the most recent run in ``output`` (deaths and failed starts)."""
    tally: dict[tuple[str, int], list[int | None]] = {}
    failed: dict[tuple[str, int], int] = {}
    for e in _last_run_events(output):
        key = (str(e.get("bot")), int(e.get("process", 0)))
        if e.get("event") == "bot_died":
            tally.setdefault(key, []).append(e.get("code"))
        elif e.get("event") == "bot_start_failed":
            failed[key] = failed.get(key, 0) + 1
    out = []
    for key in sorted(set(tally) | set(failed)):
        path = output / "bots" / f"{key[0]}-{key[1]}.log"
        codes = tally.get(key, [])
        out.append(BotTrouble(key[0], key[1], len(codes), failed.get(key, 0), codes[-1] if codes else None, path,
                              _last_words(path)))
    return out


def describe(t: BotTrouble | SilentBot) -> str:
    """One line for the terminal: what happened, the bot's last words, its log."""
    if isinstance(t, SilentBot):
        return (f"bot {t.bot!r} forfeited all {t.games} of its games: it never joined or never answered in time"
                f" (check its command, --referee/--bot-token handling and speed); log: {t.log_path}")
    what = []
    if t.failed_starts:
        what.append(f"could not start {t.failed_starts} time{'s' * (t.failed_starts > 1)}")
    if t.deaths:
        what.append(f"died {t.deaths} time{'s' * (t.deaths > 1)} (last exit code {t.last_code})")
    words = f': "{t.last_words}"' if t.last_words else ""
    return f"bot {t.bot!r} (process {t.process}) {' and '.join(what)}{words}; log: {t.log_path}"
