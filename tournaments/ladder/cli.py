"""``tournament ladder serve | bots add | bots list | bots revoke | status``: the ladder service's commands.

The config is ``-c/--config FILE`` (default ``$RUMMY_LADDER_CONFIG``, else ``ladder.toml``); ``serve`` takes it as
its argument. ``bots add`` prints a remote bot's key once, alone on the last line of its output.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

__all__ = ["add_parsers", "run"]


def _config_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--config", type=Path, default=Path(os.environ.get("RUMMY_LADDER_CONFIG", "ladder.toml")),
                   help="the ladder's TOML file (default: $RUMMY_LADDER_CONFIG, else ladder.toml)")


def _database_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--database", metavar="URL", default="",
                   help="postgresql://[USER@]HOST[:PORT]/DB: the results in PostgreSQL (overrides the config's "
                   "`database`; default: SQLite in the data folder). The password: PGPASSWORD or ~/.pgpass")


def add_parsers(lsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = lsub.add_parser("serve", help="run the ladder: referee, matchmaker, ratings, web page (until Ctrl-C)")
    serve.add_argument("config", type=Path, help="the ladder's TOML file ([ladder] table)")
    _database_arg(serve)
    serve.add_argument("--cluster", metavar="SCHEDULER", default="",
                       help="play the house bots' games on a Dask cluster (tcp://HOST:8786); remote bots' games stay "
                       "on the service's referee (or `cluster` in the config)")
    bots = lsub.add_parser("bots", help="register, list and revoke the ladder's bots")
    bsub = bots.add_subparsers(dest="bots_cmd", required=True)
    add = bsub.add_parser("add", help="register NAME@VERSION: a remote bot (prints its key once), or with -- COMMAND "
                          "a house bot the ladder runs", usage="tournament ladder bots add NAME [--version V] [-- COMMAND...]")
    add.add_argument("name")
    add.add_argument("--version", default="1", help="a new version is a new entry with its own history (default 1)")
    add.add_argument("--cwd", type=Path, default=None, help="a house bot's folder, which it runs in and is the only "
                     "one it sees in the sandbox (default: here); relative paths in COMMAND are taken from it")
    add.add_argument("--sandbox", choices=("bwrap", "none"), default="", help="a house bot's sandbox (default: the "
                     "ladder's sandbox setting, else bwrap where it works)")
    _config_arg(add)
    _database_arg(add)
    lst = bsub.add_parser("list", help="every registered bot: kind, state, games")
    lst.add_argument("--all", action="store_true", help="revoked bots too")
    _config_arg(lst)
    _database_arg(lst)
    rev = bsub.add_parser("revoke", help="revoke NAME (every version) or NAME@VERSION: its key stops working")
    rev.add_argument("name", metavar="NAME[@VERSION]")
    _config_arg(rev)
    _database_arg(rev)
    st = lsub.add_parser("status", help="the leaderboard, from the running service (else from the database)")
    _config_arg(st)
    _database_arg(st)


def run(args: argparse.Namespace, command: Sequence[str], console: Console, err: Console) -> int:
    from tournaments.config import ConfigError
    from tournaments.ladder.config import load_ladder_config
    from tournaments.ladder.store import BotExists, NoSuchBot, StoreTooNew, StoreUnavailable, is_postgres_url

    try:
        cfg = load_ladder_config(args.config)
        if args.database:
            if not is_postgres_url(args.database):
                raise ConfigError("--database", "must be a postgresql:// URL (SQLite is the default: leave it out)")
            import dataclasses

            cfg = dataclasses.replace(cfg, database=args.database)
        if args.ladder_cmd == "serve":
            from tournaments.ladder.service import serve

            if args.cluster:
                import dataclasses

                cfg = dataclasses.replace(cfg, cluster=args.cluster)

            return int(serve(cfg, err))
        if args.ladder_cmd == "status":
            return _status(cfg, console)
        if args.bots_cmd == "add":
            return _add(cfg, args.name, args.version, command, console, err, args.sandbox, args.cwd)
        if args.bots_cmd == "list":
            return _list(cfg, args.all, console)
        return _revoke(cfg, args.name, console)
    except ConfigError as exc:
        err.print(f"[red]config error[/] in {escape(str(args.config))}: {escape(str(exc))}")
        return 2
    except (BotExists, NoSuchBot, StoreTooNew, StoreUnavailable, FileNotFoundError, ValueError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc.args[0] if exc.args else exc))}", highlight=False)
        return 2


def _add(cfg: object, name: str, version: str, command: Sequence[str], console: Console, err: Console,
         sandbox: str = "", cwd: Path | None = None) -> int:
    from tournaments.botproc import cannot_start
    from tournaments.config import BotSpec
    from tournaments.ladder.config import LadderConfig
    from tournaments.ladder.keys import key_digest, new_key
    from tournaments.ladder.store import check_name
    from tournaments.ladder.stores import open_store

    assert isinstance(cfg, LadderConfig)
    check_name(name, version)
    if cwd is not None and not command:
        raise ValueError("--cwd is a house bot's folder: give its command after --")
    folder = (cwd or Path.cwd()).resolve()
    if not folder.is_dir():
        raise ValueError(f"--cwd {cwd}: no such folder; nothing was added")
    with open_store(cfg.storage) as store:
        if command:
            why = cannot_start(BotSpec(name, tuple(command), folder))
            if why is not None:
                raise ValueError(f"house bot {name}@{version} cannot start: {why}; nothing was added")
            bot = store.add_bot(name, version, "house", None, command, str(folder), sandbox)
            console.print(f"registered house bot {bot.label}: the ladder starts it (sandboxed where it can) and "
                          "restarts it", highlight=False)
            return 0
        key = new_key()
        bot = store.add_bot(name, version, "remote", key_digest(key))
    host = cfg.listen.rsplit(":", 1)
    tls = " RUMMY_TLS_ROOT_CERT=ca.pem" if cfg.tls_cert else ""
    err.print(f"registered remote bot {bot.label}. Its key is printed once, below; the ladder keeps only its hash. "
              f"Run the bot with it in the environment (never on its command line), e.g.\n  RUMMY_REFEREE=HOST:{host[-1]}"
              f"{tls} RUMMY_RECONNECT=forever RUMMY_BOT_TOKEN=KEY python -m rummybot.bots.greedy", highlight=False, soft_wrap=True)
    print(key)
    return 0


def _list(cfg: object, include_revoked: bool, console: Console) -> int:
    from rich.table import Table

    from tournaments.ladder.config import LadderConfig
    from tournaments.ladder.stores import open_store

    assert isinstance(cfg, LadderConfig)
    with open_store(cfg.storage) as store:
        rows = store.bots(include_revoked)
        faults = store.faults()
    table = Table(title=f"Ladder bots ({len(rows)})")
    for c in ("bot", "kind", "state", "games", "registered (UTC)"):
        table.add_column(c, justify="right" if c == "games" else "left")
    for b in rows:
        state = "revoked" if b.revoked_at else f"paused: {b.pause_reason}" if b.paused() else "active"
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(b.created_at))
        table.add_row(escape(b.label), b.kind, escape(state), str(faults[b.id].games if b.id in faults else 0), when)
    console.print(table)
    return 0


def _revoke(cfg: object, ref: str, console: Console) -> int:
    from tournaments.ladder.config import LadderConfig
    from tournaments.ladder.store import parse_ref
    from tournaments.ladder.stores import open_store

    assert isinstance(cfg, LadderConfig)
    name, version = parse_ref(ref)
    with open_store(cfg.storage) as store:
        for b in store.revoke(name, version):
            console.print(f"revoked {b.label}: its key no longer joins; its games and ratings stay", highlight=False)
    return 0


def _status(cfg: object, console: Console) -> int:
    from tournaments.ladder.config import LadderConfig
    from tournaments.ladder.web import fetch_leaderboard, leaderboard_from_store, print_leaderboard

    assert isinstance(cfg, LadderConfig)
    from tournaments.ladder.service import read_addresses

    web = read_addresses(cfg).get("web", "").removeprefix("http://") or cfg.web
    board = fetch_leaderboard(web) if web else None
    if board is None:
        from tournaments.ladder.store import redact_url

        where = redact_url(cfg.database) if cfg.database else str(cfg.db)
        source = f"{where} (the service does not answer: online unknown)"
        board = leaderboard_from_store(cfg.storage)
    else:
        source = f"http://{web}"
    print_leaderboard(board, console, source)
    return 0
