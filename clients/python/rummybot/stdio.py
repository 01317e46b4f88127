"""The stdio bridge: plays any executable that speaks JSON lines on stdin/stdout, in any language.

    referee-bridge [--referee HOST:PORT] [--bot-token T | --match ID --token T] [--events] [--reconnect-forever]
                   [--tls] [--tls-root-cert PEM] -- COMMAND ...

Connection flags may also come from RUMMY_REFEREE / RUMMY_BOT_TOKEN (RUMMY_MATCH / RUMMY_SEAT_TOKEN), which is
how the tournament runner passes tokens (a flag is readable by every process on the host), or at the very end of
the command line, where the runner appends ``--referee ADDRESS``: the bridge takes connection flags off the end
of COMMAND. So ``command = ["referee-bridge", "--", "node", "bot.js"]`` works in a tournament as it is. The
referee's address is ``HOST:PORT`` or a Unix socket, ``unix:/abs/path``. With no referee there, the bridge
exits 1 with one line naming the address.

To the bot's stdin, one line per message: ``{"type": KIND, KIND: {...}}`` where KIND is ``welcome``,
``seated``, ``decision``, ``rejected``, ``accepted``, ``hand_result``, ``match_result`` (and ``event`` with
``--events``) and the body is that PlayResponse field in protobuf's JSON mapping (field names as in the
proto). From the bot's stdout, one line per answer: ``{"legal_index": K}`` (the K-th of the decision's
``legal_actions``) or ``{"action": {...}}`` (any Action in the same mapping), optionally naming
``request_id``; without it the oldest open decision is answered. An answer the referee refuses comes back as
a ``rejected`` line with its reason code, and the bot may answer again before the deadline; an answer that
cannot be read at all (not JSON, an index out of range, a malformed action) is refused by the bridge itself
the same way (``MALFORMED_ANSWER``, ``BAD_LEGAL_INDEX``). No answer is ever replaced by another: only the
referee's timeout rule plays a default move. The JSON Schema of both line formats is generated from the proto:
``clients/stdio/schema.json`` (``python -m rummybot.stdio_schema``). The bot's stderr passes through.

With ``--reconnect-forever`` (or ``RUMMY_RECONNECT=forever``) a bot-token bridge that a referee welcomed joins
again without end when its stream drops (a ladder's restart), as the SDKs do: the bot keeps running and sees each
message once. ``--tls`` / ``--tls-root-cert PEM`` (``RUMMY_TLS=1``, ``RUMMY_TLS_ROOT_CERT``) connect with TLS.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import grpc
from google.protobuf import json_format

from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire import loops
from rummybot.sdk import (
    CHANNEL_OPTIONS,
    FOREVER_BACKOFF_CAP_S,
    FOREVER_BACKOFF_S,
    RECONNECT_ENV,
    _retryable,
    add_tls_arguments,
    messages,
    reconnect_forever_from_env,
    tls_credentials,
)
from rummybot.stdio_schema import LINE_KINDS

__all__ = ["Bridge", "BotNotStarted", "split_command", "to_line", "main"]

SDK_VERSION = "stdio-bridge/0.2.0"
_CONNECTION_FLAGS = ("--referee", "--bot-token", "--match", "--token")


def _channel(referee: str, credentials: grpc.ChannelCredentials | None) -> grpc.aio.Channel:
    """A channel of its own subchannels (``CHANNEL_OPTIONS``: a rejoin does not inherit the old one's backoff)."""
    if credentials is not None:
        return grpc.aio.secure_channel(referee, credentials, options=CHANNEL_OPTIONS)
    return grpc.aio.insecure_channel(referee, options=CHANNEL_OPTIONS)


def to_line(msg: pb.PlayResponse) -> dict[str, Any] | None:
    """A PlayResponse as one bridge line, or None for a kind bots are not sent."""
    kind = msg.WhichOneof("body")
    if kind not in LINE_KINDS:
        return None
    body = json_format.MessageToDict(getattr(msg, kind), preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)
    return {"type": kind, kind: body}


def split_command(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(bridge flags, the bot's command): flags before ``--``, plus connection flags appended after the command."""
    args = list(args)
    if "--" not in args:
        _usage_error("no -- before the bot's COMMAND")
    split = args.index("--")
    own, command = args[:split], args[split + 1:]
    tail: list[str] = []
    while len(command) >= 3 and command[-2] in _CONNECTION_FLAGS:
        tail = command[-2:] + tail
        command = command[:-2]
    if not command:
        _usage_error("no bot COMMAND after --")
    return own + tail, command


class BotNotStarted(Exception):
    """The bot's COMMAND could not be started (no such program, not executable)."""


def _usage_error(why: str) -> NoReturn:
    print("usage: referee-bridge [--referee ADDRESS] [--bot-token T | --match ID --token T] [--name N] [--events] "
          f"-- COMMAND ...\nreferee-bridge: {why} (referee-bridge --help says more)", file=sys.stderr)
    raise SystemExit(2)


@dataclass
class _Open:
    """A decision the bot has been sent and not yet had accepted."""

    request: pb.DecisionRequest
    answered: bool = False
    answer: pb.PlayRequest | None = None  # sent again when the referee asks again after a rejoin


@dataclass
class Bridge:
    """Relays one Play stream to one child process, line by line, in both directions."""

    command: list[str]
    events: bool = False
    name: str = "stdio-bot"
    # (match id, request id) -> decision, in arrival order: request ids are unique only within a match, and a
    # bridged bot plays several matches at once whenever a tournament's concurrency is above 1
    open: dict[tuple[str, int], _Open] = field(default_factory=dict)
    refusals: Counter[str] = field(default_factory=Counter)
    answers: int = 0
    welcomed: bool = False  # a referee answered: a later UNAVAILABLE means it went away, not that none was there
    # across rejoins (reconnecting forever): what the bot was told, so that it hears each message once
    seated: set[str] = field(default_factory=set)
    finished: set[str] = field(default_factory=set)
    last_seq: dict[str, int] = field(default_factory=dict)
    outbox: asyncio.Queue[pb.PlayRequest | None] = field(default_factory=asyncio.Queue)  # the current stream's
    joined: bool = False  # the current stream was welcomed: its drop waits from the start again
    log: Callable[[str], None] | None = None  # one line per rejoin (default: stderr)

    def resume(self, join: pb.Join) -> pb.Join:
        """``join`` naming each match seated and not finished with the last event seen (``Join.resume``)."""
        again = pb.Join()
        again.CopyFrom(join)
        del again.resume[:]
        again.resume.extend(pb.ResumePoint(match_id=m, last_seq=self.last_seq.get(m, 0))
                            for m in sorted(self.seated - self.finished))
        return again

    async def run(self, referee: str, join: pb.Join, one_match: bool,
                  credentials: grpc.ChannelCredentials | None = None, forever: bool = False,
                  backoff_s: float = FOREVER_BACKOFF_S, backoff_cap_s: float = FOREVER_BACKOFF_CAP_S) -> int:
        """Play until the referee ends the stream (or the one match ends); the child's exit code, else 0. With
        ``forever`` (a bot-token bridge), a stream that drops after a welcome is joined again without end, waiting
        ``backoff_s`` doubling to ``backoff_cap_s`` (each wait a random half to all of it), the bot running on."""
        try:
            child = await asyncio.create_subprocess_exec(*self.command, stdin=asyncio.subprocess.PIPE,
                                                         stdout=asyncio.subprocess.PIPE, limit=4 * 2**20)
        except OSError as exc:  # misspelled, missing, not executable: said in one line, naming it
            raise BotNotStarted(f"cannot start the bot {self.command[0]!r}: {exc.strerror or exc}") from exc
        assert child.stdin is not None and child.stdout is not None
        forever = forever and not one_match
        say = self.log or (lambda line: print(line, file=sys.stderr, flush=True))
        reader = asyncio.create_task(self._read_answers(child.stdout, child.stdin))
        # SIGTERM (how the tournament runner stops its bots) ends the session as the referee's end would, so
        # the bot is stopped in order and the refusal summary below is still printed
        terminated = asyncio.Event()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminated.set)
        stop = asyncio.create_task(terminated.wait())
        attempts = 0
        while True:
            outbox: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
            self.outbox = outbox
            outbox.put_nowait(pb.PlayRequest(join=self.resume(join)))

            async def outgoing(q: asyncio.Queue[pb.PlayRequest | None] = outbox) -> AsyncIterator[pb.PlayRequest]:
                while (m := await q.get()) is not None:
                    yield m

            self.joined = False
            async with _channel(referee, credentials) as channel:
                call = pb_grpc.RefereeServiceStub(channel).Play(outgoing())  # type: ignore[no-untyped-call]
                referee_done = asyncio.create_task(self._relay(call, child.stdin, one_match))
                await asyncio.wait({reader, referee_done, stop}, return_when=asyncio.FIRST_COMPLETED)
                outbox.put_nowait(None)
                call.cancel()
                if not referee_done.done():
                    referee_done.cancel()
                await asyncio.gather(referee_done, return_exceptions=True)
            failure = None if referee_done.cancelled() else referee_done.exception()
            if not (forever and self.welcomed and not reader.done() and not stop.done()
                    and isinstance(failure, grpc.aio.AioRpcError) and _retryable(failure, forever=True)):
                break
            attempts = 1 if self.joined else attempts + 1  # a welcomed stream's drop waits from the start again
            wait = min(backoff_cap_s, backoff_s * 2 ** min(attempts - 1, 30))
            wait = random.uniform(wait / 2, wait)
            why = " ".join((failure.details() or "").split())[:160]
            say(f"referee-bridge: no stream to the referee at {referee} ({failure.code().name}: {why}); joining "
                f"again in {wait:.1f} s (try {attempts})")
            await asyncio.wait({reader, stop}, timeout=wait)  # the bot quitting or SIGTERM end the wait
            if reader.done() or stop.done():
                break
        bot_quit = reader.done()
        for task in (reader, stop):
            task.cancel()
        results = await asyncio.gather(reader, referee_done, return_exceptions=True)
        if bot_quit:  # the bot closed its stdout: it is done (or dead); its exit code is ours
            code = await child.wait()
            if code:
                print(f"referee-bridge: the bot exited with code {code}", file=sys.stderr, flush=True)
        else:
            child.stdin.close()
            try:
                await asyncio.wait_for(child.wait(), 5)
            except TimeoutError:
                child.kill()
                await child.wait()
            code = 0
        failure = next((r for r in results if isinstance(r, grpc.aio.AioRpcError)), None)
        if failure is not None and failure.code() != grpc.StatusCode.CANCELLED:
            detail = " ".join((failure.details() or "").split())
            if failure.code() == grpc.StatusCode.UNAVAILABLE and not self.welcomed:
                print(f"referee-bridge: cannot reach the referee at {referee}: {detail}", file=sys.stderr, flush=True)
                code = code or 1
            elif failure.code() == grpc.StatusCode.UNAVAILABLE and not one_match:
                # a bot-token session ends when its referee goes away (a tournament ends by stopping it)
                print(f"referee-bridge: the referee at {referee} went away: {detail}", file=sys.stderr, flush=True)
            else:
                print(f"referee-bridge: {failure.code().name}: {detail} (referee {referee})", file=sys.stderr,
                      flush=True)
                code = code or 1
        if self.refusals:
            summary = ", ".join(f"{c} x{n}" for c, n in self.refusals.most_common())
            print(f"referee-bridge: {sum(self.refusals.values())} of {self.answers} answers refused ({summary})",
                  file=sys.stderr, flush=True)
        return code

    async def _relay(self, call: Any, stdin: asyncio.StreamWriter, one_match: bool) -> None:
        """Referee -> bot: every message as a line; track which decisions are open."""
        async for msg in messages(call):
            kind = msg.WhichOneof("body")
            self.welcomed = self.joined = True
            if kind == "decision":
                key = (msg.decision.match_id, msg.decision.request_id)
                if (o := self.open.get(key)) is not None:  # asked again after a rejoin: the bot has the line
                    if o.answered and o.answer is not None:  # its answer never arrived
                        self.outbox.put_nowait(o.answer)
                    continue
                self.open[key] = _Open(msg.decision)
            elif kind == "seated":
                if msg.seated.match_id in self.seated:  # a rejoin seats it again: the bot hears of it once
                    continue
                self.seated.add(msg.seated.match_id)
            elif kind == "event" and msg.event.seq:
                if msg.event.seq <= self.last_seq.get(msg.event.match_id, 0):
                    continue  # resent after a rejoin, and seen before it
                self.last_seq[msg.event.match_id] = msg.event.seq
            elif kind == "rejected":
                if (o := self.open.get((msg.rejected.match_id, msg.rejected.request_id))) is not None:
                    o.answered = False
                self.refusals[msg.rejected.code] += 1
            elif kind == "accepted":
                self.open.pop((msg.accepted.match_id, msg.accepted.request_id), None)
            elif kind == "match_result":
                if msg.match_result.match_id in self.finished:
                    continue
                self.finished.add(msg.match_result.match_id)
                for key in [k for k in self.open if k[0] == msg.match_result.match_id]:
                    del self.open[key]
            if kind == "event" and not self.events:
                continue
            line = to_line(msg)
            if line is not None:
                await self._write(stdin, line)
            if kind == "match_result" and one_match:
                return

    async def _read_answers(self, stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter) -> None:
        """Bot -> referee: each line answers a decision; what cannot be read is refused back to the bot."""
        while line := await stdout.readline():
            if not line.strip():
                continue
            self.answers += 1
            target = None
            try:
                answer = json.loads(line)
                if not isinstance(answer, dict):
                    raise ValueError("an answer is a JSON object")
                target = self._target(answer)
                if target is None:
                    raise LookupError("no decision is open")
                action = self._action(answer, target.request)
            except (ValueError, LookupError, json_format.ParseError) as exc:
                code = "BAD_LEGAL_INDEX" if isinstance(exc, IndexError) else "MALFORMED_ANSWER"
                self.refusals[code] += 1
                if target is None:  # name the decision the bot most likely meant
                    target = next((o for o in self.open.values() if not o.answered), None)
                d = target.request if target is not None else None
                await self._write(stdin, {"type": "rejected", "rejected": {
                    "match_id": d.match_id if d else "", "request_id": str(d.request_id) if d else "0", "code": code,
                    "message": f"the bridge could not use this answer: {exc} (line: {line[:120].decode(errors='replace').strip()})"}})
                continue
            target.answered = True
            target.answer = pb.PlayRequest(action=pb.ActionMessage(
                match_id=target.request.match_id, request_id=target.request.request_id, action=action))
            self.outbox.put_nowait(target.answer)

    def _target(self, answer: dict[str, Any]) -> _Open | None:
        """The decision an answer is for: the one it names (``match_id`` and ``request_id``; a request id alone if it
        is open in one match only), else the oldest not yet answered."""
        if "request_id" in answer:
            rid = int(answer["request_id"])
            if "match_id" in answer:
                key = (str(answer["match_id"]), rid)
                if key not in self.open:
                    raise LookupError(f"request {rid} of match {key[0]!r} is not open")
                return self.open[key]
            named = [o for (_m, r), o in self.open.items() if r == rid]
            if not named:
                raise LookupError(f"request {rid} is not open")
            if len(named) > 1:
                raise LookupError(f"request {rid} is open in {len(named)} matches: name its match_id too")
            return named[0]
        waiting = [o for o in self.open.values() if not o.answered]
        return waiting[0] if waiting else next(iter(self.open.values()), None)

    @staticmethod
    def _action(answer: dict[str, Any], request: pb.DecisionRequest) -> pb.Action:
        if "legal_index" in answer:
            k = answer["legal_index"]
            if not isinstance(k, int) or not 0 <= k < len(request.legal_actions):
                raise IndexError(f"legal_index {k!r} is not in 0..{len(request.legal_actions) - 1}")
            action: pb.Action = request.legal_actions[k]
            return action
        if "action" in answer:
            parsed: pb.Action = json_format.ParseDict(answer["action"], pb.Action())
            return parsed
        raise ValueError('an answer needs "legal_index" or "action"')

    @staticmethod
    async def _write(stdin: asyncio.StreamWriter, line: dict[str, Any]) -> None:
        stdin.write((json.dumps(line, separators=(",", ":")) + "\n").encode())
        await stdin.drain()


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    p = argparse.ArgumentParser(
        prog="referee-bridge", usage="referee-bridge [FLAGS] -- COMMAND [ARG ...]",
        description="Play a bot that reads and writes JSON lines on stdin/stdout (COMMAND) over gRPC. Connection "
        "flags may also come after COMMAND's own arguments, where the tournament runner appends --referee ADDRESS.",
        epilog="exit codes: 0 the referee is done with the bot; the bot's own code when it quits; 1 an error, said in "
        "one line (no referee at the address, a COMMAND that cannot be started); 2 a bad command line. The line "
        "formats: clients/stdio/README.md and clients/stdio/schema.json.")
    p.add_argument("--referee", default=env("RUMMY_REFEREE") or "127.0.0.1:50051", metavar="ADDRESS",
                   help="HOST:PORT, or unix:/PATH for a Unix socket (or RUMMY_REFEREE; default 127.0.0.1:50051)")
    p.add_argument("--bot-token", default=env("RUMMY_BOT_TOKEN"), metavar="T",
                   help="play match after match (better: RUMMY_BOT_TOKEN, which other processes cannot read)")
    p.add_argument("--match", default=env("RUMMY_MATCH"), metavar="ID",
                   help="match id, with --token: one seat (or RUMMY_MATCH)")
    p.add_argument("--token", default=env("RUMMY_SEAT_TOKEN"), metavar="T", help="seat token (or RUMMY_SEAT_TOKEN)")
    p.add_argument("--name", default=None, help="the bot's name (default: the command's name)")
    p.add_argument("--events", action="store_true", help="also send event lines")
    p.add_argument("--reconnect-forever", action="store_true",
                   help="with a bot token: once a referee welcomed it, rejoin without end when it goes away (a "
                   "ladder's restart), waiting 0.25 s doubling to 30 s; the bot runs on (or RUMMY_RECONNECT=forever)")
    add_tls_arguments(p)
    return p


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    p = _parser()
    if {"-h", "--help"} & set(args[:args.index("--")] if "--" in args else args):
        p.print_help()
        raise SystemExit(0)
    own, command = split_command(args)
    opts = p.parse_args(own)
    try:
        forever = opts.reconnect_forever or reconnect_forever_from_env(os.environ.get(RECONNECT_ENV))
    except ValueError as exc:
        _usage_error(str(exc))
    credentials = None
    if opts.tls or opts.tls_root_cert or opts.tls_client_cert:
        try:
            credentials = tls_credentials(opts.tls_root_cert, opts.tls_client_cert, opts.tls_client_key)
        except (OSError, ValueError) as exc:
            print(f"referee-bridge: TLS: {exc}", file=sys.stderr)
            raise SystemExit(1) from None
    name = opts.name or os.path.basename(command[0])
    if opts.match and opts.token:
        join = pb.Join(seat=pb.SeatCredential(match_id=opts.match, token=opts.token), bot_name=name, sdk=SDK_VERSION, batch=True)
    elif opts.bot_token:
        join = pb.Join(bot_token=opts.bot_token, bot_name=name, sdk=SDK_VERSION, batch=True)
    else:
        p.error("give --bot-token T (or RUMMY_BOT_TOKEN), or --match ID --token T")
    bridge = Bridge(command, events=opts.events, name=name)
    try:
        code = loops.run(bridge.run(opts.referee, join, one_match=bool(opts.match and opts.token),
                                    credentials=credentials, forever=forever))
    except KeyboardInterrupt:
        code = 130
    except BotNotStarted as exc:
        print(f"referee-bridge: {exc}", file=sys.stderr)
        code = 1
    except grpc.aio.AioRpcError as exc:
        print(f"referee-bridge: {exc.code().name}: {' '.join((exc.details() or '').split())} (referee {opts.referee})",
              file=sys.stderr)
        code = 1
    raise SystemExit(code)


if __name__ == "__main__":
    main()
