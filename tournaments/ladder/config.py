"""The ladder service's TOML file: the game (as a tournament's ``[tournament]`` table says it) and the service.

    [ladder]
    variant = "indian"
    seats = 2
    data = "ladder-data"            # ladder.db (SQLite, WAL), records/, bots/ (house bots' logs)
    # database = "postgresql://ladder@db.example.org/ladder"   # the results in PostgreSQL instead of ladder.db
    listen = "0.0.0.0:50051"        # the referee's address for remote bots (gRPC; TLS with tls_cert/tls_key)
    web = "127.0.0.1:8080"          # leaderboard, bot pages, replays, /api/leaderboard; "" for none
    concurrency = 4                 # deals at once (each deal: one game per seat rotation, same cards)
    per_bot_games = 2               # games one bot plays at once, at most
    per_bot_per_hour = 600          # games one bot plays in an hour, at most
    time_control = { per_move_ms = 1000, connect_ms = 5000 }
    max_hands = 4
    sandbox = "bwrap"               # house bots, as in a tournament (tournaments/sandbox.py)
    limits = { memory_mb = 1024 }
    sprt = { elo0 = 0, elo1 = 50, alpha = 0.05, beta = 0.05, max_deals = 500, share = 0.5 }  # new versions
    # cluster = "tcp://scheduler.example.org:8786"   # house bots' games on Dask workers (or serve --cluster)

The game keys are checked by the tournament config's own parser (one set of rules, one set of messages).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tournaments.config import ConfigError, TournamentConfig, parse_config
from tournaments.ladder.store import is_postgres_url
from tournaments.ladder.versions import SprtSettings

__all__ = ["LadderConfig", "load_ladder_config", "parse_ladder_config", "DB_FILE"]

DB_FILE = "ladder.db"
_GAME_KEYS = ("variant", "options", "seats", "time_control", "seed", "max_turns_per_hand", "max_hands",
              "forfeit_after", "match_timeout_s", "sandbox", "limits")
_OWN_KEYS = ("data", "database", "listen", "web", "concurrency", "per_bot_games", "per_bot_per_hour", "tls_cert",
             "tls_key", "refit_s", "pause_after", "pause_s", "exploration", "sprt", "cluster")


@dataclass(frozen=True)
class LadderConfig:
    game: TournamentConfig  # the variant, its options, time control and sandbox, as a tournament has them
    data: Path
    listen: str = "127.0.0.1:50051"
    web: str = "127.0.0.1:8080"
    concurrency: int = 2
    per_bot_games: int = 2
    per_bot_per_hour: int = 600
    tls_cert: Path | None = None
    tls_key: Path | None = None
    refit_s: float = 2.0  # refit at most this often (a refit takes in every game since the last)
    pause_after: int = 4  # this many failed games in a row (forfeited, or refused answers past the limit) pause a bot
    pause_s: float = 300.0  # a paused bot's first pause; each pause after a failed retry doubles it (at most a day)
    exploration: float = 0.15  # the share of opponents drawn from the whole field rather than near in rating
    sprt: SprtSettings = SprtSettings()  # the SPRT of each new version against the previous one
    source: Path | None = None
    database: str = ""  # a postgresql:// URL; "": SQLite in DATA/ladder.db
    cluster: str = ""  # a Dask scheduler's address: house bots' games are played on its workers

    @property
    def db(self) -> Path:
        return self.data / DB_FILE

    @property
    def storage(self) -> str | Path:
        """Where the results are: the PostgreSQL URL, else the SQLite file (``stores.open_store`` takes either)."""
        return self.database or self.db

    @property
    def table_size(self) -> int:
        """Bots at one table: every seat a bot, but partnership variants seat one bot per side."""
        return 2 if self.game.team_play else self.game.seats


def load_ladder_config(path: Path) -> LadderConfig:
    """:raises ConfigError: a missing or malformed file, or a bad key (named)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError("file", f"no ladder config at {path}") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError("file", f"cannot read {path}: {exc}") from exc
    return parse_ladder_config(data, path.resolve().parent, path.resolve())


