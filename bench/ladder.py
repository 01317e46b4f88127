"""The ladder at scale (on demand): 1,000 registered bots and 1,000,000 stored games, in a temporary database.

Measured through the service's own code (``LadderService`` on that database; the web page's routes on the viewer's
app, reading the store as the page's own process does):

- ``refit_s``: one warm-started refit as a service starting on that history does it: the last rating run (kept
  at game N - 1,000) resumed from the database (pairwise totals summed by ``GROUP BY``, OpenSkill and the Elo start
  from the run), the 1,000 games since taken in one by one, the fit, the new run stored. Also the refit after
  100 more games (``refit_incremental_s``, what a running ladder does every ``refit_s``) and the cold fit
  (``cold_fit_s``: no Elo start);
- ``matchmaking_ms``: one matchmaking round (the field of bots that may play, from all 1,000 connected, and one
  table drawn), the slowest of 50 rounds (the first reads the last hour's games per bot from the database);
- ``leaderboard_p99_ms``: ``/api/leaderboard`` (1,000 bots) from a running web app, p99 over requests spread over
  several seconds, so the once-a-second rebuilds are among them.

The games are a Bradley-Terry field (strengths drawn from N(0, 300) Elo, opponents mostly within 3 places in the
strength order, 15% anyone; 1% forfeits, 2% with a refused answer), bulk-loaded (SQLite ``executemany``, PostgreSQL ``COPY``). The seeded rating run's OpenSkill
values are the prior (replaying a million games through OpenSkill is not what is measured); its Elo is a real fit.

    python -m bench.ladder                                 # SQLite, 1,000 bots, 1,000,000 games
    python -m bench.ladder --database postgres             # the same on a throwaway PostgreSQL server
    python -m bench.ladder --games 100000                  # smaller, to try it

Writes ``ladder`` (or ``ladder_postgres``) into ``bench-results.json`` (other keys kept).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

TARGETS = {"refit_s": 10.0, "matchmaking_ms": 100.0, "leaderboard_p99_ms": 50.0}
SINCE_LAST_RUN = 1000  # games stored after the last rating run (the warm refit takes them in one by one)
CHUNK = 100_000


def _bulk(store: Any, table: str, cols: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> None:
    """Rows into a table at once: PostgreSQL's COPY, SQLite's executemany, in one transaction."""
    from tournaments.ladder.pgstore import PostgresLadderStore

    if isinstance(store, PostgresLadderStore):
        conn = store.db.conn  # type: ignore[attr-defined]
        with conn.transaction(), conn.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
            for r in rows:
                cp.write_row(r)
        return
    with store._tx():
        store.db.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({','.join('?' * len(cols))})", rows)


def _field(n_games: int, bots: list[int], rng: np.random.Generator) -> Iterator[tuple[int, np.ndarray, np.ndarray,
                                                                                       np.ndarray]]:
    """Chunks of games: (first index, seat 0's bot, seat 1's bot, seat 0 won)."""
    import numpy as np

    n = len(bots)
    strength = np.sort(rng.normal(0.0, 300.0, n))
    ids = np.array(bots)
    for start in range(0, n_games, CHUNK):
        k = min(CHUNK, n_games - start)
        a = rng.integers(0, n, k)
        near = np.clip(a + rng.choice([-3, -2, -1, 1, 2, 3], k), 0, n - 1)
        b = np.where(rng.random(k) < 0.15, rng.integers(0, n, k), near)
        b = np.where(b == a, (a + 1) % n, b)
        p = 1.0 / (1.0 + 10.0 ** (-(strength[a] - strength[b]) / 400.0))
        yield start, ids[a], ids[b], rng.random(k) < p


def populate(store: Any, n_bots: int, n_games: int, seed: int = 1) -> dict[str, float]:
    """Register the bots (as ``bots add`` does) and bulk-load the games, their bots, pairs, deals and faults."""
    import numpy as np

    from tournaments.ladder.keys import key_digest, new_key

    t0 = time.perf_counter()
    bots = [store.add_bot(f"bot{i:04d}", "1", "remote", key_digest(new_key())).id for i in range(n_bots)]
    t1 = time.perf_counter()
    rng = np.random.default_rng(seed)
    now = time.time()
    span = 30 * 86400.0  # the games over the last 30 days, the newest now
    for start, a, b, won in _field(n_games, bots, rng):
        gid = np.arange(start + 1, start + len(a) + 1)
        finished = now - span + span * gid / n_games
        forfeit = rng.random(len(a)) < 0.01
        games, pairs, game_bots, deals, faults = [], [], [], [], []
        for i in range(len(a)):
            g, x, y, w = int(gid[i]), int(a[i]), int(b[i]), bool(won[i])
            deal = f"bench-{(g + 1) // 2:07d}"
            rot = (g + 1) % 2
            ranking = "[[0],[1]]" if w else "[[1],[0]]"
            forfeited = ("[1]" if w else "[0]") if forfeit[i] else "[]"
            games.append((g, f"{deal}|r{rot}", deal, rot, f"[{x},{y}]", ranking, "[0,0]" if w else "[0,0]", "out",
                          forfeited, f"m{g:08d}", "", 1.0, float(finished[i])))
            lo, hi = (x, y) if x < y else (y, x)
            pairs.append((g, lo, hi, 1.0 if (w == (lo == x)) else 0.0))
            game_bots.append((g, x))
            game_bots.append((g, y))
            if rot == 0:
                deals.append((deal, float(finished[i]), f"[{x},{y}]", "bench: a neighbour in the rating order"))
            if g % 50 == 0:
                faults.append((g, 1, y, '{"MELD_INVALID":1}', 1, 0))
        _bulk(store, "games", ("id", "key", "deal", "rotation", "seats", "ranking", "totals", "reason", "forfeited",
                               "match_id", "record_path", "duration_s", "finished_at"), games)
        _bulk(store, "game_pairs", ("game_id", "a", "b", "score"), pairs)
        _bulk(store, "game_bots", ("game_id", "bot_id"), game_bots)
        _bulk(store, "deals", ("key", "at", "bots", "why"), deals)
        _bulk(store, "seat_faults", ("game_id", "seat", "bot_id", "rejected", "timed_out", "disconnects"), faults)
        print(f"  {start + len(a):,} games", file=sys.stderr, flush=True)
    from tournaments.ladder.pgstore import PostgresLadderStore

    if isinstance(store, PostgresLadderStore):  # ids given: the identity goes on after them
        store.db.execute("SELECT setval(pg_get_serial_sequence('games', 'id'), (SELECT MAX(id) FROM games))")
        store.db.execute("ANALYZE")
    return {"register_s": round(t1 - t0, 2), "load_s": round(time.perf_counter() - t1, 1)}


def seed_rating_run(store: Any, upto: int) -> float:
    """The rating run a ladder would have kept at game ``upto``: a cold fit of the summed games (OpenSkill: prior)."""
    from tournaments.ladder.rating import Rater

    t0 = time.perf_counter()
    rater = Rater()
    rater.take_totals(store.rating_totals(upto))
    ratings = rater.fit()
    took = time.perf_counter() - t0
    store.add_rating_run(rater.count, rater.last_game, {b: (r.elo, r.err if math.isfinite(r.err) else -1.0, r.mu,
                                                            r.sigma, r.games) for b, r in ratings.items()})
    return took


def _record_more(store: Any, bots: list[int], n: int, rng: random.Random) -> None:
    for _ in range(n):
        a, b = rng.sample(bots, 2)
        key = f"more-{rng.getrandbits(64):016x}"
        store.record_game(f"{key}|r0", key, 0, [a, b], [[0], [1]], [0, 0], "out", [], key, "", 1.0)


def _get(port: int, n: int, gap_s: float) -> list[float]:
    """``n`` GETs of /api/leaderboard on one keep-alive connection, ``gap_s`` apart; each one's seconds."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out = []
    try:
        for _ in range(n):
            t = time.perf_counter()
            conn.request("GET", "/api/leaderboard")
            resp = conn.getresponse()
            body = resp.read()
            out.append(time.perf_counter() - t)
            assert resp.status == 200 and body.startswith(b"{"), (resp.status, body[:200])
            time.sleep(gap_s)
    finally:
        conn.close()
    return out


