"""A match record as frames to step through (the replay viewer and the live page draw these). Pure: no I/O.

The record is replayed the way ``referee.service.replay`` does it (a ``Match`` with the recorded decks, fed the recorded
actions), and after every step each seat's view is taken with the variant's own ``observe``: the very view the
server sends that seat in a ``DecisionRequest``. Events keep their audience and are filtered with
``Event.visible_to`` and ``Event.public``, the tests the server uses to send them to seats and to watchers. So
what a perspective is shown comes from the same code as what the referee would have told it:

- a seat: its own view and the events it received;
- a spectator: only what every seat's view shares, and public events (what ``Watch`` streams);
- everything (every hand, the stock, private events): only once the record has its result.

A seat's view of a match still being played is not given out at all (``timeline_json`` and ``hand_json`` refuse
it): the viewer has no seat tokens, and a page showing a running seat's hand would tell its opponents.

A ``TimelineBuilder`` takes record entries one at a time, so a record still being written can be followed live.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from referee.rules.cards import Card, Rank, Suit, parse_cards
from referee.rules.codec import action_from_json
from referee.rules.errors import RefereeError
from referee.rules.match import Match, config_from_json
from referee.rules.melds import Placed
from referee.rules.variants.base import Event, HandScore, HandState, PileView, SeatView, TableMeld
from referee.service.replay import ReplayMismatch

__all__ = [
    "EVERYTHING",
    "SPECTATOR",
    "Frame",
    "HiddenPerspective",
    "Perspective",
    "Timeline",
    "TimelineBuilder",
    "build_timeline",
    "builder_of",
    "frame_json",
    "hand_json",
    "parse_perspective",
    "timeline_json",
]

SPECTATOR = "spectator"
EVERYTHING = "all"
Perspective = int | str  # a seat number, SPECTATOR or EVERYTHING

_PRIVATE_VIEW_FIELDS = ("seat", "hand", "received")  # what one seat's view holds that another's does not


class HiddenPerspective(Exception):
    """The perspective asked for would show cards it may not see yet (everything before the match is over), or
    names no seat of the match."""


@dataclass(frozen=True)
class Frame:
    """The table after one step: a deal, a move, a hand's end, a forfeit or a stop."""

    index: int
    hand: int
    step: str  # "deal", "move", "hand_end", "forfeit", "stop"
    actor: int | None  # the seat that moved (public: everyone sees whose turn it was)
    timed_out: bool  # the move was made for the seat (a missed deadline, or the autopilot of a forfeited seat)
    to_act: tuple[int, str] | None  # who must decide next, in which phase
    pile: PileView
    views: tuple[SeatView, ...]  # what each seat sees, from the variant's observe
    events: tuple[Event, ...]  # what happened in this step, each with its audience
    stock: tuple[Card, ...]  # top first; shown only with everything
    totals: tuple[int, ...]
    score: HandScore | None = None  # the hand's score, on its hand_end frame
    over: bool = False  # the match is over after this frame
    result: Mapping[str, Any] | None = None  # ranking, totals, reason, forfeited: on the last frame


@dataclass
class Timeline:
    """Every frame of one record, and what the record says about the match."""

    match_id: str
    variant: str
    seats: int
    seat_names: tuple[str, ...]
    teams: tuple[int, ...]
    options: Mapping[str, str]
    frames: list[Frame]
    complete: bool  # the record has its result: the match is over
    aborted: str = ""  # why the match was aborted, if it was (it then has no result)
    ranges: Mapping[int, tuple[int, int]] = field(default_factory=dict)  # hand -> its first and last frame
    score_at: Mapping[int, int] = field(default_factory=dict)  # hand -> the frame that scores it

    def __post_init__(self) -> None:
        if self.frames and not self.ranges:  # a timeline made by hand: index it once (the builder keeps its own)
            ranges: dict[int, tuple[int, int]] = {}
            for f in self.frames:
                ranges[f.hand] = (ranges.get(f.hand, (f.index, f.index))[0], f.index)
            self.ranges = ranges
            self.score_at = {f.hand: f.index for f in self.frames if f.score is not None}

    def hands(self) -> list[int]:
        return sorted(self.ranges)

    def hand_frames(self, hand: int) -> list[Frame]:
        """The frames of ``hand`` (a slice: hands are contiguous). :raises KeyError: no such hand."""
        first, last = self.ranges[hand]
        return self.frames[first:last + 1]


