"""One game of a variant, stepped one action id at a time: the referee's match engine under the ids.

``RummyGame`` holds a ``Match`` (which deals, rotates the dealer, caps turns and hands, and ranks the game) and the
``Chooser`` of the decision in play. A step takes one id; the step that completes a move submits the rules
core's own action to the match. Rewards are the points the variant scores each hand, as it scores them (negated
where lower is better, so more is always better for a learner), paid to every seat when the hand ends.
"""

from __future__ import annotations

import copy
import enum
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rummy_env._core import (
    Action,
    Card,
    Event,
    HandState,
    KnowledgeMismatch,
    KnowledgeTracker,
    Match,
    MatchConfig,
    NotSearchable,
    SeatRecord,
    SeatView,
    find,
)
from rummy_env.actions import ActionSpace, Chooser, action_space, slots_of
from rummy_env.observation import as_positions, as_values, move_entries, observation_tensor

__all__ = ["RummyGame", "StepResult", "visible_events"]


@dataclass
class StepResult:
    """What one id did: the move it completed (if any), the points each seat got from hands that ended, and
    whether the game is over."""

    seat: int
    rewards: list[float]
    action: Action | None = None
    hands_ended: int = 0
    game_over: bool = False

    def __init__(self, seat: int, rewards: list[float], action: Action | None = None, hands_ended: int = 0,
                 game_over: bool = False) -> None:  # written, so mypyc compiles it (one a step)
        self.seat = seat
        self.rewards = rewards
        self.action = action
        self.hands_ended = hands_ended
        self.game_over = game_over


_ATOMIC = (int, float, str, bool, bytes, type(None), frozenset, enum.Enum, type)


def _copy_value(x: Any, memo: dict[int, Any]) -> Any:
    """``copy.deepcopy`` for the match's objects, sharing the immutable ones (frozen dataclasses are the referee's
    records: cards, events, melds, actions, rules); aliasing is kept through ``memo`` as deepcopy keeps it."""
    if isinstance(x, _ATOMIC):
        return x
    got = memo.get(id(x))
    if got is not None:
        return got
    t = type(x)
    params = getattr(t, "__dataclass_params__", None)
    if params is not None and params.frozen:
        return x
    if t is list:
        new_list: list[Any] = []
        memo[id(x)] = new_list
        new_list.extend(_copy_value(i, memo) for i in x)
        return new_list
    if t is tuple:
        return tuple(_copy_value(i, memo) for i in x)
    if t is dict:
        new_dict: dict[Any, Any] = {}
        memo[id(x)] = new_dict
        for k, v in x.items():
            new_dict[k] = _copy_value(v, memo)
        return new_dict
    if t is Counter:  # the knowledge tracker's: cards (frozen) to counts
        new_counter: Counter[Any] = Counter(x)
        memo[id(x)] = new_counter
        return new_counter
    if t is set:
        new_set = {_copy_value(i, memo) for i in x}
        memo[id(x)] = new_set
        return new_set
    if callable(x):  # a function (the match's recorder callback, compiled or not): shared, as deepcopy shares one
        return x
    attrs = getattr(t, "__mypyc_attrs__", None)
    if attrs is not None:  # a compiled class (the rules core's, ``Chooser``): no ``__dict__``, and ``deepcopy``
        # may not rebuild it
        if hasattr(t, "__deepcopy__"):  # one that copies itself (``_blank`` cannot make one whose constructor
            own = x.__deepcopy__(memo)  # takes arguments)
            memo[id(x)] = own
            return own
        blank = _blank(t, x)
        memo[id(x)] = blank
        _copy_attributes(x, blank, memo)
        return blank
    if hasattr(x, "__dict__") and not hasattr(t, "__slots__"):
        new = object.__new__(t)  # not copy.copy: that would pickle a RummyGame (``__reduce__``) and replay it
        memo[id(x)] = new
        new.__dict__.update({k: _copy_value(v, memo) for k, v in vars(x).items()})
        return new
    return copy.deepcopy(x, memo)


def _copy_attributes(x: Any, into: Any, memo: dict[int, Any], skip: tuple[str, ...] = ()) -> None:
    """Each attribute of ``x`` copied onto ``into`` (compiled: the class's declared attributes, no ``__dict__``)."""
    attrs = getattr(type(x), "__mypyc_attrs__", None)
    for name in attrs if attrs is not None else list(vars(x)):
        if name != "__dict__" and name not in skip and hasattr(x, name):  # an attribute not set yet is left unset
            setattr(into, name, _copy_value(getattr(x, name), memo))


