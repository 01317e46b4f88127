"""The stdio bridge works as documented: in a tournament config exactly as docs/bots/stdio.md shows it, with a POSIX sh
bot and a Node bot; it sends seated, decision, rejected and match_result lines that match the schema generated
from the proto; and an answer it cannot use, or one the referee refuses, is sent back with its reason code,
counted and shown, never replaced by another move."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import grpc
import jsonschema
import pytest

from referee.service.records import read_record
from referee.service.server import EmbeddedReferee
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.stdio import split_command
from rummybot.stdio_schema import schema
from tests.clients.harness import play_gauntlet

ROOT = Path(__file__).resolve().parents[1]
STDIO = ROOT / "clients" / "stdio"
PY = sys.executable


def _validator(definition: str) -> jsonschema.Draft202012Validator:
    doc = schema()
    return jsonschema.Draft202012Validator({**doc, "$ref": f"#/$defs/{definition}"})


def test_the_committed_schema_is_the_one_generated_from_the_proto():
    committed = json.loads((STDIO / "schema.json").read_text())
    assert committed == schema(), "regenerate: python -m rummybot.stdio_schema > clients/stdio/schema.json"


def test_connection_flags_the_runner_appends_after_the_command_go_to_the_bridge():
    own, command = split_command(["--events", "--", "node", "bot.js", "--level", "3", "--referee", "h:1",
                                  "--bot-token", "t"])
    assert own == ["--events", "--referee", "h:1", "--bot-token", "t"]
    assert command == ["node", "bot.js", "--level", "3"]
    with pytest.raises(SystemExit):
        split_command(["node", "bot.js"])


def test_a_posix_sh_bot_plays_a_tournament_through_the_bridge_as_the_readme_shows(tmp_path):
    """``command = ["referee-bridge", "--", "sh", ".../first_legal.sh"]``: the runner's appended flags reach the
    bridge, not the bot, and every game ends by the rules with no forfeit and no answer late."""
    rows = play_gauntlet(tmp_path, "sh", ["referee-bridge", "--", "sh", str(STDIO / "examples" / "first_legal.sh")],
                         games=1, per_move_ms=2000)
    assert len(rows) == 2


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the Node stdio bot is not tried")
def test_a_node_bot_plays_a_tournament_through_the_bridge(tmp_path):
    rows = play_gauntlet(tmp_path, "node-stdio",
                         ["referee-bridge", "--", "node", str(STDIO / "examples" / "declare_or_first.js")],
                         games=1, per_move_ms=2000)
    assert len(rows) == 2


RECORDING_BOT = textwrap.dedent('''
    """Logs every line it is sent; first answers with garbage, a bad index and an illegal action, then plays."""
    import json, sys
    log = open(sys.argv[1], "w")
    tricks = ["this is not json", json.dumps({"legal_index": 999}),
              json.dumps({"action": {"discard": {"card": {"rank": "RANK_KING", "suit": "SUIT_CLUBS"}}}})]
    for text in sys.stdin:
        log.write(text)
        log.flush()
        line = json.loads(text)
        if line["type"] == "decision":
            print(tricks.pop(0) if tricks else json.dumps({"legal_index": 0}), flush=True)
        elif line["type"] == "rejected" and len(tricks) == 0 and not getattr(sys, "_retried", False):
            sys._retried = True
            print(json.dumps({"legal_index": 0}), flush=True)
        elif line["type"] == "rejected" and tricks:
            print(tricks.pop(0), flush=True)
''')


def test_bad_answers_are_refused_back_to_the_bot_with_reasons_and_lines_match_the_schema(tmp_path):
    script = tmp_path / "recording_bot.py"
    script.write_text(RECORDING_BOT)
    lines_file = tmp_path / "lines.jsonl"
    with EmbeddedReferee(records_dir=tmp_path / "records") as ref, grpc.insecure_channel(ref.address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        created = stub.CreateMatch(pb.CreateMatchRequest(
            # the bridged bot sits left of the dealer (seat 0), so it moves first: a random bot that drops at once
            # cannot end the deal before the bridged bot is asked anything
            variant="indian", seed="bridge", max_hands=1, seats=[pb.SeatSpec(name="py"), pb.SeatSpec(name="bridged")],
            time_control=pb.TimeControl(per_move_ms=5000)))
        bridged = subprocess.Popen([PY, "-m", "rummybot.stdio", "--", PY, str(script), str(lines_file),
                                    "--referee", ref.address, "--match", created.match_id, "--token",
                                    created.seat_tokens[1]], stderr=subprocess.PIPE, text=True)
        other = subprocess.Popen([PY, "-m", "rummybot.bots.random_bot", "--referee", ref.address, "--match",
                                  created.match_id, "--token", created.seat_tokens[0]])
        try:
            final = stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True), timeout=120).result
            _, stderr = bridged.communicate(timeout=30)
        finally:
            for p in (bridged, other):
                if p.poll() is None:
                    p.kill()
            other.wait(timeout=30)
    assert final.status == pb.MATCH_STATUS_FINISHED and not final.forfeited, final.reason
    assert bridged.returncode == 0, stderr
    lines = [json.loads(x) for x in lines_file.read_text().splitlines()]
    kinds = [x["type"] for x in lines]
    assert kinds[0] == "welcome" and "seated" in kinds and "decision" in kinds and kinds[-1] == "match_result"
    validator = _validator("bridge_line")
    for line in lines:
        validator.validate(line)
    codes = [x["rejected"]["code"] for x in lines if x["type"] == "rejected"]
    assert codes[:2] == ["MALFORMED_ANSWER", "BAD_LEGAL_INDEX"], codes
    assert len(codes) == 3 and codes[2] not in ("MALFORMED_ANSWER", "BAD_LEGAL_INDEX"), "the referee's own code"
    assert "3 of" in stderr and "answers refused" in stderr
    # the first action recorded for the bridged seat is the bot's own legal_index 0, not a substitute
    record = read_record(final.record_path)
    first = next(e for e in record if e["type"] == "action" and e["seat"] == 1)
    assert first["timed_out"] is False
    decision = next(x["decision"] for x in lines if x["type"] == "decision")
    assert first["action"]["kind"] in json.dumps(decision["legal_actions"][0])


def test_answers_validate_against_the_bot_answer_schema():
    validator = _validator("bot_answer")
    validator.validate({"legal_index": 2})
    validator.validate({"request_id": "7", "action": {"discard": {"card": {"rank": "RANK_ACE", "suit": "SUIT_SPADES"}}}})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"legal_index": 1, "action": {}})
    for card in ({}, {"rank": "RANK_ACE"}, {"rank": "RANK_UNSPECIFIED", "suit": "SUIT_SPADES"}):  # refused: BAD_CARD
        with pytest.raises(jsonschema.ValidationError):
            validator.validate({"action": {"discard": {"card": card}}})
    validator.validate({"action": {"discard": {"card": {"rank": "RANK_JOKER", "suit": "SUIT_NONE"}}}})


LAST_LEGAL_BOT = textwrap.dedent('''
    """Answers each decision at once with its last legal action (indexes differ from match to match), naming
    the decision by both ids when asked to."""
    import json, sys
    both = sys.argv[1] == "both"
    for text in sys.stdin:
        line = json.loads(text)
        if line["type"] == "decision":
            d = line["decision"]
            answer = {"legal_index": len(d["legal_actions"]) - 1}
            if both:
                answer.update(match_id=d["match_id"], request_id=d["request_id"])
            print(json.dumps(answer), flush=True)
''')


@pytest.mark.parametrize("naming", ["oldest-open", "both"])
def test_one_bridged_bot_in_concurrent_matches_answers_each_its_own_decision(tmp_path, naming):
    """Three Fortune matches at once, their request ids the same (each match counts from 1): every answer reaches
    the decision it was for. The bridge once kept open decisions by request id alone (#31): hundreds of answers
    went to the wrong match, refused BAD_LEGAL_INDEX or STALE_REQUEST, and moves timed out."""
    script = tmp_path / "last_legal.py"
    script.write_text(LAST_LEGAL_BOT)
    with EmbeddedReferee(records_dir=tmp_path / "records") as ref, grpc.insecure_channel(ref.address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        created = [stub.CreateMatch(pb.CreateMatchRequest(
            variant="fortune", seed=f"bridge-{i}", max_hands=1, seats=[pb.SeatSpec(name="bridged", bot_token="bridged"),
                                                                       pb.SeatSpec(name="greedy", bot_token="greedy")],
            time_control=pb.TimeControl(per_move_ms=3000, connect_ms=20_000))) for i in range(3)]
        bridged = subprocess.Popen([PY, "-m", "rummybot.stdio", "--referee", ref.address, "--", PY, str(script), naming],
                                   env={**os.environ, "RUMMY_BOT_TOKEN": "bridged"}, stderr=subprocess.PIPE, text=True)
        greedy = subprocess.Popen([PY, "-m", "rummybot.bots.greedy", "--referee", ref.address],
                                  env={**os.environ, "RUMMY_BOT_TOKEN": "greedy"})
        try:
            results = [stub.GetResult(pb.GetResultRequest(match_id=c.match_id, wait=True), timeout=180).result for c in created]
        finally:
            for p in (bridged, greedy):
                p.terminate()
            _, stderr = bridged.communicate(timeout=30)
            greedy.wait(timeout=30)
    for final in results:
        assert final.status == pb.MATCH_STATUS_FINISHED and not final.forfeited, final.reason
        mine = [e for e in read_record(final.record_path) if e["type"] == "action" and e["seat"] == 0]
        assert mine and not [e for e in mine if e["timed_out"]], "a bridged move timed out"
    assert "answers refused" not in stderr, stderr


def test_a_bridge_stopped_with_sigterm_still_says_how_many_answers_were_refused(tmp_path):
    """The tournament runner stops its bots with SIGTERM: the bridge's refusal summary is printed all the same."""
    script = tmp_path / "garbage.py"
    script.write_text("import sys\nfor text in sys.stdin:\n    if '\"decision\"' in text:\n"
                      "        print('not json', flush=True)\n")
    with EmbeddedReferee() as ref, grpc.insecure_channel(ref.address) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)
        stub.CreateMatch(pb.CreateMatchRequest(variant="fortune", seats=[pb.SeatSpec(bot_token="bridged"),
                                                                        pb.SeatSpec(bot_token="nobody")],
                                               time_control=pb.TimeControl(per_move_ms=5000, connect_ms=20_000)))
        bridged = subprocess.Popen([PY, "-m", "rummybot.stdio", "--referee", ref.address, "--", PY, str(script)],
                                   env={**os.environ, "RUMMY_BOT_TOKEN": "bridged"}, stderr=subprocess.PIPE, text=True)
        other = subprocess.Popen([PY, "-m", "rummybot.bots.random_bot", "--referee", ref.address],
                                 env={**os.environ, "RUMMY_BOT_TOKEN": "nobody"})
        try:
            deadline = time.monotonic() + 60
            while not any(sum(m.seats[0].stats.asked.values()) for m in ref.service.sessions.values()):
                assert time.monotonic() < deadline
                time.sleep(0.05)
            time.sleep(0.5)  # the bot has answered garbage at least once by now
            bridged.send_signal(signal.SIGTERM)
            _, stderr = bridged.communicate(timeout=30)
        finally:
            for p in (bridged, other):
                p.kill()
                p.wait(timeout=30)
    assert "answers refused (MALFORMED_ANSWER x" in stderr, stderr


