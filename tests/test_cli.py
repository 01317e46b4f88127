"""The command line: `referee evaluate`, `referee replay`, `referee variants`, `referee serve`."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from referee.cli import main
from referee.match import Match, MatchConfig, play_seats
from referee.variants import all_variants


def run_cli(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_evaluate_says_which_groups_are_melds_and_whether_the_whole_declares(capsys):
    code, out, _ = run_cli(capsys, "evaluate", "--variant", "indian", "--wild", "7",
                           "AH 2H 3H | 5S 6S 7D 8S | 9C 9D 9H | KS KD KC")
    result = json.loads(out)
    assert code == 0 and result["declaration_valid"] is True and result["hand_points"] == 0
    assert [g["valid"] for g in result["groups"]] == [True, True, True, True]
    assert result["groups"][0]["cards"] == ["AH", "2H", "3H"]


def test_evaluate_gives_the_reason_code_of_a_wrong_declaration(capsys):
    code, out, _ = run_cli(capsys, "evaluate", "--variant", "indian", "--wild", "4",
                           "5S 6S 7D 8S | 9C 9D 9H | KS KD KC | 2H 3H 5C")
    result = json.loads(out)
    assert result["declaration_valid"] is False and result["declaration_reason"]


@pytest.mark.parametrize("name", [v.name for v in all_variants()])
def test_evaluate_covers_every_variant(capsys, name):
    code, out, _ = run_cli(capsys, "evaluate", "--variant", name, "5H 6H 7H | 9S 9D 9C")
    assert code == 0
    assert json.loads(out)["groups"][0]["valid"] is True


def test_evaluate_rejects_an_unknown_option_naming_it(capsys):
    code, _, err = run_cli(capsys, "evaluate", "--variant", "indian", "--option", "colour=red", "AH 2H 3H")
    assert code == 2 and "UNKNOWN_OPTION" in err and "colour" in err


@pytest.mark.parametrize("name", [v.name for v in all_variants()])
def test_replay_reproduces_a_recorded_match_of_every_variant(tmp_path, capsys, name):
    v = next(x for x in all_variants() if x.name == name)
    path = tmp_path / "m.jsonl"
    with path.open("w") as f:
        match = Match(MatchConfig(variant=name, seats=4 if v.team_play else v.min_seats, seed="cli", max_hands=2,
                                  max_turns_per_hand=80), on_record=lambda e: f.write(json.dumps(e) + "\n"))
        rng = random.Random(1)
        outcome = play_seats(match, lambda seat, view, legal: rng.choice(legal))
    code, out, _ = run_cli(capsys, "replay", str(path))
    assert code == 0 and json.loads(out)["result"]["totals"] == list(outcome.totals)


def test_replay_fails_loudly_when_a_record_does_not_reproduce(tmp_path, capsys):
    path = tmp_path / "m.jsonl"
    entries = []
    match = Match(MatchConfig(variant="indian", seats=2, seed="tamper"), on_record=entries.append)
    rng = random.Random(2)
    play_seats(match, lambda seat, view, legal: rng.choice(legal))
    for e in entries:
        if e["type"] == "hand_score":
            e["points"] = [p + 1 for p in e["points"]]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    code, _, err = run_cli(capsys, "replay", str(path))
    assert code == 3 and "does not reproduce" in err


def test_replay_calls_a_record_cut_before_its_match_line_incomplete_as_verify_does(tmp_path, capsys):
    """Without --verify, a record with no match line was "does not reproduce" (exit 3), which names a line that
    differs; --verify says incomplete (4), or unreadable (5) when the first entry is not the match line."""
    header = json.dumps({"type": "header", "match_id": "m", "seat_names": ["a", "b"]}) + "\n"
    for text, code, words in (("", 4, "incomplete:"), (header, 4, "incomplete:"), (header + '{"type": "ma', 4, "incomplete:"),
                              ('{"type": "hand", "hand": 1}\n', 5, "unreadable: line 1:")):
        path = tmp_path / "r.jsonl"
        path.write_text(text)
        for verify in ([], ["--verify"]):
            got, _, err = run_cli(capsys, "replay", *verify, str(path))
            assert got == code and err.startswith(words), (text, verify, err)


def test_check_bot_help_needs_no_bot_command(capsys):
    with pytest.raises(SystemExit) as done:
        main(["check-bot", "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and "--per-move-ms" in out and "-- COMMAND" in out
    with pytest.raises(SystemExit) as done:
        main(["check-bot", "--variant", "indian"])
    assert done.value.code == 2 and "needs the bot's command after --" in capsys.readouterr().err


def test_serve_starts_and_answers_list_variants(tmp_path):
    import grpc

    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--port", "0", "--records", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        address = json.loads(line)["address"]
        with grpc.insecure_channel(address) as ch:
            grpc.channel_ready_future(ch).result(timeout=10)
            names = [v.name for v in pb_grpc.RefereeStub(ch).ListVariants(pb.ListVariantsRequest()).variants]
        assert "indian" in names
    finally:
        proc.terminate()
        proc.wait(timeout=10)
