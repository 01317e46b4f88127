"""A match: hands of one variant until the game ends. Pure: no clocks, no I/O.

The engine owns what every variant shares: dealing from a seeded shuffle or a stacked deck (COM-5), dealer
rotation (COM-4), totals, caps on turns per hand and hands per game, missed-turn accounting, forfeits and the
final ranking. The async session (``referee.service.session``) adds clocks and streams on top.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import referee.rules
from referee.rules.cards import Card, parse_cards, shuffled
from referee.rules.codec import action_to_json, event_to_json
from referee.rules.errors import IllegalAction, InvalidOption
from referee.rules.variants import find
from referee.rules.variants.base import (
    Action,
    Decision,
    Event,
    GameOutcome,
    GameState,
    HandScore,
    HandState,
    SeatView,
    Table,
    Variant,
    default_teams,
    rank_by_totals,
)

__all__ = ["MatchConfig", "Match", "MatchOutcome", "FORFEITED_MISSES", "rules_hash"]

FORFEITED_MISSES = 99  # what ``default_action`` is told for a forfeited seat: play it out by autopilot


@dataclass(frozen=True)
class MatchConfig:
    """What a match is: variant, options, seats and teams, seed or stacked decks, and the caps."""

    variant: str
    seats: int
    options: Mapping[str, str] = field(default_factory=dict)
    seed: str = "0"
    decks: tuple[tuple[Card, ...], ...] = ()  # stacked deck per hand, top card first (tests and puzzles)
    teams: tuple[int, ...] = ()  # team per seat; empty: each seat alone, or opposite partners if team_play
    max_turns_per_hand: int = 400
    max_hands: int = 100
    forfeit_after: int | None = None  # consecutive missed turns; None: the variant's own default


@dataclass(frozen=True)
class MatchOutcome:
    ranking: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    hands: tuple[HandScore, ...]
    reason: str
    forfeited: tuple[int, ...]


class Match:
    """Runs hands of one variant. Call ``pending()``, then ``submit`` or ``timeout`` for that seat."""

    def __init__(self, config: MatchConfig, on_record: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.config = config
        self.variant: Variant = find(config.variant)
        v = self.variant
        if not v.min_seats <= config.seats <= v.max_seats:
            raise InvalidOption("BAD_SEAT_COUNT", f"{v.name} is for {v.min_seats} to {v.max_seats} players, not {config.seats}")
        self.rules = _configured(v.name, tuple(config.options.items()), config.seats)
        self.teams = self._teams(config)
        self.game = GameState(config.seats, self.teams, [0] * config.seats, eliminated=[False] * config.seats)
        self.dealer = 0
        self.state: HandState | None = None
        self.log: list[Event] = []
        self.missed = [0] * config.seats
        self._missed_turn = [-1] * config.seats
        self.forfeited: list[int] = []
        self._forfeit_batches: list[tuple[int, ...]] = []
        self.outcome: MatchOutcome | None = None
        self._record = on_record or (lambda _r: None)
        self._recording = on_record is not None  # no recorder (self-play, bots' tests): build no record lines
        fa = config.forfeit_after
        self.forfeit_after = fa if fa is not None else getattr(v, "forfeit_after_misses", 3)
        self.rules_hash = rules_hash(v, config.options)
        self._record({"type": "match", "config": _config_json(config), "variant": v.name, "teams": list(self.teams),
                      "rules_hash": self.rules_hash})
        self._start_hand()

    # ------------------------------------------------------------ queries

    @property
    def over(self) -> bool:
        return self.outcome is not None

    def pending(self) -> Decision | None:
        if self.state is None or self.outcome is not None:
            return None
        return self.variant.decision(self.state)

    def view(self, seat: int) -> SeatView:
        assert self.state is not None
        return self.variant.observe(self.state, seat)

    def legal_actions(self, seat: int) -> list[Action]:
        assert self.state is not None
        return self.variant.legal_actions(self.state, seat)

    def on_autopilot(self, seat: int) -> bool:
        return seat in self.forfeited

    # ------------------------------------------------------------ moves

    def submit(self, seat: int, action: Action) -> list[Event]:
        """Apply a seat's own action. :raises IllegalAction: (nothing changes)"""
        events = self._apply(seat, action, timed_out=False)
        self.missed[seat] = 0
        return events

    def timeout(self, seat: int) -> list[Event]:
        """The seat missed its deadline: count the missed turn and play the variant's default move."""
        assert self.state is not None
        if self._missed_turn[seat] != self.state.turns:
            self._missed_turn[seat] = self.state.turns
            self.missed[seat] += 1
        events = [Event("TIMED_OUT", seat, text=f"seat {seat} missed its deadline ({self.missed[seat]} in a row)")]
        self.log.extend(events)
        self._record_events(events)
        if self.forfeit_after and self.missed[seat] >= self.forfeit_after and seat not in self.forfeited:
            events += self.forfeit(seat, f"missed {self.missed[seat]} turns in a row")
            if self.over:  # that was the last seat playing
                return events
        misses = FORFEITED_MISSES if seat in self.forfeited else self.missed[seat]
        action = self.variant.default_action(self.state, seat, misses)
        return events + self._apply(seat, action, timed_out=True)

    def autoplay(self, seat: int) -> list[Event]:
        """A move for a forfeited seat (the autopilot plays it out)."""
        assert self.state is not None
        action = self.variant.default_action(self.state, seat, FORFEITED_MISSES)
        return self._apply(seat, action, timed_out=True)

    def forfeit(self, seat: int | Iterable[int], reason: str) -> list[Event]:
        """Seats leave (crash, disconnect, too many misses, never connected): an autopilot plays each and they
        rank below every seat still playing; among themselves, seats that left later rank higher, and seats
        that leave in one call (e.g. at the connect deadline) tie. Once no seat is left to play, the match ends
        at once, ranked so, instead of being played out by autopilots."""
        seats = [s for s in ([seat] if isinstance(seat, int) else seat) if s not in self.forfeited]
        if not seats or self.over:
            return []
        self._forfeit_batches.append(tuple(seats))
        events = []
        for s in seats:
            self.forfeited.append(s)
            ev = Event("FORFEITED", s, text=f"seat {s} forfeits: {reason}")
            self.log.append(ev)
            events.append(ev)
            entry = {"type": "forfeit", "seat": s, "reason": reason, "hand": self.game.hands_played + 1}
            if len(seats) > 1:
                entry["with"] = seats  # one batch: replay forfeits them together
            self._record(entry)
            self._record_events([ev])
        if len(self.forfeited) == self.game.seats:
            events += self.stop("every seat forfeited: no one is left to play")
        return events

    def stop(self, reason: str) -> list[Event]:
        """End the match now (no seat left, or a server limit on time or record size): the hand in play is not
        scored and seats rank by their totals so far, forfeited seats last as always."""
        if self.over:
            return []
        self._record({"type": "stopped", "reason": reason})
        if self.state is not None:
            self.state.over = True
        ev = Event("MATCH_ENDED", text=reason)
        self.log.append(ev)
        self._record_events([ev])
        self._finish(GameOutcome(rank_by_totals(self.game, self.variant.lower_is_better), reason))
        return [ev]

    def _apply(self, seat: int, action: Action, timed_out: bool) -> list[Event]:
        decision = self.pending()
        if decision is None:
            raise IllegalAction("MATCH_OVER", "the match is over")
        if decision.seat != seat:
            raise IllegalAction("NOT_YOUR_TURN", f"seat {decision.seat} is to act, not seat {seat} (COM-4)")
        assert self.state is not None
        events = self.variant.apply(self.state, seat, action)
        if self._recording:
            self._record({"type": "action", "seat": seat, "action": action_to_json(action), "timed_out": timed_out})
            self._record_events(events)
        self.log.extend(events)
        events += self._after_move()
        return events

    # ------------------------------------------------------------ hands and game

    def _after_move(self) -> list[Event]:
        assert self.state is not None
        if not self.state.over and self.variant.decision(self.state) is not None:
            if self.state.turns < self.config.max_turns_per_hand:
                return []
            self.state.over = True
            self.state.end_reason = f"turn cap ({self.config.max_turns_per_hand} turns)"
        return self._end_hand()

    def _end_hand(self) -> list[Event]:
        assert self.state is not None
        self.state.over = True
        score = self.variant.score(self.state)
        g = self.game
        for s, p in enumerate(score.points):
            g.totals[s] += p
        g.hands_played += 1
        g.history.append(score)
        ev = Event("HAND_ENDED", score.winner, points=0, text=f"hand {g.hands_played}: {score.reason}; points {list(score.points)}")
        reveal = [Event("HAND_REVEALED", s, tuple(self.state.hands[s]), text=f"seat {s} held") for s in range(g.seats)]
        events = [*reveal, ev]
        self.log.extend(events)
        self._record_events(events)
        self._record({"type": "hand_score", "hand": g.hands_played, "points": list(score.points), "winner": score.winner,
                      "reason": score.reason, "details": list(score.details), "totals": list(g.totals)})
        outcome = self.variant.game_outcome(self.rules, g, self.config.max_hands)
        if outcome is None and g.hands_played >= self.config.max_hands:
            outcome = GameOutcome(rank_by_totals(g, self.variant.lower_is_better), f"hand cap ({self.config.max_hands} hands)")
        if outcome is not None:
            ended = Event("MATCH_ENDED", text=outcome.reason)
            self._record_events([ended])
            self._finish(outcome)  # the result is the record's last line
            events.append(ended)
            return events
        self.dealer = (self.dealer + 1) % g.seats
        while g.eliminated[self.dealer]:
            self.dealer = (self.dealer + 1) % g.seats
        events += self._start_hand()
        return events

    def _start_hand(self) -> list[Event]:
        g = self.game
        n = g.hands_played + 1
        if n <= len(self.config.decks):
            deck = list(self.config.decks[n - 1])
        else:
            deck = shuffled(self.variant.deck(self.rules, g.seats), f"{self.config.seed}:hand:{n}")
        if self._recording:
            self._record({"type": "hand", "hand": n, "dealer": self.dealer, "deck": [str(c) for c in deck]})
        table = Table(g.seats, self.dealer, n, self.teams, tuple(not e for e in g.eliminated), tuple(g.totals))
        self.state = self.variant.new_hand(self.rules, table, deck, f"{self.config.seed}:{n}")
        ev = Event("HAND_STARTED", self.dealer, count=n, text=f"hand {n}, dealer seat {self.dealer}")
        events = [ev, *self.state.opening_events]
        self.state.opening_events = []
        self.log.extend(events)
        self._record_events(events)
        if self.variant.decision(self.state) is None:  # a hand can end at once (an empty stock, a forced end)
            events += self._end_hand()
        return events

    def _record_events(self, events: Iterable[Event]) -> None:
        """Every event goes into the record with its audience (``to``, ``not_to``): what each seat and each
        watcher was sent can be checked against it (``referee replay --verify``)."""
        if not self._recording:
            return
        for e in events:
            self._record({"type": "event", **event_to_json(e)})

    def _finish(self, outcome: GameOutcome) -> None:
        ranking = [tuple(s for s in group) for group in outcome.ranking]
        if self.forfeited:
            # a team is out with its first seat to leave; later batches rank above earlier ones
            placed: set[int] = set()
            out_groups: list[tuple[int, ...]] = []
            for batch in self._forfeit_batches:
                losers = {self.teams[s] for s in batch}
                group = tuple(s for s in range(self.game.seats) if self.teams[s] in losers and s not in placed)
                if group:
                    out_groups.append(group)
                    placed.update(group)
            ranking = [tuple(s for s in grp if s not in placed) for grp in ranking]
            ranking = [g for g in ranking if g] + out_groups[::-1]
        self.outcome = MatchOutcome(tuple(ranking), tuple(self.game.totals), tuple(self.game.history), outcome.reason,
                                    tuple(self.forfeited))
        self._record({"type": "result", "ranking": [list(g) for g in self.outcome.ranking], "totals": list(self.game.totals),
                      "reason": outcome.reason, "forfeited": list(self.forfeited)})

    def _teams(self, config: MatchConfig) -> tuple[int, ...]:
        n = config.seats
        if config.teams:
            if len(config.teams) != n:
                raise InvalidOption("BAD_TEAMS", f"teams lists {len(config.teams)} seats for a {n}-seat match")
            return tuple(config.teams)
        return default_teams(self.variant.team_play, n)




