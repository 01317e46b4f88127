"""The Python bot SDK: connect to a referee, be seated, answer decisions.

A bot is any object with ``decide(view, legal, request) -> Action`` (plain or ``async def``). ``view`` is a
``SeatView`` (your hand, the table, scores), ``legal`` the actions the referee knows to be legal: returning one of
them is always accepted. Run it with ``run_bot(bot, referee="127.0.0.1:50051", bot_token=...)`` to play match
after match over one connection, or with ``match_id`` and ``token`` to play one seat. The referee's address is
``HOST:PORT`` or a Unix socket, ``unix:/abs/path`` (how a sandboxed bot reaches it).

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
import random
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from referee.rules.variants.base import Action, SeatView
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire import loops
from rummy.wire import protocodec as codec

__all__ = ["Bot", "Request", "RefereeUnreachable", "run_bot", "main", "parse_args", "reconnect_forever_from_env",
           "tls_credentials"]

SDK_VERSION = "python/0.1.0"


async def messages(call: AsyncIterator[pb.PlayResponse]) -> AsyncIterator[pb.PlayResponse]:
    """A Play stream's messages one by one, a batch (``Join.batch``) taken apart in its order."""
    async for msg in call:
        if msg.WhichOneof("body") == "batch":
            for m in msg.batch.messages:
                yield m
        else:
            yield msg


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


class RefereeUnreachable(Exception):
    """No referee answered at ``address``: the first join never got its welcome (every retry included).

    Its text is one line naming the address, so a bot's log says where it looked; it never holds a token."""

    def __init__(self, address: str, detail: str) -> None:
        super().__init__(f"cannot reach the referee at {address}: {' '.join(detail.split())}")
        self.address = address


RECONNECTS = 8  # a dropped stream is joined again this many times in a row (backoff 0.1 s doubling to 2 s: ~9 s)
FIRST_JOIN_RETRIES = 3  # before any welcome: a referee still starting gets ~1 s, a wrong address fails fast
FOREVER_BACKOFF_S = 0.25  # reconnecting without end (``reconnects=None``): the first wait, doubling ...
FOREVER_BACKOFF_CAP_S = 30.0  # ... to this, each wait a random time between half and all of it (no thundering herd)
RECONNECT_ENV = "RUMMY_RECONNECT"  # "forever": a bot-token bot rejoins without end once a referee welcomed it


def reconnect_forever_from_env(value: str | None) -> bool:
    """``RUMMY_RECONNECT``'s value: "forever" is True, unset or empty False; anything else is a mistake worth
    saying (``ValueError``) rather than a bot that quietly gives up after ~9 s on the night the ladder restarts."""
    text = (value or "").strip().lower()
    if text not in ("", "forever"):
        raise ValueError(f"{RECONNECT_ENV} is 'forever' or unset, not {value!r}")
    return text == "forever"


# Each join opens a channel of its own subchannels: gRPC's shared pool would hand a new channel the old one's
# connection in its backoff (growing to 120 s), so a bot would come back long after its referee did.
CHANNEL_OPTIONS = (("grpc.use_local_subchannel_pool", 1),)


def _channel(referee: str, credentials: grpc.ChannelCredentials | None) -> grpc.aio.Channel:
    if credentials:
        return grpc.aio.secure_channel(referee, credentials, options=CHANNEL_OPTIONS)
    return grpc.aio.insecure_channel(referee, options=CHANNEL_OPTIONS)


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _retryable(exc: grpc.aio.AioRpcError, forever: bool = False) -> bool:
    """The stream dropped (the network, a proxy, a referee restarting: ``UNAVAILABLE``, or ``INTERNAL`` for a
    message sent on a connection already gone), or the seat's old stream is still seen as live: worth joining
    again. Reconnecting forever, a referee's limit (``RESOURCE_EXHAUSTED``: every bot of a ladder joining at once
    after its restart) is waited out too. Anything else (a wrong or revoked token, a match that is over) is final."""
    if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INTERNAL):
        return True
    if forever and exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return True
    return exc.code() == grpc.StatusCode.PERMISSION_DENIED and (exc.details() or "").startswith("SEAT_TAKEN")


