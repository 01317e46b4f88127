"""``referee check-bot``: a well-behaved bot passes every check in every variant (exit 0); each misbehaving bot
of the conformance kit is caught with the fault that names what it did (exit 1)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from referee.rules.variants import all_variants
from referee.tools.checkbot import check_bot

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]


def test_the_greedy_bot_passes_every_check_in_every_variant(tmp_path):
    variants = [v.name for v in all_variants()]
    rows, folder = asyncio.run(check_bot([PY, "-m", "rummybot.bots.greedy"], variants, log_dir=tmp_path))
    assert not [r for r in rows if r.fault], [r for r in rows if r.fault]
    assert {r.variant for r in rows} >= set(variants)
    phases = {(r.variant, r.check) for r in rows}
    assert ("skarney", "answers OFFER decisions") in phases and ("indian", "answers DRAW decisions") in phases
    met = {(r.variant, r.check.split(" (")[0]) for r in rows if r.status == "ok"}
    assert ("skarney", "answers a card on offer") in met and ("iceberg", "passes a card face down") in met
    assert any(v == "500-rum" and c.startswith("takes discards below the top") for v, c in met)
    assert (folder / "records").is_dir()


@pytest.mark.parametrize("mode, check, detail", [
    ("illegal", "answers", "rejected: CARD_NOT_IN_HAND"),
    ("stall", "answers DRAW decisions", "missed (deadline passed)"),
    ("crash-mid-hand", "stays up match after match", "exited with code 4"),
    ("crash-at-start", "connects with a bot token", "exited with code 3 before joining"),
])
def test_a_misbehaving_bot_is_caught_with_the_fault_it_made(tmp_path, mode, check, detail):
    rows, _ = asyncio.run(check_bot([PY, "-m", "rummybot.bots.misbehaving", "--mode", mode], ["fortune"],
                                    per_move_ms=200, hands=1, log_dir=tmp_path))
    faults = [r for r in rows if r.fault]
    assert any(r.check.startswith(check) and detail in r.detail for r in faults), faults


def test_the_command_line_exits_non_zero_on_a_fault_and_prints_the_table(tmp_path):
    ok = subprocess.run([PY, "-m", "referee.tools.cli", "check-bot", "--variant", "indian", "--", PY, "-m",
                         "rummybot.bots.greedy"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 faults" in ok.stdout and "answers DRAW decisions" in ok.stdout
    bad = subprocess.run([PY, "-m", "referee.tools.cli", "check-bot", "--variant", "indian", "--per-move-ms", "200", "--",
                          PY, "-m", "rummybot.bots.misbehaving", "--mode", "illegal"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 1 and "FAULT" in bad.stdout
    # piped, the table is 80 columns wide: a reason code is folded onto the next line, never cut short (#31)
    assert "CARD_NOT_IN_HAND" in bad.stdout and "…" not in bad.stdout
    usage = subprocess.run([PY, "-m", "referee.tools.cli", "check-bot"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "needs the bot's command after --" in usage.stderr
    zero = subprocess.run([PY, "-m", "referee.tools.cli", "check-bot", "--concurrency", "0", "--", PY, "-m",
                           "rummybot.bots.greedy"], capture_output=True, text=True, timeout=60)
    assert zero.returncode == 2 and "--concurrency: a whole number from 1, not '0'" in zero.stderr


# A stdio bot that keeps only the last decision it was sent: after 50 ms of thought it answers every decision that
# came in meanwhile by naming the latest one's match and request. One match at a time it plays well.
LAST_DECISION_ONLY = r'''
import json, queue, sys, threading, time
lines = queue.Queue()
threading.Thread(target=lambda: [lines.put(l) for l in sys.stdin] + [lines.put(None)], daemon=True).start()
while (line := lines.get()) is not None:
    msg, pending = json.loads(line), 0
    while msg is not None:
        if msg["type"] == "decision":
            latest, pending = msg["decision"], pending + 1
        try:
            nxt = lines.get(timeout=0.05) if pending else None
        except queue.Empty:
            nxt = None
        msg = json.loads(nxt) if nxt else None
    for _ in range(pending):
        print(json.dumps({"match_id": latest["match_id"], "request_id": latest["request_id"], "legal_index": 0}),
              flush=True)
'''


@pytest.mark.parametrize("bot", ["python-sdk", "stdio"])
def test_concurrency_catches_a_bot_that_mixes_up_its_matches_which_one_at_a_time_passes(tmp_path, bot):
    """#31: a bot (or a bridge) that mixes up concurrent matches passed check-bot, which played one at a time."""
    if bot == "stdio":
        script = tmp_path / "last_decision_only.py"
        script.write_text(LAST_DECISION_ONLY)
        command = [PY, "-m", "rummybot.stdio", "--", PY, str(script)]
    else:
        command = [PY, "-m", "rummybot.bots.misbehaving", "--mode", "mixes-matches"]
    one, _ = asyncio.run(check_bot(command, ["fortune"], per_move_ms=1500, hands=2, log_dir=tmp_path / "one"))
    assert not [r for r in one if r.fault], [r for r in one if r.fault]
    two, _ = asyncio.run(check_bot(command, ["fortune"], per_move_ms=1500, hands=2, concurrency=2,
                                   log_dir=tmp_path / "two"))
    faults = [r for r in two if r.fault]
    assert any(r.check.startswith("answers") and "missed (deadline passed)" in r.detail for r in faults), two
    assert any(r.detail.endswith("2 at once") for r in two)


def test_concurrency_passes_a_bot_that_keeps_its_matches_apart_through_the_bridge(tmp_path):
    """The POSIX sh bot of the stdio README through the bridge, 3 matches at once: no fault (the bridge routes by
    match id and request id)."""
    command = [PY, "-m", "rummybot.stdio", "--", "sh", str(ROOT / "clients" / "stdio" / "examples" / "first_legal.sh")]
    rows, _ = asyncio.run(check_bot(command, ["fortune", "indian"], per_move_ms=1500, hands=2, concurrency=3,
                                    log_dir=tmp_path))
    assert not [r for r in rows if r.fault], [r for r in rows if r.fault]
    assert any(r.check == "answers PLAY decisions" and r.variant == "fortune" for r in rows)
    assert any(r.detail == "6 matches, 3 at once" for r in rows)


def test_a_row_counts_decisions_and_rejected_answers_apart_and_says_how_many_matches_the_bot_won():
    """#31: "41 of 41 accepted; rejected ..." read as a contradiction: a decision accepted after a rejected answer
    counts once among decisions, its rejected answers among answers."""
    from collections import Counter

    from referee.tools.checkbot import _rows, _Tally

    tally = _Tally(matches=2, won=1, asked=Counter(PLAY=41), accepted=Counter(PLAY=41),
                   rejected=Counter({"PLAY/NOT_A_MELD": 2, "PLAY/CARD_NOT_IN_HAND": 1}))
    rows = {r.check: r for r in _rows("fortune", tally, 2)}
    assert rows["plays every match to its end"].detail.startswith("2 of 2 finished; the bot won 1")
    play = rows["answers PLAY decisions"]
    assert play.fault and play.detail == "41 of 41 decisions accepted\n3 answers rejected: CARD_NOT_IN_HAND x1, NOT_A_MELD x2"