class TimelineBuilder:
    """Turns record entries into frames as they come. ``decks`` are hands' decks known in advance (a whole
    record); a deck not known yet is dealt as the match's own config deals it, then checked against the
    record's ``hand`` entry when that arrives. ``on_frame(frame, state)`` sees each new frame with the true state
    behind it (the hidden-card tests check every perspective against it)."""

    def __init__(self, match_id: str = "", decks: Sequence[Sequence[Card]] = (),
                 on_frame: Callable[[Frame, HandState], None] | None = None) -> None:
        self.match_id = match_id
        self._on_frame = on_frame
        self.seat_names: tuple[str, ...] = ()
        self.frames: list[Frame] = []
        self.complete = False
        self.aborted = ""
        self._decks = [tuple(d) for d in decks]
        self._head: dict[str, Any] | None = None
        self._match: Match | None = None
        self._dealt: dict[int, list[str]] = {}  # hand -> the deck the replay dealt
        self._recorded_decks: dict[int, list[str]] = {}
        self._scored: list[dict[str, Any]] = []  # the replay's hand_score entries
        self._result: dict[str, Any] | None = None
        self._hand_ends: list[tuple[HandState, HandScore]] = []  # hands that ended during the step in progress
        self._ranges: dict[int, tuple[int, int]] = {}  # kept as frames come, so no reader scans every frame
        self._score_at: dict[int, int] = {}

    @property
    def started(self) -> bool:
        return self._match is not None

    def timeline(self) -> Timeline:
        """The frames so far. :raises ReplayMismatch: when no hand has been dealt yet."""
        if self._match is None or self._head is None:
            raise ReplayMismatch("the record has no match and deal entries yet")
        m = self._match
        names = self.seat_names or tuple(f"seat {s}" for s in range(m.config.seats))
        return Timeline(self.match_id, m.variant.name, m.config.seats, names, m.teams, dict(m.config.options),
                        list(self.frames), self.complete, self.aborted, dict(self._ranges), dict(self._score_at))

    def feed(self, entry: Mapping[str, Any]) -> list[Frame]:
        """Take one record entry; return the frames it completes. :raises ReplayMismatch: when the replay deals
        or scores differently from the record."""
        kind = entry.get("type")
        before = len(self.frames)
        if kind == "header":
            self.match_id = self.match_id or str(entry.get("match_id", ""))
            self.seat_names = tuple(entry.get("seat_names", ()))
        elif kind == "match":
            self._head = dict(entry)
        elif kind == "hand":
            self._take_deck(int(entry["hand"]), list(entry["deck"]))
        elif self._match is None:
            if kind in ("action", "forfeit", "stopped"):
                raise ReplayMismatch(f"a {kind} entry comes before the first deal")
        elif kind == "action":
            seat, timed_out = int(entry["seat"]), bool(entry.get("timed_out"))
            try:
                events = self._match._apply(seat, action_from_json(entry["action"]), timed_out)
            except RefereeError as exc:
                raise ReplayMismatch(f"hand {self._match.game.hands_played + 1}: the recorded move of seat {seat} is "
                                     f"refused by the replay ({exc.code}: {exc.message})") from exc
            self._add_step(events, "move", seat, timed_out)
        elif kind == "forfeit":
            self._add_step(self._match.forfeit(entry.get("with", entry["seat"]), str(entry["reason"])), "forfeit", None)
        elif kind == "stopped":
            self._add_step(self._match.stop(str(entry["reason"])), "stop", None)
        elif kind == "hand_score":
            self._check_score(entry)
        elif kind == "result":
            self._check_result(entry)
            self.complete = True
        elif kind == "aborted":
            self.aborted = str(entry.get("reason", "aborted"))
        return self.frames[before:]

    # ------------------------------------------------------------ replaying

    def _take_deck(self, hand: int, deck: list[str]) -> None:
        self._recorded_decks[hand] = deck
        if self._match is None:
            if self._head is None:
                raise ReplayMismatch("the record deals a hand before its match entry")
            config = config_from_json(self._head["config"])
            known = list(self._decks) or [tuple(parse_cards(" ".join(deck)))]
            decks = tuple(known) + config.decks[len(known):]
            self._match = Match(replace(config, decks=decks), on_record=self._on_replay_record)
            self._add_step(list(self._match.log), "deal", None)
        dealt = self._dealt.get(hand)
        if dealt is not None and dealt != deck:
            raise ReplayMismatch(f"hand {hand}: the record deals {' '.join(deck[:5])}..., the replay {' '.join(dealt[:5])}...")

    def _on_replay_record(self, entry: dict[str, Any]) -> None:
        """The replaying match's own record: the decks it deals, its scores, and each hand's final state (taken
        here because by the time the move returns, the next hand may already be dealt)."""
        kind = entry["type"]
        if kind == "hand":
            hand = int(entry["hand"])
            self._dealt[hand] = list(entry["deck"])
            recorded = self._recorded_decks.get(hand)
            if recorded is not None and recorded != entry["deck"]:
                raise ReplayMismatch(f"hand {hand}: the record deals another deck than the replay")
        elif kind == "hand_score":
            self._scored.append(entry)
            m = self._match
            if m is not None and m.state is not None:  # (None: a hand that ended as it was dealt; no frame of its own)
                self._hand_ends.append((m.state, m.game.history[-1]))
        elif kind == "result":
            self._result = entry

    def _check_score(self, entry: Mapping[str, Any]) -> None:
        hand = int(entry["hand"])
        got = next((s for s in self._scored if s["hand"] == hand), None)
        if got is None or got["points"] != entry["points"] or got["totals"] != entry["totals"]:
            raise ReplayMismatch(f"hand {hand}: recorded {entry['points']}, replayed {got['points'] if got else 'nothing'}")

    def _check_result(self, entry: Mapping[str, Any]) -> None:
        got = self._result
        if got is None or got["ranking"] != entry["ranking"] or got["totals"] != entry["totals"]:
            raise ReplayMismatch(f"result: recorded {dict(entry)}, replayed {got}")

    def _add_step(self, events: list[Event], step: str, actor: int | None, timed_out: bool = False) -> None:
        """Frames for one step's events: one per hand that ended in it (on that hand's final state), then one
        for the table as it is now, unless the step ended with a hand."""
        if not events:
            return
        m = self._match
        assert m is not None
        segment: list[Event] = []
        ends = list(self._hand_ends)
        self._hand_ends.clear()
        for e in events:
            segment.append(e)
            if e.kind == "HAND_ENDED" and ends:
                state, score = ends.pop(0)
                self._append(state, segment, "hand_end", actor, timed_out, score=score)
                segment, actor, timed_out = [], None, False
            elif e.kind == "MATCH_ENDED" and len(segment) == 1 and self.frames and self.frames[-1].step == "hand_end" \
                    and not self.frames[-1].over:
                last = self.frames[-1]
                self.frames[-1] = replace(last, events=(*last.events, e))  # the match ended with that hand
                segment = []
        if segment and m.state is not None:
            self._append(m.state, segment, step, actor, timed_out)
        if m.over and self.frames and not self.frames[-1].over:
            self.frames[-1] = replace(self.frames[-1], over=True, result=self._outcome())

    def _append(self, state: HandState, events: list[Event], step: str, actor: int | None, timed_out: bool,
                score: HandScore | None = None) -> None:
        m = self._match
        assert m is not None
        v = m.variant
        decision = None if state.over or m.over else v.decision(state)
        if events[0].kind == "HAND_STARTED":
            step = "deal"  # the rest of a step that ended a hand: the next hand's deal
        frame = Frame(
            index=len(self.frames), hand=state.hand_number, step=step, actor=actor, timed_out=timed_out,
            to_act=(decision.seat, decision.phase.value) if decision is not None else None, pile=state.pile_view,
            views=tuple(v.observe(state, s) for s in range(state.seats)), events=tuple(events),
            stock=tuple(state.stock), totals=tuple(m.game.totals), score=score,
        )
        self.frames.append(frame)
        self._ranges[frame.hand] = (self._ranges.get(frame.hand, (frame.index, frame.index))[0], frame.index)
        if score is not None:
            self._score_at[frame.hand] = frame.index
        if self._on_frame is not None:
            self._on_frame(frame, state)

    def _outcome(self) -> dict[str, Any] | None:
        out = self._match.outcome if self._match is not None else None
        if out is None:
            return None
        return {"ranking": [list(g) for g in out.ranking], "totals": list(out.totals), "reason": out.reason,
                "forfeited": list(out.forfeited)}