def _blank(t: type[Any], x: Any) -> Any:
    """An instance of compiled class ``t`` whose attributes are then set one by one. mypyc's ``__new__`` runs
    ``__init__``, so a class whose constructor takes arguments (``Match``) is made from its own config (a few
    hundred microseconds: it deals a hand, overwritten at once)."""
    if t is Match:
        return Match(x.config)
    new: Any = t.__new__  # a compiled dataclass's own: no ``__init__``, every attribute unset
    return new(t)


def _replayed(made: tuple[Any, ...], trail: list[int | Action]) -> RummyGame:
    """A game made as ``made`` says, and every id and action of ``trail`` taken again (``RummyGame.__reduce__``)."""
    variant, n, options, seed, max_hands, max_turns, decks = made
    game = RummyGame(variant, n, options, seed, max_hands, max_turns, decks)
    for step in trail:
        if isinstance(step, int):
            game.step(step)
        else:
            game.submit(step)
    return game


class _PublicTable:
    """The public zones of a hand state the search service's tracker reads to know other hands: the rules and
    (Iceberg, ICE-9) who sits to the right, from the seats and who is dealt in, both public."""

    __slots__ = ("rules", "_state")

    def __init__(self, state: HandState) -> None:
        self.rules = getattr(state, "rules", None)
        self._state = state

    def right_of(self, seat: int) -> int:
        return int(self._state.right_of(seat))  # type: ignore[attr-defined]


def visible_events(match: Match, seat: int) -> list[Event]:
    """The events ``seat`` was sent in the hand in play (private twins as that seat received them)."""
    log = match.log
    start = next((i for i in range(len(log) - 1, -1, -1) if log[i].kind == "HAND_STARTED"), 0)
    return [e for e in log[start:] if e.visible_to(seat)]


