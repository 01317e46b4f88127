"""A referee that dies mid-match and starts again on the same records folder takes its unfinished matches up again
from their records (``referee serve --unfinished resume``, the default), or ends them with a clear status.

In-process, a "kill" is a copy of a record as it stood part way (every way a kill can leave it: between moves,
inside a move, a line cut off); the real thing, ``referee serve`` killed with SIGKILL while its bots play, is
the last test: the bots rejoin by themselves and see every event once.
"""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from referee.rules.policies import random_policy
from referee.service.records import RecordWriter, read_numbered, read_record
from referee.service.replay import verify, verify_file
from referee.service.resume import RESUMED, Unfinished, recover, token_digest
from referee.service.server import EmbeddedReferee
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot
from tests.serving import free_port, kill, serve

TC = TimeControl(per_move_ms=5000, grace_ms=3000, connect_ms=5000)


async def _play(address: str, match_id: str, tokens, seed: int = 0):
    bots = [PolicyBot(f"b{i}", lambda v: random_policy, seed=seed + i) for i in range(len(tokens))]
    return await asyncio.gather(*(run_bot(b, address, match_id=match_id, token=t) for b, t in zip(bots, tokens, strict=True)))


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished match's record, and the seat tokens that played it."""
    folder = tmp_path_factory.mktemp("played")
    with EmbeddedReferee(records_dir=folder, default_time=TC) as ref:
        async def go():
            async with grpc.aio.insecure_channel(ref.address) as ch:
                created = await pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
                    variant="fortune", seed="restart", seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")],
                    max_hands=2, max_turns_per_hand=30))
                await _play(ref.address, created.match_id, created.seat_tokens)
                return created
        created = asyncio.run(go())
    path = folder / f"{created.match_id}.jsonl"
    assert verify_file(path).exit_code == 0
    return path, list(created.seat_tokens)


def _cut_points(lines: list[str]) -> dict[str, int]:
    """Line counts to keep: after the first deal, between two moves, inside a move (its action line written, not
    its events), late in the match."""
    kinds = [json.loads(line) for line in lines]
    actions = [i for i, e in enumerate(kinds) if e["type"] == "action"]
    return {"after the deal": actions[0], "between moves": actions[5], "inside a move": actions[8] + 1,
            "late": actions[-3]}


@pytest.mark.parametrize("where", ["after the deal", "between moves", "inside a move", "late", "a line cut off"])
def test_a_record_left_part_way_is_resumed_and_the_seats_finish_it_with_their_tokens(finished, tmp_path, where):
    path, tokens = finished
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    if where == "a line cut off":
        keep = "".join(lines[:_cut_points(lines)["between moves"] + 3])
        keep += lines[_cut_points(lines)["between moves"] + 3][:17]  # the kill came part way through a write
    else:
        keep = "".join(lines[:_cut_points(lines)[where]])
    folder = tmp_path / "records"
    folder.mkdir()
    left = folder / path.name
    left.write_text(keep)
    assert verify_file(left).outcome == "incomplete"

    with EmbeddedReferee(records_dir=folder, default_time=TC, unfinished="resume") as ref:
        session = ref.service.sessions[path.stem]
        assert session.resumed and not session.done.is_set()
        results = asyncio.run(_play(ref.address, path.stem, tokens, seed=7))
    result = results[0][0]
    assert result.status == pb.MATCH_STATUS_FINISHED and not list(result.forfeited), result.reason
    record = read_record(left)
    assert sum(e["type"] == RESUMED for e in record) == 1
    assert verify_file(left).exit_code == 0, verify_file(left)
    kept = [json.loads(line) for line in keep.splitlines(keepends=True) if line.endswith("\n")]
    assert record[:len(kept)] == kept, "what the record had is kept as it was"


def test_the_record_keeps_digests_of_the_seat_tokens_never_the_tokens(finished):
    path, tokens = finished
    text = path.read_text()
    header = read_record(path)[0]
    assert header["seat_token_sha256"] == [token_digest(t) for t in tokens]
    assert all(t not in text for t in tokens)


def test_recover_repairs_the_tail_a_kill_leaves(finished, tmp_path):
    """Inside a move: the lines the rules core had made are written; a line cut off is dropped."""
    path, _ = finished
    lines = path.read_text().splitlines(keepends=True)
    at = _cut_points(lines)["inside a move"]
    left = tmp_path / path.name
    left.write_text("".join(lines[:at]) + lines[at][:10])
    found = recover(left)
    assert isinstance(found, Unfinished)
    repaired = left.read_text().splitlines(keepends=True)
    assert repaired == lines[:len(repaired)] and len(repaired) > at, "the move in flight is completed from the rules"
    numbered, cut = read_numbered(left)
    assert cut == 0 and "hand" in str(verify(numbered))
    assert found.lines == sum(1 for line in repaired if json.loads(line)["type"] not in ("header", RESUMED))


