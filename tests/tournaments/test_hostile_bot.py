"""Issue #30's "must show": a hostile bot that reads /proc, scans the filesystem for records, configs and tokens
and calls Search and Play with every token it finds learns nothing about another seat in the sandbox; without
one it reads its opponent's token, the live record's deck and the opponent's hand (docs/THREAT-MODEL.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.tournaments.sandboxing import need_bwrap
from tournaments.config import parse_config
from tournaments.runner import run_tournament

HOSTILE = Path(__file__).with_name("hostile_bot.py")



def _tournament(tmp_path: Path, sandbox: str) -> tuple[dict[str, Any], Path]:
    """Two games of the hostile bot against greedy, in a repo-like folder that also holds the config and the output
    (the case a sandbox must hide); returns the hostile bot's findings."""
    repo = tmp_path / "repo"
    (repo / "bots" / "hostile").mkdir(parents=True)
    (repo / "bots" / "honest").mkdir(parents=True)
    (repo / "bots" / "honest" / "notes.json").write_text('{"strategy": "honest-secret"}')
    (repo / "t.toml").write_text("# the tournament's config: no bot may read it\n")
    data = {
        "tournament": {"variant": "indian", "games_per_pairing": 2, "output": "out", "max_hands": 3, "concurrency": 1,
                       "seed": "hostile", "sandbox": sandbox, "time_control": {"per_move_ms": 1000}},
        "bots": [{"name": "hostile", "command": [sys.executable, str(HOSTILE)], "cwd": "bots/hostile"},
                 {"name": "honest", "command": [sys.executable, "-m", "rummybot.bots.greedy"], "cwd": "bots/honest"}],
    }
    config = parse_config(data, base_dir=repo, source=repo / "t.toml")
    stats = run_tournament(config, handle_signals=False)
    assert stats.played == 4 and stats.failed == 0
    findings = json.loads((repo / "bots" / "hostile" / "findings.json").read_text())
    assert findings["rounds"] > 0  # it did spy, on its decisions
    return findings, repo


def test_a_sandboxed_hostile_bot_learns_nothing_about_another_seat(tmp_path: Path) -> None:
    need_bwrap()
    f, repo = _tournament(tmp_path, "bwrap")
    assert f["referee"] == "unix:/run/rummy/referee.sock"
    assert f["processes"] == {}, "it saw processes outside its sandbox"
    assert f["visible_pids"] <= 2  # bwrap (pid 1) and itself
    assert f["tokens"] == {}
    assert f["records"] == [] and f["decks"] == []
    assert not [c for c in f["configs"] if c.startswith(str(tmp_path))]
    assert f["opponent_hands"] == [] and f["joined"] == []
    seen = json.dumps(f)
    assert "honest-secret" not in seen and str(repo / "out") not in seen and str(repo / "bots" / "honest") not in seen


def test_an_unsandboxed_hostile_bot_reads_its_opponent(tmp_path: Path) -> None:
    """What docs/THREAT-MODEL.md says a bot can do without the sandbox: the opponent's token (from its
    environment), the records (the whole deck of the hand in play), the config, and the opponent's hand from
    Search; run as root here, so every process's environment is readable."""
    f, repo = _tournament(tmp_path, "none")
    assert f["processes"]  # the runner, the other bot, everything on the host
    assert any(where.endswith("/environ") for where in f["tokens"].values())
    assert any(r.startswith(str(repo / "out" / "records")) for r in f["records"])
    assert f["decks"] and all(size > 0 for _, _, size in f["decks"])
    assert str(repo / "t.toml") in f["configs"]
    assert f["opponent_hands"], (f["errors"], f["tokens"], f["rounds"])  # (which tokens it found, and where)
    assert all(len(hand) > 0 for _, _, hand in f["opponent_hands"])
