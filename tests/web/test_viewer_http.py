"""The viewer's HTTP side (referee.tools.viewer): what it serves, what it refuses, and `referee view RECORD`."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from .helpers import cut_before_result, play_record, write_record


def get(url):
    """(status, headers, body as JSON or text)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            status, headers, raw = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        status, headers, raw = err.code, err.headers, err.read()
    text = raw.decode()
    try:
        return status, headers, json.loads(text)
    except json.JSONDecodeError:
        return status, headers, text


@pytest.fixture(scope="module")
def running_record(records_dir):
    """A record cut off mid-match, as a running match's record stands."""
    _, entries = play_record("fortune", seed="running")
    write_record(records_dir, "fortune-running", cut_before_result(entries))
    return "fortune-running"


def test_the_list_names_every_record_with_its_variant_and_state(viewer, running_record):
    status, _, body = get(f"{viewer.url}/api/records")
    assert status == 200
    by_id = {r["match_id"]: r for r in body["records"]}
    assert by_id["skarney-web"]["variant"] == "skarney" and by_id["skarney-web"]["complete"]
    assert by_id["skarney-web"]["seat_names"] == ["greedy-0", "greedy-1", "greedy-2", "greedy-3"]
    assert not by_id[running_record]["complete"]


def test_a_running_match_is_shown_only_as_a_spectator_sees_it(viewer, running_record):
    base = f"{viewer.url}/api/records/{running_record}"
    assert get(f"{base}?seat=spectator")[0] == 200
    for seat in ("0", "1", "all"):
        status, _, body = get(f"{base}/hands/1?seat={seat}")
        assert status == 403 and "once the match is over" in body["error"] and body["reason"] == "HIDDEN_WHILE_RUNNING"
    assert get(f"{viewer.url}/api/records/fortune-web/hands/1?seat=all")[0] == 200


def test_a_hand_is_served_a_perspective_at_a_time(viewer):
    status, _, body = get(f"{viewer.url}/api/records/indian-web?seat=1")
    assert status == 200 and body["perspective"] == 1 and "frames" not in body
    first = body["hands"][0]
    status, _, hand = get(f"{viewer.url}/api/records/indian-web/hands/{first['hand']}?seat=1")
    assert [f["index"] for f in hand["frames"]] == list(range(first["first"], first["last"] + 1))
    assert get(f"{viewer.url}/api/records/indian-web/hands/99?seat=1")[0] == 404
    assert get(f"{viewer.url}/api/records/indian-web?seat=7")[0] == 400


@pytest.mark.parametrize("path", ["/api/records/nope", "/static/timeline.py", "/static/nope.js", "/replay/x/y"])
def test_anything_but_a_record_or_a_viewer_file_is_not_found(viewer, path):
    status, _, body = get(viewer.url + path)
    assert status == 404 and body["reason"] in ("NO_RECORD", "NOT_FOUND")


@pytest.mark.parametrize(("path", "reason"), [
    ("/api/records/..%2F..%2Fetc%2Fpasswd", "BAD_MATCH_ID"), ("/static/..%2Fviewer.py", "BAD_NAME"),
    ("/api/records/%C2%B2", "BAD_MATCH_ID"), ("/replay/..%2F..%2Fetc", "BAD_MATCH_ID"),
    ("/live/" + "a" * 200, "BAD_MATCH_ID"), ("/api/live/%00/frames", "BAD_MATCH_ID"),
    ("/static/" + "a" * 5000 + ".js", "BAD_NAME"), ("/api/records/indian-web?seat=%C2%B2", "BAD_PERSPECTIVE"),
    ("/api/records/indian-web?seat=" + "9" * 4000, "BAD_PERSPECTIVE"), ("/api/records/indian-web?seat=-1", "BAD_PERSPECTIVE"),
    ("/api/records/indian-web/hands/x", "BAD_HAND"), ("/api/records/indian-web/hands/%C2%B2", "BAD_HAND"),
    ("/api/records/indian-web/hands/99999999999", "BAD_HAND"), ("/api/records?limit=0", "BAD_LIMIT"),
    ("/api/records?limit=-3", "BAD_LIMIT"), ("/api/records?limit=99999999999", "BAD_LIMIT"),
    ("/api/records?limit=%C2%B2", "BAD_LIMIT"), ("/api/records?after=nope", "BAD_AFTER"),
    ("/api/records?after=1~..%2Fetc", "BAD_AFTER"),
])
def test_malformed_input_is_a_400_naming_its_reason(viewer, path, reason):
    status, headers, body = get(viewer.url + path)
    assert status == 400 and headers["Content-Type"].startswith("application/json"), (status, body)
    assert body["reason"] == reason and body["error"]


def test_pages_load_nothing_from_elsewhere(viewer):
    status, headers, html = get(f"{viewer.url}/replay/indian-web")
    assert status == 200 and "default-src 'self'" in headers["Content-Security-Policy"]
    assert "http://" not in html and "https://" not in html
    status, headers, js = get(f"{viewer.url}/static/table.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript") and "export function drawFrame" in js


def test_a_record_that_does_not_replay_is_refused_with_the_reason(viewer, records_dir):
    _, entries = play_record("indian", seed="broken")
    for e in entries:
        if e["type"] == "hand_score":
            e["points"] = [p + 1 for p in e["points"]]
    write_record(records_dir, "indian-broken", entries)
    status, _, body = get(f"{viewer.url}/api/records/indian-broken")
    assert status == 422 and "does not replay" in body["error"] and body["reason"] == "DOES_NOT_REPLAY"


def test_referee_view_serves_one_record_and_prints_its_address(records_dir):
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "view", str(records_dir / "iceberg-web.jsonl"),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = json.loads(proc.stdout.readline())["url"]
        assert url.endswith("/replay/iceberg-web")
        assert get(url)[0] == 200
        root = url.rsplit("/replay/", 1)[0]
        assert [r["match_id"] for r in get(f"{root}/api/records")[2]["records"]] == ["iceberg-web"]
        assert get(f"{root}/api/records/iceberg-web?seat=0")[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_referee_view_refuses_a_missing_record(tmp_path):
    done = subprocess.run([sys.executable, "-m", "referee.tools.cli", "view", str(tmp_path / "none.jsonl")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "no record file" in done.stderr