def test_a_record_that_cannot_be_resumed_is_ended_with_the_reason(finished, tmp_path):
    """Written before token digests (no seat could prove itself), or edited: aborted, 'referee restarted: ...'."""
    path, _ = finished
    lines = path.read_text().splitlines(keepends=True)
    at = _cut_points(lines)["between moves"]
    folder = tmp_path / "records"
    folder.mkdir()
    header = json.loads(lines[0])
    old = folder / "oldheader.jsonl"
    old.write_text(json.dumps({"type": "header", "match_id": "oldheader", "seat_names": header["seat_names"]}) + "\n"
                   + "".join(lines[1:at]))
    edited = folder / "edited.jsonl"
    moves = [i for i, line in enumerate(lines[:at]) if '"type":"action"' in line]
    bad = lines[moves[-1]].replace('"seat":0', '"seat":1') if '"seat":0' in lines[moves[-1]] else \
        lines[moves[-1]].replace('"seat":1', '"seat":0')
    edited.write_text("".join(lines[:moves[-1]]) + bad + "".join(lines[moves[-1] + 1:at]))
    with EmbeddedReferee(records_dir=folder, default_time=TC, unfinished="resume") as ref:
        assert not ref.service.sessions
    for f, why in ((old, "no seat token digests"), (edited, "does not reproduce")):
        last = read_record(f)[-1]
        assert last["type"] == "aborted" and last["reason"].startswith("referee restarted: ") and why in last["reason"]
        assert verify_file(f).outcome in ("incomplete", "does not reproduce")
    assert verify_file(old).outcome == "incomplete" and "aborted" in str(verify_file(old))


@pytest.mark.parametrize("mode", ["abort", "leave"])
def test_unfinished_records_can_be_ended_or_left_alone(finished, tmp_path, mode):
    path, _ = finished
    lines = path.read_text().splitlines(keepends=True)
    folder = tmp_path / "records"
    folder.mkdir()
    left = folder / path.name
    left.write_text("".join(lines[:_cut_points(lines)["between moves"]]))
    before = left.read_text()
    started = folder / "m2.jsonl.part"  # killed while writing a record's opening lines: that match never began
    started.write_text('{"type":"header"')
    with EmbeddedReferee(records_dir=folder, default_time=TC, unfinished=mode) as ref:
        assert not ref.service.sessions
    assert started.exists() == (mode == "leave")
    if mode == "leave":
        assert left.read_text() == before
    else:
        last = read_record(left)[-1]
        assert last == {"type": "aborted", "reason": "referee restarted: it does not resume matches (--unfinished abort)"}
        assert verify_file(left).outcome == "incomplete"


# ---------------------------------------------------------------- the real thing: kill -9


class Recording(PolicyBot):
    def __init__(self, name: str, seed: int) -> None:
        super().__init__(name, lambda v: random_policy, seed=seed)
        self.seqs: list[int] = []
        self.kinds: list[str] = []

    def on_event(self, event):
        self.seqs.append(event.seq)
        self.kinds.append(event.kind)

    async def decide(self, view, legal, request):
        await asyncio.sleep(0.003)
        return self.rng.choice(legal)


def test_a_referee_killed_mid_match_and_started_again_finishes_it_with_the_same_bots(tmp_path):
    port = free_port()
    records = tmp_path / "records"
    address = f"127.0.0.1:{port}"
    referee = serve(port, records)
    try:
        async def go():
            nonlocal referee
            async with grpc.aio.insecure_channel(address) as ch:
                created = await pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
                    variant="fortune", seed="kill-9", seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")],
                    max_hands=2, max_turns_per_hand=60, time_control=pb.TimeControl(grace_ms=8000, connect_ms=8000)))
            bots = [Recording("a", 1), Recording("b", 2)]
            playing = asyncio.gather(*(run_bot(b, address, match_id=created.match_id, token=t, reconnects=30)
                                       for b, t in zip(bots, created.seat_tokens, strict=True)))
            while len(bots[0].seqs) < 30:
                await asyncio.sleep(0.005)
            kill(referee)  # no goodbye: the record is as the last move left it
            seen_at_kill = len(bots[0].seqs)
            referee = serve(port, records)
            results = await asyncio.wait_for(playing, 60)
            async with grpc.aio.insecure_channel(address) as ch:
                again = (await pb_grpc.RefereeServiceStub(ch).GetResult(pb.GetResultRequest(match_id=created.match_id))).result
            return bots, results, again, seen_at_kill

        bots, results, again, seen_at_kill = asyncio.run(go())
    finally:
        kill(referee)
    result = results[0][0]
    assert result.status == pb.MATCH_STATUS_FINISHED and not list(result.forfeited), result.reason
    assert again.status == pb.MATCH_STATUS_FINISHED and list(again.totals) == list(result.totals)
    path = records / f"{result.match_id}.jsonl"
    assert sum(e["type"] == RESUMED for e in read_record(path)) == 1
    numbered, _ = read_numbered(path)
    visible: dict[int, list[str]] = {0: [], 1: []}

    def follow(match, before, events):
        for e in events if before is not None else ():
            for seat in visible:
                if e.visible_to(seat):
                    visible[seat].append(e.kind)

    assert verify(numbered, on_step=follow).exit_code == 0, "the resumed record is certified whole"
    for seat, bot in enumerate(bots):
        assert bot.seqs == list(range(1, len(bot.seqs) + 1)), f"seat {seat}: an event seen twice or missed"
        assert bot.kinds == visible[seat]
    assert len(bots[0].seqs) > seen_at_kill