class RummyGame:
    """A game of ``variant`` for ``num_players`` seats; ``options`` are the variant's (``max_set="unlimited"``).

    ``max_hands`` caps the hands (the variant's own end, a target score or a number of deals, comes first);
    ``decks`` stacks the deck of each hand, top card first (what OpenSpiel's chance nodes deal)."""

    def __init__(self, variant: str, num_players: int, options: Mapping[str, str] | None = None, seed: str = "0",
                 max_hands: int = 1, max_turns_per_hand: int = 400, decks: tuple[tuple[Card, ...], ...] = (),
                 match: Match | None = None) -> None:
        v = find(variant)
        self.variant = v.name
        self.options = {k: str(val) for k, val in (options or {}).items()}
        self.num_players = num_players
        self.space: ActionSpace = action_space(v.name)
        self.lower_is_better = v.lower_is_better
        self._made = (v.name, num_players, self.options, str(seed), max_hands, max_turns_per_hand, decks)
        # ``match``: one made elsewhere (a referee's session, ``rummy_env.hosted``), which moves it; this game then
        # only reads it and spells ids (``spell``), and never submits to it
        self.match = match if match is not None else Match(MatchConfig(
            v.name, num_players, self.options, seed=str(seed), decks=decks, max_turns_per_hand=max_turns_per_hand,
            max_hands=max_hands))
        self.trail: list[int | Action] = []  # every id stepped and every whole action submitted, in order
        self.returns = [0.0] * num_players
        self._chooser: Chooser | None = None
        self._chooser_key = -1  # the match's log length when it was made (every move logs an event)
        self._knowledge: dict[int, tuple[int, list[dict[Card, int]]]] = {}
        self._trackers: dict[int, KnowledgeTracker] = {}  # per seat, through the hand in play
        self._seen: dict[int, tuple[int, list[Event]]] = {}  # per seat: log read up to, its events this hand
        self._hand_start = 0
        self._scanned = 0
        self._at = -1  # the match's log length and state when the per-move caches below were filled (``_sync``)
        self._state_ref: HandState | None = None
        self._seat = -1
        self._views: dict[int, SeatView] = {}
        self._base: tuple[tuple[int, bool], np.ndarray] | None = None  # the acting seat's tensor but for its move
        self._memos: dict[int, dict[str, Any]] = {}  # per seat: what its observation keeps from step to step
        self._table: _PublicTable | None = None  # the tracker's view of the public table, per hand state
        self._max_turns = max_turns_per_hand if match is None else match.config.max_turns_per_hand

    # ------------------------------------------------------------ copies

    def __deepcopy__(self, memo: dict[int, Any]) -> RummyGame:
        """A copy that shares what never changes (cards, events, table melds, actions, the rules record: frozen
        records) and copies the containers around them: OpenSpiel clones a state at every step of a search, and
        ``copy.deepcopy`` rebuilt every card of the match's log each time (40x slower)."""
        m = self.match
        for fixed in (m.variant, m.rules, m.config, self.space):
            memo[id(fixed)] = fixed
        # made by the constructor over the same match (no deal: compiled, the class has no ``__dict__`` to fill and
        # its ``__new__`` runs ``__init__``), then every attribute copied over but these, which the copy starts
        # afresh: the observation's memo, the knowledge trackers (compiled: no copy of their own; a copy's first
        # ``known_cards`` feeds a new one the hand's events) and what they answered, and the public table (made
        # again for the copy's own state)
        new = RummyGame(self.variant, self.num_players, self.options, match=m)
        memo[id(self)] = new
        _copy_attributes(self, new, memo, skip=("_memos", "_trackers", "_knowledge", "_table"))
        return new

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as how it was made and what was played (the match holds a callback pickle cannot write); it
        is played again on load, the same way, as every step is deterministic given the seed and the decks. (Not
        ``__getstate__``: compiled, the class's ``__new__`` runs ``__init__``, which needs its arguments.)"""
        return _replayed, (self._made, list(self.trail))

    # ------------------------------------------------------------ queries

    def _sync(self) -> None:
        """Drops the per-move caches (the seat to act, the views) once the match has moved: its log only grows and
        every move logs an event; the state's identity too (a test or a search may put another state in its place)."""
        m = self.match
        if len(m.log) != self._at or m.state is not self._state_ref:
            self._at = len(m.log)
            self._state_ref = m.state
            d = m.pending()
            self._seat = -1 if d is None else d.seat
            self._views.clear()
            self._base = None

    @property
    def over(self) -> bool:
        return self.current_seat < 0

    @property
    def current_seat(self) -> int:
        """The seat to act (-1 once the game is over)."""
        self._sync()
        return self._seat

    def chooser(self) -> Chooser:
        """The decision in play (made once per decision: the legal actions, spelled)."""
        if self._chooser is None or self._chooser_key != len(self.match.log):  # (a hosted match moves on its own;
            # a search that swaps the state for a sample keeps the log, and the steps taken)
            seat = self.current_seat
            if seat < 0:
                raise RuntimeError("the game is over")
            state = self.match.state
            assert state is not None
            self._chooser = Chooser(self.space, self.match.legal_actions(seat), slots_of(state.melds))
            self._chooser_key = len(self.match.log)
        return self._chooser

    def legal_ids(self) -> list[int]:
        return self.chooser().legal_ids()

    def mask(self) -> np.ndarray:
        return self.chooser().mask()

    def view(self, seat: int) -> SeatView:
        """The seat's view (one per seat and move: the observation and the tracker's record share it)."""
        self._sync()
        got = self._views.get(seat)
        if got is None:
            got = self._views[seat] = self.match.view(seat)
        return got

    def observation(self, seat: int, known: bool = True) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"}`` of ``seat`` (the mask all zero but for the seat to act); ``known``:
        with the cards it knows in other hands.

        Within a compound move the view, the known cards and so every entry but the move's stay as they were at its
        first step: that tensor is kept (without the move) and each further step copies it and writes the move's
        entries (``move_entries``) over it."""
        self._sync()
        if self._seat != seat:
            mask = np.zeros(self.space.size, dtype=np.int8)
            prefix: list[int] = []
        else:
            ch = self.chooser()
            prefix, mask = ch.prefix, ch.mask()
            if prefix:
                key = (seat, known)
                base = self._base
                if base is None or base[0] != key:
                    base = self._base = (key, self._tensor(seat, known, []))
                t = base[1].copy()
                idx, val = move_entries(self.variant, self.num_players, prefix)
                t[as_positions(idx)] = as_values(val)
                return {"observation": t, "action_mask": mask}
        return {"observation": self._tensor(seat, known, prefix), "action_mask": mask}

    def _tensor(self, seat: int, known: bool, prefix: list[int]) -> np.ndarray:
        cards = self.known_cards(seat) if known and self._seat >= 0 else []
        return observation_tensor(self.view(seat), cards, prefix, memo=self.memo(seat))

    def memo(self, seat: int) -> dict[str, Any]:
        """The seat's observation memo (``observation_entries(..., memo=)``): positions kept while they hold."""
        got = self._memos.get(seat)
        if got is None:
            got = self._memos[seat] = {}
        return got

    def events(self, seat: int) -> list[Event]:
        return list(self._hand_events(seat))

    def known_cards(self, seat: int) -> list[dict[Card, int]]:
        """Per seat, the cards ``seat`` knows are in that hand (a card taken face up and not seen to leave), as the
        search service's tracker reads them from what ``seat`` was told; empty where it cannot tell. The tracker
        is kept per seat through the hand and fed only the events added since the last call."""
        key = len(self.match.log)
        got = self._knowledge.get(seat)
        if got is not None and got[0] == key:
            return got[1]
        try:
            tracker = self._trackers.get(seat)
            if tracker is None:
                tracker = self._trackers[seat] = KnowledgeTracker()
            known = tracker.known(self._record(seat))
        except (KnowledgeMismatch, NotSearchable):
            known = [{} for _ in range(self.num_players)]
        self._knowledge[seat] = (key, known)
        return known

    def _record(self, seat: int) -> SeatRecord:
        """What the tracker reads of ``seat``'s record to know the cards in other hands (``KnowledgeTracker.known``):
        the view, the events sent to the seat and, of the public table, the rules and who sits to the right
        (Iceberg). ``seat_record`` would deep-copy the public state and count the deck, for checks ``known`` skips."""
        m = self.match
        state = m.state
        if state is None or state.over or m.outcome is not None:
            raise NotSearchable("NO_HAND", "no hand is in play")
        table = self._table
        if table is None or table._state is not state:  # one per hand state (its rules and seats never change)
            table = self._table = _PublicTable(state)
        return SeatRecord(self.variant, self.view(seat), self._hand_events(seat), table,
                          (), (), self._max_turns)

    def _hand_events(self, seat: int) -> list[Event]:
        """``visible_events(match, seat)``, read incrementally into one list per seat that only grows (the tracker
        keeps how many it read and the last): the log only grows, a new hand starts afresh."""
        log = self.match.log
        for i in range(self._scanned, len(log)):
            if log[i].kind == "HAND_STARTED":
                self._hand_start = i
                self._seen.clear()
                self._trackers.clear()
        self._scanned = len(log)
        got = self._seen.get(seat)
        if got is None:
            got = self._seen[seat] = (self._hand_start, [])
        read, events = got
        if read < len(log):
            events += [e for e in log[read:] if e.visible_to(seat)]
            self._seen[seat] = (len(log), events)
        return events

    # ------------------------------------------------------------ steps

    def step(self, action_id: int) -> StepResult:
        """Take one id for the seat to act. :raises ActionCodeError: for an id the mask does not allow."""
        seat = self.current_seat
        action = self.chooser().step(int(action_id))
        self.trail.append(int(action_id))
        out = StepResult(seat=seat, rewards=[0.0] * self.num_players)
        if action is None:
            return out
        self.submit(action, out)
        return out

    def spell(self, action_id: int) -> Action | None:
        """Take one id for the seat to act without submitting: the move it completes (for whoever submits it: a
        hosted match's session), else None. :raises ActionCodeError: for an id the mask does not allow."""
        action = self.chooser().step(int(action_id))
        self.trail.append(int(action_id))
        if action is not None:
            self._chooser = None
        return action

    def rewards_since(self, hands_before: int) -> list[float]:
        """The points each seat scored in the hands ended since ``hands_before`` hands were played (more is
        better: negated where the variant counts penalties)."""
        out = [0.0] * self.num_players
        for score in self.match.game.history[hands_before:]:
            for s, p in enumerate(score.points):
                out[s] += float(-p if self.lower_is_better else p)
        return out

    def submit(self, action: Action, out: StepResult | None = None) -> StepResult:
        """Apply one of the rules core's legal actions whole (for a policy that answers with actions)."""
        seat = self.current_seat
        if seat < 0:
            raise RuntimeError("the game is over")
        m = self.match
        out = out if out is not None else StepResult(seat=seat, rewards=[0.0] * self.num_players)
        before = m.game.hands_played
        m.submit(seat, action)
        if self._chooser is None or not self._chooser.open:  # a whole action, not the last of an id's steps
            self.trail.append(action)
        self._chooser = None
        out.action = action
        ended = m.game.hands_played - before
        if ended:
            for score in m.game.history[before:]:
                for s, p in enumerate(score.points):
                    r = float(-p if self.lower_is_better else p)
                    out.rewards[s] += r
                    self.returns[s] += r
        out.hands_ended = ended
        out.game_over = self.current_seat < 0
        return out