def build_timeline(entries: Iterable[Mapping[str, Any]], match_id: str = "",
                   on_frame: Callable[[Frame, HandState], None] | None = None) -> Timeline:
    """The frames of a whole record (or of as much of it as is written). :raises ReplayMismatch:"""
    return builder_of(entries, match_id, on_frame).timeline()


def builder_of(entries: Iterable[Mapping[str, Any]], match_id: str = "",
               on_frame: Callable[[Frame, HandState], None] | None = None) -> TimelineBuilder:
    """A builder fed a whole record (its decks known in advance), to be fed the lines that follow as the record
    grows. :raises ReplayMismatch:"""
    entries = list(entries)
    decks = [parse_cards(" ".join(e["deck"])) for e in entries if e.get("type") == "hand"]
    builder = TimelineBuilder(match_id, decks, on_frame)
    for e in entries:
        builder.feed(e)
    return builder


# ---------------------------------------------------------------- what a perspective is shown


def parse_perspective(text: str | None, seats: int) -> Perspective:
    """``"2"``, ``"spectator"`` (also empty) or ``"all"``. :raises HiddenPerspective: for anything else."""
    t = (text or SPECTATOR).strip().lower()
    if t in (SPECTATOR, EVERYTHING):
        return t
    if t.isascii() and t.isdigit() and len(t) <= 3 and int(t) < seats:  # ("²".isdigit() is true; int() refuses it)
        return int(t)
    shown = text if text is None or len(text) <= 20 else text[:20] + "..."
    raise HiddenPerspective(f"no perspective {shown!r}: a seat 0..{seats - 1}, {SPECTATOR!r} or {EVERYTHING!r}")


