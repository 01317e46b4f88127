"""Bots that break the rules of the protocol on purpose: the conformance kit's test doubles.

    python -m rummybot.bots.misbehaving --mode MODE --referee H:P --bot-token T

Each mode shows one way a bot goes wrong, and the referee's tests check that it gets the documented outcome,
is told why, and never stalls or breaks the referee or the other matches:

=================  ==========================================================  ===================================
mode               what it does                                                documented outcome
=================  ==========================================================  ===================================
crash-at-start     exits with code 3 before connecting                         never connected: forfeits
crash-mid-hand     plays 4 decisions, then dies (code 4)                       disconnected past grace: forfeits
                                                                               (restarted and back within it: its
                                                                               missed moves are played, it plays on)
stall              connects and never answers                                  missed turns: default moves, then
                                                                               a forfeit (Indian: drops, IND-11)
slow               answers each decision after its deadline                    the same; late answers are STALE
illegal            answers only with discards of cards it does not hold        each rejected with its reason code
                                                                               (printed); floods count as misses
garbage-bytes      sends random bytes to the referee's port, then plays        that connection is dropped; the
                                                                               match plays on normally
flood              answers each decision 200 times                             FLOODING rejections, then misses
reconnect          drops its stream after 5 decisions and joins again          resumes within the grace period:
                                                                               no forfeit
mixes-matches      keeps only the last decision it was sent (one for all       one match at a time: plays well;
                   matches) and answers from it after 50 ms of thought         several at once: answers rejected
                                                                               and deadlines missed
                                                                               (``check-bot --concurrency 2``)
=================  ==========================================================  ===================================
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import sys
import time
from collections.abc import Sequence

from referee.rules.cards import Card, Rank, Suit
from referee.rules.variants.base import Action, Discard, SeatView
from rummybot.sdk import Bot, Request, parse_args, run_bot

__all__ = ["MODES", "Misbehaving", "main"]

MODES = ("crash-at-start", "crash-mid-hand", "stall", "slow", "illegal", "garbage-bytes", "flood", "reconnect",
         "mixes-matches")


def _card_not_held(view: SeatView) -> Card:
    held = set(view.hand)
    return next(c for c in (Card(r, s) for r in Rank for s in Suit if (r is Rank.JOKER) == (s is Suit.NONE))
                if c not in held)


class Misbehaving(Bot):
    """One misbehaviour at a time; legal play (the first listed action) wherever the mode allows it."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.name = f"misbehaving-{mode}"
        self.decisions = 0
        self.dropped = asyncio.Event()
        self.latest: Sequence[Action] = ()  # mixes-matches: the last decision's legal actions, whatever its match

    async def decide(self, view: SeatView, legal: Sequence[Action], request: Request) -> Action:
        self.decisions += 1
        say(f"decision {self.decisions} ({request.raw.phase}), mode {self.mode}")
        if self.mode == "crash-mid-hand" and self.decisions > 4:
            say("dying in the middle of a hand")
            os._exit(4)
        if self.mode == "stall":
            await asyncio.Event().wait()  # never answers
        if self.mode == "slow":
            await asyncio.sleep(request.time_left_ms / 1000 + 0.1)
        if self.mode == "illegal":
            return Discard(_card_not_held(view))
        if self.mode == "mixes-matches":  # the bug of a bot that keeps its game state in one place for all matches
            self.latest = legal
            await asyncio.sleep(0.05)
            return self.latest[0]
        if self.mode == "reconnect" and self.decisions == 5:
            self.dropped.set()
            await asyncio.Event().wait()  # this stream is about to be dropped
        return legal[0]

    def on_rejected(self, view: SeatView, legal: Sequence[Action], code: str, message: str) -> Action | None:
        super().on_rejected(view, legal, code, message)  # prints "rejected CODE: message"
        return Discard(_card_not_held(view)) if self.mode == "illegal" else None


def say(text: str) -> None:
    print(f"misbehaving bot: {text}", file=sys.stderr, flush=True)


def _garbage(address: str) -> None:
    """4096 random bytes to the referee's port, or to its Unix socket (``unix:/PATH``, a sandboxed bot's way in)."""
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(5)
        sock.connect("/" + address.removeprefix("unix:").lstrip("/"))
    else:
        host, _, port = address.rpartition(":")
        sock = socket.create_connection((host or "127.0.0.1", int(port)), timeout=5)
    with sock:
        sock.sendall(random.randbytes(4096))
        time.sleep(0.1)
    say("sent 4096 random bytes to the referee")


async def _flood(bot: Misbehaving, referee: str, token: str | None, match: str | None, seat_token: str | None) -> None:
    """Answers every decision 200 times, over a raw stream (the SDK answers once)."""
    import grpc

    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    out: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
    join = pb.Join(bot_token=token or "", bot_name=bot.name) if token else pb.Join(
        seat=pb.SeatCredential(match_id=match or "", token=seat_token or ""), bot_name=bot.name)
    out.put_nowait(pb.PlayRequest(join=join))

    async def gen():  # type: ignore[no-untyped-def]
        while (m := await out.get()) is not None:
            yield m

    async with grpc.aio.insecure_channel(referee) as channel:
        async for msg in pb_grpc.RefereeServiceStub(channel).Play(gen()):
            kind = msg.WhichOneof("body")
            if kind == "decision":
                d = msg.decision
                for _ in range(200):
                    out.put_nowait(pb.PlayRequest(action=pb.ActionMessage(
                        match_id=d.match_id, request_id=d.request_id, action=d.legal_actions[-1])))
            elif kind == "rejected" and msg.rejected.code == "FLOODING":
                say(f"rejected {msg.rejected.code}: {msg.rejected.message}")
            elif kind == "match_result" and match:
                break
        out.put_nowait(None)


async def _run(bot: Misbehaving, args: argparse.Namespace) -> None:
    token = None if args.match else args.bot_token
    if bot.mode == "flood":
        await _flood(bot, args.referee, token, args.match, args.token)
        return
    if bot.mode == "garbage-bytes":
        _garbage(args.referee)
    if bot.mode != "reconnect":
        await run_bot(bot, args.referee, bot_token=token, match_id=args.match, token=args.token)
        return
    playing = asyncio.create_task(run_bot(bot, args.referee, bot_token=token, match_id=args.match, token=args.token))
    dropped = asyncio.create_task(bot.dropped.wait())
    await asyncio.wait({playing, dropped}, return_when=asyncio.FIRST_COMPLETED)
    if not playing.done():
        say("dropping the connection, then joining again")
        playing.cancel()
        await asyncio.gather(playing, return_exceptions=True)
        await asyncio.sleep(0.2)
        bot.mode = "plays-on"
        await run_bot(bot, args.referee, bot_token=token, match_id=args.match, token=args.token)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--mode", choices=MODES, required=True)
    known, rest = p.parse_known_args(sys.argv[1:] if argv is None else argv)
    if known.mode == "crash-at-start":
        say("crashing at start")
        raise SystemExit(3)
    args = parse_args(rest, description="a misbehaving bot (conformance kit)")
    try:
        asyncio.run(_run(Misbehaving(known.mode), args))
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # noqa: BLE001 - a test double reports and exits; the referee decides the outcome
        say(f"stopped: {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main()
