"""``referee check-bot -- COMMAND ...``: put a bot through a battery of matches in each variant it claims and
say what it got right and wrong, before it ever enters a tournament.

The bot runs as the tournament runner runs it (``COMMAND --referee HOST:PORT``, its bot token in RUMMY_BOT_TOKEN
only) against the bundled greedy bot on a referee in this process, match after match
over one connection, from every seat. For each variant the check reports, per phase it was asked (DRAW, PLAY,
DISCARD, OFFER), how many decisions it answered with an accepted action; every rejected answer, missed deadline,
crash or disconnect is a fault. It also reports whether the variant's special situations came up and were met:
a Skarney offer answered, an Iceberg card passed face down, a 500 Rum deep pile take with its obligation, an
Indian declaration. A situation that never arose is "not reached", not a fault. Exit code 1 on any fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CheckRow", "check_bot", "main_check_bot", "SITUATIONS"]


@dataclass(frozen=True)
class CheckRow:
    variant: str
    check: str
    status: str  # "ok", "FAULT" or "not reached"
    detail: str

    @property
    def fault(self) -> bool:
        return self.status == "FAULT"


Actions = list[dict[str, Any]]  # the bot's accepted actions from the records, as JSON



def _did(*kinds: str) -> Callable[[Actions], bool]:
    return lambda actions: any(a["kind"] in kinds for a in actions)


def _deep_take(actions: Actions) -> bool:
    return any(a["kind"] == "take_discards" and a.get("count") != 1 for a in actions)


_DEEP_TAKE = ("takes discards below the top, melding the bottom card taken (FH-3)", _deep_take)
_SKARNEY = [("answers a card on offer (SKA-7)", _did("accept_offer", "decline_offer")), ("offers a card (SKA-7)", _did("offer"))]

# variant -> (situation, does this list of the bot's own actions show it met?)
SITUATIONS: dict[str, list[tuple[str, Callable[[Actions], bool]]]] = {
    "indian": [("declares a valid hand (IND-7)", _did("declare"))],
    "500-rum": [_DEEP_TAKE],
    "500-partnership": [_DEEP_TAKE],
    "persian": [("takes discards below the top, melding the bottom card taken", _deep_take)],
    "fortune": [("takes the pile, melding its top card with two from hand (FOR-4)", _did("take_discards"))],
    "arlington": [("takes from the discard pile", _did("take_discards"))],
    "skarney": _SKARNEY,
    "skarney-singles": _SKARNEY,
    "iceberg": [("passes a card face down (ICE-2)", _did("discard"))],
}


@dataclass
class _Tally:
    matches: int = 0
    unfinished: int = 0
    won: int = 0  # matches the bot (or its team) placed first in, alone or tied
    forfeits: list[str] = field(default_factory=list)
    asked: Counter[str] = field(default_factory=Counter)
    accepted: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    timed_out: Counter[str] = field(default_factory=Counter)
    actions: Actions = field(default_factory=list)


GREEDY = (sys.executable, "-m", "rummybot.bots.greedy")  # the rummybot distribution: a dependency of the referee's


async def _spawn(command: Sequence[str], address: str, token: str, log: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "RUMMY_REFEREE": address, "RUMMY_BOT_TOKEN": token, "RUMMY_BOT_SEED": "1"}
    out = log.open("ab")
    try:
        # the token in the environment only, as the tournament runner passes it: a command line is public
        return await asyncio.create_subprocess_exec(*command, "--referee", address, env=env,
                                                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
    finally:
        out.close()


async def check_bot(command: Sequence[str], variants: Sequence[str], *, matches: int = 2, hands: int = 2,
                    per_move_ms: int = 2000, concurrency: int = 1, log_dir: Path | None = None,
                    progress: Callable[[str], None] = lambda _s: None) -> tuple[list[CheckRow], Path]:
    """Run the battery; return its rows and the folder holding the bot's output and the match records.

    With ``concurrency`` N, N matches of a variant are played at once against the same bot (and at least N are
    played), as a tournament at concurrency N does: a bot, or a bridge, that mixes up which answer is for which
    match passes one match at a time and is caught so."""
    import grpc

    from referee.rules.variants import find
    from referee.service.records import read_record
    from referee.service.server import create_server
    from referee.service.session import TimeControl
    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    folder = log_dir or Path(tempfile.mkdtemp(prefix="check-bot-"))
    folder.mkdir(parents=True, exist_ok=True)
    server, port, service = await create_server("127.0.0.1:0", str(folder / "records"),
                                                default_time=TimeControl(per_move_ms=per_move_ms, connect_ms=15000))
    address = f"127.0.0.1:{port}"
    rows: list[CheckRow] = []
    team = any(find(v).team_play for v in variants)
    tokens = [f"candidate-{i}-{secrets.token_hex(6)}" for i in range(2 if team else 1)]
    procs = [await _spawn(command, address, t, folder / f"bot-{i}.log") for i, t in enumerate(tokens)]
    opponents = [f"greedy-{i}-{secrets.token_hex(6)}" for i in range(3)]
    # the opponents: the Python SDK's greedy bot, run as a bot author runs it (the referee imports nothing of the SDK)
    helpers = [await _spawn(GREEDY, address, t, folder / f"greedy-{i}.log") for i, t in enumerate(opponents)]
    try:
        connected = await _wait_connected(service, tokens, procs, 15.0)
        dead = next((p.returncode for p in procs if p.returncode is not None), None)
        why = f"exited with code {dead} before joining" if dead is not None else "did not join in 15 s"
        rows.append(CheckRow("*", "connects with a bot token (--referee, RUMMY_BOT_TOKEN)",
                             "ok" if connected else "FAULT", "joined" if connected else f"{why}; see {folder}/bot-0.log"))
        if not connected:
            return rows, folder
        if not await _wait_connected(service, opponents, helpers, 30.0):
            raise RuntimeError(f"the greedy opponents ({' '.join(GREEDY)}) did not join; see {folder}/greedy-0.log")
        async with grpc.aio.insecure_channel(address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)

            async def play(v: Any, k: int, tally: _Tally, gate: asyncio.Semaphore, count: int) -> None:
                """Match ``k`` of variant ``v``: the bot's seat rotates with k; N run at once under ``gate``."""
                seats = 4 if v.team_play else 2
                mine = [k % 2, k % 2 + 2] if v.team_play else [k % seats]
                spec: list[pb.SeatSpec] = []
                theirs = iter(opponents)
                for s in range(seats):
                    if s in mine:
                        spec.append(pb.SeatSpec(name="candidate", bot_token=tokens[mine.index(s)]))
                    else:
                        spec.append(pb.SeatSpec(name="greedy", bot_token=next(theirs)))
                async with gate:
                    progress(f"{v.name}: match {k + 1} of {count}"
                             + (f" ({concurrency} at once)" if concurrency > 1 else ""))
                    created = await stub.CreateMatch(pb.CreateMatchRequest(
                        variant=v.name, seats=spec, seed=f"check-bot:{v.name}:{k}", max_hands=hands))
                    try:
                        result = (await stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True),
                                                       timeout=max(60.0, hands * 400 * per_move_ms / 1000 / 4))).result
                    except grpc.aio.AioRpcError:
                        await stub.AbortMatch(pb.AbortMatchRequest(match_id=created.match_id, reason="check-bot timeout"))
                        tally.unfinished += 1
                        return
                tally.matches += 1
                session = service.sessions[created.match_id]
                for s in mine:
                    st = session.seats[s].stats
                    tally.asked.update(st.asked)
                    tally.accepted.update(st.accepted)
                    tally.rejected.update(st.rejected)
                    tally.timed_out.update(st.timed_out)
                if result.ranking and set(result.ranking[0].seats) & set(mine):
                    tally.won += 1
                record = read_record(result.record_path)
                for e in record:
                    if e["type"] == "forfeit" and e["seat"] in mine:
                        tally.forfeits.append(e["reason"])
                    if e["type"] == "action" and e["seat"] in mine and not e["timed_out"]:
                        tally.actions.append(e["action"])

            for name in variants:
                v = find(name)
                tally = _Tally()
                gate = asyncio.Semaphore(concurrency)
                count = max(matches, concurrency)
                await asyncio.gather(*(play(v, k, tally, gate, count) for k in range(count)))
                rows += _rows(v.name, tally, count)
        for i, p in enumerate(procs):
            if p.returncode is not None:
                rows.append(CheckRow("*", "stays up match after match", "FAULT",
                                     f"exited with code {p.returncode}; see {folder}/bot-{i}.log"))
                break
        else:
            rows.append(CheckRow("*", "stays up match after match on one connection", "ok",
                                 f"{len(variants) * max(matches, concurrency)} matches"
                                 + (f", {concurrency} at once" if concurrency > 1 else "")))
        return rows, folder
    finally:
        for p in [*procs, *helpers]:
            if p.returncode is None:
                p.terminate()
                try:
                    await asyncio.wait_for(p.wait(), 5)
                except TimeoutError:
                    p.kill()
                    await p.wait()
        await server.stop(0.5)


