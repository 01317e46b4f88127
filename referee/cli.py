"""``referee serve``, ``referee evaluate``, ``referee replay RECORD``, ``referee variants``: thin over the core."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Sequence

from referee.errors import RefereeError
from referee.logs import configure_logging

__all__ = ["main"]


def _options(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep:
            raise SystemExit(f"--option takes KEY=VALUE, not {p!r}")
        out[key.strip()] = value.strip()
    return out


async def _serve(args: argparse.Namespace) -> None:
    from referee.limits import ServerLimits
    from referee.server import create_server
    from referee.session import DEFAULT_TIME, TimeControl

    tc = TimeControl(per_move_ms=args.per_move_ms, grace_ms=args.grace_ms, connect_ms=DEFAULT_TIME.connect_ms)
    limits = ServerLimits(**{name: getattr(args, name) for name, _, _ in ServerLimits.flags()})
    server, port, _ = await create_server(f"{args.host}:{args.port}", args.records, args.allow_stacked_decks, tc, limits)
    print(json.dumps({"event": "serving", "address": f"{args.host}:{port}"}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(grace=2)


def _limit_flags() -> list[tuple[str, int, str]]:
    from referee.limits import ServerLimits

    return list(ServerLimits.flags())


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="referee", description="Rummy Referee")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the gRPC referee")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=50051)
    s.add_argument("--records", default="records", help="folder for match records (JSON lines)")
    s.add_argument("--allow-stacked-decks", action="store_true", help="accept explicit deck orders (tests, puzzles)")
    s.add_argument("--per-move-ms", type=int, default=5000, help="default time per decision")
    s.add_argument("--grace-ms", type=int, default=3000, help="how long a disconnected seat may take to return")
    limits = s.add_argument_group("limits", "what one client may ask of this server (a request past one is refused "
                                  "with a reason code naming it)")
    for name, default, doc in _limit_flags():
        limits.add_argument("--" + name.replace("_", "-"), type=int, default=default, metavar="N",
                            help=f"{doc} (default {default})")
    s.add_argument("--log-format", choices=("json", "console"), default="json")
    s.add_argument("--log-level", default="info")

    e = sub.add_parser("evaluate", help="check melds and a declaration, and count cards, as JSON")
    e.add_argument("groups", help='cards in groups: "AH 2H 3H | 5S 6S 7D 8S | ..."')
    e.add_argument("--variant", default="indian")
    e.add_argument("--wild", default="", help="the deal's wild rank, as a card or rank (Indian: the wild joker)")
    e.add_argument("--option", action="append", default=[], help="KEY=VALUE, repeatable")
    e.add_argument("--seats", type=int, default=None)

    r = sub.add_parser("replay", help="re-run a record through the rules core; print per-hand and final scores")
    r.add_argument("record")

    sub.add_parser("variants", help="list variants and their options as JSON")

    c = sub.add_parser("check-bot", help="run a bot through a battery of matches; exit 1 on any fault",
                       usage="referee check-bot [--variant V ...] [--matches N] [--hands N] -- COMMAND ...")
    c.add_argument("--variant", action="append", default=[], help="a variant the bot claims (repeatable; default: all)")
    c.add_argument("--matches", type=int, default=2, help="matches per variant, the bot's seat rotating (default 2)")
    c.add_argument("--hands", type=int, default=2, help="hands per match (default 2)")
    c.add_argument("--per-move-ms", type=int, default=2000, help="time per decision (default 2000)")

    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if argv and argv[0] == "check-bot":
        if "--" not in argv or argv.index("--") == len(argv) - 1:
            p.error("check-bot needs the bot's command after --, e.g. referee check-bot -- python my_bot.py")
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1:]
    args = p.parse_args(argv)
    if args.command == "check-bot":
        from referee.checkbot import main_check_bot

        configure_logging("error")
        try:
            return main_check_bot(command, args.variant, args.matches, args.hands, args.per_move_ms)
        except RefereeError as exc:
            print(f"{exc.code}: {exc.message}", file=sys.stderr)
            return 2
    if args.command == "serve":
        configure_logging(args.log_level, json=args.log_format == "json")
        asyncio.run(_serve(args))
        return 0
    configure_logging("warning")
    try:
        if args.command == "evaluate":
            from referee.evaluate import evaluate, evaluation_json, parse_groups, wild_ranks_from_text

            result = evaluate(args.variant, _options(args.option), wild_ranks_from_text(args.wild), parse_groups(args.groups),
                              args.seats)
            print(json.dumps(evaluation_json(result), indent=2))
            return 0
        if args.command == "replay":
            from referee.replay import ReplayMismatch, replay_file

            try:
                print(json.dumps(replay_file(args.record), indent=2))
            except ReplayMismatch as exc:
                print(f"record does not reproduce: {exc}", file=sys.stderr)
                return 3
            return 0
        if args.command == "variants":
            from referee.variants import all_variants

            print(json.dumps([{"name": v.name, "aliases": list(v.aliases), "title": v.title, "seats": [v.min_seats, v.max_seats],
                               "options": {o.name: {"choices": list(o.choices), "clause": o.clause} for o in v.options}}
                              for v in all_variants()], indent=2))
            return 0
    except RefereeError as exc:
        print(f"{exc.code}: {exc.message}", file=sys.stderr)
        return 2
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
