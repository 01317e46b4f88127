"""Certified replays: ``referee replay --verify`` says in one line, and by its exit code, whether a record
reproduces, where it does not (line and field), or that it is incomplete or unreadable; plain ``referee replay``
no longer exits 0 on half a match nor ends in a traceback."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.variants import all_variants
from referee.service.records import read_numbered
from referee.service.replay import EXIT_CODES, verify, verify_file

REFEREE = str(Path(sys.executable).with_name("referee"))


def record_match(path: Path, variant: str = "fortune", seats: int = 3, seed: str = "verify", hands: int = 2,
                 mishaps: bool = False) -> list[dict]:
    """Play a real match in process, writing its record as the server does; ``mishaps`` adds missed deadlines,
    the autopilot of a forfeited seat and a forfeit mid-hand."""
    entries: list[dict] = [{"type": "header", "match_id": "m", "seat_names": [f"s{i}" for i in range(seats)]}]
    match = Match(MatchConfig(variant=variant, seats=seats, seed=seed, max_hands=hands, max_turns_per_hand=80),
                  on_record=entries.append)
    rng = random.Random(3)
    if mishaps:
        steps = 0
        while (d := match.pending()) is not None:
            steps += 1
            if steps == 40:
                match.forfeit(d.seat, "disconnected")
            elif match.on_autopilot(d.seat):
                match.autoplay(d.seat)
            elif rng.random() < 0.15:
                match.timeout(d.seat)
            else:
                match.submit(d.seat, rng.choice(match.legal_actions(d.seat)))
    else:
        play_seats(match, lambda seat, view, legal: rng.choice(legal))
    write(path, entries)
    return entries


def write(path: Path, entries: list[dict]) -> None:
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries))


def cli(*args: str) -> tuple[int, str]:
    """The real command line; returns its exit code and everything it printed."""
    p = subprocess.run([REFEREE, "replay", *args], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, p.stdout + p.stderr


def line_of(entries: list[dict], pick) -> int:
    """The 1-based line number of the first entry ``pick`` accepts."""
    return next(i for i, e in enumerate(entries, start=1) if pick(e))


@pytest.fixture()
def recorded(tmp_path):
    path = tmp_path / "match.jsonl"
    return path, record_match(path)


@pytest.mark.parametrize("name", [v.name for v in all_variants()])
def test_a_recorded_match_of_every_variant_reproduces(tmp_path, name):
    v = next(x for x in all_variants() if x.name == name)
    path = tmp_path / "m.jsonl"
    record_match(path, name, 4 if v.team_play else v.min_seats, hands=2, mishaps=name in ("indian", "iceberg", "skarney"))
    verdict = verify_file(path)
    assert verdict.outcome == "reproduces" and verdict.exit_code == 0, str(verdict)


def test_an_intact_record_exits_0_and_says_it_reproduces(recorded):
    path, _ = recorded
    code, out = cli("--verify", str(path))
    assert code == 0 and out.startswith("reproduces: fortune, 2 hands") and out.count("\n") == 1
    code, out = cli(str(path))  # plain replay as before: the scores as JSON
    assert code == 0 and json.loads(out)["complete"] is True


def test_timeouts_autopilot_and_forfeits_reproduce_and_a_changed_default_move_does_not(tmp_path):
    path = tmp_path / "m.jsonl"
    entries = record_match(path, mishaps=True)
    assert any(e["type"] == "event" and e["kind"] == "TIMED_OUT" for e in entries)
    assert verify_file(path).exit_code == 0
    timed = line_of(entries, lambda e: e["type"] == "action" and e["timed_out"] and e["action"]["kind"] == "discard")
    entries[timed - 1]["timed_out"] = False  # a missed deadline passed off as the seat's own move
    write(path, entries)
    verdict = verify_file(path)
    assert verdict.outcome == "does not reproduce" and (verdict.line, verdict.field) == (timed, "timed_out"), str(verdict)


@pytest.mark.parametrize("cut_mid_line", [False, True])
def test_a_record_cut_in_half_is_incomplete(recorded, cut_mid_line):
    path, _ = recorded
    text = path.read_text()
    half = text[:len(text) // 2] if cut_mid_line else "".join(text.splitlines(keepends=True)[:text.count("\n") // 2])
    path.write_text(half)
    code, out = cli("--verify", str(path))
    assert code == EXIT_CODES["incomplete"] == 4 and out.startswith("incomplete: ") and "no result" in out
    code, out = cli(str(path))
    assert code == 4 and "incomplete: " in out


def test_a_line_that_is_not_json_is_unreadable_and_named(recorded):
    path, _ = recorded
    lines = path.read_text().splitlines(keepends=True)
    lines[9] = '{"type": "action", "seat": 1,\n'
    path.write_text("".join(lines))
    for args in (["--verify", str(path)], [str(path)]):
        code, out = cli(*args)
        assert code == EXIT_CODES["unreadable"] == 5 and out.startswith("unreadable: line 10: ") and "not JSON" in out


def test_a_moved_deck_card_does_not_reproduce_and_names_the_line(recorded):
    path, entries = recorded
    hand = line_of(entries, lambda e: e["type"] == "hand")
    deck = entries[hand - 1]["deck"]
    deck.insert(7, deck.pop(0))
    write(path, entries)
    code, out = cli("--verify", str(path))
    assert code == EXIT_CODES["does not reproduce"] == 3
    assert out.startswith(f"does not reproduce: line {hand}, field deck[0]: ") and "the deal of hand 1" in out
    code, out = cli(str(path))  # plain replay: it says so and where, not a bare CARD_NOT_IN_HAND
    assert code == 3 and out.startswith("does not reproduce: line ")


def test_an_events_seat_edited_does_not_reproduce_and_names_the_line_and_field(recorded):
    path, entries = recorded
    at = line_of(entries, lambda e: e["type"] == "event" and e["kind"] == "DISCARDED")
    entries[at - 1]["seat"] = (entries[at - 1]["seat"] + 1) % 3
    write(path, entries)
    code, out = cli("--verify", str(path))
    assert code == 3 and out.startswith(f"does not reproduce: line {at}, field seat: ") and "DISCARDED event" in out


def test_an_events_audience_edited_does_not_reproduce(recorded):
    path, entries = recorded
    at = line_of(entries, lambda e: e["type"] == "event" and e["to"] is not None)
    entries[at - 1]["to"] = None  # a private draw made public
    write(path, entries)
    verdict = verify_file(path)
    assert verdict.exit_code == 3 and (verdict.line, verdict.field) == (at, "to"), str(verdict)


def test_an_edited_score_does_not_reproduce(recorded):
    path, entries = recorded
    at = line_of(entries, lambda e: e["type"] == "hand_score")
    entries[at - 1]["points"][0] += 1
    write(path, entries)
    code, out = cli("--verify", str(path))
    assert code == 3 and out.startswith(f"does not reproduce: line {at}, field points[0]: ") and "score of hand 1" in out


def test_another_rules_hash_is_named(recorded):
    path, entries = recorded
    head = line_of(entries, lambda e: e["type"] == "match")
    entries[head - 1]["rules_hash"] = "sha256:" + "0" * 64
    write(path, entries)
    code, out = cli("--verify", str(path))
    assert code == EXIT_CODES["rules changed"] == 6
    assert out.startswith(f"rules changed: line {head}, field rules_hash: ") and "still reproduce" in out


def test_the_rules_hash_covers_the_normalised_options():
    def rules_hash(options):
        return Match(MatchConfig(variant="fortune", seats=2, options=options)).rules_hash

    assert rules_hash({}) == rules_hash({"max_set": "4"}) == rules_hash({"max_set": " 4 "})
    assert rules_hash({}) != rules_hash({"max_set": "unlimited"})


def test_an_older_record_without_a_rules_hash_or_the_newer_events_still_replays_and_verifies(tmp_path):
    path = tmp_path / "old.jsonl"
    entries = record_match(path, mishaps=True)
    newer = {"HAND_STARTED", "HAND_REVEALED", "HAND_ENDED", "MATCH_ENDED", "TIMED_OUT", "FORFEITED"}
    old = [e for e in entries if not (e["type"] == "event" and e["kind"] in newer)]
    for e in old:
        e.pop("rules_hash", None)
    write(path, old)
    verdict = verify_file(path)
    assert verdict.exit_code == 0 and "older record" in verdict.detail, str(verdict)
    code, out = cli(str(path))
    assert code == 0 and json.loads(out)["complete"] is True


def test_an_aborted_match_is_incomplete_and_lines_after_the_result_do_not_reproduce(recorded):
    path, _ = recorded
    numbered, _ = read_numbered(path)
    at = [n for n, e in numbered if e["type"] == "action"][5]  # between two moves, as the session aborts
    aborted = [*numbered[:at - 1], (at, {"type": "aborted", "reason": "tournament stopped"})]
    verdict = verify(aborted)
    assert verdict.outcome == "incomplete" and "aborted" in verdict.detail and "tournament stopped" in verdict.detail
    extra = [*numbered, (len(numbered) + 1, {"type": "event", "kind": "DISCARDED", "seat": 0})]
    verdict = verify(extra)
    assert verdict.outcome == "does not reproduce" and verdict.line == len(numbered) + 1
