"""The committed generated modules match protos/ (regenerate with `make protos`)."""

from pathlib import Path

from referee.tools.protogen import OUT, generate


def test_generated_modules_are_fresh(tmp_path: Path):
    made = generate(tmp_path)
    for path in made:
        committed = OUT / path.relative_to(tmp_path)
        assert committed.exists(), f"{committed} is missing: run `make protos`"
        assert committed.read_bytes() == path.read_bytes(), f"{committed} is stale: run `make protos`"