BY_INDEX_AND_BY_ACTION = textwrap.dedent('''
    """Answers at once, every other decision by its index and the rest by the whole action, naming both ids."""
    import json, sys
    n = 0
    for text in sys.stdin:
        line = json.loads(text)
        if line["type"] == "decision":
            d, n = line["decision"], n + 1
            k = len(d["legal_actions"]) - 1
            answer = {"legal_index": k} if n % 2 else {"action": d["legal_actions"][k], "match_id": d["match_id"],
                                                         "request_id": d["request_id"]}
            print(json.dumps(answer), flush=True)
''')


def test_a_bridged_bot_in_a_concurrent_round_robin_has_no_refusal_and_no_timeout(tmp_path):
    """#31's must-show at a small scale: a Fortune round-robin at concurrency 2, the bridged bot answering by index
    and by full action: 0 answers refused (by the referee or the bridge) and 0 moves timed out."""
    from tournaments.config import parse_config
    from tournaments.runner import run_tournament
    from tournaments.store import Store

    (tmp_path / "bot.py").write_text(BY_INDEX_AND_BY_ACTION)
    out = tmp_path / "out"
    tournament = {"variant": "fortune", "games_per_pairing": 10, "concurrency": 2, "seed": "bridge-rr",
                  "output": str(out), "schedule": "round-robin", "max_hands": 1,
                  "time_control": {"per_move_ms": 2000, "connect_ms": 30000}}
    bots = [{"name": "bridged", "command": ["referee-bridge", "--", PY, "bot.py"]},
            {"name": "greedy", "command": [PY, "-m", "rummybot.bots.greedy"]}]
    stats = run_tournament(parse_config({"tournament": tournament, "bots": bots}, base_dir=tmp_path),
                           handle_signals=False)
    assert stats.missing == 0 and stats.failed == 0
    faults = Store(out / "tournament.sqlite", readonly=True).faults(["bridged"])["bridged"]
    assert faults.games == 20 and faults.asked > 0
    assert (faults.refused, faults.timed_out, faults.disconnects) == (0, 0, 0), faults
    assert "answers refused" not in (out / "bots" / "bridged-0.log").read_text()