def parse_ladder_config(data: Mapping[str, Any], base: Path, source: Path | None = None) -> LadderConfig:
    unknown = sorted(set(data) - {"ladder"})
    if unknown:
        raise ConfigError(unknown[0], "unknown table: a ladder config has one table, [ladder]")
    t = data.get("ladder")
    if not isinstance(t, Mapping):
        raise ConfigError("ladder", "missing: a [ladder] table is required (variant, data, listen, ...)")
    for k in t:
        if k not in _GAME_KEYS and k not in _OWN_KEYS:
            raise ConfigError(f"ladder.{k}", f"unknown key; known: {', '.join((*_GAME_KEYS, *_OWN_KEYS))}")
    game_table: dict[str, Any] = {k: t[k] for k in _GAME_KEYS if k in t}
    data_dir = (base / str(t.get("data", "ladder-data"))).resolve()
    game_table.update(games_per_pairing=1, output=str(data_dir), concurrency=1)
    dummy = [{"name": f"seat{i}", "command": ["true"]} for i in range(8)]
    try:
        game = parse_config({"tournament": game_table, "bots": dummy}, base, source=source)
    except ConfigError as exc:
        raise ConfigError(str(exc.key).replace("tournament.", "ladder.", 1), exc.problem) from exc
    game = dataclasses.replace(game, bots=())
    if game.team_play:
        raise ConfigError("ladder.variant", f"{game.variant} is a partnership game: a bot would hold two seats, and a "
                          "remote bot has one stream (COM-6); the ladder plays free-for-all variants")

    def num(key: str, default: float, low: float, integer: bool = True) -> Any:
        v = t.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)) or v < low:
            kind = "a whole number" if integer else "a number"
            raise ConfigError(f"ladder.{key}", f"must be {kind} of at least {low:g}, not {v!r}")
        return v

    def text(key: str, default: str) -> str:
        v = t.get(key, default)
        if not isinstance(v, str):
            raise ConfigError(f"ladder.{key}", f"must be a string, not {v!r}")
        return v

    def path(key: str) -> Path | None:
        v = t.get(key)
        return None if v is None else (base / text(key, "")).resolve()

    tls_cert, tls_key = path("tls_cert"), path("tls_key")
    if (tls_cert is None) != (tls_key is None):
        raise ConfigError("ladder.tls_cert", "give both tls_cert and tls_key (PEM files), or neither")
    database = text("database", "")
    if database and not is_postgres_url(database):
        raise ConfigError("ladder.database", "must be a postgresql:// URL (or left out: SQLite in the data folder)")
    listen = text("listen", "127.0.0.1:50051")
    if ":" not in listen:
        raise ConfigError("ladder.listen", f"must be HOST:PORT, not {listen!r}")
    return LadderConfig(
        sprt=_sprt(t.get("sprt", {})),
        game=game, data=data_dir, listen=listen, web=text("web", "127.0.0.1:8080"),
        concurrency=num("concurrency", 2, 1), per_bot_games=num("per_bot_games", 2, 1),
        per_bot_per_hour=num("per_bot_per_hour", 600, 1), tls_cert=tls_cert, tls_key=tls_key,
        refit_s=float(num("refit_s", 2.0, 0, integer=False)), pause_after=num("pause_after", 4, 1),
        pause_s=float(num("pause_s", 300.0, 0, integer=False)),
        exploration=float(num("exploration", 0.15, 0, integer=False)), source=source, database=database,
        cluster=text("cluster", ""),
    )


def _sprt(v: Any) -> SprtSettings:
    """``sprt = { elo0, elo1, alpha, beta, max_deals, share }``, each optional. :raises ConfigError:"""
    if not isinstance(v, Mapping):
        raise ConfigError("ladder.sprt", f"must be a table (sprt = {{ elo0 = 0, elo1 = 50 }}), not {v!r}")
    known = [f.name for f in dataclasses.fields(SprtSettings)]
    for k, x in v.items():
        if k not in known:
            raise ConfigError(f"ladder.sprt.{k}", f"unknown key; known: {', '.join(known)}")
        if isinstance(x, bool) or not isinstance(x, (int, float)) or (k == "max_deals" and not isinstance(x, int)):
            raise ConfigError(f"ladder.sprt.{k}", f"must be a {'whole ' if k == 'max_deals' else ''}number, not {x!r}")
    try:
        d = SprtSettings()
        return SprtSettings(float(v.get("elo0", d.elo0)), float(v.get("elo1", d.elo1)), float(v.get("alpha", d.alpha)),
                            float(v.get("beta", d.beta)), int(v.get("max_deals", d.max_deals)),
                            float(v.get("share", d.share)))
    except ValueError as exc:
        raise ConfigError("ladder.sprt", str(exc)) from exc
