"""The rules core lists the same legal actions, in the same order, as before its legal-action search was made
faster (issue 34): golden digests recorded from the old implementation, checked in plain Python and compiled.

Every variant at every seat count it supports and with each option value is played from seeded deals by two
random policies (uniform, and one that melds or lays off whenever it can, so tables fill with melds); each
decision's legal-action list, in order, is hashed with the decision, and the digest of each seating and option
set must equal the one in ``tests/data/legal_actions_golden.json``. The playouts branch on the lists (a policy
picks from them), so one wrong or reordered action changes every digest after it.

    python tests/test_legal_actions_golden.py --write    # re-record (only when a rule is meant to change)
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.rules import melds, native
from referee.rules.match import Match, MatchConfig
from referee.rules.variants import all_variants, find
from referee.rules.variants.base import Action, Discard, DrawStock, Drop, Variant

GOLDEN = Path(__file__).parent / "data" / "legal_actions_golden.json"
SEEDS = 2
TURNS = 90  # per hand; two hands a game


def configs(v: Variant) -> Iterator[tuple[int, dict[str, str]]]:
    """Every seat count, then each non-default option value at the fewest seats (and at the most where it differs)."""
    for seats in range(v.min_seats, v.max_seats + 1):
        if not (v.team_play and seats % 2):
            yield seats, {}
    for opt in v.options:
        for choice in opt.choices[1:]:
            if choice.startswith("<"):
                continue
            for seats in sorted({v.min_seats, v.max_seats}):
                if not (v.team_play and seats % 2):
                    yield seats, {opt.name: choice}


def _choose(legal: list[Action], rng: random.Random, policy: str) -> Action:
    if policy == "uniform":
        return rng.choice(legal)
    rich = [a for a in legal if not isinstance(a, DrawStock | Discard | Drop)]
    if rich and rng.random() < 0.8:
        return rng.choice(rich)
    return rng.choice([a for a in legal if not isinstance(a, Drop)] or legal)


def digest(variant: str, seats: int, options: dict[str, str]) -> str:
    """The hash of every legal-action list (and its decision) of the seeded playouts of one seating."""
    h = hashlib.sha256()
    decisions = 0
    for seed in range(SEEDS):
        for policy in ("uniform", "melder"):
            try:
                m = Match(MatchConfig(variant=variant, seats=seats, options=options, seed=f"golden{seed}",
                                      max_turns_per_hand=TURNS, max_hands=2))
            except Exception as exc:  # an option the seat count refuses: its refusal is part of the behaviour
                h.update(f"{type(exc).__name__}:{exc}".encode())
                continue
            rng = random.Random(f"{seed}{policy}")
            for _ in range(50_000):
                d = m.pending()
                if d is None:
                    break
                legal = m.legal_actions(d.seat)
                decisions += 1
                h.update(repr(d).encode())
                h.update(repr(legal).encode())
                m.submit(d.seat, _choose(legal, rng, policy))
    return f"{h.hexdigest()[:20]} ({decisions} decisions)"


def key(variant: str, seats: int, options: dict[str, str]) -> str:
    return f"{variant} {seats} " + ",".join(f"{k}={v}" for k, v in sorted(options.items()))


def all_keys() -> list[tuple[str, int, dict[str, str]]]:
    return [(v.name, seats, options) for v in all_variants() for seats, options in configs(v)]


def _golden() -> dict[str, str]:
    return dict(json.loads(GOLDEN.read_text()))


@pytest.mark.parametrize("variant", [v.name for v in all_variants()])
def test_legal_actions_are_those_of_the_old_implementation(variant: str) -> None:
    golden = _golden()
    v = find(variant)
    for seats, options in configs(v):
        k = key(variant, seats, options)
        assert k in golden, f"no golden digest for {k}"
        assert digest(variant, seats, options) == golden[k], f"{k}: the legal actions differ from the recorded ones"


def test_the_golden_file_covers_every_seating_and_option() -> None:
    assert set(_golden()) == {key(*k) for k in all_keys()}


def test_the_core_ran_is_the_one_asked_for() -> None:
    """Run under RUMMY_REQUIRE_NATIVE=1 (CI's compiled job) the digests above are the compiled core's."""
    import os

    if os.environ.get("RUMMY_REQUIRE_NATIVE", "") not in ("", "0"):
        assert native.compiled(melds)
    if os.environ.get(native.PURE_ENV, "") not in ("", "0"):
        assert not native.compiled(melds)


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit("usage: python tests/test_legal_actions_golden.py --write")
    GOLDEN.parent.mkdir(exist_ok=True)
    out = {key(*k): digest(*k) for k in all_keys()}
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"{len(out)} digests written to {GOLDEN}")
