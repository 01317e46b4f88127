"""The viewer in headless Chromium: a served replay of every variant shows the table the record holds, the keys
step through it, a seat's page never holds another seat's hidden cards, and the live page follows a match."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
import urllib.request

import grpc
import pytest

from referee.service.records import read_record
from referee.tools.timeline import SPECTATOR, build_timeline, frame_json

from .conftest import ARTIFACTS, VARIANTS
from .helpers import card_codes, timeline_with_knowledge

pytestmark = pytest.mark.timeout(120)


def open_replay(page, viewer, match_id, seat="spectator", frame=0):
    page.goto(f"{viewer.url}/replay/{match_id}?seat={seat}&frame={frame}")
    return wait_for_frame(page, frame, seat)


def wait_for_frame(page, frame, seat=None):
    selector = f'#table[data-frame="{frame}"]' + (f'[data-perspective="{seat}"]' if seat is not None else "")
    page.wait_for_selector(selector, timeout=10_000)
    return page.locator("#table")


def cards_in(page, selector):
    return page.eval_on_selector_all(f"{selector} [data-card]", "els => els.map(e => e.dataset.card)")


def busiest_frame(timeline):
    """The move of hand 1 with the most melds on the table (or the hand's end, where Indian shows its declaration)."""
    hand = [f for f in timeline.frames if f.hand == 1]
    return max(hand, key=lambda f: (len(f.views[0].melds), f.step != "hand_end", f.index))


@pytest.mark.parametrize("name", VARIANTS)
def test_a_served_replay_shows_the_melds_pile_stock_and_scores_the_record_holds(page, viewer, records_dir, name):
    match_id = f"{name}-web"
    timeline = build_timeline(read_record(records_dir / f"{match_id}.jsonl"))
    frame = busiest_frame(timeline)
    want = frame_json(frame, SPECTATOR)
    open_replay(page, viewer, match_id, frame=frame.index)
    melds = page.locator("[data-meld]")
    assert melds.count() == len(want["table"]["melds"])
    for i, meld in enumerate(want["table"]["melds"]):
        assert cards_in(page, f'[data-meld="{meld["id"]}"]') == [c["card"] for c in meld["cards"]], f"meld {i}"
    pile = page.locator(".pile")
    assert pile.get_attribute("data-view") == want["table"]["pile"]
    assert cards_in(page, ".pile") == want["table"]["discard_pile"]
    assert page.locator(".stock").get_attribute("data-count") == str(want["table"]["stock_size"])
    assert f"stock: {want['table']['stock_size']}" in page.locator(".stock").inner_text()
    totals = page.eval_on_selector_all(".scores .totals [data-total-seat]", "els => els.map(e => Number(e.textContent))")
    assert totals == want["totals"]
    if frame.step != "hand_end":
        assert page.locator(".hand.hidden").count() == timeline.seats, "a spectator sees no hand during play"
    page.keyboard.press("End")
    wait_for_frame(page, len(timeline.frames) - 1)
    result = timeline.frames[-1].result
    totals = page.eval_on_selector_all(".scores .totals [data-total-seat]", "els => els.map(e => Number(e.textContent))")
    assert totals == result["totals"] and result["reason"] in page.locator(".result").inner_text()


def test_arrow_keys_step_moves_and_hands_and_number_keys_pick_a_seat(page, viewer, records_dir):
    timeline = build_timeline(read_record(records_dir / "500-rum-web.jsonl"))
    second = next(f.index for f in timeline.frames if f.hand == 2)
    open_replay(page, viewer, "500-rum-web")
    for key, frame in [("ArrowRight", 1), ("ArrowRight", 2), ("ArrowLeft", 1), ("ArrowDown", second),
                       ("ArrowUp", 0), ("PageDown", second), ("ArrowLeft", second - 1), ("PageUp", 0)]:
        page.keyboard.press(key)
        wait_for_frame(page, frame)
    page.keyboard.press("1")
    wait_for_frame(page, 0, seat=1)
    assert cards_in(page, '.hand[data-seat="1"]') == frame_json(timeline.frames[0], 1)["hands"][1]
    assert cards_in(page, '.hand[data-seat="0"]') == [], "seat 1 does not see seat 0's hand"
    page.keyboard.press("a")  # the match is over: everything may be shown
    wait_for_frame(page, 0, seat="all")
    assert len(cards_in(page, '.hand[data-seat="0"]')) == 13
    page.keyboard.press("s")
    wait_for_frame(page, 0, seat="spectator")
    assert cards_in(page, ".hand") == []


@pytest.mark.parametrize("name, seat", [("iceberg", 0), ("skarney", 1)])
def test_a_seat_page_never_holds_another_seats_hidden_cards(page, viewer, records_dir, name, seat):
    """Stepping through every move as one seat: neither the page nor the data it fetched names a card that seat
    could not know (the referee's knowledge tracker over the true state); the others' hands show face down."""
    match_id = f"{name}-web"
    timeline, known = timeline_with_knowledge(read_record(records_dir / f"{match_id}.jsonl"))
    fetched: list[dict] = []
    page.on("response", lambda r: fetched.append(r.json()) if "/hands/" in r.url and r.ok else None)
    open_replay(page, viewer, match_id, seat=seat)
    for frame in timeline.frames:
        if frame.index:
            page.keyboard.press("ArrowRight")
            wait_for_frame(page, frame.index, seat)
        if frame.over:
            break
        others = {c for s, v in enumerate(frame.views) if s != seat for c in map(str, v.hand)}
        hidden = others - known[frame.index][seat]
        on_page = card_codes(page.content())
        assert not on_page & hidden, f"frame {frame.index}: seat {seat}'s page shows {sorted(on_page & hidden)}"
        assert on_page <= known[frame.index][seat], f"frame {frame.index}: {sorted(on_page - known[frame.index][seat])}"
        if frame.step != "hand_end":
            face_down = page.locator(f'.hand.hidden:not([data-seat="{seat}"])').count()
            assert face_down == timeline.seats - 1
    assert fetched, "the page fetched its frames"
    for doc in fetched:
        for f in doc["frames"]:
            assert card_codes(f) <= known[f["index"]][seat], f"the page was sent a hidden card at frame {f['index']}"


def test_a_screenshot_of_one_hand_is_saved_for_review(page, viewer, records_dir):
    timeline = build_timeline(read_record(records_dir / "500-rum-web.jsonl"))
    open_replay(page, viewer, "500-rum-web", seat=0, frame=busiest_frame(timeline).index)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "hand.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    print(f"screenshot: {shot}")


# ---------------------------------------------------------------- the live page, against `referee serve --http`


@pytest.fixture()
def served_referee(tmp_path):
    """``referee serve --port 0 --http 0`` as a user starts it; yields (grpc address, viewer url, records dir)."""
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--http", "0",
                             "--records", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = json.loads(proc.stdout.readline())["address"]
        url = json.loads(proc.stdout.readline())["url"].rstrip("/")
        yield address, url, tmp_path
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def play_slowly(address, variant, seconds_per_move=0.05):
    """Create a match and play it with two greedy bots that think a little, on a background thread."""
    from referee.rules.policies import greedy_policy
    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
    from rummybot.bots.base import PolicyBot
    from rummybot.sdk import run_bot

    class Thinking(PolicyBot):
        def decide(self, view, legal, request):
            time.sleep(seconds_per_move)
            return super().decide(view, legal, request)

    with grpc.insecure_channel(address) as ch:
        grpc.channel_ready_future(ch).result(timeout=10)
        created = pb_grpc.RefereeServiceStub(ch).CreateMatch(pb.CreateMatchRequest(
            variant=variant, seats=[pb.SeatSpec(name="north"), pb.SeatSpec(name="south")], seed="live", max_hands=1))

    async def both():
        bots = [Thinking(n, greedy_policy, seed=i) for i, n in enumerate(("north", "south"))]
        return await asyncio.gather(*(run_bot(b, address, match_id=created.match_id, token=t)
                                      for b, t in zip(bots, created.seat_tokens, strict=True)))

    results: list = []
    thread = threading.Thread(target=lambda: results.extend(asyncio.run(both())), daemon=True)
    thread.start()
    return created.match_id, thread, results


def test_the_live_page_follows_a_running_match_with_public_information_only(page, served_referee):
    address, url, records = served_referee
    match_id, players, results = play_slowly(address, "fortune")
    page.goto(f"{url}/live/{match_id}")
    page.wait_for_selector("#table[data-frame]", timeout=10_000)
    assert page.get_attribute("#table", "data-ended") is None, "the page joined while the match was running"
    assert page.locator(".hand.hidden").count() == 2 and cards_in(page, ".hand") == [], "no hand is shown during play"
    first = int(page.get_attribute("#table", "data-frame"))
    page.wait_for_selector("#table[data-ended]", timeout=60_000)
    assert int(page.get_attribute("#table", "data-frame")) > first, "the page moved on with the match"
    players.join(30)
    entries = read_record(records / f"{match_id}.jsonl")
    result = next(e for e in entries if e["type"] == "result")
    totals = page.eval_on_selector_all(".scores .totals [data-total-seat]", "els => els.map(e => Number(e.textContent))")
    assert totals == result["totals"]
    assert page.locator("#replay-link").is_visible()
    timeline, known = timeline_with_knowledge(entries)  # now over: the stream sends the match, its last frame, the end
    with urllib.request.urlopen(f"{url}/api/live/{match_id}/frames", timeout=30) as stream:
        sent = [json.loads(line[6:]) for line in stream.read().decode().splitlines() if line.startswith("data: ")]
    frames = [f for f in sent if "index" in f]
    assert sent[0]["frame_count"] == len(timeline.frames) and [f["index"] for f in frames] == [len(timeline.frames) - 1]
    for f in frames:
        everyone = set.intersection(*known[f["index"]])
        assert card_codes(f) <= everyone, f"the live stream sent a card not every seat knew at frame {f['index']}"
        if f["step"] != "hand_end":
            assert f["hands"] == [None, None]