# The rules core every variant runs on: a change to any of these files may change how a record plays out.
_CORE_SOURCES = ("cards.py", "melds.py", "variants/base.py", "match.py")


@cache
def _source_digest(module: str) -> bytes:
    """A digest of the rules source a variant runs on: its own module and the shared rules core."""
    root = Path(referee.rules.__file__).resolve().parent  # the sources, also when the compiled modules run
    h = hashlib.sha256()
    for path in (root / name for name in _CORE_SOURCES):
        h.update(path.name.encode() + b"\0" + path.read_bytes().replace(b"\r\n", b"\n"))
    variant_file = Path(getattr(sys.modules.get(module), "__file__", None) or "")
    if module.startswith("referee.rules."):
        variant_file = root.joinpath(*module.split(".")[2:]).with_suffix(".py")
    if variant_file.suffix == ".py" and variant_file.is_file():
        h.update(b"variant\0" + variant_file.read_bytes().replace(b"\r\n", b"\n"))
    return h.digest()


def rules_hash(variant: Variant, options: Mapping[str, str]) -> str:
    """``sha256:...`` over the rules a match is played by: the variant's rules source (its module and the rules
    core) and its options normalised (every option, defaults filled in, as the variant reads them). Two records
    with the same hash were made by the same rules; a replay under another hash may not reproduce."""
    defaults = tuple((o.name, o.default) for o in variant.options)
    return _rules_hash(type(variant).__module__, variant.name, defaults, tuple(options.items()))


