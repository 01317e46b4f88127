"""Results in SQLite (stdlib ``sqlite3``): one row per finished game, committed as each match ends.

The row's ``key`` is the scheduled game's stable key, so a rerun plays only the keys that are missing: a run
killed at any point loses nothing that finished (each insert is its own transaction, in WAL mode), and a match
in flight when it stopped is simply played again. The database also remembers what the tournament was
(variant, options, seats, seed, caps, time control); resuming into a database of a different tournament is
refused rather than mixing results.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tournaments.ratings import Result
from tournaments.schedule import Game

__all__ = ["DB_NAME", "GameRow", "RatingRun", "Store", "StoreMismatch", "find_db"]

DB_NAME = "tournament.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    key         TEXT PRIMARY KEY,   -- table|deal|rotation, stable across runs
    pairing     TEXT NOT NULL,      -- the table's bots, sorted, joined by '+'
    deal        INTEGER NOT NULL,
    seed        TEXT NOT NULL,      -- the referee's shuffle seed
    rotation    INTEGER NOT NULL,
    seats       TEXT NOT NULL,      -- JSON: bot name per seat
    ranking     TEXT NOT NULL,      -- JSON: groups of tied seats, best first
    totals      TEXT NOT NULL,      -- JSON: final total per seat
    reason      TEXT NOT NULL,
    forfeited   TEXT NOT NULL,      -- JSON: forfeited seats
    duration_s  REAL NOT NULL,
    record_path TEXT NOT NULL,
    match_id    TEXT NOT NULL,
    variant     TEXT NOT NULL,
    finished_at REAL NOT NULL,      -- unix time
    source      TEXT NOT NULL DEFAULT 'played'  -- or 'pool:<path>' for a ladder's imported pool results
);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL, error TEXT NOT NULL, at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS rating_runs (  -- the ratings after each run that played games: a ladder's history
    id INTEGER PRIMARY KEY, at REAL NOT NULL, label TEXT NOT NULL, games INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rating_history (
    run INTEGER NOT NULL REFERENCES rating_runs(id), bot TEXT NOT NULL,
    elo REAL NOT NULL, error REAL NOT NULL,  -- error: the 95% half-width
    games INTEGER NOT NULL, PRIMARY KEY (run, bot)
);
"""


class StoreMismatch(RuntimeError):
    """The database holds results of a different tournament."""


@dataclass(frozen=True)
class GameRow:
    key: str
    pairing: str
    deal: int
    seed: str
    rotation: int
    seats: tuple[str, ...]
    ranking: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    reason: str
    forfeited: tuple[int, ...]
    duration_s: float
    record_path: str
    match_id: str
    variant: str
    finished_at: float
    source: str

    def result(self) -> Result:
        return Result(self.seats, self.ranking, self.forfeited, group=f"{self.source}:{self.pairing}|d{self.deal}")


@dataclass(frozen=True)
class RatingRun:
    """The ratings as they stood after one run: ``ratings`` maps each bot to (Elo, 95% half-width, games)."""

    id: int
    at: float  # unix time
    label: str  # what the run was ("run", "added NAME")
    games: int  # games rated
    ratings: Mapping[str, tuple[float, float, int]]


def find_db(path: str | Path) -> Path:
    """The results database given itself or the output folder that holds it. :raises FileNotFoundError:"""
    p = Path(path)
    if p.is_dir():
        p = p / DB_NAME
    if not p.is_file():
        raise FileNotFoundError(f"no results database at {p}")
    return p


