"""Schedules: which bots meet, on which deals, in which seats. Pure functions, no I/O.

Fairness comes from duplicate deals, as in the ACPC dealer and duplicate bridge: every deal seed is played
once for every seat rotation of the same bots, so a lucky deal favours nobody. Free-for-all tables of k bots
rotate cyclically (k games per deal: each bot sits in each seat once). Partnership variants (team_play, partners
opposite, seats 0,2 vs 1,3) seat one bot per side, on both of its side's seats, and swap the sides (2 games per
deal). Deal ``d`` has the same seed at every table, so the whole field plays the same cards.

Games come out deal-major (deal 0 of every table, then deal 1, ...), so a tournament stopped half way is still
balanced. Each game's ``key`` (table, deal, rotation) is stable across runs and config reorderings: resume
uses it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Game",
    "deal_seed",
    "seatings",
    "round_robin",
    "gauntlet",
    "ladder",
    "spread_order",
]


@dataclass(frozen=True)
class Game:
    """One scheduled match: ``table`` is the pairing (bot names, sorted), ``seats`` the bot on each seat."""

    key: str
    table: tuple[str, ...]
    deal: int
    seed: str
    rotation: int
    seats: tuple[str, ...]


def deal_seed(tournament_seed: str, deal: int) -> str:
    """The referee's shuffle seed for deal ``deal``: the same at every table and in every rotation."""
    return f"{tournament_seed}/deal-{deal}"


def seatings(table: Sequence[str], seats: int, team_play: bool) -> list[tuple[str, ...]]:
    """The seat rotations of one table: one tuple (bot per seat) per game of a duplicate deal."""
    if team_play:
        if len(table) != 2:
            raise ValueError(f"a partnership table is two bots (one per side), not {len(table)}")
        a, b = table
        return [tuple(a if s % 2 == 0 else b for s in range(seats)), tuple(b if s % 2 == 0 else a for s in range(seats))]
    if len(table) != seats:
        raise ValueError(f"a {seats}-seat table needs {seats} bots, not {len(table)}")
    k = len(table)
    return [tuple(table[(s + r) % k] for s in range(k)) for r in range(k)]


def _key(table: Sequence[str], deal: int, rotation: int) -> str:
    return f"{'+'.join(table)}|d{deal}|r{rotation}"


def _games(tables: Sequence[tuple[str, ...]], deals: Sequence[tuple[int, int]], seats: int, team_play: bool, seed: str) -> list[Game]:
    """``deals``: (deal, table index) in play order."""
    out: list[Game] = []
    for deal, ti in deals:
        table = tables[ti]
        s = deal_seed(seed, deal)
        for r, seating in enumerate(seatings(table, seats, team_play)):
            out.append(Game(_key(table, deal, r), table, deal, s, r, seating))
    return out


def _table_size(seats: int, team_play: bool) -> int:
    return 2 if team_play else seats


def round_robin(bots: Sequence[str], seats: int, deals: int, seed: str = "0", team_play: bool = False) -> list[Game]:
    """Every table of distinct bots (every pair for 2 seats or partnerships; every combination of k for k
    seats), each on ``deals`` duplicate deals."""
    k = _table_size(seats, team_play)
    _check_bots(bots, k)
    tables = [tuple(sorted(c)) for c in itertools.combinations(bots, k)]
    return _games(tables, [(d, ti) for d in range(deals) for ti in range(len(tables))], seats, team_play, seed)


def gauntlet(
    candidates: Sequence[str], others: Sequence[str], seats: int, deals: int, seed: str = "0", team_play: bool = False
) -> list[Game]:
    """Each candidate against the rest: every table of one candidate and k-1 of the others (candidates never
    meet each other)."""
    k = _table_size(seats, team_play)
    if set(candidates) & set(others):
        raise ValueError("a bot cannot be both a candidate and one of the others")
    _check_bots([*candidates, *others], 2)
    if len(others) < k - 1:
        raise ValueError(f"a {k}-bot table needs {k - 1} others, not {len(others)}")
    tables = [tuple(sorted((c, *rest))) for c in candidates for rest in itertools.combinations(others, k - 1)]
    return _games(tables, [(d, ti) for d in range(deals) for ti in range(len(tables))], seats, team_play, seed)


def ladder(
    new_bots: Sequence[str],
    pool: Sequence[str],
    seats: int,
    games: int,
    seed: str = "0",
    team_play: bool = False,
) -> list[Game]:
    """New bots against an already rated pool: each new bot plays about ``games`` games (rounded up to whole
    duplicate deals), its deals spread over the pool's tables. ``pool`` is sorted by rating; the tables are
    visited in :func:`spread_order`, so even a short ladder meets strong, middling and weak opponents.
    All new bots play the same deals against the same tables, so they compare directly."""
    k = _table_size(seats, team_play)
    if set(new_bots) & set(pool):
        raise ValueError("a new bot cannot also be in the pool")
    _check_bots([*new_bots, *pool], 2)
    if len(pool) < k - 1:
        raise ValueError(f"a {k}-bot table needs {k - 1} pool bots, not {len(pool)}")
    rotations = 2 if team_play else k
    n_deals = math.ceil(games / rotations)
    opponents = list(itertools.combinations(pool, k - 1))  # in rating order, as pool is
    order = [opponents[i] for i in spread_order(len(opponents))]
    tables: list[tuple[str, ...]] = []
    plan: list[tuple[int, int]] = []
    index: dict[tuple[str, ...], int] = {}
    for d in range(n_deals):
        for nb in new_bots:
            table = tuple(sorted((nb, *order[d % len(order)])))
            if table not in index:
                index[table] = len(tables)
                tables.append(table)
            plan.append((d, index[table]))
    return _games(tables, plan, seats, team_play, seed)


def spread_order(n: int) -> list[int]:
    """0..n-1 reordered so that every prefix spreads evenly over the range (a van der Corput sequence):
    for 8: [0, 4, 2, 6, 1, 5, 3, 7] rather than [0, 1, 2, ...]."""
    if n <= 0:
        return []
    out: list[int] = []
    seen: set[int] = set()
    i = 0
    while len(out) < n:
        x, denom, v = i, 1.0, 0.0
        while x:
            denom *= 2
            v += (x & 1) / denom
            x >>= 1
        j = min(int(v * n), n - 1)
        if j not in seen:
            seen.add(j)
            out.append(j)
        i += 1
    return out


def _check_bots(bots: Sequence[str], k: int) -> None:
    if len(set(bots)) != len(bots):
        raise ValueError("a bot is listed twice")
    if len(bots) < k:
        raise ValueError(f"{k}-bot tables need at least {k} bots, not {len(bots)}")
