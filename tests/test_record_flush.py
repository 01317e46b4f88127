"""A move's record lines reach the file once the request that follows the move has gone out (one write per move,
off the decision's round trip): a referee that crashes loses at most the move in flight."""

from __future__ import annotations

import asyncio
from pathlib import Path

from referee.rules.match import MatchConfig
from referee.service.records import read_record
from referee.service.session import MatchSession, TimeControl
from tests.probes import RequestProbe


def test_a_moves_lines_are_on_disk_once_the_next_request_is_out(tmp_path: Path) -> None:
    async def go() -> list[int]:
        session = MatchSession("m1", MatchConfig("indian", 2, seed="flush"), ["a", "b"], ["", ""],
                               TimeControl(per_move_ms=60000), records_dir=str(tmp_path))
        probes = [RequestProbe(), RequestProbe()]
        task = session.task = asyncio.create_task(session.run())
        for seat, probe in enumerate(probes):
            session.attach(seat, probe)

        async def requests() -> int:
            for _ in range(400):
                await asyncio.sleep(0.005)
                if sum(len(p.requests) for p in probes) > answered:
                    break
            return sum(len(p.requests) for p in probes)

        answered = 0
        await requests()
        actions_on_disk = []
        for _ in range(6):
            seat = next(i for i, p in enumerate(probes) if p.requests and p.requests[-1].request_id == answered + 1)
            request = probes[seat].requests[-1]
            drop = [a for a in request.legal_actions if a.WhichOneof("kind") != "drop"]
            session.deliver(probes[seat], request.request_id, drop[0])
            answered += 1
            await requests()
            await asyncio.sleep(0)  # the flush runs once the request's writer has had its turn
            actions_on_disk.append(sum(e["type"] == "action" for e in read_record(tmp_path / "m1.jsonl")))
        session.abort("test over")
        await asyncio.gather(task, return_exceptions=True)
        return actions_on_disk

    assert asyncio.run(go()) == [1, 2, 3, 4, 5, 6]  # after each answer, every answer so far is in the file