def _check_allowed(tl: Timeline, who: Perspective) -> None:
    """Everything needs the result; a seat's view needs the match to be over too (its result or its abort):
    while it runs, whoever reaches the viewer could otherwise read that seat's hand over its shoulder."""
    if who == EVERYTHING and not tl.complete:
        raise HiddenPerspective("everything is shown only once the match is over; choose a seat or the spectator")
    if isinstance(who, int):
        if not 0 <= who < tl.seats:
            raise HiddenPerspective(f"no seat {who} in a {tl.seats}-seat match")
        if not (tl.complete or tl.aborted):
            raise HiddenPerspective("a seat's view is shown once the match is over; while it runs, only the spectator's")


def timeline_json(tl: Timeline, who: Perspective, with_frames: bool = False) -> dict[str, Any]:
    """What the match is, and an index of its hands (frame range, and the score once the hand is over); the frames
    too with ``with_frames``, else a hand at a time from ``hand_json`` (a long match is megabytes).
    :raises HiddenPerspective: for everything before the end."""
    _check_allowed(tl, who)
    index = []
    for hand in tl.hands():  # from the builder's index: a call costs the hands, not the frames
        first, last = tl.ranges[hand]
        at = tl.score_at.get(hand)
        end = tl.frames[at] if at is not None else None
        index.append({"hand": hand, "first": first, "last": last,
                      "score": None if end is None else {**_score_json(end), "at": end.index}})
    out: dict[str, Any] = {
        "match_id": tl.match_id, "variant": tl.variant, "seats": tl.seats, "seat_names": list(tl.seat_names),
        "teams": list(tl.teams), "options": dict(tl.options), "complete": tl.complete, "aborted": tl.aborted,
        "perspective": who, "frame_count": len(tl.frames), "hands": index,
        "result": tl.frames[-1].result if tl.frames and tl.frames[-1].result is not None else None,
    }
    if with_frames:
        out["frames"] = [frame_json(f, who) for f in tl.frames]
    return out


def hand_json(tl: Timeline, who: Perspective, hand: int) -> dict[str, Any]:
    """One hand's frames as ``who`` may see them. :raises HiddenPerspective: :raises KeyError: no such hand."""
    _check_allowed(tl, who)
    frames = [frame_json(f, who) for f in tl.hand_frames(hand)]
    return {"hand": hand, "perspective": who, "frames": frames}


def _score_json(f: Frame) -> dict[str, Any]:
    assert f.score is not None
    return {"points": list(f.score.points), "winner": f.score.winner, "reason": f.score.reason,
            "details": list(f.score.details), "totals": list(f.totals)}


