"""The replay timeline (referee.tools.timeline): each perspective is shown what the referee showed it, and nothing more."""

from __future__ import annotations

import random

import pytest

from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.policies import greedy_policy
from referee.rules.variants import all_variants
from referee.service.replay import ReplayMismatch
from referee.tools.timeline import (
    EVERYTHING,
    SPECTATOR,
    HiddenPerspective,
    TimelineBuilder,
    build_timeline,
    frame_json,
    hand_json,
    parse_perspective,
    timeline_json,
)

from .helpers import card_codes, cut_before_result, play_record, timeline_with_knowledge

VARIANTS = [v.name for v in all_variants()]


@pytest.mark.parametrize("name", VARIANTS)
def test_no_frame_names_a_card_its_seat_or_a_spectator_could_not_know(name):
    """COM-6 on the page's data: every card a seat's frame names (in cards or in event texts) is one that seat
    held, was passed, or saw face up, by the referee's own knowledge tracker; a spectator's, one every seat knew."""
    greedy, mixed = play_record(name, seed="hidden")[1], play_record(name, seed="hidden", greedy_seats=(0,))[1]
    for entries in (greedy, mixed):
        _assert_no_frame_leaks(name, entries)


def _assert_no_frame_leaks(name, entries):
    timeline, known = timeline_with_knowledge(entries)
    assert len(timeline.frames) > 3
    for frame in timeline.frames:
        everyone = set.intersection(*known[frame.index])
        for seat in range(timeline.seats):
            leaked = card_codes(frame_json(frame, seat)) - known[frame.index][seat]
            assert not leaked, f"{name} frame {frame.index} ({frame.step}) shows seat {seat} {sorted(leaked)}"
        leaked = card_codes(frame_json(frame, SPECTATOR)) - everyone
        assert not leaked, f"{name} frame {frame.index} shows the spectator {sorted(leaked)}"


@pytest.mark.parametrize("name", ["indian", "skarney", "iceberg"])
def test_a_seat_frame_holds_the_very_view_its_decision_request_carried(name):
    entries: list[dict] = []
    asked: list[tuple[int, object]] = []
    policy, rng = greedy_policy(name), random.Random(5)
    match = Match(MatchConfig(variant=name, seats=4 if name == "skarney" else 2, seed="asked", max_hands=1,
                              max_turns_per_hand=60), on_record=entries.append)

    def choose(seat, view, legal):
        asked.append((seat, view))
        return policy(view, legal, rng)

    play_seats(match, choose)
    timeline = build_timeline(entries)
    shown = [(f.to_act[0], f.views[f.to_act[0]]) for f in timeline.frames if f.to_act is not None]
    assert shown == asked


def test_everything_and_each_seat_are_refused_until_the_record_has_its_result():
    _, entries = play_record("fortune", seed="early")
    running = build_timeline(cut_before_result(entries))
    assert not running.complete
    with pytest.raises(HiddenPerspective):
        timeline_json(running, EVERYTHING)
    with pytest.raises(HiddenPerspective):
        hand_json(running, EVERYTHING, 1)
    with pytest.raises(HiddenPerspective, match="once the match is over"):
        hand_json(running, 0, 1)  # a running seat's hand is nobody else's business
    assert hand_json(running, SPECTATOR, 1)["frames"]
    finished = build_timeline(entries)
    first = hand_json(finished, EVERYTHING, 1)["frames"][0]
    assert all(len(h) == 11 for h in first["hands"]), "everything shows every hand once the match is over"
    assert first["stock"]


def test_a_seat_sees_its_own_hand_and_only_sizes_of_the_others_until_the_hand_ends():
    _, entries = play_record("500-rum", seed="sizes")
    timeline = build_timeline(entries)
    frames = hand_json(timeline, 1, 1)["frames"]
    assert frames[0]["hands"][0] is None and len(frames[0]["hands"][1]) == 13
    assert frames[0]["table"]["hand_sizes"] == [13, 13]
    end = next(f for f in frames if f["step"] == "hand_end")
    assert all(h is not None for h in end["hands"]), "a hand's end reveals every hand (HAND_REVEALED is public)"
    assert end["score"]["points"] == next(e for e in entries if e["type"] == "hand_score")["points"]


def test_the_index_and_the_last_frame_carry_the_recorded_scores_and_result():
    _, entries = play_record("arlington", seed="scores")
    doc = timeline_json(build_timeline(entries), SPECTATOR)
    recorded = [e for e in entries if e["type"] == "hand_score"]
    assert [h["score"]["points"] for h in doc["hands"]] == [e["points"] for e in recorded]
    result = next(e for e in entries if e["type"] == "result")
    assert doc["result"]["totals"] == result["totals"] and doc["complete"]


def test_a_record_followed_line_by_line_gives_the_frames_of_the_whole_record():
    """The live page follows a record as it is written: entry by entry, with no deck known in advance."""
    _, entries = play_record("persian", seed="live")
    builder = TimelineBuilder()
    followed = [frame for e in entries for frame in builder.feed(e)]
    whole = build_timeline(entries).frames
    assert [frame_json(f, SPECTATOR) for f in followed[:-1]] == [frame_json(f, SPECTATOR) for f in whole[:-1]]
    assert builder.timeline().frames[-1].over and builder.complete


def test_a_record_that_does_not_reproduce_fails_loudly():
    _, entries = play_record("indian", seed="tampered")
    for e in entries:
        if e["type"] == "hand_score":
            e["points"] = [p + 1 for p in e["points"]]
    with pytest.raises(ReplayMismatch):
        build_timeline(entries)


def test_a_perspective_is_a_seat_of_the_match_the_spectator_or_everything():
    assert parse_perspective("1", 2) == 1 and parse_perspective(None, 2) == SPECTATOR
    assert parse_perspective("ALL", 2) == EVERYTHING
    for bad in ("2", "-1", "seat0", "../x"):
        with pytest.raises(HiddenPerspective):
            parse_perspective(bad, 2)
