"""The compiled rules core (``referee.rules.native``): it says exactly what the sources say, and a stale build is never used."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys

import pytest

from referee.rules import native
from referee.rules.cards import parse_card
from referee.rules.melds import MeldRules
from referee.rules.variants.base import Discard, Group, Meld
from referee.tools import native as builder

ROOT = native.ROOT


def _require_fresh() -> None:
    state = native.status()
    if state != "fresh":
        message = (f"the compiled rules core is disabled ({native.PURE_ENV} is set)" if state == "disabled" else
                   f"the compiled rules core is {state}: run `make native` (or `referee native build`)")
        if os.environ.get("RUMMY_REQUIRE_NATIVE"):
            pytest.fail(message)
        pytest.skip(message)


def _fingerprint(pure: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != native.PURE_ENV}
    if pure:
        env[native.PURE_ENV] = "1"
    out = subprocess.run([sys.executable, "-m", "bench.fingerprint", "--seeds", "1", "--turns", "80", "--hands", "60"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=True)
    return json.loads(out.stdout)


def test_the_compiled_core_is_the_one_in_use_when_fresh() -> None:
    _require_fresh()
    import referee.rules.melds
    import referee.rules.variants.indian

    assert native.compiled(referee.rules.melds) and native.compiled(referee.rules.variants.indian)


def test_compiled_and_plain_modules_say_the_same_to_the_byte() -> None:
    """Every legal-action list, view, event, record line and score of seeded games of every variant, and the meld
    finder on random hands, hash the same through the compiled modules and through the sources."""
    _require_fresh()
    compiled, plain = _fingerprint(pure=False), _fingerprint(pure=True)
    assert set(compiled) == set(plain) and len(plain) >= 9
    assert compiled == plain


def test_an_edited_source_makes_the_build_stale_and_unused(monkeypatch: pytest.MonkeyPatch) -> None:
    _require_fresh()
    real = native.digests()
    monkeypatch.setattr(native, "digests", lambda: real | {"referee.rules.melds": "edited"})
    assert native.status() == "stale: referee.rules.melds changed since the build"
    path: list[str] = ["src"]
    monkeypatch.setattr(native, "_FRESH", None)
    native.extend(path, "referee.rules")
    assert path == ["src"], "a stale build must not be put ahead of the sources"


def test_the_plain_modules_run_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(native.PURE_ENV, "1")
    assert native.status() == "disabled"
    out = subprocess.run([sys.executable, "-c", "import referee.rules.melds, referee.rules.native as n; print(n.compiled(referee.rules.melds))"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_frozen_rules_values_copy_and_pickle_as_themselves() -> None:
    """A search token pickles a state, the sampler deep-copies one: frozen values must survive both, compiled too."""
    values = [parse_card("7H"), MeldRules(), Meld((Group((parse_card("7H"), parse_card("7S"), parse_card("7D"))),)),
              Discard(parse_card("KS"))]
    for value in values:
        assert copy.deepcopy(value) == value
        assert pickle.loads(pickle.dumps(value)) == value


def test_a_failed_build_is_not_retried_by_make_until_a_source_changes(monkeypatch: pytest.MonkeyPatch, tmp_path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Without a C compiler, `make` (``build --optional --if-stale``) pays for the failed try once and says why
    each time after; an edited source, or an explicit `referee native build`, tries again."""
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    monkeypatch.setattr(native, "NATIVE_DIR", tmp_path)
    monkeypatch.setattr(native, "MANIFEST", tmp_path / "manifest.json")
    monkeypatch.setattr(builder, "FAILED", tmp_path / "failed.json")
    tries: list[int] = []

    def no_compiler(verbose: bool = False) -> None:
        tries.append(1)
        raise OSError("gcc: not found")

    monkeypatch.setattr(builder, "build", no_compiler)
    assert builder.main("build", optional=True, if_stale=True) == 0 and len(tries) == 1
    assert builder.main("build", optional=True, if_stale=True) == 0 and len(tries) == 1
    assert "failed before for these sources: OSError: gcc: not found" in capsys.readouterr().err
    assert builder.main("build", optional=False, if_stale=True) == 1 and len(tries) == 1
    real = native.digests()
    monkeypatch.setattr(native, "digests", lambda: real | {"referee.rules.melds": "edited"})
    assert builder.main("build", optional=True, if_stale=True) == 0 and len(tries) == 2
    assert builder.main("build", optional=True) == 0 and len(tries) == 3
