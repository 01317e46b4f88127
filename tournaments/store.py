"""Results in SQLite (stdlib ``sqlite3``): one row per finished game, committed as each match ends.

The row's ``key`` is the scheduled game's stable key, so a rerun plays only the keys that are missing: a run
killed at any point loses nothing that finished (each insert is its own transaction, in WAL mode), and a match
in flight when it stopped is simply played again. The database also remembers what the tournament was
(variant, options, seats, seed, caps, time control); resuming into a database of a different tournament is
refused rather than mixing results.

A bot's faults are results too (``tournaments.faults``): each seat's refused answers by reason code, the moves the
referee made for it on a missed deadline and its dropped streams are stored with the game, in the same
transaction (``seat_faults``); each run, with its wall time and time control, and how often each bot process was
started in it (``runs``, ``run_bots``). A database from before they were kept gains the tables when a run opens
it (``_migrate``); its older games simply have no faults recorded.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tournaments.faults import BotFaults, BotRun, SeatFaults
from tournaments.ratings import Result
from tournaments.schedule import Game

__all__ = ["DB_NAME", "GameRow", "RatingRun", "RunRow", "Store", "StoreMismatch", "find_db"]

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
CREATE TABLE IF NOT EXISTS seat_faults (  -- each seat's faults in a game, as the referee counted them
    key           TEXT NOT NULL,     -- the game's (games.key)
    seat          INTEGER NOT NULL,
    bot           TEXT NOT NULL,
    asked         INTEGER NOT NULL,  -- decisions asked of the seat
    refused       INTEGER NOT NULL,  -- answers refused, all codes
    refused_codes TEXT NOT NULL,     -- JSON: {reason code: answers refused with it}
    timed_out     INTEGER NOT NULL,  -- moves the referee made for it: a missed deadline (or a flood of refusals)
    disconnects   INTEGER NOT NULL,  -- its stream went while the match was on
    log_path      TEXT NOT NULL,     -- the log of the bot process that held the seat
    PRIMARY KEY (key, seat)
);
CREATE TABLE IF NOT EXISTS runs (  -- each `tournament run` that played games
    id INTEGER PRIMARY KEY, label TEXT NOT NULL, started_at REAL NOT NULL, wall_s REAL NOT NULL,
    played INTEGER NOT NULL, concurrency INTEGER NOT NULL,
    time_control TEXT NOT NULL,      -- JSON: per_move_ms, bank_ms, grace_ms, connect_ms as configured
    stop_reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_bots (  -- each bot process in a run: starts, and exits it was not asked for
    run INTEGER NOT NULL REFERENCES runs(id), bot TEXT NOT NULL, process INTEGER NOT NULL,
    starts INTEGER NOT NULL, deaths INTEGER NOT NULL, failed_starts INTEGER NOT NULL, last_code INTEGER,
    log_path TEXT NOT NULL, PRIMARY KEY (run, bot, process)
);
"""
SCHEMA_VERSION = 2  # 1: games, failures, rating history; 2: faults and runs (``_migrate``)


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
class RunRow:
    """One run that played games: when, for how long (wall time), with what time control."""

    id: int
    label: str
    started_at: float  # unix time
    wall_s: float
    played: int
    concurrency: int
    time_control: Mapping[str, int]
    stop_reason: str


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


