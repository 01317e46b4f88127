"""The Python bot SDK: connect to a referee, be seated, answer decisions.

A bot is any object with ``decide(view, legal, request) -> Action`` (plain or ``async def``). ``view`` is a
``SeatView`` (your hand, the table, scores), ``legal`` the actions the referee knows to be legal: returning one of
them is always accepted. Run it with ``run_bot(bot, referee="127.0.0.1:50051", bot_token=...)`` to play match
after match over one connection, or with ``match_id`` and ``token`` to play one seat.

    from rummybot import Bot, main

    class MyBot(Bot):
        def decide(self, view, legal, request):
            return legal[0]

    if __name__ == "__main__":
        main(MyBot())
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from referee import protocodec as codec
from referee.variants.base import Action, SeatView
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

__all__ = ["Bot", "Request", "run_bot", "main", "parse_args", "tls_credentials"]

SDK_VERSION = "python/0.1.0"


@dataclass(frozen=True)
class Request:
    """One decision: which match and seat, the phase, the time left."""

    match_id: str
    request_id: int
    seat: int
    time_left_ms: int
    raw: pb.DecisionRequest


class Bot:
    """Base class with the optional hooks; override ``decide``."""

    name = "bot"

    def decide(self, view: SeatView, legal: Sequence[Action], request: Request) -> Action:
        raise NotImplementedError

    def on_seated(self, seated: pb.Seated) -> None:
        """A new match starts for this bot."""

    def on_event(self, event: pb.MatchEvent) -> None:
        """Something happened that this seat may see."""

    def on_rejected(self, view: SeatView, legal: Sequence[Action], code: str, message: str) -> Action | None:
        """The referee rejected the last action; return another, or None to let the deadline rule play.

        The default says so on stderr and answers nothing: a broken bot is told, never covered for."""
        print(f"rejected {code}: {message}", file=sys.stderr, flush=True)
        return None

    def on_match_result(self, result: pb.MatchResult) -> None:
        """A match ended."""


def tls_credentials(root_cert: str | None = None, client_cert: str | None = None,
                    client_key: str | None = None) -> grpc.ChannelCredentials:
    """TLS to a referee run with ``--tls-cert``: ``root_cert`` is the PEM CA that signed its certificate (None: the
    system's roots); ``client_cert`` and ``client_key`` are this bot's own, for a referee that asks for mutual TLS."""
    def read(path: str | None) -> bytes | None:
        return Path(path).read_bytes() if path else None

    if bool(client_cert) != bool(client_key):
        raise ValueError("a client certificate and its key go together")
    return grpc.ssl_channel_credentials(root_certificates=read(root_cert), private_key=read(client_key),
                                        certificate_chain=read(client_cert))


async def run_bot(bot: Any, referee: str, bot_token: str | None = None, match_id: str | None = None,
                  token: str | None = None, max_matches: int | None = None,
                  credentials: grpc.ChannelCredentials | None = None) -> list[pb.MatchResult]:
    """Play until the referee closes the stream, the one match ends (seat mode), or ``max_matches`` end.
    ``credentials`` (``tls_credentials(...)``) connect with TLS; without them the channel is plaintext."""
    outbox: asyncio.Queue[pb.PlayerMessage | None] = asyncio.Queue()
    if bot_token:
        join = pb.Join(bot_token=bot_token, bot_name=getattr(bot, "name", "bot"), sdk=SDK_VERSION)
    elif match_id and token:
        join = pb.Join(seat=pb.SeatCredential(match_id=match_id, token=token), bot_name=getattr(bot, "name", "bot"),
                       sdk=SDK_VERSION)
    else:
        raise ValueError("give a bot token, or a match id and a seat token")
    outbox.put_nowait(pb.PlayerMessage(join=join))
    results: list[pb.MatchResult] = []
    views: dict[int, tuple[SeatView, list[Action], Request]] = {}
    tasks: set[asyncio.Task[None]] = set()

    async def outgoing() -> AsyncIterator[pb.PlayerMessage]:
        while (m := await outbox.get()) is not None:
            yield m

    def send(request: Request, action: Action) -> None:
        outbox.put_nowait(pb.PlayerMessage(action=pb.ActionMessage(
            match_id=request.match_id, request_id=request.request_id, action=codec.action_to_pb(action))))

    async def answer(view: SeatView, legal: list[Action], request: Request) -> None:
        if inspect.iscoroutinefunction(bot.decide):
            action = await bot.decide(view, legal, request)
        else:
            action = await asyncio.to_thread(bot.decide, view, legal, request)
        send(request, action)

    channel_cm = grpc.aio.secure_channel(referee, credentials) if credentials else grpc.aio.insecure_channel(referee)
    async with channel_cm as channel:
        stub = pb_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Play(outgoing())
        try:
            async for msg in call:
                body = msg.WhichOneof("body")
                if body == "decision":
                    d = msg.decision
                    view = codec.view_from_pb(d.view)
                    legal = [codec.action_from_pb(a) for a in d.legal_actions]
                    request = Request(d.match_id, d.request_id, view.seat, d.time_left_ms, d)
                    views[d.request_id] = (view, legal, request)
                    task = asyncio.get_running_loop().create_task(answer(view, legal, request))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                elif body == "rejected":
                    r = msg.rejected
                    if r.request_id in views:
                        view, legal, request = views[r.request_id]
                        retry = bot.on_rejected(view, legal, r.code, r.message)
                        if retry is not None:
                            send(request, retry)
                elif body == "accepted":
                    views.pop(msg.accepted.request_id, None)
                elif body == "seated":
                    if hasattr(bot, "on_seated"):
                        bot.on_seated(msg.seated)
                elif body == "event":
                    if hasattr(bot, "on_event"):
                        bot.on_event(msg.event)
                elif body == "match_result":
                    results.append(msg.match_result)
                    if hasattr(bot, "on_match_result"):
                        bot.on_match_result(msg.match_result)
                    if match_id or (max_matches is not None and len(results) >= max_matches):
                        break
        finally:
            outbox.put_nowait(None)
            for t in tasks:
                t.cancel()
            call.cancel()
    return results


def parse_args(argv: Sequence[str] | None = None, description: str = "a rummy bot") -> argparse.Namespace:
    """The command line every bundled bot takes: ``--referee HOST:PORT`` and ``--bot-token T``, or
    ``--match ID --token T``; RUMMY_REFEREE, RUMMY_BOT_TOKEN and RUMMY_BOT_SEED in the environment work too."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--referee", default=os.environ.get("RUMMY_REFEREE", "127.0.0.1:50051"), help="HOST:PORT")
    p.add_argument("--bot-token", default=os.environ.get("RUMMY_BOT_TOKEN"), help="play match after match")
    p.add_argument("--match", help="match id (with --token: one seat)")
    p.add_argument("--token", help="seat token")
    p.add_argument("--name", default=None)
    env_seed = os.environ.get("RUMMY_BOT_SEED")
    p.add_argument("--seed", type=int, default=int(env_seed) if env_seed and env_seed.isdigit() else None,
                   help="seed for the bot's own random choices (or RUMMY_BOT_SEED)")
    p.add_argument("--max-matches", type=int, default=None)
    env = os.environ.get
    p.add_argument("--tls", action="store_true", default=bool(env("RUMMY_TLS")),
                   help="connect with TLS, trusting the system's roots (or RUMMY_TLS=1)")
    p.add_argument("--tls-root-cert", default=env("RUMMY_TLS_ROOT_CERT"), metavar="PEM",
                   help="connect with TLS, trusting this CA (or RUMMY_TLS_ROOT_CERT)")
    p.add_argument("--tls-client-cert", default=env("RUMMY_TLS_CLIENT_CERT"), metavar="PEM",
                   help="mutual TLS: this bot's certificate (or RUMMY_TLS_CLIENT_CERT)")
    p.add_argument("--tls-client-key", default=env("RUMMY_TLS_CLIENT_KEY"), metavar="PEM",
                   help="mutual TLS: this bot's private key (or RUMMY_TLS_CLIENT_KEY)")
    return p.parse_args(argv)


def main(bot: Any, argv: Sequence[str] | None = None) -> None:
    """Run ``bot`` from the command line until the referee is done with it."""
    args = parse_args(argv)
    if args.name:
        bot.name = args.name
    if args.seed is not None and hasattr(bot, "rng"):
        bot.rng.seed(args.seed)
    creds = None
    if args.tls or args.tls_root_cert or args.tls_client_cert:
        creds = tls_credentials(args.tls_root_cert, args.tls_client_cert, args.tls_client_key)
    try:
        asyncio.run(run_bot(bot, args.referee, bot_token=None if args.match else args.bot_token, match_id=args.match,
                            token=args.token, max_matches=args.max_matches, credentials=creds))
    except KeyboardInterrupt:
        pass
    except grpc.aio.AioRpcError as exc:
        if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
            print(f"{getattr(bot, 'name', 'bot')}: {exc.code().name}: {exc.details()}", file=sys.stderr)
            raise SystemExit(1) from exc
