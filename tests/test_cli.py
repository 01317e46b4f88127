"""The command line: `referee evaluate`, `referee replay`, `referee variants`, `referee serve`, `referee create-match`."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys

import pytest

from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.variants import all_variants
from referee.tools.cli import main


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

    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--records", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        address = json.loads(line)["address"]
        with grpc.insecure_channel(address) as ch:
            grpc.channel_ready_future(ch).result(timeout=10)
            names = [v.name for v in pb_grpc.RefereeServiceStub(ch).ListVariants(pb.ListVariantsRequest()).variants]
        assert "indian" in names
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def admin_referee(tmp_path):
    """A referee on a Unix socket whose CreateMatch needs an admin token; (address, token file)."""
    token_file = tmp_path / "admin-token"
    token_file.write_text("s3cret-admin\n")
    sock = tmp_path / "r.sock"
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--unix", str(sock),
                             "--records", str(tmp_path / "records"), "--admin-token-file", str(token_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert json.loads(proc.stdout.readline())["event"] == "serving"
        yield f"unix:{sock}", token_file
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def create_match(*args, **env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RUMMY_ADMIN_TOKEN")}
    return subprocess.run([sys.executable, "-m", "referee.tools.cli", "create-match", *args], capture_output=True, text=True,
                          timeout=60, env={**clean, **env})


def test_create_match_prints_the_match_id_and_a_token_per_seat_and_the_seats_join_with_them(admin_referee):
    import grpc

    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.referee.v1 import referee_pb2_grpc as pb_grpc

    address, token_file = admin_referee
    made = create_match("indian", "--seat", "mine", "--seat", "theirs", "--per-move-ms", "700", "--referee", address,
                        RUMMY_ADMIN_TOKEN_FILE=str(token_file))
    assert made.returncode == 0, made.stderr
    out = json.loads(made.stdout)
    assert [s["name"] for s in out["seats"]] == ["mine", "theirs"] and out["variant"] == "indian"
    assert len(out["seat_tokens"]) == 2 and all(len(t) >= 32 for t in out["seat_tokens"])
    with grpc.insecure_channel(address) as ch:  # the match is there, seated as asked
        result = pb_grpc.RefereeServiceStub(ch).GetResult(pb.GetResultRequest(match_id=out["match_id"]),
                                                          metadata=(("authorization", "Bearer s3cret-admin"),)).result
    assert list(result.seat_names) == ["mine", "theirs"]


def test_create_match_seats_bot_tokens_read_from_the_environment_and_says_so_in_sh_format(admin_referee):
    from referee.service.credentials import mint_bot_token

    address, _ = admin_referee
    bot = mint_bot_token("s3cret-admin", "mine")
    made = create_match("500-rum", "--bot-token-env", "MY_BOT", "--bot-token-env", "-", "--format", "sh",
                        "--referee", address, MY_BOT=bot, RUMMY_ADMIN_TOKEN="s3cret-admin")
    assert made.returncode == 0, made.stderr
    assert bot not in made.stdout  # a bot token is the caller's already: never printed
    lines = made.stdout.splitlines()
    assert re.fullmatch(r"RUMMY_MATCH=[0-9a-f]+; export RUMMY_MATCH", lines[0]) and len(lines) == 2
    assert re.fullmatch(r"RUMMY_SEAT_TOKEN_1=[0-9a-f]{32}", lines[1])  # seat 0 is the bot's: no seat token


@pytest.mark.parametrize("args, env, code, said", [
    (["indian"], {}, 2, "ADMIN_TOKEN_MISSING"),
    (["indian"], {}, 2, "give its token in RUMMY_ADMIN_TOKEN or a file named by RUMMY_ADMIN_TOKEN_FILE"),
    (["indian"], {"RUMMY_ADMIN_TOKEN": "wrong"}, 2, "holds another token than its --admin-token-file"),
    (["indian", "--bot-token-env", "NOT_SET"], {"RUMMY_ADMIN_TOKEN": "s3cret-admin"}, 1,
     "--bot-token-env NOT_SET: the environment has no NOT_SET (seat 0)"),
    (["indian", "--seats", "2", "--seat", "a"], {}, 1, "give --seats N or --seat NAME"),
    (["500-rum", "--option", "colour=red"], {"RUMMY_ADMIN_TOKEN": "s3cret-admin"}, 2, "UNKNOWN_OPTION"),
    (["no-such-game"], {}, 2, "UNKNOWN_VARIANT"),
])
def test_create_match_refusals_are_one_line_naming_the_cause(admin_referee, args, env, code, said):
    address, _ = admin_referee
    made = create_match(*args, "--referee", address, **env)
    assert made.returncode == code and said in made.stderr, made.stderr
    assert "Traceback" not in made.stderr and len(made.stderr.strip().splitlines()) == 1


def test_create_match_with_no_referee_there_exits_1_naming_the_address(tmp_path):
    made = create_match("indian", "--referee", f"unix:{tmp_path}/none.sock", "--wait", "0.5")
    assert made.returncode == 1
    assert made.stderr.startswith(f"referee create-match: cannot reach the referee at unix:{tmp_path}/none.sock")


@pytest.mark.parametrize("where", ["no folder", "not a socket"])
def test_serve_says_in_one_line_why_it_cannot_listen_on_its_unix_socket(tmp_path, where):
    """``--unix PATH`` in a folder that is not there, or over a file that is not a socket: one line, exit 1 (it was a
    gRPC traceback)."""
    path = tmp_path / "missing" / "ref.sock" if where == "no folder" else tmp_path / "a-file"
    if where == "not a socket":
        path.write_text("mine")
    done = subprocess.run([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--unix", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and str(path) in done.stderr, done.stderr
    assert where != "not a socket" or path.read_text() == "mine"