async def run_bot(bot: Any, referee: str, bot_token: str | None = None, match_id: str | None = None,
                  token: str | None = None, max_matches: int | None = None,
                  credentials: grpc.ChannelCredentials | None = None, reconnects: int | None = RECONNECTS,
                  backoff_s: float | None = None, backoff_cap_s: float | None = None,
                  log: Callable[[str], None] | None = None) -> list[pb.MatchResult]:
    """Play until the referee closes the stream, the one match ends (seat mode), or ``max_matches`` end.
    ``credentials`` (``tls_credentials(...)``) connect with TLS; without them the channel is plaintext.

    A stream that drops (``UNAVAILABLE``) is joined again, up to ``reconnects`` times in a row (before the first
    welcome, at most ``FIRST_JOIN_RETRIES``) with a doubling backoff from ``backoff_s`` (0.1 s, to 2 s), naming per
    match the last event seq seen (``Join.resume``): the referee resends what was missed and the pending request.
    The bot sees every event once, in order, and each decision once; an answer the referee may not have received
    is sent again when it asks again.

    ``reconnects=None`` (a bot-token bot only: a seat's match has a deadline) rejoins without end once a referee
    has welcomed it, waiting 0.25 s doubling to 30 s, jittered: a ladder's bot outlives the ladder's restart. A
    wrong address still fails fast, and a final answer (a revoked key) still ends it. Each reconnect is one line
    to ``log`` (stderr by default); the token is never in it.

    Raises ``RefereeUnreachable`` when no referee ever welcomed it (nothing listening at ``referee``)."""
    if not bot_token and not (match_id and token):
        raise ValueError("give a bot token, or a match id and a seat token")
    forever = reconnects is None and not match_id
    limit = RECONNECTS if reconnects is None else reconnects
    first_wait = backoff_s if backoff_s is not None else (FOREVER_BACKOFF_S if forever else 0.1)
    cap = backoff_cap_s if backoff_cap_s is not None else (FOREVER_BACKOFF_CAP_S if forever else 2.0)
    say = log or _stderr_line
    name = getattr(bot, "name", "bot")
    results: list[pb.MatchResult] = []
    views: dict[tuple[str, int], tuple[SeatView, list[Action], Request]] = {}
    answers: dict[tuple[str, int], pb.PlayRequest] = {}  # sent, not yet accepted: sent again if asked again
    deciding: dict[tuple[str, int], asyncio.Task[None]] = {}
    last_seq: dict[str, int] = {}
    seated: set[str] = set()
    finished: set[str] = set()
    outbox: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()  # the current stream's
    attempts = 0  # joins in a row that failed
    welcomed = False  # a referee answered at least once: a later UNAVAILABLE means it went away

    def join_message() -> pb.PlayRequest:
        resume = [pb.ResumePoint(match_id=m, last_seq=last_seq.get(m, 0)) for m in sorted(seated - finished)]
        if bot_token:
            join = pb.Join(bot_token=bot_token, bot_name=name, sdk=SDK_VERSION, resume=resume, batch=True)
        else:
            join = pb.Join(seat=pb.SeatCredential(match_id=match_id or "", token=token or ""), bot_name=name,
                           sdk=SDK_VERSION, resume=resume, batch=True)
        return pb.PlayRequest(join=join)

    def send(request: Request, action: Action) -> None:
        msg = pb.PlayRequest(action=pb.ActionMessage(
            match_id=request.match_id, request_id=request.request_id, action=codec.action_to_pb(action)))
        answers[(request.match_id, request.request_id)] = msg
        outbox.put_nowait(msg)

    async def answer(view: SeatView, legal: list[Action], request: Request) -> None:
        try:
            if inspect.iscoroutinefunction(bot.decide):
                action = await bot.decide(view, legal, request)
            else:
                action = await asyncio.to_thread(bot.decide, view, legal, request)
            send(request, action)
        finally:
            deciding.pop((request.match_id, request.request_id), None)

    def forget(match: str) -> None:
        for table in (views, answers):
            for key in [k for k in table if k[0] == match]:
                del table[key]

    async def play_stream(channel: grpc.aio.Channel) -> bool:
        """One Play stream; True when the bot is done (the referee closed the stream, or the matches are over)."""
        nonlocal attempts, welcomed
        stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]

        async def outgoing() -> AsyncIterator[pb.PlayRequest]:
            q = outbox
            while (m := await q.get()) is not None:
                yield m

        call = stub.Play(outgoing())
        try:
            async for msg in messages(call):
                body = msg.WhichOneof("body")
                if body == "decision":
                    d = msg.decision
                    key = (d.match_id, d.request_id)
                    if key in answers:  # asked again after a rejoin: it never got the answer
                        outbox.put_nowait(answers[key])
                        continue
                    if key in deciding:  # still deciding: the answer goes out on this stream
                        continue
                    view = codec.view_from_pb(d.view)
                    legal = [codec.action_from_pb(a) for a in d.legal_actions]
                    request = Request(d.match_id, d.request_id, view.seat, d.time_left_ms, d)
                    views[key] = (view, legal, request)
                    deciding[key] = asyncio.get_running_loop().create_task(answer(view, legal, request))
                elif body == "rejected":
                    r = msg.rejected
                    key = (r.match_id, r.request_id)
                    answers.pop(key, None)
                    if key in views:
                        view, legal, request = views[key]
                        retry = bot.on_rejected(view, legal, r.code, r.message)
                        if retry is not None:
                            send(request, retry)
                elif body == "accepted":
                    key = (msg.accepted.match_id, msg.accepted.request_id)
                    views.pop(key, None)
                    answers.pop(key, None)
                elif body == "welcome":
                    attempts = 0  # joined: a later drop gets its full count of retries again
                    welcomed = True
                elif body == "seated":
                    if msg.seated.match_id not in seated:  # a rejoin seats it again: the bot hears of it once
                        seated.add(msg.seated.match_id)
                        if hasattr(bot, "on_seated"):
                            bot.on_seated(msg.seated)
                elif body == "event":
                    e = msg.event
                    if e.seq:
                        if e.seq <= last_seq.get(e.match_id, 0):
                            continue  # resent after a rejoin, and seen before it
                        last_seq[e.match_id] = e.seq
                    if hasattr(bot, "on_event"):
                        bot.on_event(e)
                elif body == "match_result":
                    m = msg.match_result.match_id
                    if m in finished:
                        continue
                    finished.add(m)
                    forget(m)
                    results.append(msg.match_result)
                    if hasattr(bot, "on_match_result"):
                        bot.on_match_result(msg.match_result)
                    if match_id or (max_matches is not None and len(results) >= max_matches):
                        return True
            return True
        finally:
            outbox.put_nowait(None)
            call.cancel()

    try:
        while True:
            outbox = asyncio.Queue()
            outbox.put_nowait(join_message())
            channel_cm = _channel(referee, credentials)
            try:
                async with channel_cm as channel:
                    if await play_stream(channel):
                        return results
            except grpc.aio.AioRpcError as exc:
                if match_id and exc.code() == grpc.StatusCode.FAILED_PRECONDITION and \
                        (exc.details() or "").startswith("MATCH_OVER") and match_id not in finished:
                    await _fetch_result(bot, referee, credentials, match_id, results)  # it ended while we were away
                    return results
                allowed: int | None = min(limit, FIRST_JOIN_RETRIES)  # before a welcome: a wrong address fails fast
                if welcomed:
                    allowed = None if forever else limit
                if not _retryable(exc, forever and welcomed) or (allowed is not None and attempts >= allowed):
                    if not welcomed and exc.code() == grpc.StatusCode.UNAVAILABLE:
                        raise RefereeUnreachable(referee, exc.details() or "") from exc
                    raise
                attempts += 1
                wait = min(cap, first_wait * 2 ** min(attempts - 1, 30))
                if forever:
                    wait = random.uniform(wait / 2, wait)
                why = " ".join((exc.details() or "").split())[:160]
                if welcomed:  # before a welcome, the quiet grace of a referee still starting (no referee: one line)
                        say(f"{name}: no stream to the referee at {referee} ({exc.code().name}: {why}); joining again in "
                        f"{wait:.1f} s (try {attempts}{'' if allowed is None else f' of {allowed}'})")
                await asyncio.sleep(wait)
    finally:
        for task in deciding.values():
            task.cancel()


