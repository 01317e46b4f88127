"""The conformance kit's misbehaving bots (``rummybot.bots.misbehaving``) each get the documented outcome, are
told why, and never stall or break the referee: every game of the tournament ends, against the greedy bot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rummybot.bots.misbehaving import MODES
from tests.clients.harness import _rows
from tournaments.config import parse_config
from tournaments.runner import run_tournament

PY = sys.executable

# mode -> (forfeits?, what its own log must show)
OUTCOMES: dict[str, tuple[bool | None, str]] = {
    "crash-at-start": (True, "crashing at start"),
    "crash-mid-hand": (True, "dying in the middle of a hand"),
    "stall": (True, "decision 1"),
    "slow": (True, "rejected STALE_REQUEST"),
    "illegal": (True, "rejected WRONG_PHASE"),
    "garbage-bytes": (False, "sent 4096 random bytes"),
    "flood": (True, "rejected FLOODING"),
    "reconnect": (False, "joining again"),
    # its faults show only in matches played at once, so whether it forfeits here depends on timing (None: either);
    # test_check_bot's concurrency tests catch it
    "mixes-matches": (None, "decision 1"),
}


def test_every_mode_has_a_documented_outcome():
    assert set(OUTCOMES) == set(MODES)


@pytest.mark.parametrize("mode", MODES)
def test_a_misbehaving_bot_gets_the_documented_outcome_and_the_tournament_goes_on(tmp_path: Path, mode: str) -> None:
    out = tmp_path / "out"
    tournament = {"variant": "fortune", "games_per_pairing": 1, "concurrency": 2, "seed": f"bad-{mode}",
                  "output": str(out), "schedule": "gauntlet", "candidates": [mode], "max_hands": 1,
                  # a crashed bot restarted by the runner and back within the grace period plays on: this one's
                  # grace is shorter than a restart, so it is gone past it
                  "time_control": {"per_move_ms": 300, "grace_ms": 100 if mode == "crash-mid-hand" else 1500,
                                   # an honest bot's interpreter may take seconds to start on a loaded host
                                   "connect_ms": 3000 if mode == "crash-at-start" else 10_000}}
    bots = [{"name": "greedy", "command": [PY, "-m", "rummybot.bots.greedy"]},
            {"name": mode, "command": [PY, "-m", "rummybot.bots.misbehaving", "--mode", mode]}]
    stats = run_tournament(parse_config({"tournament": tournament, "bots": bots}, base_dir=tmp_path),
                           handle_signals=False)
    assert stats.missing == 0 and stats.failed == 0
    forfeits, shown = OUTCOMES[mode]
    log = (out / "bots" / f"{mode}-0.log").read_text()
    assert shown in log, log[-2000:]
    for row in _rows(out):
        bad = row.seats.index(mode)
        assert row.ranking, row.reason
        if forfeits is None:
            continue
        if forfeits:
            assert row.forfeited == (bad,), (row.reason, log[-2000:])
            assert row.ranking[-1] == (bad,)
        else:
            assert not row.forfeited, (row.reason, log[-2000:])
