"""The forward model: actions applied to a sampled state with the full rules, rollouts, scores.

A ``SearchState`` is one hand of one variant (a sample, or what a simulation made of one) and the seat that
asked for it. ``simulate`` applies actions for whoever is to act, stopping at the first the rules refuse (its
reason code is returned, the state is the one before it), then plays a rollout if asked, and reports where the
hand stands: who acts, the legal actions, and the scores once the hand is over. The engine's cap on turns per
hand applies as in a match. Nothing here touches a live match: a search state is its own copy.
"""

from __future__ import annotations

import enum
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

from referee.rules.errors import IllegalAction, InvalidAction
from referee.rules.policies import greedy_policy
from referee.rules.variants import find
from referee.rules.variants.base import Action, Event, HandState, Phase, SeatView, Variant
from referee.search.errors import OutOfTime

__all__ = ["SearchState", "RolloutPolicy", "Rollout", "Rejection", "Position", "Simulation", "simulate", "position",
           "MAX_ROLLOUT_DECISIONS"]

MAX_ROLLOUT_DECISIONS = 5000  # a rollout "to the end of the hand" stops here at the latest


@dataclass
class SearchState:
    """One hand's whole truth in a sampled world, the seat that asked for it, and the match's turn cap."""

    variant: str
    seat: int
    state: HandState
    max_turns: int

    @property
    def rules_variant(self) -> Variant:
        return find(self.variant)


class RolloutPolicy(enum.Enum):
    NONE = "none"
    RANDOM = "random"  # a uniformly random listed legal action
    DEFAULT = "default"  # the variant's default move, what a missed deadline plays
    GREEDY = "greedy"  # the bundled greedy bot (referee.rules.policies), random where it has none


@dataclass(frozen=True)
class Rollout:
    policy: RolloutPolicy = RolloutPolicy.NONE
    max_decisions: int = 0  # 0: to the end of the hand
    seed: str = ""


@dataclass(frozen=True)
class Rejection:
    index: int
    code: str
    message: str


@dataclass(frozen=True)
class Position:
    """Where a hand stands: who must act, in which phase, the legal actions and that seat's view; or, once the
    hand is over, its points per seat."""

    over: bool
    to_act: int | None
    phase: Phase | None
    legal: tuple[Action, ...]
    view: SeatView | None
    scores: tuple[int, ...] = ()
    end_reason: str = ""


@dataclass
class Simulation:
    state: SearchState
    applied: int
    rejected: Rejection | None
    rollout: list[tuple[int, Action]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    position: Position | None = None
    provisional: tuple[int, ...] = ()


def _capped(v: Variant, ss: SearchState) -> None:
    """The engine's turn cap (``Match._after_move``): a hand that reaches it ends and is scored."""
    st = ss.state
    if not st.over and v.decision(st) is not None and st.turns >= ss.max_turns:
        st.over = True
        st.end_reason = f"turn cap ({ss.max_turns} turns)"


def position(ss: SearchState, with_legal: bool = True) -> Position:
    """Who acts now and what the rules allow; the hand's points once it is over."""
    v = ss.rules_variant
    st = ss.state
    d = None if st.over else v.decision(st)
    if d is None:
        st.over = True
        return Position(True, None, None, (), None, tuple(v.score(st).points), st.end_reason)
    legal = tuple(v.legal_actions(st, d.seat)) if with_legal else ()
    return Position(False, d.seat, d.phase, legal, v.observe(st, d.seat))


@cache
def _greedy(variant: str) -> Callable[[SeatView, Sequence[Action], random.Random], Action] | None:
    """The bundled greedy policy of ``variant`` (the rules core's, as the SDK's greedy bot plays), else random."""
    try:
        return greedy_policy(variant)
    except KeyError:
        return None


def _choose(v: Variant, st: HandState, seat: int, policy: RolloutPolicy, rng: random.Random) -> Action:
    if policy is RolloutPolicy.DEFAULT:
        return v.default_action(st, seat, 0)
    legal = v.legal_actions(st, seat)
    greedy = _greedy(v.name) if policy is RolloutPolicy.GREEDY else None
    if greedy is not None:
        return greedy(v.observe(st, seat), legal, rng)
    return rng.choice(legal)


def _in_time(deadline: float | None, done: int, what: str) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise OutOfTime("LIMIT_SEARCH_TIME", f"the call's time ran out after {done} {what}")


def simulate(ss: SearchState, actions: Sequence[Action], rollout: Rollout = Rollout(), evaluate: bool = False,
             keep_events: bool = False, with_legal: bool = True, deadline: float | None = None) -> Simulation:
    """Apply ``actions`` to ``ss`` (changed in place) for the seat to act at each point, then the rollout.

    An action the rules refuse stops the actions there (``rejected`` has its reason code; the state is the one
    before it) and no rollout is played. :raises InvalidAction: for a malformed action; :raises OutOfTime: at a
    step begun after ``deadline`` (``time.monotonic``: the search pool's budget, kept in the worker itself)."""
    v = ss.rules_variant
    st = ss.state
    out = Simulation(ss, 0, None)
    for i, action in enumerate(actions):
        _in_time(deadline, i, "actions")
        d = None if st.over else v.decision(st)
        if d is None:
            out.rejected = Rejection(i, "HAND_OVER", "the hand is over: nothing more can be played in it")
            break
        try:
            events = v.apply(st, d.seat, action)
        except IllegalAction as exc:
            out.rejected = Rejection(i, exc.code, exc.message)
            break
        except InvalidAction:
            raise
        out.applied += 1
        if keep_events:
            out.events.extend(events)
        _capped(v, ss)
    if out.rejected is None and rollout.policy is not RolloutPolicy.NONE:
        rng = random.Random(f"rollout:{rollout.seed}")
        limit = rollout.max_decisions or MAX_ROLLOUT_DECISIONS
        for done in range(limit):
            _in_time(deadline, done, "rollout decisions")
            d = None if st.over else v.decision(st)
            if d is None:
                break
            action = _choose(v, st, d.seat, rollout.policy, rng)
            events = v.apply(st, d.seat, action)
            out.rollout.append((d.seat, action))
            if keep_events:
                out.events.extend(events)
            _capped(v, ss)
    if evaluate:
        out.provisional = tuple(v.score(st).points)
    out.position = position(ss, with_legal)
    return out