async def _fetch_result(bot: Any, referee: str, credentials: grpc.ChannelCredentials | None, match_id: str,
                        results: list[pb.MatchResult]) -> None:
    channel_cm = _channel(referee, credentials)
    async with channel_cm as channel:
        stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
        result = (await stub.GetResult(pb.GetResultRequest(match_id=match_id), timeout=10)).result
    results.append(result)
    if hasattr(bot, "on_match_result"):
        bot.on_match_result(result)


def add_tls_arguments(p: argparse.ArgumentParser) -> None:
    """The TLS flags every bot command takes (the SDK's and ``referee-bridge``), each with its environment variable."""
    env = os.environ.get
    p.add_argument("--tls", action="store_true", default=bool(env("RUMMY_TLS")),
                   help="connect with TLS, trusting the system's roots (or RUMMY_TLS=1)")
    p.add_argument("--tls-root-cert", default=env("RUMMY_TLS_ROOT_CERT"), metavar="PEM",
                   help="connect with TLS, trusting this CA (or RUMMY_TLS_ROOT_CERT)")
    p.add_argument("--tls-client-cert", default=env("RUMMY_TLS_CLIENT_CERT"), metavar="PEM",
                   help="mutual TLS: this bot's certificate (or RUMMY_TLS_CLIENT_CERT)")
    p.add_argument("--tls-client-key", default=env("RUMMY_TLS_CLIENT_KEY"), metavar="PEM",
                   help="mutual TLS: this bot's private key (or RUMMY_TLS_CLIENT_KEY)")