async def _measure(target: str | Path, data: Path, n_bots: int, requests: int, gap_s: float) -> dict[str, Any]:
    from referee.tools.viewer import start_viewer
    from tournaments.ladder.config import parse_ladder_config
    from tournaments.ladder.matchmaker import pick_table
    from tournaments.ladder.rating import Rater
    from tournaments.ladder.service import LadderService
    from tournaments.ladder.web import Presence, StoreSource, routes

    database = str(target) if not isinstance(target, Path) else ""
    cfg = parse_ladder_config({"ladder": {"variant": "indian", "seats": 2, "data": str(data), "web": "127.0.0.1:0",
                                          "per_bot_per_hour": 10**6, **({"database": database} if database else {})}},
                              data)
    if not database:  # the SQLite file where the config looks for it
        cfg.db.parent.mkdir(parents=True, exist_ok=True)
        Path(target).replace(cfg.db)
    out: dict[str, Any] = {}
    service = LadderService(cfg)
    try:
        t0 = time.perf_counter()
        service.rater = Rater.resume(service.store)
        await service.refit()
        out["refit_s"] = round(time.perf_counter() - t0, 3)
        out["refit_games_since_last_run"] = SINCE_LAST_RUN
        rng = random.Random(5)
        _record_more(service.store, [b.id for b in service.store.bots()], 100, rng)
        t0 = time.perf_counter()
        await service.refit()
        out["refit_incremental_s"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        service.stored, service.fault_summaries = service.store.game_count(), service.store.faults()
        out["startup_counts_s"] = round(time.perf_counter() - t0, 2)
        service.bots = {b.id: b for b in service.store.bots()}
        service.online = lambda _b: True  # type: ignore[method-assign]  # all 1,000 connected
        rounds = []
        for _ in range(50):
            t0 = time.perf_counter()
            table = pick_table(service.field(), cfg.table_size, service.rng, cfg.exploration)
            rounds.append((time.perf_counter() - t0) * 1000)
            assert table is not None and len(set(table.bots)) == cfg.table_size
        out["matchmaking_ms"] = round(max(rounds), 2)
        out["matchmaking_p50_ms"] = round(statistics.median(rounds), 2)
        out["field"] = len(service.field())
        everyone = Presence(frozenset(service.bots), {})  # as the page process gets it from the service

        async def presence() -> Presence:
            return everyone

        source = StoreSource(cfg.storage, cfg.game.variant, presence)  # what the page process reads
        t0 = time.perf_counter()
        await source.open()  # the page process's start: every fault tally read once
        out["web_start_s"] = round(time.perf_counter() - t0, 2)
        runner, port = await start_viewer(data / "records", None, "127.0.0.1", 0, routes=routes(source))
        try:
            await asyncio.to_thread(_get, port, 20, 0.0)  # warm: the first build
            lat = sorted(await asyncio.to_thread(_get, port, requests, gap_s))
        finally:
            await runner.cleanup()
            source.close()
        out["leaderboard_p50_ms"] = round(lat[len(lat) // 2] * 1000, 2)
        out["leaderboard_p99_ms"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 2)
        out["leaderboard_max_ms"] = round(lat[-1] * 1000, 2)
        out["leaderboard_requests"] = len(lat)
        out["leaderboard_seconds"] = round(sum(lat) + gap_s * len(lat), 1)
        assert len(service.ratings) == n_bots
    finally:
        service.store.close()
    return out


def run(n_bots: int = 1000, n_games: int = 1_000_000, database: str = "sqlite", requests: int = 3000,
        gap_s: float = 0.004) -> dict[str, Any]:
    from tournaments.ladder.stores import open_store

    with tempfile.TemporaryDirectory(prefix="bench-ladder-") as tmp, contextlib.ExitStack() as stack:
        if database == "postgres":
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.tournaments.pgserver import TempPostgres

            server = stack.enter_context(TempPostgres())
            target: str | Path = server.create_database("bench_ladder")
        else:
            target = Path(tmp) / "ladder.db"
        print(f"== ladder: {n_bots:,} bots, {n_games:,} games ({database})", file=sys.stderr, flush=True)
        with open_store(target) as store:
            res: dict[str, Any] = {"backend": database, "bots": n_bots, "games": n_games}
            res |= populate(store, n_bots, n_games)
            res["cold_fit_s"] = round(seed_rating_run(store, n_games - SINCE_LAST_RUN), 2)
        res |= asyncio.run(_measure(target, Path(tmp) / "data", n_bots, requests, gap_s))
    res["targets"] = TARGETS
    res["targets_met"] = {k: res[k] < v for k, v in TARGETS.items()}
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--bots", type=int, default=1000)
    p.add_argument("--games", type=int, default=1_000_000)
    p.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--requests", type=int, default=3000, help="GETs of /api/leaderboard (4 ms apart)")
    p.add_argument("--out", type=Path, default=Path("bench-results.json"))
    args = p.parse_args(argv)
    import os

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # as `ladder serve` (tournaments.cli)
        os.environ.setdefault(var, "1")
    from referee.service.logs import configure_logging

    configure_logging("warning")
    res = run(args.bots, args.games, args.database, args.requests)
    key = "ladder" if args.database == "sqlite" else "ladder_postgres"
    try:
        results = json.loads(args.out.read_text())
    except (OSError, ValueError):
        results = {}
    results[key] = res
    args.out.write_text(json.dumps(results, indent=4) + "\n")  # as the file is kept
    print(json.dumps(res, indent=1))
    print(f"wrote {key} into {args.out}", file=sys.stderr)
    return 0 if all(res["targets_met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
