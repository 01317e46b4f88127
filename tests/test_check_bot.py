"""``referee check-bot``: a well-behaved bot passes every check in every variant (exit 0); each misbehaving bot
of the conformance kit is caught with the fault that names what it did (exit 1)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from referee.checkbot import check_bot
from referee.variants import all_variants

PY = sys.executable


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
    ("illegal", "answers", "rejected CARD_NOT_IN_HAND"),
    ("stall", "answers DRAW decisions", "deadlines missed"),
    ("crash-mid-hand", "stays up match after match", "exited with code 4"),
    ("crash-at-start", "connects with a bot token", "exited with code 3 before joining"),
])
def test_a_misbehaving_bot_is_caught_with_the_fault_it_made(tmp_path, mode, check, detail):
    rows, _ = asyncio.run(check_bot([PY, "-m", "rummybot.bots.misbehaving", "--mode", mode], ["fortune"],
                                    per_move_ms=200, hands=1, log_dir=tmp_path))
    faults = [r for r in rows if r.fault]
    assert any(r.check.startswith(check) and detail in r.detail for r in faults), faults


def test_the_command_line_exits_non_zero_on_a_fault_and_prints_the_table(tmp_path):
    ok = subprocess.run([PY, "-m", "referee.cli", "check-bot", "--variant", "indian", "--", PY, "-m",
                         "rummybot.bots.greedy"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 faults" in ok.stdout and "answers DRAW decisions" in ok.stdout
    bad = subprocess.run([PY, "-m", "referee.cli", "check-bot", "--variant", "indian", "--per-move-ms", "200", "--",
                          PY, "-m", "rummybot.bots.misbehaving", "--mode", "illegal"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 1 and "FAULT" in bad.stdout
    usage = subprocess.run([PY, "-m", "referee.cli", "check-bot"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "needs the bot's command after --" in usage.stderr
