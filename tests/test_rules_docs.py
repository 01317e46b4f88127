"""The rules and the views are written down in the repository: every clause id the referee cites has its anchor in
docs/rules/, every clause of the rules' authority (RULES.md, when present) is documented, every option is
explained, and every `notes` key the rules core sets is in docs/VIEWS.md."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from referee.rules.match import Match, MatchConfig
from referee.rules.variants import all_variants

ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = ROOT / "docs" / "rules"
VIEWS = ROOT / "docs" / "VIEWS.md"
CLAUSE = re.compile(r"\b(?:COM|IND|FHP|FH|PER|FOR|ARL|SKA|SKS|ICE)-[0-9]+\b")
AUTHORITY = Path(os.environ.get("RUMMY_RULES_MD", ROOT.parent / "shared" / "RULES.md"))


def _documented() -> set[str]:
    """Clause ids with an anchor (`<a id="FH-3">`) or a heading that starts with the id."""
    found: set[str] = set()
    for path in RULES_DIR.glob("*.md"):
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r'<a id="([A-Z]+-[0-9]+)"></a>', text))
        found |= set(re.findall(r"^#+ (?:<a [^>]*></a>)?([A-Z]+-[0-9]+)\b", text, re.M))
    return found


def test_every_clause_the_referee_cites_is_documented():
    cited: dict[str, str] = {}
    for path in sorted((ROOT / "referee").rglob("*.py")):
        for clause in CLAUSE.findall(path.read_text(encoding="utf-8")):
            cited.setdefault(clause, path.relative_to(ROOT).as_posix())
    missing = sorted(f"{c} (cited in {where})" for c, where in cited.items() if c not in _documented())
    assert len(cited) > 50 and not missing, missing


def test_every_clause_of_the_rules_authority_is_documented():
    if not AUTHORITY.is_file():
        pytest.skip(f"{AUTHORITY} is not here (a user's clone): the docs stand on their own")
    ids = set(re.findall(r"^- ((?:COM|IND|FHP|FH|PER|FOR|ARL|SKA|SKS|ICE)-[0-9]+) ", AUTHORITY.read_text(), re.M))
    assert len(ids) > 50
    assert sorted(ids - _documented()) == []


def test_the_docs_name_no_clause_the_authority_lacks():
    if not AUTHORITY.is_file():
        pytest.skip(f"{AUTHORITY} is not here")
    ids = set(CLAUSE.findall(AUTHORITY.read_text()))
    assert sorted(_documented() - ids) == []


def test_anchors_are_unique_and_every_rules_file_is_in_the_index():
    seen: list[str] = []
    for path in RULES_DIR.glob("*.md"):
        seen += re.findall(r'<a id="([A-Z]+-[0-9]+)"></a>', path.read_text(encoding="utf-8"))
    assert len(seen) == len(set(seen))
    index = (RULES_DIR / "README.md").read_text(encoding="utf-8")
    for path in RULES_DIR.glob("*.md"):
        assert path.name == "README.md" or f"({path.name})" in index, path.name


@pytest.mark.parametrize("v", all_variants(), ids=lambda v: v.name)
def test_every_variant_and_option_is_explained(v):
    text = "\n".join(p.read_text(encoding="utf-8") for p in RULES_DIR.glob("*.md"))
    assert f"`{v.name}`" in text
    for opt in v.options:
        assert f"`{opt.name}" in text, (v.name, opt.name)
        for choice in opt.choices:
            assert choice.startswith("<") or choice in text, (v.name, opt.name, choice)


# ---------------------------------------------------------------- notes keys


def _note_keys() -> dict[str, set[str]]:
    """Per variant module, the keys its ``observe``/``_notes`` put in a view's notes: (key, value) pairs whose key
    is a string or an f-string (``f"out:{s}"`` reads ``out:N``)."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / "referee" / "rules" / "variants").glob("*.py")):
        keys: set[str] = set()
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef) or fn.name not in ("observe", "_notes"):
                continue
            for node in ast.walk(fn):
                if not (isinstance(node, ast.Tuple) and len(node.elts) == 2):
                    continue
                key = node.elts[0]
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and re.fullmatch(r"[a-z_]+", key.value):
                    keys.add(key.value)
                elif isinstance(key, ast.JoinedStr):
                    keys.add("".join(p.value if isinstance(p, ast.Constant) else "N" for p in key.values))
        if keys:
            out[path.stem] = keys
    return out


def test_every_notes_key_the_rules_core_sets_is_documented():
    keys = _note_keys()
    assert set(keys) == {"indian", "five_hundred", "oklahoma", "skarney", "iceberg"}
    text = VIEWS.read_text(encoding="utf-8")
    missing = sorted(f"{m}: {k}" for m, ks in keys.items() for k in ks if f"| `{k}` |" not in text)
    assert not missing, missing


@pytest.mark.parametrize("v", all_variants(), ids=lambda v: v.name)
def test_the_notes_a_match_shows_are_the_ones_found_and_documented(v):
    """Play a seeded match a while and read every view: each key seen is one the scan found (so the scan misses
    none) and one the docs explain."""
    found = set().union(*_note_keys().values())
    text = VIEWS.read_text(encoding="utf-8")
    m = Match(MatchConfig(v.name, v.min_seats, seed="notes", max_hands=2))
    seen: set[str] = set()
    for _ in range(300):
        d = m.pending()
        if d is None:
            break
        for s in range(v.min_seats):
            seen |= {re.sub(r"[0-9]+$", "N", k) for k, _ in m.view(s).notes}
        m.submit(d.seat, m.legal_actions(d.seat)[0])
    assert seen and seen <= found, seen - found
    assert all(f"| `{k}` |" in text for k in seen)