def frame_json(f: Frame, who: Perspective) -> dict[str, Any]:
    """One frame as ``who`` may see it: the only way frames leave this module. Passing EVERYTHING is the
    caller's promise that the match is over (``timeline_json`` checks it)."""
    seats = len(f.views)
    if isinstance(who, int):
        if not 0 <= who < seats:
            raise HiddenPerspective(f"no seat {who} in a {seats}-seat match")
        view = f.views[who]
        table = _table_json(view, f.pile)
        events = [e for e in f.events if e.visible_to(who)]
        hands: list[list[str] | None] = [None] * seats
        hands[who] = _cards(view.hand)
        received = _cards(view.received)
    else:
        table = _common_table_json(f.views, f.pile)
        events = [e for e in f.events if e.public] if who == SPECTATOR else [e for e in f.events if not e.not_to]
        hands = [None] * seats
        received = []
        if who == EVERYTHING:
            hands = [_cards(v.hand) for v in f.views]
    for e in events:  # a hand's end shows every hand to everyone (HAND_REVEALED is public)
        if e.kind == "HAND_REVEALED" and e.seat is not None:
            hands[e.seat] = _cards(e.cards)
    out: dict[str, Any] = {
        "index": f.index, "hand": f.hand, "step": f.step, "actor": f.actor, "timed_out": f.timed_out,
        "to_act": {"seat": f.to_act[0], "phase": f.to_act[1]} if f.to_act else None, "table": table,
        "hands": hands, "received": received, "events": [_event_json(e) for e in events], "totals": list(f.totals),
        "over": f.over,
    }
    if who == EVERYTHING:
        out["stock"] = _cards(f.stock)
        out["received_by_seat"] = [_cards(v.received) for v in f.views]
    if f.score is not None:
        out["score"] = _score_json(f)
    if f.result is not None:
        out["result"] = dict(f.result)
    return out


def _table_json(v: SeatView, pile: PileView) -> dict[str, Any]:
    """Everything in a seat's view but its own cards: the table, sizes, totals and the variant's notes."""
    return {
        "hand_number": v.hand_number, "dealer": v.dealer, "turn": v.turn, "phase": v.phase.value,
        "hand_sizes": list(v.hand_sizes), "stock_size": v.stock_size, "pile": pile.value,
        "discard_pile": _cards(v.discard_pile), "discard_size": v.discard_size,
        "melds": [_meld_json(m) for m in v.melds], "face_up": _cards(v.face_up),
        "wild_ranks": [_rank_text(r) for r in v.wild_ranks], "in_front": [_cards(c) for c in v.in_front],
        "teams": list(v.teams), "active": list(v.active), "notes": [[k, val] for k, val in v.notes],
        "offer": str(v.offer) if v.offer is not None else None,
    }


def _common_table_json(views: Sequence[SeatView], pile: PileView) -> dict[str, Any]:
    """What a spectator sees: the parts of the table every seat's view shows alike (a note or an offer that some
    seat does not see is left out)."""
    tables = [_table_json(v, pile) for v in views]
    common = {k: val for k, val in tables[0].items() if all(t[k] == val for t in tables[1:])}
    common["notes"] = [n for n in tables[0]["notes"] if all(n in t["notes"] for t in tables[1:])]
    common.setdefault("offer", None)
    return common


def _meld_json(m: TableMeld) -> dict[str, Any]:
    return {"id": m.id, "owner": m.owner, "kind": m.meld_kind.value, "label": m.label,
            "cards": [_placed_json(p, by) for p, by in zip(m.cards, m.laid_by, strict=False)]}


def _placed_json(p: Placed, laid_by: int) -> dict[str, Any]:
    stands_for = _rank_text(p.rank) + (_SUIT_LETTER[p.suit] if p.suit is not Suit.NONE else "")
    return {"card": str(p.card), "as": stands_for, "wild": p.is_wild, "laid_by": laid_by}


_SUIT_LETTER = {Suit.SPADES: "S", Suit.HEARTS: "H", Suit.DIAMONDS: "D", Suit.CLUBS: "C", Suit.NONE: ""}


def _rank_text(r: Rank) -> str:
    """A rank as the card notation writes it (``T``, ``Q``); ``joker`` for the joker rank, which is not a card."""
    return "joker" if r is Rank.JOKER else str(Card(r, Suit.SPADES))[:-1]


def _event_json(e: Event) -> dict[str, Any]:
    return {"kind": e.kind, "seat": e.seat, "cards": _cards(e.cards), "meld_id": e.meld_id, "count": e.count,
            "points": e.points, "text": e.text, "private": not e.public}


def _cards(cs: Iterable[Card]) -> list[str]:
    return [str(c) for c in cs]
