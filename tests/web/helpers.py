"""Quick matches played in-process for the viewer's tests, and what a seat may know at each frame."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from referee.rules.match import Match, MatchConfig, play_seats
from referee.rules.policies import greedy_policy
from referee.rules.variants import find
from referee.rules.variants.base import HandState
from referee.tools.testing import KnowledgeTracker
from referee.tools.timeline import Frame, Timeline, build_timeline

CARD_CODE = re.compile(r"(?<![A-Za-z0-9])(?:(?:10|[2-9TJQKA])[SHDC]|JK)(?![A-Za-z0-9])")


def seats_for(variant: str) -> int:
    return 4 if find(variant).team_play else 2


def play_record(variant: str, seed: str = "web", hands: int = 2, turns: int = 80, folder: Path | None = None,
                greedy_seats: tuple[int, ...] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """A match of greedy bots (or greedy on ``greedy_seats`` and random elsewhere): its id and record entries,
    also written to ``folder/<id>.jsonl`` as the server writes it (header first)."""
    seats = seats_for(variant)
    match_id = f"{find(variant).name}-{seed}"
    names = [f"{'greedy' if greedy_seats is None or s in greedy_seats else 'random'}-{s}" for s in range(seats)]
    entries: list[dict[str, Any]] = [{"type": "header", "match_id": match_id, "seat_names": names}]
    match = Match(MatchConfig(variant=variant, seats=seats, seed=seed, max_hands=hands, max_turns_per_hand=turns),
                  on_record=entries.append)
    rng = random.Random(seed)
    greedy = greedy_policy(find(variant).name)

    def choose(seat, view, legal):
        if greedy_seats is None or seat in greedy_seats:
            return greedy(view, legal, rng)
        return rng.choice(legal)

    play_seats(match, choose)
    if folder is not None:
        write_record(folder, match_id, entries)
    return match_id, entries


def write_record(folder: Path, match_id: str, entries: list[dict[str, Any]]) -> Path:
    path = folder / f"{match_id}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def cut_before_result(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The record as it stood mid-match: up to the middle of its actions, as if the match were still on."""
    actions = [i for i, e in enumerate(entries) if e["type"] == "action"]
    return entries[: actions[len(actions) // 2]]


def card_codes(obj: Any) -> set[str]:
    """Every card named anywhere in a JSON value: card lists, and card codes inside texts."""
    out: set[str] = set()
    if isinstance(obj, str):
        out.update(m.group(0) for m in CARD_CODE.finditer(obj))
    elif isinstance(obj, dict):
        for v in obj.values():
            out |= card_codes(v)
    elif isinstance(obj, list):
        for v in obj:
            out |= card_codes(v)
    return out


def timeline_with_knowledge(entries: list[dict[str, Any]]) -> tuple[Timeline, dict[int, list[set[str]]]]:
    """The timeline, and for each frame what each seat may know by then: the referee's own KnowledgeTracker fed the
    true state behind the frame (its hand, cards it was passed, everything face up so far in the hand, and every
    hand once the hand is over)."""
    known: dict[int, list[set[str]]] = {}
    current: dict[str, Any] = {}

    def on_frame(frame: Frame, state: HandState) -> None:
        if current.get("hand") != frame.hand:
            current.update(hand=frame.hand, tracker=KnowledgeTracker(state.seats))
        tracker: KnowledgeTracker = current["tracker"]
        decision = None if state.over else find(frame.views[0].variant).decision(state)
        tracker.update(state, decision.offer if decision is not None else None)
        known[frame.index] = [{str(c) for c in seen} for seen in tracker.seen]

    return build_timeline(entries, on_frame=on_frame), known