def parse_args(argv: Sequence[str] | None = None, description: str = "a rummy bot") -> argparse.Namespace:
    """The command line every bundled bot takes: ``--referee HOST:PORT`` (or ``unix:/PATH``) and ``--bot-token T``,
    or ``--match ID --token T``; each falls back to the environment (RUMMY_REFEREE, RUMMY_BOT_TOKEN, RUMMY_MATCH,
    RUMMY_SEAT_TOKEN, RUMMY_BOT_SEED, RUMMY_RECONNECT). The tournament runner passes tokens only in the environment: a flag is
    readable by every process on the host."""
    env = os.environ.get
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--referee", default=env("RUMMY_REFEREE") or "127.0.0.1:50051",
                   help="HOST:PORT, or unix:/PATH for a Unix socket (or RUMMY_REFEREE)")
    p.add_argument("--bot-token", default=env("RUMMY_BOT_TOKEN"), metavar="T",
                   help="play match after match (better: RUMMY_BOT_TOKEN, which other processes cannot read)")
    p.add_argument("--match", default=env("RUMMY_MATCH"), metavar="ID", help="match id, with --token: one seat "
                   "(or RUMMY_MATCH)")
    p.add_argument("--token", default=env("RUMMY_SEAT_TOKEN"), metavar="T", help="seat token (or RUMMY_SEAT_TOKEN)")
    p.add_argument("--name", default=None)
    env_seed = os.environ.get("RUMMY_BOT_SEED")
    p.add_argument("--seed", type=int, default=int(env_seed) if env_seed and env_seed.isdigit() else None,
                   help="seed for the bot's own random choices (or RUMMY_BOT_SEED)")
    p.add_argument("--max-matches", type=int, default=None)
    try:
        forever = reconnect_forever_from_env(env(RECONNECT_ENV))
    except ValueError as exc:
        p.error(str(exc))
    p.add_argument("--reconnect-forever", action="store_true", default=forever,
                   help="with a bot token: once a referee welcomed it, rejoin without end when it goes away (a "
                   "ladder's restart), waiting 0.25 s doubling to 30 s (or RUMMY_RECONNECT=forever)")
    add_tls_arguments(p)
    return p.parse_args(argv)


def main(bot: Any, argv: Sequence[str] | None = None) -> None:
    """Run ``bot`` from the command line until the referee is done with it."""
    args = parse_args(argv)
    if not args.bot_token and not (args.match and args.token):
        print("give RUMMY_BOT_TOKEN (or --bot-token T), or a match and its seat token (RUMMY_MATCH and "
              "RUMMY_SEAT_TOKEN, or --match ID --token T)", file=sys.stderr)
        raise SystemExit(2)
    if args.name:
        bot.name = args.name
    if args.seed is not None and hasattr(bot, "rng"):
        bot.rng.seed(args.seed)
    creds = None
    if args.tls or args.tls_root_cert or args.tls_client_cert:
        creds = tls_credentials(args.tls_root_cert, args.tls_client_cert, args.tls_client_key)
    name = getattr(bot, "name", "bot")
    try:
        loops.run(run_bot(bot, args.referee, bot_token=None if args.match else args.bot_token, match_id=args.match,
                          token=args.token, max_matches=args.max_matches, credentials=creds,
                          reconnects=None if args.reconnect_forever else RECONNECTS))
    except KeyboardInterrupt:
        pass
    except RefereeUnreachable as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except grpc.aio.AioRpcError as exc:
        # the referee going away ends a bot-token session (a tournament ends by stopping it); a seat whose match
        # did not end has failed
        if exc.code() == grpc.StatusCode.CANCELLED or (exc.code() == grpc.StatusCode.UNAVAILABLE and not args.match):
            return
        print(f"{name}: {exc.code().name}: {' '.join((exc.details() or '').split())} (referee {args.referee})",
              file=sys.stderr)
        raise SystemExit(1) from None
