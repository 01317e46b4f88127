"""The committed many-languages tournament completes with ratings and no forfeit: bots in Python, Node, Go,
Java, Rust, C++ and a stdio-bridged Node bot, from one TOML file."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.clients.harness import ROOT, SDKS, _rows, require


def test_a_tournament_of_seven_languages_completes_with_ratings_and_no_forfeit(tmp_path):
    for lang, (artifact, _, _) in SDKS.items():
        require(lang, artifact)
    cfg = ROOT / "tournaments/examples/many_languages.toml"
    run = subprocess.run([sys.executable, "-m", "tournaments.cli", "run", str(cfg), "--no-progress", "--output",
                          str(tmp_path / "out")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=900, env={**os.environ})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "warning: bot" not in run.stderr, run.stderr
    rows = _rows(tmp_path / "out")
    assert len(rows) == 8 * 7 and not [r for r in rows if r.forfeited]
    for name in ("node-greedy", "go-greedy", "java-greedy", "rust-greedy", "cpp-greedy", "node-stdio"):
        assert name in run.stdout
