"""A bridge for bots that speak JSON lines on stdin/stdout instead of gRPC, in any language.

    python -m rummybot.stdio --referee HOST:PORT --bot-token T -- ./my-bot --its-flags

For each decision the bridge writes one line to the bot's stdin::

    {"type": "decision", "match_id": "...", "request_id": 7, "time_left_ms": 4980,
     "view": {"variant": "indian", "seat": 0, "hand": ["AH", "2H", ...], ...},
     "legal": [{"kind": "draw_stock"}, {"kind": "discard", "card": "7H"}, ...]}

and reads one line back: ``{"legal_index": 1}`` (one of the listed actions) or ``{"action": {...}}`` (any action
in the same JSON form). Cards are in the text notation. Lines of other kinds (``seated``, ``rejected``,
``match_result``) are sent for information; the bot answers only decisions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from referee.codec import action_from_json, action_to_json
from referee.variants.base import Action, SeatView
from rummybot.sdk import Bot, Request, run_bot

__all__ = ["StdioBot", "view_to_json", "main"]


def view_to_json(view: SeatView) -> dict[str, Any]:
    """The view with cards in the text notation and enums by name."""
    def conv(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: conv(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [conv(v) for v in x]
        if hasattr(x, "name") and hasattr(x, "value"):
            return x.name
        return x

    d = asdict(view)
    d["hand"] = [str(c) for c in view.hand]
    d["discard_pile"] = [str(c) for c in view.discard_pile]
    d["face_up"] = [str(c) for c in view.face_up]
    d["received"] = [str(c) for c in view.received]
    d["in_front"] = [[str(c) for c in f] for f in view.in_front]
    d["offer"] = str(view.offer) if view.offer else None
    d["melds"] = [{"id": m.id, "owner": m.owner, "kind": m.meld_kind.value, "label": m.label,
                   "cards": [{"card": str(p.card), "wild": p.is_wild, "rank": p.rank.name, "suit": p.suit.name,
                              "laid_by": by} for p, by in zip(m.cards, m.laid_by, strict=False)]} for m in view.melds]
    d["notes"] = dict(view.notes)
    return conv(d)  # type: ignore[no-any-return]


class StdioBot(Bot):
    """Relays decisions to a child process, one JSON line each way; one decision at a time."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)
        self.name = self.command[0]
        self.proc: asyncio.subprocess.Process | None = None
        self.lock = asyncio.Lock()

    async def _start(self) -> asyncio.subprocess.Process:
        if self.proc is None or self.proc.returncode is not None:
            self.proc = await asyncio.create_subprocess_exec(*self.command, stdin=asyncio.subprocess.PIPE,
                                                             stdout=asyncio.subprocess.PIPE)
        return self.proc

    async def decide(self, view: SeatView, legal: Sequence[Action], request: Request) -> Action:
        async with self.lock:
            proc = await self._start()
            assert proc.stdin is not None and proc.stdout is not None
            line = {"type": "decision", "match_id": request.match_id, "request_id": request.request_id,
                    "time_left_ms": request.time_left_ms, "view": view_to_json(view),
                    "legal": [action_to_json(a) for a in legal]}
            proc.stdin.write((json.dumps(line) + "\n").encode())
            await proc.stdin.drain()
            answer = json.loads(await proc.stdout.readline() or b"{}")
        if "legal_index" in answer:
            return legal[int(answer["legal_index"])]
        return action_from_json(answer.get("action") or {})


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" not in args:
        raise SystemExit("usage: python -m rummybot.stdio --referee H:P (--bot-token T | --match ID --token T) -- CMD ...")
    split = args.index("--")
    p = argparse.ArgumentParser(prog="rummybot.stdio")
    p.add_argument("--referee", required=True)
    p.add_argument("--bot-token")
    p.add_argument("--match")
    p.add_argument("--token")
    opts = p.parse_args(args[:split])
    bot = StdioBot(args[split + 1:])
    asyncio.run(run_bot(bot, opts.referee, bot_token=None if opts.match else opts.bot_token, match_id=opts.match,
                        token=opts.token))


if __name__ == "__main__":
    main()
