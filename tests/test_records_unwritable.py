"""A records folder that fills up or turns read-only ends its matches cleanly: ABORTED with the reason code
RECORDS_UNWRITABLE (naming the path and the system's reason), GetResult(wait) returns for every match, CreateMatch
is refused FAILED_PRECONDITION with that reason, health goes NOT_SERVING and back to SERVING once a probe writes
again, and what is on disk stays whole lines. Records are private (0600 in a 0700 folder) whatever the umask, and
a record holds no open file between writes.

The full and read-only folders are real: a tmpfs of 200 KB mounted for the test (root only; skipped otherwise),
filled with a ballast file or remounted read-only. Quota (EDQUOT) and permission (EACCES) faults are injected."""

from __future__ import annotations

import asyncio
import errno
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.rules.match import MatchConfig
from referee.rules.policies import random_policy
from referee.service import records as records_mod
from referee.service import server as server_mod
from referee.service.records import REASON_UNWRITABLE, RecordsUnwritable, RecordWriter, read_numbered
from referee.service.server import REASON_KEY, EmbeddedReferee
from referee.service.session import MatchSession, TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot
from tests.probes import RequestProbe

FAST = TimeControl(per_move_ms=2000, grace_ms=300, connect_ms=5000)


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=10, check=False)


@pytest.fixture()
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 200 KB tmpfs mounted for the test: it fills up, and can be remounted read-only."""
    where = tmp_path / "tiny"
    where.mkdir()
    got = _mount("-t", "tmpfs", "-o", "size=200k,mode=0755", "tmpfs", str(where))
    if got.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root needed): {got.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=10, check=False)


def fill(folder: Path, leave: int = 0) -> Path:
    """A ballast file taking every byte of ``folder``'s file system but about ``leave`` (tmpfs counts pages)."""
    ballast = folder / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            vfs = os.statvfs(folder)
            free = vfs.f_bavail * vfs.f_frsize - leave
            if free <= 0:
                break
            os.write(fd, bytes(min(free, 65536)))
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return ballast


def read_only(folder: Path, ro: bool) -> None:
    got = _mount("-o", f"remount,{'ro' if ro else 'rw'}", str(folder))
    assert got.returncode == 0, got.stderr


# ------------------------------------------------------------------------------------------ the writer