async def _wait_connected(service: Any, tokens: Sequence[str], procs: Sequence[asyncio.subprocess.Process],
                          timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if all(t in service.bots for t in tokens):
            return True
        if any(p.returncode is not None for p in procs):
            return False
        await asyncio.sleep(0.05)
    return False


def _rows(variant: str, t: _Tally, matches: int) -> list[CheckRow]:
    finished = f"{t.matches} of {matches} finished; the bot won {t.won}" + (" (first place, ties included)" if t.won else "")
    if t.forfeits:
        finished += f"; forfeited: {'; '.join(t.forfeits)}"
    rows = [CheckRow(variant, "plays every match to its end", "FAULT" if t.unfinished or t.forfeits else "ok", finished)]
    for phase in ("DRAW", "PLAY", "DISCARD", "OFFER"):
        asked = t.asked.get(phase, 0)
        if not asked:
            continue
        rejected = {k.split("/", 1)[1]: n for k, n in t.rejected.items() if k.startswith(phase + "/")}
        missed = t.timed_out.get(phase, 0)
        # decisions and answers are counted apart: a decision may be accepted after a rejected answer or two
        detail = f"{t.accepted.get(phase, 0)} of {asked} decisions accepted"
        if missed:
            detail += f", {missed} missed (deadline passed)"
        if rejected:
            n = sum(rejected.values())
            detail += f"\n{n} answer{'s' * (n != 1)} rejected: " + ", ".join(
                f"{c} x{k}" for c, k in sorted(rejected.items()))
        rows.append(CheckRow(variant, f"answers {phase} decisions", "FAULT" if rejected or missed else "ok", detail))
    for situation, met in SITUATIONS.get(variant, []):
        rows.append(CheckRow(variant, situation, "ok" if met(t.actions) else "not reached",
                             "met" if met(t.actions) else f"did not arise in {t.matches} matches"))
    return rows


def main_check_bot(command: Sequence[str], variants: Sequence[str], matches: int, hands: int, per_move_ms: int,
                   concurrency: int = 1) -> int:
    """The CLI: run, print the table, exit 1 on any fault."""
    from rich.console import Console
    from rich.table import Table

    from referee.rules.variants import all_variants, find

    names = [find(v).name for v in variants] if variants else [v.name for v in all_variants()]
    console = Console(stderr=True)
    with contextlib.ExitStack() as stack:
        status = stack.enter_context(console.status("checking"))
        rows, folder = asyncio.run(check_bot(command, names, matches=matches, hands=hands, per_move_ms=per_move_ms,
                                             concurrency=concurrency, progress=lambda s: status.update(s)))
    table = Table(title=f"check-bot: {' '.join(command)}")
    for col in ("variant", "check", "result", "detail"):
        # fold, never cut: a reason code cut short at 80 columns (the width when piped) cannot be looked up
        table.add_column(col, overflow="fold")
    for r in rows:
        colour = {"ok": "green", "FAULT": "red"}.get(r.status, "yellow")
        table.add_row(r.variant, r.check, f"[{colour}]{r.status}[/]", r.detail)
    out = Console()
    out.print(table)
    faults = sum(r.fault for r in rows)
    out.print(f"{faults} fault{'s' * (faults != 1)}; the bot's output and the match records are in {folder}")
    return 1 if faults else 0