def bridge_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "rummybot.stdio", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def test_help_lists_every_flag_and_the_exit_codes():
    """#31: ``referee-bridge --help`` listed no flags (it wanted a ``--`` first)."""
    done = bridge_cli("--help")
    assert done.returncode == 0
    for flag in ("--referee ADDRESS", "--bot-token T", "--match ID", "--token T", "--name", "--events", "exit codes"):
        assert flag in done.stdout, done.stdout


@pytest.mark.parametrize("program, why", [("pyhton", "No such file or directory"), ("/etc/passwd", "Permission denied")])
def test_a_bot_program_that_cannot_start_is_one_line_naming_it(tmp_path, program, why):
    """#31: a misspelled program after ``--`` ended in a Python traceback that did not name it."""
    done = bridge_cli("--referee", f"unix:{tmp_path}/none.sock", "--", program, "bot.py", RUMMY_BOT_TOKEN="t")
    assert done.returncode == 1
    assert done.stderr.strip() == f"referee-bridge: cannot start the bot {program!r}: {why}"


@pytest.mark.parametrize("args, said", [((), "no -- before the bot's COMMAND"), (("--",), "no bot COMMAND after --"),
                                        (("--bogus", "--", "sh"), "unrecognized arguments: --bogus")])
def test_a_bad_command_line_is_exit_2_with_the_usage(args, said):
    done = bridge_cli(*args)
    assert done.returncode == 2 and said in done.stderr and done.stderr.startswith("usage: referee-bridge")