def test_a_record_and_its_folder_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        writer = RecordWriter(tmp_path / "records", "m1", {"seat_names": ["a", "b"]})
        writer.write({"type": "x"})
        writer.close()
        existing = tmp_path / "open"
        existing.mkdir(mode=0o755)
        os.chmod(existing, 0o755)
        RecordWriter(existing, "m2", {"seat_names": []}).close()
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "records").stat().st_mode) == 0o700
    assert stat.S_IMODE(writer.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(existing.stat().st_mode) == 0o700  # an existing folder is made private
    assert stat.S_IMODE((existing / "m2.jsonl").stat().st_mode) == 0o600
    loose = existing / "m3.jsonl"  # a record an older referee left 0644, appended to (a resumed match)
    loose.write_text('{"type":"header","match_id":"m3"}\n')
    loose.chmod(0o644)
    RecordWriter(existing, "m3").close()
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600


def test_a_record_holds_no_open_file_between_flushes(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    writers = [RecordWriter(tmp_path, f"m{i}", {"seat_names": ["a", "b"]}) for i in range(200)]
    for w in writers:
        w.write({"type": "action", "seat": 0})
        w.flush()
    assert len(os.listdir("/proc/self/fd")) - before <= 2  # 200 waiting or running records: no descriptor each
    assert all(len(read_numbered(w.path)[0]) == 2 for w in writers)


def test_a_write_cut_short_by_a_full_disk_is_undone_and_names_the_path(tiny_fs: Path) -> None:
    folder = tiny_fs / "records"
    writer = RecordWriter(folder, "m1", {"seat_names": ["a", "b"]})
    fill(tiny_fs, leave=6000)
    for i in range(400):  # about 40 KB of lines: more than is left
        writer.write({"type": "action", "seat": i % 2, "pad": "x" * 90})
    with pytest.raises(RecordsUnwritable) as got:
        writer.flush()
    assert got.value.code == REASON_UNWRITABLE
    assert str(writer.path) in got.value.message and "No space left on device" in got.value.message
    entries, cut = read_numbered(writer.path)
    assert cut == 0 and [e["type"] for _, e in entries] == ["header"]  # whole lines only: the cut write is undone
    writer.write({"type": "more"})
    writer.flush()  # nothing more is written once a write failed
    assert writer.failed is got.value
    (tiny_fs / "ballast").unlink()
    assert writer.salvage({"type": "aborted", "reason": "x"})
    assert [e["type"] for _, e in read_numbered(writer.path)[0]] == ["header", "aborted"]


def test_a_record_that_cannot_start_leaves_no_side_file(tiny_fs: Path) -> None:
    folder = tiny_fs / "records"
    folder.mkdir()
    fill(tiny_fs)
    with pytest.raises(RecordsUnwritable, match="cannot start the record .*m1.jsonl: No space left on device"):
        RecordWriter(folder, "m1", {"seat_names": ["a", "b"], "pad": "x" * 8000})
    assert not list(folder.iterdir())


# ------------------------------------------------------------------------------------------ the session


def _session(folder: Path) -> tuple[MatchSession, list[RequestProbe], asyncio.Task[None]]:
    session = MatchSession("m1", MatchConfig("indian", 2, seed="unwritable"), ["a", "b"], ["", ""],
                           TimeControl(per_move_ms=60000), records_dir=str(folder))
    probes = [RequestProbe(), RequestProbe()]
    task = session.task = asyncio.create_task(session.run())
    for seat, probe in enumerate(probes):
        session.attach(seat, probe)
    return session, probes, task


async def _play(session: MatchSession, probes: list[RequestProbe], moves: int) -> None:
    """Answer ``moves`` requests (the first legal non-drop action), as long as the match runs."""
    for _ in range(moves):
        for _ in range(200):
            await asyncio.sleep(0.005)
            if session.done.is_set() or session._current is not None:
                break
        if session.done.is_set() or session._current is None:
            return
        rid, seat, _ = session._current
        request = probes[seat].requests[-1]
        assert request.request_id == rid
        action = next(a for a in request.legal_actions if a.WhichOneof("kind") != "drop")
        session.deliver(probes[seat], rid, action)


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_a_match_whose_record_cannot_be_written_ends_aborted_with_the_reason(tiny_fs: Path, fault: str) -> None:
    folder = tiny_fs / "records"

    async def go() -> MatchSession:
        session, probes, task = _session(folder)
        await _play(session, probes, 3)
        if fault == "full":
            fill(tiny_fs)
        else:
            read_only(tiny_fs, True)  # no record file is open: the remount is not refused (EBUSY)
        await _play(session, probes, 300)  # the record's last page (tmpfs) may hold a few more moves
        await asyncio.wait_for(session.done.wait(), 10)  # the finish completes: GetResult(wait) would return
        await asyncio.gather(task, return_exceptions=True)
        return session

    session = asyncio.run(go())
    result = session.result
    assert result is not None and result.status == pb.MATCH_STATUS_ABORTED and not result.ranking
    why = "No space left on device" if fault == "full" else "Read-only file system"
    assert result.reason.startswith(f"{REASON_UNWRITABLE}: cannot write {folder / 'm1.jsonl'}: {why}")
    entries, cut = read_numbered(folder / "m1.jsonl")
    assert cut == 0 and sum(e["type"] == "action" for _, e in entries) >= 2  # whole lines; the moves flushed kept


@pytest.mark.parametrize(("code", "text"), [(errno.EDQUOT, "Disk quota exceeded"), (errno.EACCES, "Permission denied")])
def test_a_quota_or_permission_fault_ends_the_match_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 code: int, text: str) -> None:
    async def go() -> MatchSession:
        session, probes, task = _session(tmp_path)
        await _play(session, probes, 2)

        def refuse(path: Path, data: bytes, create: bool = False) -> None:
            raise OSError(code, os.strerror(code), str(path))

        monkeypatch.setattr(records_mod, "_append", refuse)
        await _play(session, probes, 3)
        await asyncio.wait_for(session.done.wait(), 10)
        await asyncio.gather(task, return_exceptions=True)
        return session

    session = asyncio.run(go())
    assert session.result is not None and session.result.status == pb.MATCH_STATUS_ABORTED
    assert session.result.reason == f"{REASON_UNWRITABLE}: cannot write {tmp_path / 'm1.jsonl'}: {text}"


def test_a_match_whose_last_flush_fails_still_finishes_its_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The close at the finish is what used to raise before the match was marked done (GetResult(wait) hung)."""
    async def go() -> MatchSession:
        session, probes, task = _session(tmp_path)
        await _play(session, probes, 2)
        monkeypatch.setattr(records_mod, "_append", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")))
        session._record({"type": "note"})  # a line waiting for its flush
        session.abort("test over")
        await asyncio.wait_for(session.done.wait(), 5)
        await asyncio.gather(task, return_exceptions=True)
        return session

    session = asyncio.run(go())
    assert session.result is not None and session.result.reason.startswith(f"{REASON_UNWRITABLE}: cannot write ")


# ------------------------------------------------------------------------------------------ the server


def _health(channel: grpc.Channel) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    return int(stub.Check(health_pb2.HealthCheckRequest(service="rummy.referee.v1.RefereeService"), timeout=5).status)


def _create(stub: pb_grpc.RefereeServiceStub, deals: int = 20) -> pb.CreateMatchResponse:
    return stub.CreateMatch(pb.CreateMatchRequest(variant="indian", seats=[pb.SeatSpec(name="a"), pb.SeatSpec(name="b")],
                                                  options={"format": f"deals-{deals}"}), timeout=10)


async def _play_match(address: str, match_id: str, tokens: list[str]) -> pb.MatchResult:
    """Two random SDK bots play the match; GetResult(wait) must return within 30 s whatever becomes of it."""
    bots = [PolicyBot("random", lambda variant: random_policy, seed=i) for i in range(2)]
    players = [asyncio.ensure_future(run_bot(b, address, match_id=match_id, token=t)) for b, t in zip(bots, tokens, strict=True)]
    async with grpc.aio.insecure_channel(address) as channel:
        result = (await pb_grpc.RefereeServiceStub(channel).GetResult(pb.GetResultRequest(match_id=match_id, wait=True), timeout=30)).result
    await asyncio.gather(*players, return_exceptions=True)
    return result


def test_a_referee_on_a_folder_that_fills_up_ends_every_match_refuses_new_ones_and_recovers(
        tiny_fs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_mod, "RECORDS_PROBE_S", 0.2)
    folder = tiny_fs / "records"
    with EmbeddedReferee(records_dir=folder, default_time=FAST) as ref, grpc.insecure_channel(ref.address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        assert _health(channel) == health_pb2.HealthCheckResponse.SERVING
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        fill(tiny_fs, leave=60_000)  # room for a match or two of 20 deals, not for six
        created = [_create(stub) for _ in range(6)]

        async def all_six() -> list[pb.MatchResult]:
            return await asyncio.gather(*(_play_match(ref.address, c.match_id, list(c.seat_tokens)) for c in created))

        results = asyncio.run(all_six())  # every GetResult(wait) returned
        ended = [r for r in results if r.status == pb.MATCH_STATUS_ABORTED]
        assert ended, [r.reason for r in results]
        for r in ended:
            assert r.reason.startswith(f"{REASON_UNWRITABLE}: cannot write {folder}/"), r.reason
            assert "No space left on device" in r.reason
        for r in results:
            assert r.status in (pb.MATCH_STATUS_FINISHED, pb.MATCH_STATUS_ABORTED)
            assert read_numbered(folder / f"{r.match_id}.jsonl")[1] == 0  # no record ends in a cut line
        assert _health(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
        with pytest.raises(grpc.RpcError) as refused:
            _create(stub)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert (REASON_KEY, REASON_UNWRITABLE) in refused.value.trailing_metadata()
        assert "No space left on device" in refused.value.details()

        (tiny_fs / "ballast").unlink()  # an operator frees space: the probe sees it
        for _ in range(50):
            if _health(channel) == health_pb2.HealthCheckResponse.SERVING:
                break
            asyncio.run(asyncio.sleep(0.1))
        assert _health(channel) == health_pb2.HealthCheckResponse.SERVING
        again = _create(stub, deals=1)
        assert asyncio.run(_play_match(ref.address, again.match_id, list(again.seat_tokens))).status == pb.MATCH_STATUS_FINISHED


def test_a_read_only_records_folder_turns_health_off_and_refuses_matches_until_it_is_writable(
        tiny_fs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_mod, "RECORDS_PROBE_S", 0.2)
    folder = tiny_fs / "records"
    with EmbeddedReferee(records_dir=folder, default_time=FAST) as ref, grpc.insecure_channel(ref.address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        waiting = _create(stub)  # a waiting match: its record holds no open file, so the remount goes through
        read_only(tiny_fs, True)
        with pytest.raises(grpc.RpcError) as refused:
            _create(stub)  # refused at once: the header cannot be written (or the probe already saw it)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert dict(refused.value.trailing_metadata())[REASON_KEY] == REASON_UNWRITABLE
        assert "Read-only file system" in refused.value.details()
        assert _health(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
        result = asyncio.run(_play_match(ref.address, waiting.match_id, list(waiting.seat_tokens)))
        assert result.status == pb.MATCH_STATUS_ABORTED and result.reason.startswith(REASON_UNWRITABLE)
        read_only(tiny_fs, False)
        for _ in range(50):
            if _health(channel) == health_pb2.HealthCheckResponse.SERVING:
                break
            asyncio.run(asyncio.sleep(0.1))
        assert _health(channel) == health_pb2.HealthCheckResponse.SERVING
        _create(stub, deals=1)


def test_a_referee_started_on_a_read_only_folder_is_not_serving(tiny_fs: Path) -> None:
    folder = tiny_fs / "records"
    folder.mkdir()
    read_only(tiny_fs, True)
    with EmbeddedReferee(records_dir=folder, default_time=FAST) as ref, grpc.insecure_channel(ref.address) as channel:
        assert _health(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
        with pytest.raises(grpc.RpcError) as refused:
            _create(pb_grpc.RefereeServiceStub(channel))
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_waiting_matches_hold_no_descriptor_so_the_live_match_limit_fits_the_descriptor_limit(tmp_path: Path) -> None:
    """The default --max-live-matches (1000) used to need one open record each: more than a 1,024 limit."""
    with EmbeddedReferee(records_dir=tmp_path / "records", default_time=TimeControl(connect_ms=60000)) as ref, \
            grpc.insecure_channel(ref.address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        _create(stub)  # the first opens what a referee keeps open anyway (sockets, epoll)
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(250):
            _create(stub)
        assert len(os.listdir("/proc/self/fd")) - before < 10
        assert len(list((tmp_path / "records").glob("*.jsonl"))) == 251
