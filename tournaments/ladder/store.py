"""The ladder's results: bots, scheduled deals, games, faults, rating runs. SQLite (one file, WAL) by default,
PostgreSQL (:mod:`.pgstore`) for a ladder spread over machines, both behind :class:`LadderStore`
(:func:`.stores.open_store` picks by the config's ``database``).

- One SQL for both: the statements here are in the part of SQL both dialects take (``ON CONFLICT``, ``RETURNING``,
  ``?`` parameters, ``INTEGER PRIMARY KEY`` and ``REAL`` in the schema); :mod:`.pgstore` holds every difference
  (parameters, column types, transactions, the schema's presence), so a new method or migration written here
  works on both.

- The schema is versioned: ``schema_version`` holds the version, and ``MIGRATIONS[v]`` brings a database from ``v``
  to ``v + 1`` at start, each in its own transaction. A database newer than this code is refused (``StoreTooNew``).
- A finished game is written once, in one transaction with its faults, under a unique key (``DEAL|rROTATION``):
  ``record_game`` of a key already there writes nothing. A kill -9 leaves every committed game and no part of
  another (WAL with ``synchronous=NORMAL``: a commit survives the process; the machine's power is another matter).
- Bots are ``name@version``: a new version is a new row with its own games and ratings.
- Each game's pairwise outcomes are also kept as rows (``game_pairs``: bots ``a < b``, ``a``'s score), written in
  the game's transaction, so a refit over a million games sums them with one ``GROUP BY`` (:meth:`rating_totals`)
  instead of reading every game back.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Self

from tournaments.faults import SeatFaults
from tournaments.store import connect_wal

__all__ = ["BotRow", "GameRow", "FaultSummary", "RatingPoint", "SprtRow", "LadderStore", "SqliteLadderStore",
           "StoreTooNew", "BotExists", "NoSuchBot", "StoreUnavailable", "SCHEMA_VERSION", "MIGRATIONS", "check_name",
           "parse_ref", "is_postgres_url", "redact_url", "RatingTotals", "pair_scores", "tally_game"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,15}$")


class StoreTooNew(RuntimeError):
    """The database was written by a newer ladder (its schema version is past this code's)."""


class StoreUnavailable(RuntimeError):
    """The database cannot be reached (a PostgreSQL server down, refusing the login, psycopg not installed)."""


class BotExists(ValueError):
    pass


class NoSuchBot(LookupError):
    pass


def check_name(name: str, version: str) -> None:
    """:raises ValueError: a name or version that would not be safe in a URL, a file name or a log line."""
    if not _NAME.match(name):
        raise ValueError(f"a bot name is 1-40 letters, digits, '_', '.', '-' (first a letter or digit), not {name[:60]!r}")
    if not _VERSION.match(version):
        raise ValueError(f"a version is 1-16 letters, digits, '_', '.', '-', not {version[:30]!r}")


def parse_ref(ref: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME@VERSION``."""
    name, _, version = ref.partition("@")
    return name, version or None


def is_postgres_url(database: str | Path) -> bool:
    return isinstance(database, str) and database.startswith(("postgresql://", "postgres://"))


def redact_url(url: str) -> str:
    """The URL with its password (if any) hidden, for messages and logs."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


@dataclass(frozen=True)
class BotRow:
    id: int
    name: str
    version: str
    kind: str  # "remote" (joins with a key) or "house" (the service runs its command)
    command: tuple[str, ...] = ()
    cwd: str = ""
    created_at: float = 0.0
    revoked_at: float | None = None
    paused_until: float | None = None
    pause_reason: str = ""
    pauses: int = 0
    sandbox: str = ""  # a house bot's "bwrap" or "none"; "": the ladder's choice

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def paused(self, now: float | None = None) -> bool:
        return self.paused_until is not None and (now if now is not None else time.time()) < self.paused_until


@dataclass(frozen=True)
class GameRow:
    id: int
    key: str
    deal: str
    rotation: int
    seats: tuple[int, ...]  # bot ids
    ranking: tuple[tuple[int, ...], ...]
    forfeited: tuple[int, ...]
    totals: tuple[int, ...]
    reason: str
    match_id: str
    finished_at: float
    why: str = ""


@dataclass
class FaultSummary:
    """One bot's faults over all its games."""

    games: int = 0
    forfeits: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # illegal or malformed answers, by reason code
    timed_out: int = 0  # deadlines missed (the referee moved for it)
    disconnects: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "forfeits": self.forfeits, "refused": dict(self.refused),
                "timed_out": self.timed_out, "disconnects": self.disconnects}

    @property
    def total(self) -> int:
        return self.forfeits + sum(self.refused.values()) + self.timed_out + self.disconnects


def tally_game(summaries: dict[int, FaultSummary], seats: Sequence[int], forfeited: Sequence[int],
               faults: Iterable[SeatFaults] = ()) -> None:
    """Add one stored game to per-bot summaries, as :meth:`SqliteLadderStore.faults` counts it from the tables (the
    service keeps them in memory: the leaderboard is built without reading every game)."""
    for b in set(seats):
        summaries.setdefault(int(b), FaultSummary()).games += 1
    for i in forfeited:
        if 0 <= i < len(seats):
            summaries.setdefault(int(seats[i]), FaultSummary()).forfeits += 1
    for f in faults:
        if 0 <= f.seat < len(seats):
            s = summaries.setdefault(int(seats[f.seat]), FaultSummary())
            s.refused.update({str(k): int(v) for k, v in f.rejected.items()})
            s.timed_out += int(f.timed_out)
            s.disconnects += int(f.disconnects)


@dataclass(frozen=True)
class RatingTotals:
    """The games up to ``upto`` (a game id), summed: ``count`` games; ``pairs`` (a, b, a's score, games) with
    ``a < b``; per bot its games and its forfeited seats."""

    upto: int
    count: int
    pairs: list[tuple[int, int, float, int]]
    games: Counter[int]
    forfeits: Counter[int]


def pair_scores(seats: Sequence[int], ranking: Sequence[Sequence[int]]) -> list[tuple[int, int, float]]:
    """A game's pairwise outcomes as the Bradley-Terry fit counts them (``tournaments.ratings``: the better placed
    bot wins, bots placed together draw): ``(a, b, a's score)`` for each pair of distinct bots, ``a < b``."""
    place_of_seat = {s: i for i, grp in enumerate(ranking) for s in grp}
    last = len(ranking)
    place: dict[int, int] = {}
    for seat, bot in enumerate(seats):
        p = place_of_seat.get(seat, last)
        place[int(bot)] = min(place.get(int(bot), p), p)
    bots = sorted(place)
    return [(a, b, 1.0 if place[a] < place[b] else 0.0 if place[a] > place[b] else 0.5)
            for i, a in enumerate(bots) for b in bots[i + 1:]]


@dataclass(frozen=True)
class RatingPoint:
    run: int
    at: float
    games: int
    elo: float
    err: float
    mu: float
    sigma: float


@dataclass(frozen=True)
class SprtRow:
    """An SPRT of a new version (``candidate_id``) against the previous one (``baseline_id``): its parameters, and
    its state as of the last unit (``status``: "running", "H0", "H1" or "cap"; ``counts``: units per score level)."""

    candidate_id: int
    baseline_id: int
    elo0: float
    elo1: float
    alpha: float
    beta: float
    rotations: int
    max_deals: int
    started_at: float
    status: str
    llr: float
    counts: tuple[int, ...]
    updated_at: float


class LadderStore(Protocol):
    """What the service, the CLI and the web page need of the results, whatever holds them."""

    def add_bot(self, name: str, version: str, kind: str, key_digest: str | None, command: Sequence[str] = (),
                cwd: str = "", sandbox: str = "") -> BotRow: ...
    def bots(self, include_revoked: bool = False) -> list[BotRow]: ...
    def find(self, name: str, version: str | None = None) -> list[BotRow]: ...
    def revoke(self, name: str, version: str | None = None) -> list[BotRow]: ...
    def keys(self) -> list[tuple[int, str]]: ...
    def pause(self, bot_id: int, until: float, reason: str) -> None: ...
    def unpause(self, bot_id: int) -> None: ...
    def add_deal(self, key: str, bots: Sequence[int], why: str) -> None: ...
    def record_game(self, key: str, deal: str, rotation: int, seats: Sequence[int], ranking: Sequence[Sequence[int]],
                    totals: Sequence[int], reason: str, forfeited: Sequence[int], match_id: str, record_path: str,
                    duration_s: float, faults: Iterable[SeatFaults] = ()) -> bool: ...
    def games(self, after_id: int = 0) -> list[GameRow]: ...
    def game_count(self) -> int: ...
    def recent_games(self, bot_id: int, limit: int = 20) -> list[GameRow]: ...
    def games_since(self, since: float) -> Counter[int]: ...
    def faults(self, after_id: int = 0, upto: int | None = None) -> dict[int, FaultSummary]: ...
    def last_game_id(self) -> int: ...
    def count_games(self, after_id: int, upto: int) -> int: ...
    def add_rating_run(self, games: int, last_game: int, ratings: Mapping[int, tuple[float, float, float, float, int]]
                       ) -> int: ...
    def latest_ratings(self) -> tuple[int, dict[int, tuple[float, float, float, float, int]]]: ...
    def rating_totals(self, upto: int) -> RatingTotals: ...
    def rating_history(self, bot_id: int, limit: int = 200) -> list[RatingPoint]: ...
    def start_sprt(self, candidate_id: int, baseline_id: int, elo0: float, elo1: float, alpha: float, beta: float,
                   rotations: int, max_deals: int) -> SprtRow: ...
    def sprt_tests(self) -> list[SprtRow]: ...
    def update_sprt(self, candidate_id: int, status: str, llr: float, counts: Sequence[int]) -> None: ...
    def add_sprt_deal(self, deal: str, candidate_id: int) -> None: ...
    def sprt_games(self, candidate_id: int) -> list[GameRow]: ...
    def close(self) -> None: ...


_V1 = """
CREATE TABLE bots (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, kind TEXT NOT NULL,
    key_digest TEXT UNIQUE, command TEXT NOT NULL DEFAULT '[]', cwd TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL, revoked_at REAL, paused_until REAL, pause_reason TEXT NOT NULL DEFAULT '',
    pauses INTEGER NOT NULL DEFAULT 0, sandbox TEXT NOT NULL DEFAULT '', UNIQUE (name, version));
CREATE TABLE deals (key TEXT PRIMARY KEY, at REAL NOT NULL, bots TEXT NOT NULL, why TEXT NOT NULL);
CREATE TABLE games (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, deal TEXT NOT NULL, rotation INTEGER NOT NULL,
    seats TEXT NOT NULL, ranking TEXT NOT NULL, totals TEXT NOT NULL, reason TEXT NOT NULL, forfeited TEXT NOT NULL,
    match_id TEXT NOT NULL, record_path TEXT NOT NULL, duration_s REAL NOT NULL, finished_at REAL NOT NULL);
CREATE TABLE game_bots (game_id INTEGER NOT NULL, bot_id INTEGER NOT NULL, PRIMARY KEY (bot_id, game_id));
CREATE INDEX games_finished ON games (finished_at);
CREATE TABLE seat_faults (
    game_id INTEGER NOT NULL, seat INTEGER NOT NULL, bot_id INTEGER NOT NULL, rejected TEXT NOT NULL,
    timed_out INTEGER NOT NULL, disconnects INTEGER NOT NULL, PRIMARY KEY (game_id, seat));
CREATE INDEX seat_faults_bot ON seat_faults (bot_id);
CREATE TABLE rating_runs (id INTEGER PRIMARY KEY, at REAL NOT NULL, games INTEGER NOT NULL, last_game INTEGER NOT NULL);
CREATE TABLE ratings (
    run_id INTEGER NOT NULL, bot_id INTEGER NOT NULL, elo REAL NOT NULL, err REAL NOT NULL, mu REAL NOT NULL,
    sigma REAL NOT NULL, games INTEGER NOT NULL, PRIMARY KEY (bot_id, run_id));
"""

# Each game's pairwise outcomes (what the Bradley-Terry fit sums), written with the game; games stored before this
# version are filled in by the migration (``_fill_pairs``). Types as SQLite says them (pgstore maps them). And
# game_bots by game: the last hour's games per bot (the per-hour cap) joins from games to their bots.
_PAIRS = """
CREATE TABLE game_pairs (
    game_id INTEGER NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL, score REAL NOT NULL, PRIMARY KEY (game_id, a, b));
CREATE INDEX game_bots_game ON game_bots (game_id)
"""


# SPRTs of a new version against the previous one. Plain SQL that SQLite and PostgreSQL both take
# (DOUBLE PRECISION: REAL would be 4 bytes in PostgreSQL). A test's deals are listed in sprt_deals.
_SPRT = """
CREATE TABLE sprt_tests (
    candidate_id INTEGER NOT NULL, baseline_id INTEGER NOT NULL, elo0 DOUBLE PRECISION NOT NULL,
    elo1 DOUBLE PRECISION NOT NULL, alpha DOUBLE PRECISION NOT NULL, beta DOUBLE PRECISION NOT NULL,
    rotations INTEGER NOT NULL, max_deals INTEGER NOT NULL, started_at DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL, llr DOUBLE PRECISION NOT NULL, counts TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (candidate_id));
CREATE TABLE sprt_deals (deal TEXT NOT NULL, candidate_id INTEGER NOT NULL, PRIMARY KEY (deal));
CREATE INDEX sprt_deals_candidate ON sprt_deals (candidate_id);
CREATE INDEX games_deal ON games (deal);
"""

# MIGRATIONS[v]: from schema version v to v + 1 (v = 0: an empty database)
MIGRATIONS: tuple[str, ...] = (_V1, _SPRT, _PAIRS)
SCHEMA_VERSION = len(MIGRATIONS)


def _j(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"))


class Cursor(Protocol):
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the store needs of a DB-API connection (sqlite3's, or :mod:`.pgstore`'s over psycopg)."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Cursor: ...
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Cursor: ...
    def close(self) -> None: ...


class SqliteLadderStore:
    """:class:`LadderStore` in one SQLite file. One connection, used from one thread (the service's loop).

    Its SQL is the one both dialects share: :class:`tournaments.ladder.pgstore.PostgresLadderStore` is this class
    with a PostgreSQL connection (``db``) that takes the same statements, and its own ``migrate`` and transactions.
    """

    db: Connection
    _BEGIN = "BEGIN IMMEDIATE"  # a write transaction from its start: two writers wait instead of failing midway

    def __init__(self, path: str | Path, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly:
            if not self.path.is_file():
                raise FileNotFoundError(f"no ladder database at {self.path} (start `tournament ladder serve` or add a bot)")
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = connect_wal(self.path)
        self.db.execute("PRAGMA busy_timeout=10000")  # the CLI and the service share the file
        self.migrate(readonly)

    def migrate(self, readonly: bool = False) -> int:
        """Bring the schema to ``SCHEMA_VERSION``; returns the version found. :raises StoreTooNew:"""
        found = int(self.db.execute("SELECT version FROM schema_version").fetchone()[0]) \
            if self._has_table("schema_version") else 0
        if found > SCHEMA_VERSION:
            raise StoreTooNew(f"{self._where()} is of ladder schema version {found}; this code knows up to {SCHEMA_VERSION}: "
                              "upgrade the ladder")
        if readonly or found == SCHEMA_VERSION:
            return found
        for v in range(found, SCHEMA_VERSION):
            with self._tx():
                self._lock_migrations()
                if v == 0:
                    self.db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
                    self.db.execute("INSERT INTO schema_version (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM schema_version)")
                now = int(self.db.execute("SELECT version FROM schema_version").fetchone()[0])
                if now != v:  # another process migrated meanwhile
                    continue
                for stmt in MIGRATIONS[v].split(";"):
                    if stmt.strip():
                        self.db.execute(self._ddl(stmt))
                if MIGRATIONS[v] is _PAIRS:
                    self._fill_pairs()
                self.db.execute("UPDATE schema_version SET version = ?", (v + 1,))
        return found

    def _fill_pairs(self) -> None:
        """The pairwise outcomes of the games stored before ``game_pairs`` existed (inside the migration's
        transaction)."""
        rows = self.db.execute("SELECT id, seats, ranking FROM games").fetchall()
        self.db.executemany("INSERT INTO game_pairs (game_id, a, b, score) VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                            [(int(gid), *p) for gid, seats, ranking in rows
                             for p in pair_scores(json.loads(seats), json.loads(ranking))])

    def _has_table(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None

    def _ddl(self, stmt: str) -> str:
        """A migration's statement as this database takes it (SQLite: as written)."""
        return stmt

    def _lock_migrations(self) -> None:
        """Make concurrent migrations wait for each other (SQLite: BEGIN IMMEDIATE already does)."""

    def _where(self) -> str:
        return str(self.path)

    class _Tx:
        def __init__(self, db: Any, begin: str) -> None:
            self.db = db
            self.begin = begin

        def __enter__(self) -> None:
            self.db.execute(self.begin)

        def __exit__(self, exc_type: object, *_: object) -> None:
            self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")

    def _tx(self) -> AbstractContextManager[Any]:
        return SqliteLadderStore._Tx(self.db, self._BEGIN)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ bots

    _BOT_COLS = ("id, name, version, kind, command, cwd, created_at, revoked_at, paused_until, pause_reason, pauses, "
                 "sandbox")

    @staticmethod
    def _bot(r: Sequence[Any]) -> BotRow:
        return BotRow(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), r[5], r[6], r[7], r[8], r[9], r[10], r[11])

    def add_bot(self, name: str, version: str, kind: str, key_digest: str | None, command: Sequence[str] = (),
                cwd: str = "", sandbox: str = "") -> BotRow:
        """:raises BotExists: ``name@version`` is registered already (revoked or not: a label is never reused)."""
        check_name(name, version)
        with self._tx():
            row = self.db.execute(
                "INSERT INTO bots (name, version, kind, key_digest, command, cwd, created_at, sandbox) "
                "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING RETURNING id",
                (name, version, kind, key_digest, _j(list(command)), cwd, time.time(), sandbox)).fetchall()
        if not row:  # (fetchall: SQLite commits only once a RETURNING statement has run to its end)
            raise BotExists(f"{name}@{version} is registered already: register a new version (--version)")
        return self.bot(int(row[0][0]))

    def bot(self, bot_id: int) -> BotRow:
        r = self.db.execute(f"SELECT {self._BOT_COLS} FROM bots WHERE id = ?", (bot_id,)).fetchone()
        if r is None:
            raise NoSuchBot(f"no bot #{bot_id}")
        return self._bot(r)

    def bots(self, include_revoked: bool = False) -> list[BotRow]:
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        return [self._bot(r) for r in self.db.execute(f"SELECT {self._BOT_COLS} FROM bots{where} ORDER BY id")]

    def find(self, name: str, version: str | None = None) -> list[BotRow]:
        if version is None:
            rows = self.db.execute(f"SELECT {self._BOT_COLS} FROM bots WHERE name = ? ORDER BY id", (name,))
        else:
            rows = self.db.execute(f"SELECT {self._BOT_COLS} FROM bots WHERE name = ? AND version = ?", (name, version))
        return [self._bot(r) for r in rows]

    def revoke(self, name: str, version: str | None = None) -> list[BotRow]:
        """Revoke ``name@version`` (every version of ``name`` without one): its key stops working, it is no
        longer scheduled, its games and ratings stay. :raises NoSuchBot:"""
        found = [b for b in self.find(name, version) if b.revoked_at is None]
        if not found:
            raise NoSuchBot(f"no registered bot {name}{'@' + version if version else ''} that is not revoked")
        with self._tx():
            for b in found:
                self.db.execute("UPDATE bots SET revoked_at = ?, key_digest = NULL WHERE id = ?", (time.time(), b.id))
        return found

    def keys(self) -> list[tuple[int, str]]:
        return [(int(i), str(d)) for i, d in self.db.execute(
            "SELECT id, key_digest FROM bots WHERE revoked_at IS NULL AND key_digest IS NOT NULL")]

    def pause(self, bot_id: int, until: float, reason: str) -> None:
        with self._tx():
            self.db.execute("UPDATE bots SET paused_until = ?, pause_reason = ?, pauses = pauses + 1 WHERE id = ?",
                            (until, reason, bot_id))

    def unpause(self, bot_id: int) -> None:
        """A paused bot played a clean game: its pauses start again from the first (the reason stays shown)."""
        with self._tx():
            self.db.execute("UPDATE bots SET paused_until = NULL, pauses = 0 WHERE id = ?", (bot_id,))

    # ------------------------------------------------------------ deals and games

    def add_deal(self, key: str, bots: Sequence[int], why: str) -> None:
        """A scheduled deal and why it was picked (kept whether or not its games finish)."""
        with self._tx():
            self.db.execute("INSERT INTO deals (key, at, bots, why) VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                            (key, time.time(), _j(list(bots)), why))

    def record_game(self, key: str, deal: str, rotation: int, seats: Sequence[int], ranking: Sequence[Sequence[int]],
                    totals: Sequence[int], reason: str, forfeited: Sequence[int], match_id: str, record_path: str,
                    duration_s: float, faults: Iterable[SeatFaults] = ()) -> bool:
        """Store a finished game and its seats' faults in one transaction; False when ``key`` is stored already."""
        with self._tx():
            row = self.db.execute(
                "INSERT INTO games (key, deal, rotation, seats, ranking, totals, reason, forfeited, match_id, "
                "record_path, duration_s, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING "
                "RETURNING id",
                (key, deal, rotation, _j(list(seats)), _j([list(g) for g in ranking]), _j(list(totals)), reason,
                 _j(list(forfeited)), match_id, record_path, duration_s, time.time())).fetchall()
            if not row:
                return False
            gid = int(row[0][0])
            self.db.executemany("INSERT INTO game_bots (game_id, bot_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                [(gid, b) for b in sorted(set(seats))])
            pairs = pair_scores(seats, ranking)
            if pairs:
                self.db.executemany("INSERT INTO game_pairs (game_id, a, b, score) VALUES (?,?,?,?) "
                                    "ON CONFLICT DO NOTHING", [(gid, *p) for p in pairs])
            for f in faults:
                if 0 <= f.seat < len(seats):
                    self.db.execute(
                        "INSERT INTO seat_faults (game_id, seat, bot_id, rejected, timed_out, disconnects) "
                        "VALUES (?,?,?,?,?,?) ON CONFLICT (game_id, seat) DO UPDATE SET bot_id = excluded.bot_id, "
                        "rejected = excluded.rejected, timed_out = excluded.timed_out, disconnects = excluded.disconnects",
                        (gid, f.seat, seats[f.seat], _j(dict(f.rejected)), f.timed_out, f.disconnects))
        return True

    _GAME_COLS = ("g.id, g.key, g.deal, g.rotation, g.seats, g.ranking, g.forfeited, g.totals, g.reason, g.match_id, "
                  "g.finished_at, COALESCE(d.why, '')")

    @staticmethod
    def _game(r: Sequence[Any]) -> GameRow:
        return GameRow(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), tuple(tuple(g) for g in json.loads(r[5])),
                       tuple(json.loads(r[6])), tuple(json.loads(r[7])), r[8], r[9], r[10], r[11])

    def games(self, after_id: int = 0) -> list[GameRow]:
        """Every game stored after game ``after_id``, in the order stored (a refit takes in only these)."""
        return [self._game(r) for r in self.db.execute(
            f"SELECT {self._GAME_COLS} FROM games g LEFT JOIN deals d ON d.key = g.deal WHERE g.id > ? ORDER BY g.id",
            (after_id,))]

    def iter_games(self, after_id: int = 0) -> Iterator[GameRow]:
        for r in self.db.execute(f"SELECT {self._GAME_COLS} FROM games g LEFT JOIN deals d ON d.key = g.deal "
                                 "WHERE g.id > ? ORDER BY g.id", (after_id,)):
            yield self._game(r)

    def game_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def recent_games(self, bot_id: int, limit: int = 20) -> list[GameRow]:
        return [self._game(r) for r in self.db.execute(
            f"SELECT {self._GAME_COLS} FROM game_bots gb JOIN games g ON g.id = gb.game_id LEFT JOIN deals d "
            "ON d.key = g.deal WHERE gb.bot_id = ? ORDER BY g.id DESC LIMIT ?", (bot_id, limit))]

    def games_since(self, since: float) -> Counter[int]:
        """Games per bot finished since ``since`` (the per-hour cap). Driven from the recent games (the finished_at
        index, then game_bots by game): a join lets SQLite walk every game's bots in bot order instead."""
        return Counter({int(b): int(n) for b, n in self.db.execute(
            "SELECT bot_id, COUNT(*) FROM game_bots WHERE game_id IN (SELECT id FROM games WHERE finished_at >= ?) "
            "GROUP BY bot_id", (since,))})

    def deal_why(self, key: str) -> str:
        r = self.db.execute("SELECT why FROM deals WHERE key = ?", (key,)).fetchone()
        return str(r[0]) if r else ""

    def faults(self, after_id: int = 0, upto: int | None = None) -> dict[int, FaultSummary]:
        """Every bot's games, forfeits, refused answers by reason code, missed deadlines and disconnects; of the
        games ``after_id < id <= upto`` only when given (the web page adds the games stored since it last looked)."""
        hi = (1 << 62) if upto is None else upto
        out: dict[int, FaultSummary] = {}
        for b, n in self.db.execute("SELECT bot_id, COUNT(*) FROM game_bots WHERE game_id > ? AND game_id <= ? "
                                    "GROUP BY bot_id", (after_id, hi)):
            out[int(b)] = FaultSummary(games=int(n))
        for seats, forfeited in self.db.execute("SELECT seats, forfeited FROM games WHERE id > ? AND id <= ? "
                                                "AND forfeited != '[]'", (after_id, hi)):
            s = json.loads(seats)
            for i in json.loads(forfeited):
                if 0 <= i < len(s):
                    out.setdefault(int(s[i]), FaultSummary()).forfeits += 1
        for b, rejected, timed_out, disconnects in self.db.execute(
                "SELECT bot_id, rejected, timed_out, disconnects FROM seat_faults WHERE game_id > ? AND game_id <= ?",
                (after_id, hi)):
            f = out.setdefault(int(b), FaultSummary())
            f.refused.update({str(k): int(v) for k, v in json.loads(rejected).items()})
            f.timed_out += int(timed_out)
            f.disconnects += int(disconnects)
        return out

    def last_game_id(self) -> int:
        """The id of the last game stored (0: none)."""
        return int(self.db.execute("SELECT COALESCE(MAX(id), 0) FROM games").fetchone()[0])

    def count_games(self, after_id: int, upto: int) -> int:
        """Games with ``after_id < id <= upto`` (ids are not dense on PostgreSQL: a conflicting insert takes one)."""
        return int(self.db.execute("SELECT COUNT(*) FROM games WHERE id > ? AND id <= ?", (after_id, upto)).fetchone()[0])

    # ------------------------------------------------------------ ratings

    def add_rating_run(self, games: int, last_game: int, ratings: Mapping[int, tuple[float, float, float, float, int]]
                       ) -> int:
        """Keep one refit: per bot (Elo, 95% half-width, OpenSkill mu, sigma, games)."""
        with self._tx():
            run = int(self.db.execute("INSERT INTO rating_runs (at, games, last_game) VALUES (?,?,?) RETURNING id",
                                      (time.time(), games, last_game)).fetchall()[0][0])
            self.db.executemany("INSERT INTO ratings VALUES (?,?,?,?,?,?,?)",
                                [(run, b, *v) for b, v in ratings.items()])
        return run

    def rating_totals(self, upto: int) -> RatingTotals:
        """What the Bradley-Terry fit needs of the games ``id <= upto``, summed by the database: per pair of bots
        their games and ``a``'s score, per bot its games and forfeited seats (a refit's warm start: no game read)."""
        pairs = [(int(a), int(b), float(s), int(n)) for a, b, s, n in self.db.execute(
            "SELECT a, b, SUM(score), COUNT(*) FROM game_pairs WHERE game_id <= ? GROUP BY a, b", (upto,))]
        games = Counter({int(b): int(n) for b, n in self.db.execute(
            "SELECT bot_id, COUNT(*) FROM game_bots WHERE game_id <= ? GROUP BY bot_id", (upto,))})
        forfeits: Counter[int] = Counter()
        for seats, forfeited in self.db.execute(
                "SELECT seats, forfeited FROM games WHERE id <= ? AND forfeited != '[]'", (upto,)):
            s = json.loads(seats)
            forfeits.update(int(s[i]) for i in json.loads(forfeited) if 0 <= i < len(s))
        count = int(self.db.execute("SELECT COUNT(*) FROM games WHERE id <= ?", (upto,)).fetchone()[0])
        return RatingTotals(upto, count, pairs, games, forfeits)

    def latest_ratings(self) -> tuple[int, dict[int, tuple[float, float, float, float, int]]]:
        """The last game the last rating run took in (0: no run yet) and that run's ratings."""
        r = self.db.execute("SELECT id, last_game FROM rating_runs ORDER BY id DESC LIMIT 1").fetchone()
        if r is None:
            return 0, {}
        return int(r[1]), {int(b): (e, err, mu, s, int(n)) for b, e, err, mu, s, n in self.db.execute(
            "SELECT bot_id, elo, err, mu, sigma, games FROM ratings WHERE run_id = ?", (r[0],))}

    def rating_history(self, bot_id: int, limit: int = 200) -> list[RatingPoint]:
        """The bot's ratings at its last ``limit`` rating runs, oldest first."""
        rows = self.db.execute(
            "SELECT r.id, r.at, x.games, x.elo, x.err, x.mu, x.sigma FROM ratings x JOIN rating_runs r ON r.id = x.run_id "
            "WHERE x.bot_id = ? ORDER BY r.id DESC LIMIT ?", (bot_id, limit)).fetchall()
        return [RatingPoint(*r) for r in reversed(rows)]

    # ------------------------------------------------------------ SPRTs of new versions

    _SPRT_COLS = ("candidate_id, baseline_id, elo0, elo1, alpha, beta, rotations, max_deals, started_at, status, llr, "
                  "counts, updated_at")

    @staticmethod
    def _sprt(r: Sequence[Any]) -> SprtRow:
        return SprtRow(int(r[0]), int(r[1]), float(r[2]), float(r[3]), float(r[4]), float(r[5]), int(r[6]), int(r[7]),
                       float(r[8]), str(r[9]), float(r[10]), tuple(int(c) for c in json.loads(r[11])), float(r[12]))

    def start_sprt(self, candidate_id: int, baseline_id: int, elo0: float, elo1: float, alpha: float, beta: float,
                   rotations: int, max_deals: int) -> SprtRow:
        """The candidate's test, started now with these parameters unless it exists (then as stored: a running
        test keeps its bounds whatever the config says later)."""
        now = time.time()
        with self._tx():
            self.db.execute(
                f"INSERT INTO sprt_tests ({self._SPRT_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT (candidate_id) DO NOTHING",
                (candidate_id, baseline_id, elo0, elo1, alpha, beta, rotations, max_deals, now, "running", 0.0,
                 _j([0] * (2 * rotations + 1)), now))
        r = self.db.execute(f"SELECT {self._SPRT_COLS} FROM sprt_tests WHERE candidate_id = ?", (candidate_id,)).fetchone()
        return self._sprt(r)

    def sprt_tests(self) -> list[SprtRow]:
        return [self._sprt(r) for r in self.db.execute(f"SELECT {self._SPRT_COLS} FROM sprt_tests ORDER BY candidate_id")]

    def update_sprt(self, candidate_id: int, status: str, llr: float, counts: Sequence[int]) -> None:
        with self._tx():
            self.db.execute("UPDATE sprt_tests SET status = ?, llr = ?, counts = ?, updated_at = ? WHERE candidate_id = ?",
                            (status, llr, _j(list(counts)), time.time(), candidate_id))

    def add_sprt_deal(self, deal: str, candidate_id: int) -> None:
        """The deal ``deal`` is played for the candidate's test (its games count in it)."""
        with self._tx():
            self.db.execute("INSERT INTO sprt_deals (deal, candidate_id) VALUES (?, ?) ON CONFLICT (deal) DO NOTHING",
                            (deal, candidate_id))

    def sprt_games(self, candidate_id: int) -> list[GameRow]:
        """The games of the candidate's test's deals, in the order stored (the test is rebuilt from them)."""
        return [self._game(r) for r in self.db.execute(
            f"SELECT {self._GAME_COLS} FROM sprt_deals s JOIN games g ON g.deal = s.deal LEFT JOIN deals d "
            "ON d.key = g.deal WHERE s.candidate_id = ? ORDER BY g.id", (candidate_id,))]