class Store:
    def __init__(self, path: str | Path, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly:
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, isolation_level=None)  # autocommit; explicit transactions below
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a commit survives a process kill
            self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ what the tournament is

    def meta(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def set_meta(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))

    def claim(self, fingerprint: Mapping[str, Any]) -> None:
        """Mark the database as this tournament's, or check that it already is. :raises StoreMismatch:"""
        old = self.meta("fingerprint")
        new = json.loads(json.dumps(dict(fingerprint), sort_keys=True))
        if old is None:
            self.set_meta("fingerprint", new)
            return
        diff = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        if diff:
            what = "; ".join(f"{k}: {old.get(k)!r} there, {new.get(k)!r} now" for k in diff)
            raise StoreMismatch(f"{self.path} holds results of a different tournament ({what}); use another output folder")

    # ------------------------------------------------------------ games

    def done_keys(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM games")}

    def count(self, source: str | None = "played") -> int:
        if source is None:
            return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        return int(self.db.execute("SELECT COUNT(*) FROM games WHERE source = ?", (source,)).fetchone()[0])

    def record(
        self,
        game: Game,
        *,
        ranking: Sequence[Sequence[int]],
        totals: Sequence[int],
        reason: str,
        forfeited: Sequence[int],
        duration_s: float,
        record_path: str = "",
        match_id: str = "",
        variant: str = "",
    ) -> bool:
        """Commit one finished game; False if its key was already there (it is kept, not overwritten)."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO games (key, pairing, deal, seed, rotation, seats, ranking, totals, reason, forfeited,"
            " duration_s, record_path, match_id, variant, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                game.key,
                "+".join(game.table),
                game.deal,
                game.seed,
                game.rotation,
                json.dumps(list(game.seats)),
                json.dumps([list(g) for g in ranking]),
                json.dumps([int(t) for t in totals]),
                reason,
                json.dumps([int(s) for s in forfeited]),
                float(duration_s),
                record_path,
                match_id,
                variant,
                time.time(),
            ),
        )
        return cur.rowcount == 1

    def record_failure(self, key: str, error: str) -> None:
        self.db.execute("INSERT INTO failures (key, error, at) VALUES (?, ?, ?)", (key, error[:4000], time.time()))

    def failures(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.db.execute("SELECT key, error FROM failures ORDER BY id")]

    def rows(self) -> Iterator[GameRow]:
        """Every game, in the order they finished (pool imports first for a ladder)."""
        for r in self.db.execute(
            "SELECT key, pairing, deal, seed, rotation, seats, ranking, totals, reason, forfeited, duration_s,"
            " record_path, match_id, variant, finished_at, source FROM games ORDER BY rowid"
        ):
            yield GameRow(
                key=r[0],
                pairing=r[1],
                deal=int(r[2]),
                seed=r[3],
                rotation=int(r[4]),
                seats=tuple(json.loads(r[5])),
                ranking=tuple(tuple(g) for g in json.loads(r[6])),
                totals=tuple(json.loads(r[7])),
                reason=r[8],
                forfeited=tuple(json.loads(r[9])),
                duration_s=float(r[10]),
                record_path=r[11],
                match_id=r[12],
                variant=r[13],
                finished_at=float(r[14]),
                source=r[15],
            )

    def results(self) -> list[Result]:
        return [row.result() for row in self.rows()]

    # ------------------------------------------------------------ rating history

    def add_rating_run(self, label: str, games: int, ratings: Mapping[str, tuple[float, float, int]]) -> int:
        """Keep the ratings of this moment (one transaction); returns the run's id."""
        self.db.execute("BEGIN")
        try:
            cur = self.db.execute("INSERT INTO rating_runs (at, label, games) VALUES (?, ?, ?)", (time.time(), label, games))
            run = int(cur.lastrowid or 0)
            self.db.executemany("INSERT INTO rating_history (run, bot, elo, error, games) VALUES (?, ?, ?, ?, ?)",
                                [(run, bot, float(e), float(err), int(n)) for bot, (e, err, n) in ratings.items()])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return run

    def rating_history(self) -> list[RatingRun]:
        """Every kept rating run, oldest first (empty for a database from before rating history)."""
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "rating_runs" not in tables:
            return []
        per_run: dict[int, dict[str, tuple[float, float, int]]] = {}
        for run, bot, elo, err, n in self.db.execute("SELECT run, bot, elo, error, games FROM rating_history"):
            per_run.setdefault(int(run), {})[bot] = (float(elo), float(err), int(n))
        return [RatingRun(int(i), float(at), label, int(g), per_run.get(int(i), {}))
                for i, at, label, g in self.db.execute("SELECT id, at, label, games FROM rating_runs ORDER BY id")]

    def import_pool(self, other: Path) -> int:
        """Copy a previous tournament's games in (a ladder rates new bots on the pool's scale); idempotent."""
        src = f"pool:{other.resolve()}"
        n = 0
        with Store(other, readonly=True) as pool:
            rows: Iterable[GameRow] = list(pool.rows())
        self.db.execute("BEGIN")
        try:
            for row in rows:
                cur = self.db.execute(
                    "INSERT OR IGNORE INTO games (key, pairing, deal, seed, rotation, seats, ranking, totals, reason,"
                    " forfeited, duration_s, record_path, match_id, variant, finished_at, source)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        f"{src}#{row.key}",
                        row.pairing,
                        row.deal,
                        row.seed,
                        row.rotation,
                        json.dumps(list(row.seats)),
                        json.dumps([list(g) for g in row.ranking]),
                        json.dumps(list(row.totals)),
                        row.reason,
                        json.dumps(list(row.forfeited)),
                        row.duration_s,
                        row.record_path,
                        row.match_id,
                        row.variant,
                        row.finished_at,
                        src,
                    ),
                )
                n += cur.rowcount
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return n
