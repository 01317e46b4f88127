"""``referee serve``, ``referee evaluate``, ``referee replay RECORD``, ``referee view RECORD``, ``referee variants``,
``referee check-bot``, ``referee create-match``: thin over the core."""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.rules.errors import RefereeError
from referee.service.logs import configure_logging
from rummy.wire import loops

__all__ = ["main"]


def _options(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep:
            raise SystemExit(f"--option takes KEY=VALUE, not {p!r}")
        out[key.strip()] = value.strip()
    return out


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"a whole number from 1, not {text!r}")
    return n


def port_number(text: str) -> int:
    """A TCP port to listen on, 0 (any free one) to 65535."""
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and int(text) <= 65535):
        raise argparse.ArgumentTypeError(f"a port from 0 to 65535, not {text!r}")
    return int(text)


async def _until_stopped() -> None:
    """Wait for Ctrl-C or SIGTERM: the long-running commands then close what they serve, in order."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


GC_THRESHOLDS = (5000, 100, 100)  # young objects collected every 5,000 allocations, older ones 100x and 10,000x rarer


def tune_gc() -> None:
    """For the serving process, once started: what start-up made (modules, gRPC, protobuf) is frozen out of the
    cyclic collector's sight, and collections are rarer. Playing makes no cyclic garbage (tests/test_garbage.py),
    so the defaults' frequent full passes over every live match's objects bought nothing but pauses: at 100
    concurrent matches, 0.36 s of collection with a longest pause of 67 ms, against 0.03 s and 3 ms so tuned."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


async def _serve(args: argparse.Namespace) -> None:
    from referee.service.limits import ServerLimits
    from referee.service.server import create_server
    from referee.service.session import DEFAULT_TIME, TimeControl

    tc = TimeControl(per_move_ms=args.per_move_ms, grace_ms=args.grace_ms, connect_ms=DEFAULT_TIME.connect_ms)
    limits = ServerLimits(**{name: getattr(args, name) for name, _, _ in ServerLimits.flags()})
    admin_token, credentials = _security(args)
    metrics = metrics_server = None
    if args.metrics_port is not None:
        from referee.service.metrics import Metrics
        from referee.tools.metrics_server import MetricsServer

        metrics = Metrics()
        metrics_server = MetricsServer(metrics, args.metrics_host, args.metrics_port, limits.viewer_idle_s)
        try:  # before the referee: a port in use stops it before it serves anything
            metrics_port = metrics_server.start()
        except OSError as exc:
            raise SystemExit(f"referee serve: cannot serve metrics on {args.metrics_host}:{args.metrics_port}: "
                             f"{exc.strerror or exc}") from exc
    try:
        server, port, service = await create_server(f"{args.host}:{args.port}", args.records, args.allow_stacked_decks,
                                                    tc, limits, admin_token=admin_token, credentials=credentials,
                                                    unfinished=args.unfinished, unix_path=args.unix, metrics=metrics)
    except OSError as exc:  # the --unix socket: a missing folder, or a file there that is not a socket
        if metrics_server is not None:
            metrics_server.stop()
        raise SystemExit(f"referee serve: {exc.strerror or exc}") from exc
    tune_gc()
    serving = {"event": "serving", "address": f"{args.host}:{port}", "loop": loops.chosen(args.loop)}
    if args.unix:
        serving["unix"] = f"unix:{args.unix}"
    print(json.dumps(serving), flush=True)
    if metrics_server is not None:
        print(json.dumps({"event": "metrics", "url": f"http://{_url_host(args.metrics_host)}:{metrics_port}/metrics"}),
              flush=True)
    viewer = None
    if args.http is not None:  # in a process of its own (referee.tools.viewer_process): web clients never share the loop
        from referee.tools.viewer_process import ViewerProcess, ViewerStartFailed

        try:
            viewer = await asyncio.to_thread(ViewerProcess, args.records, args.host, args.http, limits,
                                             log_level=args.log_level, log_format=args.log_format)
        except ViewerStartFailed as exc:
            await server.stop(grace=None)
            raise SystemExit(f"referee serve: {exc}") from exc
        print(json.dumps({"event": "viewer", "url": f"http://{args.host}:{viewer.port}/"}), flush=True)
    await _until_stopped()
    if viewer is not None:
        await asyncio.to_thread(viewer.close)
    await server.stop(grace=2)
    if service.search is not None:
        service.search.close()
    if metrics_server is not None:
        metrics_server.stop()


