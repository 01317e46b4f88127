"""``referee serve --http`` runs the browser viewer in a process of its own at a lower CPU priority: web clients
never share the event loop (or the interpreter lock) that runs the matches, and under load the kernel gives the
matches the larger share of the CPU. The viewer reads only the records folder; it ends with the referee, however
the referee ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import grpc
import psutil
import pytest

from referee.tools.viewer_process import VIEWER_NICE
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.fixture()
def served(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--http", "0", "--records",
                             str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = json.loads(proc.stdout.readline())["address"]
        url = json.loads(proc.stdout.readline())["url"].rstrip("/")
        yield proc, address, url
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)


def _viewer_pid(referee_pid: int) -> int:
    for child in psutil.Process(referee_pid).children():
        if "referee.tools.viewer_process" in child.cmdline():
            return child.pid
    raise AssertionError("no viewer process among the referee's children")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_the_viewer_is_a_child_process_at_a_lower_priority_that_lists_a_running_match(served) -> None:
    proc, address, url = served
    viewer = _viewer_pid(proc.pid)
    assert psutil.Process(viewer).nice() >= psutil.Process(proc.pid).nice() + VIEWER_NICE
    with grpc.insecure_channel(address) as channel:
        created = pb_grpc.RefereeServiceStub(channel).CreateMatch(pb.CreateMatchRequest(
            variant="fortune", seats=[pb.SeatSpec(name="north"), pb.SeatSpec(name="south")], max_hands=1))
    live = _get(f"{url}/api/live")["live"]
    assert [(m["match_id"], m["seat_names"], m["variant"]) for m in live] == [(created.match_id, ["north", "south"],
                                                                               "fortune")]
    with pytest.raises(urllib.error.HTTPError) as hidden:  # a running match is shown as the spectator sees it only
        _get(f"{url}/api/records/{created.match_id}?seat=0")
    assert hidden.value.code == 403
    assert _get(f"{url}/api/records")["total"] == 1


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_the_viewer_ends_with_the_referee_however_it_ends(served, how) -> None:
    proc, _, url = served
    viewer = _viewer_pid(proc.pid)
    os.kill(proc.pid, how)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _alive(viewer):
        assert time.monotonic() < deadline, "the viewer outlived its referee"
        time.sleep(0.05)


def test_a_viewer_port_in_use_stops_the_referee_with_one_line(tmp_path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--http", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "the viewer did not start" in done.stderr and "Traceback" not in done.stderr