def connect_wal(path: Path, timeout_s: float = 10.0) -> sqlite3.Connection:
    """A connection in autocommit (explicit transactions), WAL mode and ``synchronous=NORMAL`` (a commit survives a
    process kill). Two processes creating the same file at once race to switch it to WAL, and SQLite answers the loser
    "database is locked" at once, without its busy handler (four ladder services started together lost one in ten):
    the switch is retried until ``timeout_s``, the same wait the busy handler gives every other statement."""
    db = sqlite3.connect(path, isolation_level=None, timeout=timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                db.close()
                raise
            time.sleep(0.01)
    db.execute("PRAGMA synchronous=NORMAL")
    return db


class Store:
    def __init__(self, path: str | Path, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly:
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = connect_wal(self.path)
            self._migrate()

    def _migrate(self) -> None:
        """Bring a database of an older version up to ``SCHEMA_VERSION``: the tables it lacks are created (their
        ``IF NOT EXISTS``); nothing it holds changes, so a tournament begun before faults were kept resumes."""
        self.db.executescript(_SCHEMA)
        if int(self.db.execute("PRAGMA user_version").fetchone()[0]) < SCHEMA_VERSION:
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _has(self, table: str) -> bool:
        """Whether the table exists (a database opened read-only may be of an older version)."""
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None

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
        faults: Sequence[SeatFaults] = (),
    ) -> bool:
        """Commit one finished game with its seats' ``faults`` (one transaction); False if its key was already
        there (it is kept, not overwritten)."""
        self.db.execute("BEGIN")
        try:
            added = self._insert_game(game, ranking, totals, reason, forfeited, duration_s, record_path, match_id, variant)
            if added:
                self._insert_faults(game.key, game.seats, faults)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return added

    def _insert_game(self, game: Game, ranking: Sequence[Sequence[int]], totals: Sequence[int], reason: str,
                     forfeited: Sequence[int], duration_s: float, record_path: str, match_id: str, variant: str) -> bool:
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

    def _insert_faults(self, key: str, seats: Sequence[str], faults: Iterable[SeatFaults]) -> None:
        rows = []
        for f in faults:
            if not 0 <= f.seat < len(seats):
                raise ValueError(f"game {key} has no seat {f.seat}")
            rows.append((key, f.seat, seats[f.seat], f.asked, f.refused, json.dumps(dict(sorted(f.rejected.items()))),
                         f.timed_out, f.disconnects, f.log_path))
        self.db.executemany("INSERT OR REPLACE INTO seat_faults (key, seat, bot, asked, refused, refused_codes, timed_out,"
                            " disconnects, log_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def seat_faults(self) -> dict[str, list[SeatFaults]]:
        """Each game's seats' faults, by game key (a game stored before faults were kept has none)."""
        out: dict[str, list[SeatFaults]] = {}
        if not self._has("seat_faults"):
            return out
        for key, seat, codes, timed_out, disconnects, asked, log_path in self.db.execute(
                "SELECT key, seat, refused_codes, timed_out, disconnects, asked, log_path FROM seat_faults ORDER BY key, seat"):
            out.setdefault(key, []).append(SeatFaults(int(seat), {str(k): int(v) for k, v in json.loads(codes).items()},
                                                      int(timed_out), int(disconnects), int(asked), log_path))
        return out

    # ------------------------------------------------------------ runs

    def add_run(self, label: str, started_at: float, wall_s: float, played: int, concurrency: int,
                time_control: Mapping[str, int], stop_reason: str, bots: Iterable[BotRun] = ()) -> int:
        """Keep one run and its bot processes' starts (one transaction); returns the run's id."""
        self.db.execute("BEGIN")
        try:
            cur = self.db.execute("INSERT INTO runs (label, started_at, wall_s, played, concurrency, time_control,"
                                  " stop_reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                  (label, float(started_at), float(wall_s), int(played), int(concurrency),
                                   json.dumps(dict(time_control), sort_keys=True), stop_reason))
            run = int(cur.lastrowid or 0)
            self.db.executemany("INSERT OR REPLACE INTO run_bots (run, bot, process, starts, deaths, failed_starts,"
                                " last_code, log_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                [(run, b.bot, b.process, b.starts, b.deaths, b.failed_starts, b.last_code, b.log_path)
                                 for b in bots])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return run

    def runs(self) -> list[RunRow]:
        """Every kept run, oldest first (none in a database from before runs were kept)."""
        if not self._has("runs"):
            return []
        return [RunRow(int(i), label, float(at), float(wall), int(n), int(conc), json.loads(tc), why)
                for i, label, at, wall, n, conc, tc, why in self.db.execute(
                    "SELECT id, label, started_at, wall_s, played, concurrency, time_control, stop_reason FROM runs"
                    " ORDER BY id")]

    def bot_runs(self) -> list[BotRun]:
        """Every bot process of every kept run."""
        if not self._has("run_bots"):
            return []
        return [BotRun(bot, int(p), int(st), int(d), int(f), None if c is None else int(c), path)
                for bot, p, st, d, f, c, path in self.db.execute(
                    "SELECT bot, process, starts, deaths, failed_starts, last_code, log_path FROM run_bots"
                    " ORDER BY run, bot, process")]

    def faults(self, bots: Iterable[str] = ()) -> dict[str, BotFaults]:
        """Each bot's faults over every game and run kept (``bots`` are listed even with none). Summed by SQLite:
        a hundred thousand games are not read into Python for it."""
        out: dict[str, BotFaults] = {b: BotFaults(b) for b in bots}
        if self._has("seat_faults"):
            faulty = "refused + timed_out + disconnects > 0"
            for bot, games, bad, asked, timed_out, disconnects in self.db.execute(
                    f"SELECT bot, COUNT(DISTINCT key), COUNT(DISTINCT CASE WHEN {faulty} THEN key END), SUM(asked),"
                    " SUM(timed_out), SUM(disconnects) FROM seat_faults GROUP BY bot"):
                f = out.setdefault(bot, BotFaults(bot))
                f.games, f.faulty_games, f.asked = int(games), int(bad), int(asked)
                f.timed_out, f.disconnects = int(timed_out), int(disconnects)
            for bot, code, n in self.db.execute("SELECT f.bot, j.key, SUM(j.value) FROM seat_faults f,"
                                                " json_each(f.refused_codes) j WHERE f.refused > 0 GROUP BY f.bot, j.key"):
                out[bot].rejected[str(code)] += int(n)
            for bot, path in self.db.execute(f"SELECT bot, log_path FROM seat_faults WHERE {faulty} AND log_path != ''"
                                             " GROUP BY bot, log_path ORDER BY MIN(rowid)"):
                out[bot].logs.append(path)
        for run in self.bot_runs():
            out.setdefault(run.bot, BotFaults(run.bot)).add_run(run)
        return out

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
            faults = pool.seat_faults()
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
                if cur.rowcount:
                    self._insert_faults(f"{src}#{row.key}", row.seats, faults.get(row.key, ()))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return n