def _url_host(host: str) -> str:
    """``host`` as it goes in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


async def _view(record: str, host: str, port: int) -> None:
    """``referee view RECORD``: the replay viewer for one record file, until Ctrl-C."""
    from referee.tools.viewer import start_viewer

    path = Path(record)
    runner, bound = await start_viewer(path, None, host, port)
    print(json.dumps({"event": "viewer", "url": f"http://{host}:{bound}/replay/{path.stem}"}), flush=True)
    await _until_stopped()
    await runner.cleanup()


def _security(args: argparse.Namespace) -> tuple[str | None, Any]:
    """The admin token (from its file) and the TLS credentials ``referee serve`` was asked for; a file that cannot
    be read stops it before it serves anything."""
    from referee.service.server import server_credentials

    token = None
    try:
        if args.admin_token_file:
            token = Path(args.admin_token_file).read_text(encoding="utf-8").strip()
            if not token:
                raise SystemExit(f"--admin-token-file {args.admin_token_file} is empty")
        if bool(args.tls_cert) != bool(args.tls_key):
            raise SystemExit("--tls-cert and --tls-key go together")
        if args.tls_client_ca and not args.tls_cert:
            raise SystemExit("--tls-client-ca needs --tls-cert and --tls-key")
        creds = server_credentials(args.tls_cert, args.tls_key, args.tls_client_ca) if args.tls_cert else None
    except OSError as exc:
        raise SystemExit(f"cannot read {exc.filename}: {exc.strerror}") from exc
    return token, creds


def admin_token_from_env() -> str | None:
    """The admin token of a referee run with ``--admin-token-file``, read as the tournament runner reads it
    (``tournaments.matches.admin_token_from_env``): RUMMY_ADMIN_TOKEN, else the file RUMMY_ADMIN_TOKEN_FILE names.
    Never a flag: a command line is readable by every process on the host."""
    token = os.environ.get("RUMMY_ADMIN_TOKEN", "").strip()
    if not token and os.environ.get("RUMMY_ADMIN_TOKEN_FILE"):
        path = os.environ["RUMMY_ADMIN_TOKEN_FILE"]
        try:
            token = Path(path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise SystemExit(f"referee create-match: cannot read RUMMY_ADMIN_TOKEN_FILE {path}: {exc.strerror}") from None
    return token or None


def _create_match_request(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]]]:
    """The CreateMatchRequest ``referee create-match`` sends, and what it prints per seat (all but the tokens)."""
    from referee.rules.variants import find
    from rummy.referee.v1 import referee_pb2 as pb

    variant = find(args.variant)  # an unknown name is refused here, naming the known ones
    if args.seats is not None and args.seat:
        raise SystemExit("referee create-match: give --seats N or --seat NAME (one per seat), not both")
    names = list(args.seat) or [f"seat-{i}" for i in range(args.seats or (4 if variant.team_play else variant.min_seats))]
    if len(args.bot_token_env) > len(names):
        raise SystemExit(f"referee create-match: {len(args.bot_token_env)} --bot-token-env for {len(names)} seats")
    specs, seats = [], []
    for i, name in enumerate(names):
        var = args.bot_token_env[i] if i < len(args.bot_token_env) else "-"
        if var == "-":  # this seat gets a seat token
            specs.append(pb.SeatSpec(name=name))
            seats.append({"seat": i, "name": name})
            continue
        token = os.environ.get(var, "").strip()
        if not token:
            raise SystemExit(f"referee create-match: --bot-token-env {var}: the environment has no {var} (seat {i})")
        specs.append(pb.SeatSpec(name=name, bot_token=token))
        seats.append({"seat": i, "name": name, "bot_token_env": var})
    request = pb.CreateMatchRequest(variant=variant.name, options=_options(args.option), seats=specs,
                                    max_hands=args.max_hands or 0,
                                    time_control=pb.TimeControl(per_move_ms=args.per_move_ms or 0,
                                                                connect_ms=args.connect_ms or 0))
    if args.seed is not None:
        request.seed = args.seed
    return request, seats


async def _create_match(args: argparse.Namespace) -> int:
    """``referee create-match``: one CreateMatch call on a running referee; the match id and the seat tokens as
    JSON on stdout (or as shell assignments with ``--format sh``), so a bot can join a seat by its token."""
    import shlex

    import grpc

    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    request, seats = _create_match_request(args)
    token = admin_token_from_env()
    metadata = (("authorization", f"Bearer {token}"),) if token else None
    async with grpc.aio.insecure_channel(args.referee) as channel:
        try:
            # wait_for_ready: a referee started a moment ago (``referee serve &``) is waited for, up to --wait
            stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]  # generated code is untyped
            created = await stub.CreateMatch(request, metadata=metadata, timeout=args.wait, wait_for_ready=True)
        except grpc.aio.AioRpcError as exc:
            detail = " ".join((exc.details() or "").split())
            if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                print(f"referee create-match: cannot reach the referee at {args.referee} (waited {args.wait:g} s)"
                      + (f": {detail}" if detail and exc.code() == grpc.StatusCode.UNAVAILABLE else ""),
                      file=sys.stderr)
                return 1
            hint = ""
            if exc.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                hint = ("; give its token in RUMMY_ADMIN_TOKEN or a file named by RUMMY_ADMIN_TOKEN_FILE" if token is None
                        else "; RUMMY_ADMIN_TOKEN(_FILE) holds another token than its --admin-token-file")
            print(f"referee create-match: {detail or exc.code().name} (referee {args.referee}){hint}", file=sys.stderr)
            return 2
    if args.format == "sh":
        print(f"RUMMY_MATCH={shlex.quote(created.match_id)}; export RUMMY_MATCH")
        for seat, seat_token in zip(seats, created.seat_tokens, strict=True):
            if seat_token:  # not exported: each bot is given its own as RUMMY_SEAT_TOKEN
                print(f"RUMMY_SEAT_TOKEN_{seat['seat']}={shlex.quote(seat_token)}")
    else:
        print(json.dumps({"match_id": created.match_id, "variant": request.variant,
                          "seat_tokens": list(created.seat_tokens), "seats": seats}, indent=2))
    return 0


REPLAY_EXIT_CODES = """exit codes:
  0  reproduces          the rules core gives every line of the record
  3  does not reproduce  the first line that differs is named, with its field
  4  incomplete          the record ends (or the match was aborted) before its result
  5  unreadable          the file or a line is not a record (the line is named)
  6  rules changed       --verify: the record was made under another rules hash (variant rules or options)"""


def _replay(path: str, verify: bool) -> int:
    """``referee replay [--verify] RECORD``: one clear line and a distinct exit code for each way it can go."""
    from referee.service.records import UnreadableRecord
    from referee.service.replay import EXIT_CODES, ReplayMismatch, replay_file, verify_file

    if verify:
        verdict = verify_file(path)
        print(f"{verdict} [{path}]", file=sys.stdout if verdict.exit_code == 0 else sys.stderr)
        return verdict.exit_code
    try:
        summary = replay_file(path)
    except ReplayMismatch as exc:
        print(f"does not reproduce: {exc} [{path}]", file=sys.stderr)
        return EXIT_CODES["does not reproduce"]
    except UnreadableRecord as exc:
        print(f"unreadable: {exc} [{path}]", file=sys.stderr)
        return EXIT_CODES["unreadable"]
    cut, last, aborted = summary.pop("cut_line"), summary.pop("last_line"), summary.pop("aborted")
    print(json.dumps(summary, indent=2))
    if not summary["complete"]:
        why = f"the match was aborted ({aborted})" if aborted is not None else \
            f"it ends at line {cut or last}{' (cut off)' if cut else ''}: cut short, or the referee stopped"
        print(f"incomplete: the record has no result: {why} [{path}]", file=sys.stderr)
        return EXIT_CODES["incomplete"]
    return 0


def _limit_flags() -> list[tuple[str, int, str]]:
    from referee.service.limits import ServerLimits

    return list(ServerLimits.flags())


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="referee", description="Rummy Referee")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the gRPC referee")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=50051)
    s.add_argument("--records", default="records", help="folder for match records (JSON lines)")
    s.add_argument("--unix", metavar="PATH", help="also listen on this Unix socket (mode 0600, no TLS), for bots in a "
                   "sandbox with no network: `tournament run --referee unix:PATH` binds it into theirs")
    s.add_argument("--loop", choices=loops.LOOPS, default="auto",
                   help="the event loop: uvloop where installed (auto, the default; less overhead per message), or "
                        "asyncio's own")
    s.add_argument("--http", type=int, metavar="PORT", help="also serve the browser viewer on this port (0 picks one): "
                   "replays of the records and running matches to watch")
    s.add_argument("--metrics-port", type=port_number, metavar="PORT", help="serve Prometheus metrics at /metrics on this "
                   "port (0 picks one), from a thread of its own; the viewer (--http) then serves /metrics too. "
                   "docs/METRICS.md lists them")
    s.add_argument("--metrics-host", default="127.0.0.1", metavar="HOST",
                   help="the address --metrics-port listens on (default 127.0.0.1: this host only)")
    s.add_argument("--allow-stacked-decks", action="store_true", help="accept explicit deck orders (tests, puzzles)")
    s.add_argument("--per-move-ms", type=int, default=5000, help="default time per decision")
    s.add_argument("--grace-ms", type=int, default=3000, help="how long a disconnected seat may take to return")
    s.add_argument("--unfinished", choices=("resume", "abort", "leave"), default="resume",
                   help="what to do at start with matches the records folder shows unfinished (a referee killed "
                   "mid-match): resume them, their bots rejoining with their tokens (default); end them as aborted "
                   "('referee restarted: ...'); or leave the records as they are")
    limits = s.add_argument_group("limits", "what one client may ask of this server (a request past one is refused "
                                  "with a reason code naming it)")
    for name, default, doc in _limit_flags():
        limits.add_argument("--" + name.replace("_", "-"), type=int, default=default, metavar="N",
                            help=f"{doc} (default {default})")
    sec = s.add_argument_group("access", "who may do what (see the README's threat model)")
    sec.add_argument("--admin-token-file", metavar="PATH", help="CreateMatch and AbortMatch need this file's token, "
                     "sent as metadata 'authorization: Bearer TOKEN' (default: open to any client that can connect)")
    sec.add_argument("--tls-cert", metavar="CERT", help="serve TLS with this PEM certificate chain (with --tls-key)")
    sec.add_argument("--tls-key", metavar="KEY", help="the PEM private key of --tls-cert")
    sec.add_argument("--tls-client-ca", metavar="CA", help="mutual TLS: clients must present a certificate signed by "
                     "this PEM CA")
    s.add_argument("--log-format", choices=("json", "console"), default="json")
    s.add_argument("--log-level", default="info")

    e = sub.add_parser("evaluate", help="check melds and a declaration, and count cards, as JSON")
    e.add_argument("groups", help='cards in groups: "AH 2H 3H | 5S 6S 7D 8S | ..."')
    e.add_argument("--variant", default="indian")
    e.add_argument("--wild", default="", help="the deal's wild rank, as a card or rank (Indian: the wild joker)")
    e.add_argument("--option", action="append", default=[], help="KEY=VALUE, repeatable")
    e.add_argument("--seats", type=int, default=None)

    r = sub.add_parser("replay", help="re-run a record through the rules core; print per-hand and final scores",
                       description="Re-run a match record through the rules core and print per-hand and final\n"
                       "scores as JSON. With --verify, certify it instead: deal every hand again from the\n"
                       "seed, replay the moves, check every line (deals, moves, events with their audience,\n"
                       "scores, the result) and the rules hash, and print one verdict line.",
                       epilog=REPLAY_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("record")
    r.add_argument("--verify", action="store_true", help="certify the record line by line (one verdict line)")

    sub.add_parser("variants", help="list variants and their options as JSON")

    w = sub.add_parser("view", help="step through one record in the browser (prints the page's address)")
    w.add_argument("record")
    w.add_argument("--host", default="127.0.0.1")
    w.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000; 0 picks one)")

    c = sub.add_parser("check-bot", help="run a bot through a battery of matches; exit 1 on any fault",
                       usage="referee check-bot [--variant V ...] [--matches N] [--hands N] [--per-move-ms MS] "
                             "[--concurrency N] -- COMMAND ...")
    c.add_argument("--variant", action="append", default=[], help="a variant the bot claims (repeatable; default: all)")
    c.add_argument("--matches", type=int, default=2, help="matches per variant, the bot's seat rotating (default 2)")
    c.add_argument("--hands", type=int, default=2, help="hands per match (default 2)")
    c.add_argument("--per-move-ms", type=int, default=2000, help="time per decision (default 2000)")
    c.add_argument("--concurrency", type=_positive, default=1, metavar="N",
                   help="play N matches of a variant at once against the bot (at least N are played), as a "
                        "tournament at concurrency N does: catches a bot that mixes up its matches (default 1)")

    m = sub.add_parser("create-match", help="create a match on a running referee; print its id and seat tokens",
                       description="Create a match on a running referee and print its id and a token per seat as "
                       "JSON. A bot joins a seat with RUMMY_MATCH and RUMMY_SEAT_TOKEN (or --match ID --token T). "
                       "A referee run with --admin-token-file needs its token in RUMMY_ADMIN_TOKEN or the file "
                       "named by RUMMY_ADMIN_TOKEN_FILE.",
                       epilog="exit codes: 0 created; 1 no referee at the address; 2 the referee refused (its reason "
                       "code is printed) or bad arguments")
    m.add_argument("variant", help="a variant's name or alias (referee variants lists them)")
    m.add_argument("--seats", type=_positive, metavar="N", help="how many seats, named seat-0, seat-1, ... "
                   "(default: the variant's fewest; 4 for partnership variants)")
    m.add_argument("--seat", action="append", default=[], metavar="NAME", help="a seat's name, in seat order "
                   "(repeatable: one per seat)")
    m.add_argument("--bot-token-env", action="append", default=[], metavar="VAR",
                   help="seat the bot that connects with the bot token in environment variable VAR (repeatable: "
                   "one per seat, in seat order; '-' for a seat that gets a seat token). Tokens are never taken "
                   "from the command line, which every process on the host can read")
    m.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a variant option (repeatable)")
    m.add_argument("--per-move-ms", type=_positive, metavar="MS", help="time per decision (default: the referee's)")
    m.add_argument("--connect-ms", type=_positive, metavar="MS",
                   help="how long the match waits for its seats to join (default: the referee's, 15000)")
    m.add_argument("--max-hands", type=_positive, metavar="N", help="end the match after N hands")
    m.add_argument("--seed", help="the deal's seed (default: random; revealed with the result)")
    m.add_argument("--referee", default=os.environ.get("RUMMY_REFEREE") or "127.0.0.1:50051", metavar="ADDRESS",
                   help="HOST:PORT or unix:/PATH (or RUMMY_REFEREE; default 127.0.0.1:50051)")
    m.add_argument("--wait", type=float, default=10.0, metavar="S",
                   help="how long to wait for the referee to answer (default 10)")
    m.add_argument("--format", choices=("json", "sh"), default="json",
                   help="json (default), or sh: RUMMY_MATCH=...; RUMMY_SEAT_TOKEN_0=... lines for eval")

    n = sub.add_parser("native", help="compile the rules core with mypyc (build) or say whether it runs (status)")
    n.add_argument("action", choices=("build", "status"))
    n.add_argument("--optional", action="store_true", help="build: a failed build exits 0 (the plain modules run)")
    n.add_argument("--if-stale", action="store_true", help="build: only when the build is absent or a source changed")
    n.add_argument("--verbose", action="store_true")

    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if argv and argv[0] == "check-bot":
        split = argv.index("--") if "--" in argv else len(argv)
        argv, command = argv[:split], argv[split + 1:]
        if not command and not {"-h", "--help"} & set(argv):  # asking for help needs no command
            p.error("check-bot needs the bot's command after --, e.g. referee check-bot -- python my_bot.py")
    args = p.parse_args(argv)
    if args.command == "check-bot":
        from referee.tools.checkbot import main_check_bot

        configure_logging("error")
        try:
            return main_check_bot(command, args.variant, args.matches, args.hands, args.per_move_ms, args.concurrency)
        except RefereeError as exc:
            print(f"{exc.code}: {exc.message}", file=sys.stderr)
            return 2
    if args.command == "create-match":
        configure_logging("error")
        try:
            return asyncio.run(_create_match(args))
        except RefereeError as exc:
            print(f"referee create-match: {exc.code}: {exc.message}", file=sys.stderr)
            return 2
    if args.command == "native":
        from referee.tools import native

        return native.main(args.action, optional=args.optional, if_stale=args.if_stale, verbose=args.verbose)
    if args.command == "serve":
        configure_logging(args.log_level, json=args.log_format == "json")
        try:
            loops.chosen(args.loop)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        loops.run(_serve(args), args.loop)
        return 0
    if args.command == "view":
        if not Path(args.record).is_file():
            print(f"no record file {args.record}", file=sys.stderr)
            return 2
        configure_logging("warning")
        asyncio.run(_view(args.record, args.host, args.port))
        return 0
    configure_logging("warning")
    try:
        if args.command == "evaluate":
            from referee.rules.evaluate import evaluate, evaluation_json, parse_groups, wild_ranks_from_text

            result = evaluate(args.variant, _options(args.option), wild_ranks_from_text(args.wild), parse_groups(args.groups),
                              args.seats)
            print(json.dumps(evaluation_json(result), indent=2))
            return 0
        if args.command == "replay":
            return _replay(args.record, args.verify)
        if args.command == "variants":
            from referee.rules.variants import all_variants

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