@lru_cache(maxsize=256)
def _configured(variant: str, options: tuple[tuple[str, str], ...], seats: int) -> Any:
    """``variant.configure``, once per variant, options and seat count: a learning environment starts a match every
    few dozen steps, and reading the options is a tenth of a match's start (Indian: 26 thousand instructions). The
    rules record is frozen, so matches share it, and the rules core's per-rules memories find it by identity.
    :raises InvalidOption: (not remembered)"""
    return find(variant).configure(dict(options), seats)


@lru_cache(maxsize=256)
def _rules_hash(module: str, name: str, defaults: tuple[tuple[str, str], ...],
                options: tuple[tuple[str, str], ...]) -> str:
    """``rules_hash`` of hashable arguments: every match's set-up asks it, for few distinct answers."""
    given = {str(k).strip().lower(): str(val).strip().lower() for k, val in options}
    normal = {option: given.pop(option, default) for option, default in defaults} | given
    h = hashlib.sha256(_source_digest(module))
    h.update(name.encode() + b"\0" + repr(sorted(normal.items())).encode())
    return "sha256:" + h.hexdigest()


def _config_json(c: MatchConfig) -> dict[str, Any]:
    return {
        "variant": c.variant, "seats": c.seats, "options": dict(c.options), "seed": c.seed,
        "decks": [[str(x) for x in d] for d in c.decks], "teams": list(c.teams),
        "max_turns_per_hand": c.max_turns_per_hand, "max_hands": c.max_hands, "forfeit_after": c.forfeit_after,
    }


def config_from_json(d: Mapping[str, Any]) -> MatchConfig:
    return MatchConfig(
        variant=d["variant"], seats=d["seats"], options=d.get("options", {}), seed=d.get("seed", "0"),
        decks=tuple(tuple(parse_cards(" ".join(x))) for x in d.get("decks", [])), teams=tuple(d.get("teams", [])),
        max_turns_per_hand=d.get("max_turns_per_hand", 400), max_hands=d.get("max_hands", 100),
        forfeit_after=d.get("forfeit_after"),
    )


def play_seats(match: Match, choose: Callable[[int, SeatView, list[Action]], Action], limit: int = 1_000_000) -> MatchOutcome:
    """Play a match in-process: ``choose(seat, view, legal)`` answers every decision (tests, bots, benchmarks)."""
    for _ in range(limit):
        d = match.pending()
        if d is None:
            break
        if match.on_autopilot(d.seat):
            match.autoplay(d.seat)
            continue
        match.submit(d.seat, choose(d.seat, match.view(d.seat), match.legal_actions(d.seat)))
    assert match.outcome is not None, "match did not finish"
    return match.outcome