def test_a_match_resumed_before_is_resumed_again_and_its_request_ids_are_new(finished, tmp_path):
    """Two restarts: the record's first ``resumed`` line is kept and skipped by the checks; after the n-th restart
    request ids start at n * 2**32, so an answer to a request from before can never name an open one."""
    path, tokens = finished
    lines = path.read_text().splitlines(keepends=True)
    cut = _cut_points(lines)
    marker = json.dumps({"type": RESUMED, "restart": 1, "at": 0.0}, separators=(",", ":")) + "\n"
    folder = tmp_path / "records"
    folder.mkdir()
    left = folder / path.name
    left.write_text("".join(lines[:cut["between moves"]]) + marker + "".join(lines[cut["between moves"]:cut["late"]]))
    with EmbeddedReferee(records_dir=folder, default_time=TC, unfinished="resume") as ref:
        assert ref.service.sessions[path.stem]._next_request == 2 * 2**32 + 1
        results = asyncio.run(_play(ref.address, path.stem, tokens, seed=3))
    assert results[0][0].status == pb.MATCH_STATUS_FINISHED
    assert [e["restart"] for e in read_record(left) if e["type"] == RESUMED] == [1, 2]
    assert verify_file(left).exit_code == 0


def test_a_new_record_reaches_the_folder_whole_with_its_header_and_opening_lines(tmp_path):
    """A kill between creating a record and writing its first lines must not leave an empty or header-only file that
    a restart would take for a match in flight: the opening lines are written aside, then renamed into place."""
    writer = RecordWriter(tmp_path, "m1", {"seat_names": ["a", "b"]}, opening=[{"type": "match", "config": {}}])
    assert [p.name for p in tmp_path.iterdir()] == ["m1.jsonl"]
    assert [e["type"] for e in read_record(tmp_path / "m1.jsonl")] == ["header", "match"]  # on disk before any flush
    writer.write({"type": "note"})
    writer.close()
    assert [e["type"] for e in read_record(tmp_path / "m1.jsonl")] == ["header", "match", "note"]


def test_a_resumed_matchs_bot_token_is_known_when_its_bot_reconnects(tmp_path):
    """A resumed match knows its bot tokens only by digest until their bots come back; once claimed, the token is
    named like any other, so the bot may drop and join again on a referee that refuses unknown tokens."""
    played = tmp_path / "played"
    with EmbeddedReferee(records_dir=played, default_time=TC) as ref:
        async def go():
            async with grpc.aio.insecure_channel(ref.address) as ch:
                created = await pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
                    variant="fortune", seed="resumed-bots", max_hands=1, max_turns_per_hand=30,
                    seats=[pb.SeatSpec(name="a", bot_token="bt-a"), pb.SeatSpec(name="b", bot_token="bt-b")]))
                bots = [PolicyBot(f"b{i}", lambda v: random_policy, seed=i) for i in range(2)]
                playing = [asyncio.ensure_future(run_bot(b, ref.address, bot_token=t))  # until the referee goes
                           for b, t in zip(bots, ["bt-a", "bt-b"], strict=True)]
                await pb_grpc.RefereeServiceStub(ch).GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True))
                for task in playing:
                    task.cancel()
                await asyncio.gather(*playing, return_exceptions=True)
                return created.match_id
        match_id = asyncio.run(asyncio.wait_for(go(), 60))
    lines = (played / f"{match_id}.jsonl").read_text().splitlines(keepends=True)
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / f"{match_id}.jsonl").write_text("".join(lines[:_cut_points(lines)["between moves"]]))

    async def join(address: str) -> str:
        async with grpc.aio.insecure_channel(address) as ch:
            out: asyncio.Queue = asyncio.Queue()
            out.put_nowait(pb.PlayRequest(join=pb.Join(bot_token="bt-a")))

            async def requests():
                while (m := await out.get()) is not None:
                    yield m

            call = pb_grpc.RefereeServiceStub(ch).Play(requests())
            try:
                while (await asyncio.wait_for(call.read(), 10)).WhichOneof("body") != "seated":
                    pass
                return "seated"
            except grpc.aio.AioRpcError as exc:
                return dict(exc.trailing_metadata() or ()).get("rummy-reason", exc.code().name)
            finally:
                call.cancel()

    with EmbeddedReferee(records_dir=folder, default_time=TC, unfinished="resume", admin_token="admin") as ref:
        assert asyncio.run(join(ref.address)) == "seated"  # claimed by its digest
        assert asyncio.run(join(ref.address)) == "seated"  # and known by name when it comes back
