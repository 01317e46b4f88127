"""A behaviour fingerprint of the rules core, for checking that a speed-up changed no rule.

    python -m bench.fingerprint > before.json      # then change the code
    python -m bench.fingerprint --compare before.json

It plays seeded matches of every variant (every seat count, each option value, a uniform random policy and one
that melds whenever it can, with some missed deadlines) and hashes, per variant, everything the rules core says:
each legal-action list in order, each seat view, each event and record line (the rules hash aside, which changes
with any edit to the core's source), and each hand score; and it hashes the meld finder, the meld reader and the
least-points grouping on random hands. Equal digests before and after mean the same rules, to the byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from typing import Any

from referee.rules.cards import Rank, build_deck
from referee.rules.match import Match, MatchConfig
from referee.rules.variants import all_variants
from referee.rules.variants.base import Action, Discard, DrawStock, Drop, Variant


def _configs(v: Variant) -> Iterator[tuple[int, dict[str, str]]]:
    seat_counts = sorted({v.min_seats, v.max_seats, min(v.min_seats + 1, v.max_seats)})
    for seats in seat_counts:
        yield seats, {}
    for opt in v.options:
        for choice in opt.choices[1:]:
            if choice.startswith("<"):
                continue
            yield v.min_seats, {opt.name: choice}


def _policy(kind: str, rng: random.Random) -> Callable[[list[Action]], Action]:
    def uniform(legal: list[Action]) -> Action:
        return rng.choice(legal)

    def melder(legal: list[Action]) -> Action:
        rich = [a for a in legal if not isinstance(a, DrawStock | Discard | Drop)]
        legal = [a for a in legal if not isinstance(a, Drop)] or legal
        if rich and rng.random() < 0.8:
            return rng.choice(rich)
        return rng.choice(legal)

    return uniform if kind == "uniform" else melder


def play(v: Variant, seats: int, options: dict[str, str], seed: int, kind: str, h: Any, turns: int) -> int:
    """Play one match, feeding everything observable into ``h``; return the decisions made."""
    records: list[dict[str, Any]] = []

    def record(entry: dict[str, Any]) -> None:
        entry = {k: val for k, val in entry.items() if k != "rules_hash"}
        h.update(json.dumps(entry, sort_keys=True, default=str).encode())

    cfg = MatchConfig(variant=v.name, seats=seats, options=options, seed=f"fp{seed}", max_turns_per_hand=turns,
                      max_hands=2)
    m = Match(cfg, on_record=record)
    rng = random.Random(seed)
    choose = _policy(kind, rng)
    decisions = 0
    for _ in range(100_000):
        d = m.pending()
        if d is None:
            break
        decisions += 1
        if m.on_autopilot(d.seat):
            events = m.autoplay(d.seat)
        elif rng.random() < 0.02:
            events = m.timeout(d.seat)
        else:
            view = m.view(d.seat)
            legal = m.legal_actions(d.seat)
            h.update(repr(d).encode())
            h.update(repr(view).encode())
            h.update(repr(legal).encode())
            events = m.submit(d.seat, choose(legal))
        h.update(repr(events).encode())
    h.update(repr(m.outcome).encode())
    del records
    return decisions


def meld_engine(h: Any, hands: int) -> None:
    """The meld finder, reader and Indian least count on random hands, with the rules of every variant."""
    from referee.rules.melds import MeldRules, find_melds, readings
    from referee.rules.variants import iceberg, indian, oklahoma, skarney

    rules_seen: dict[str, MeldRules] = {
        "indian": indian.MELD_RULES, "iceberg": iceberg.ICEBERG_MELDS, "skarney": skarney.SKARNEY_MELDS,
        "fortune": oklahoma.FORTUNE.meld_rules, "arlington": oklahoma.ARLINGTON.meld_rules,
        "fortune-unlimited": MeldRules(max_set=None), "500": MeldRules(max_set=4),
        "persian-high": MeldRules(max_set=4, ace_low=False),
    }
    rng = random.Random(12)
    deck = build_deck(2, 4)

    wild_sets = [frozenset(), frozenset({Rank.JOKER}), frozenset({Rank.TWO, Rank.JOKER}), frozenset({Rank.SEVEN, Rank.JOKER})]
    for k in range(hands):
        size = rng.choice((7, 10, 11, 13, 14, 16))
        hand = rng.sample(deck, size)
        wilds = rng.choice(wild_sets)
        for name in sorted(rules_seen):
            found = find_melds(hand, rules_seen[name], wilds)
            h.update(f"{k}{name}".encode() + repr(found).encode())
            for g in found[:6]:
                h.update(repr(readings(g, rules_seen[name], wilds)).encode())
        if size in (13, 14):
            iw = indian.wild_ranks_for(rng.choice(deck))
            h.update(repr(indian.least_count(hand, iw)).encode())
            if size == 14:
                h.update(repr(indian.least_count_after_discard(hand, iw)).encode())
                h.update(repr(indian.find_declaration(hand, iw)).encode())


def fingerprint(seeds: int, turns: int, hands: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in all_variants():
        h = hashlib.sha256()
        n = 0
        for seats, options in _configs(v):
            if v.team_play and seats % 2:
                continue
            for seed in range(seeds):
                for kind in ("uniform", "melder"):
                    try:
                        n += play(v, seats, options, seed, kind, h, turns)
                    except Exception as exc:  # an option the seat count refuses: part of the behaviour too
                        h.update(f"{type(exc).__name__}:{exc}".encode())
        out[v.name] = f"{h.hexdigest()[:16]} ({n} decisions)"
    h = hashlib.sha256()
    meld_engine(h, hands)
    out["meld-engine"] = h.hexdigest()[:16]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--turns", type=int, default=120)
    p.add_argument("--hands", type=int, default=150, help="random hands for the meld-engine part")
    p.add_argument("--compare", help="a JSON file from an earlier run: exit 1 if any digest differs")
    args = p.parse_args()
    got = fingerprint(args.seeds, args.turns, args.hands)
    if not args.compare:
        print(json.dumps(got, indent=1))
        return 0
    with open(args.compare) as f:
        want = json.load(f)
    bad = [k for k in want if want[k] != got.get(k)]
    for k in want:
        print(f"{'DIFFERS' if k in bad else 'same   '} {k:<18} {want[k]} -> {got.get(k)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
