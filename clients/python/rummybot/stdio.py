"""The stdio bridge: plays any executable that speaks JSON lines on stdin/stdout, in any language.

    referee-bridge [--referee HOST:PORT] [--bot-token T | --match ID --token T] [--events] -- COMMAND ...

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
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import grpc
from google.protobuf import json_format

from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummy.wire import loops
from rummybot.sdk import messages
from rummybot.stdio_schema import LINE_KINDS

__all__ = ["Bridge", "BotNotStarted", "split_command", "to_line", "main"]

SDK_VERSION = "stdio-bridge/0.2.0"
_CONNECTION_FLAGS = ("--referee", "--bot-token", "--match", "--token")


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

    async def run(self, referee: str, join: pb.Join, one_match: bool) -> int:
        """Play until the referee ends the stream (or the one match ends); the child's exit code, else 0."""
        try:
            child = await asyncio.create_subprocess_exec(*self.command, stdin=asyncio.subprocess.PIPE,
                                                         stdout=asyncio.subprocess.PIPE, limit=4 * 2**20)
        except OSError as exc:  # misspelled, missing, not executable: said in one line, naming it
            raise BotNotStarted(f"cannot start the bot {self.command[0]!r}: {exc.strerror or exc}") from exc
        assert child.stdin is not None and child.stdout is not None
        outbox: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
        outbox.put_nowait(pb.PlayRequest(join=join))

        async def outgoing() -> AsyncIterator[pb.PlayRequest]:
            while (m := await outbox.get()) is not None:
                yield m

        async with grpc.aio.insecure_channel(referee) as channel:
            call = pb_grpc.RefereeServiceStub(channel).Play(outgoing())  # type: ignore[no-untyped-call]
            reader = asyncio.create_task(self._read_answers(child.stdout, child.stdin, outbox))
            referee_done = asyncio.create_task(self._relay(call, child.stdin, one_match))
            # SIGTERM (how the tournament runner stops its bots) ends the session as the referee's end would, so
            # the bot is stopped in order and the refusal summary below is still printed
            terminated = asyncio.Event()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminated.set)
            stop = asyncio.create_task(terminated.wait())
            await asyncio.wait({reader, referee_done, stop}, return_when=asyncio.FIRST_COMPLETED)
            bot_quit = reader.done()
            outbox.put_nowait(None)
            call.cancel()
            for task in (reader, referee_done, stop):
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
            self.welcomed = True
            if kind == "decision":
                self.open[(msg.decision.match_id, msg.decision.request_id)] = _Open(msg.decision)
            elif kind == "rejected":
                if (o := self.open.get((msg.rejected.match_id, msg.rejected.request_id))) is not None:
                    o.answered = False
                self.refusals[msg.rejected.code] += 1
            elif kind == "accepted":
                self.open.pop((msg.accepted.match_id, msg.accepted.request_id), None)
            elif kind == "match_result":
                for key in [k for k in self.open if k[0] == msg.match_result.match_id]:
                    del self.open[key]
            elif kind == "event" and not self.events:
                continue
            line = to_line(msg)
            if line is not None:
                await self._write(stdin, line)
            if kind == "match_result" and one_match:
                return

    async def _read_answers(self, stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter,
                            outbox: asyncio.Queue[pb.PlayRequest | None]) -> None:
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
            outbox.put_nowait(pb.PlayRequest(action=pb.ActionMessage(
                match_id=target.request.match_id, request_id=target.request.request_id, action=action)))

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
    return p


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    p = _parser()
    if {"-h", "--help"} & set(args[:args.index("--")] if "--" in args else args):
        p.print_help()
        raise SystemExit(0)
    own, command = split_command(args)
    opts = p.parse_args(own)
    name = opts.name or os.path.basename(command[0])
    if opts.match and opts.token:
        join = pb.Join(seat=pb.SeatCredential(match_id=opts.match, token=opts.token), bot_name=name, sdk=SDK_VERSION, batch=True)
    elif opts.bot_token:
        join = pb.Join(bot_token=opts.bot_token, bot_name=name, sdk=SDK_VERSION, batch=True)
    else:
        p.error("give --bot-token T (or RUMMY_BOT_TOKEN), or --match ID --token T")
    bridge = Bridge(command, events=opts.events, name=name)
    try:
        code = loops.run(bridge.run(opts.referee, join, one_match=bool(opts.match and opts.token)))
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
