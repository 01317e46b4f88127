"""Testing helpers shipped for variant authors and bot authors: random playouts that check the invariants every
variant must keep (no card appears or vanishes, every listed legal action applies, the hand ends, and no seat
is ever shown a card it could not know, COM-6)."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from referee.rules.cards import Card, Rank, Suit, shuffled
from referee.rules.errors import IllegalAction
from referee.rules.melds import Placed
from referee.rules.variants import find
from referee.rules.variants.base import Action, Event, HandState, PileView, SeatView, Table, default_teams

__all__ = ["HiddenCardLeak", "HandRun", "table_cards", "public_so_far", "zone_cards", "cards_named", "random_hand", "KnowledgeTracker",
           "TcpProxy", "pb_cards", "check_seat_log", "check_seat_logs", "SeatLogCheck"]


class HiddenCardLeak(AssertionError):
    """A message to a seat named a card that seat could not know."""


def zone_cards(state: HandState) -> Counter[Card]:
    """Every card in every zone of the hand: the conservation check counts these."""
    c: Counter[Card] = Counter()
    for h in state.hands:
        c.update(h)
    c.update(state.stock)
    c.update(state.discards)
    for m in state.melds:
        c.update(p.card for p in m.cards)
    c.update(state.face_up)
    for f in state.in_front:
        c.update(f)
    c.update(card for card, _ in state.face_down)
    return c


def table_cards(state: HandState) -> set[Card]:
    """Cards face up for everyone right now."""
    out: set[Card] = set()
    for m in state.melds:
        out.update(p.card for p in m.cards)
        out.update(_standins(m.cards))
    out.update(state.face_up)
    for f in state.in_front:
        out.update(f)
    if state.pile_view is PileView.FANNED:
        out.update(state.discards)
    elif state.pile_view is PileView.TOP and state.discards:
        out.add(state.discards[-1])
    return out


def public_so_far(known: dict[int, tuple[HandState, set[Card]]], match: Any, state: HandState) -> set[Card]:
    """Every card public in this hand so far, kept in ``known`` (by hand state): what the table shows or has
    shown, the card on offer now, and every hand once the hand is over."""
    seen = known.setdefault(id(state), (state, set()))[1]
    seen |= table_cards(state)
    if state.over:
        for h in state.hands:
            seen.update(h)
    elif not match.over and (d := match.variant.decision(state)) is not None and d.offer is not None:
        seen.add(d.offer)
    return seen


def _standins(placed: Iterable[Any]) -> set[Card]:
    out = set()
    for p in placed:
        if p.suit is not Suit.NONE and p.rank is not Rank.JOKER:
            out.add(Card(p.rank, p.suit))
    return out


def cards_named(obj: Any) -> set[Card]:
    """Every ``Card`` inside a view, event or action, however deeply nested."""
    out: set[Card] = set()

    def walk(x: Any) -> None:
        if isinstance(x, Card):
            out.add(x)
        elif is_dataclass(x) and not isinstance(x, type):
            if isinstance(x, Placed):
                out.add(x.card)
                return
            for f in fields(x):
                walk(getattr(x, f.name))
        elif isinstance(x, (list, tuple, set, frozenset)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    walk(obj)
    return out


@dataclass
class KnowledgeTracker:
    """What each seat may know so far: every card it has held, every card that has been face up, and face-down
    cards it was let in on. A card named to a seat outside this is a leak."""

    seats: int
    seen: list[set[Card]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.seen = [set() for _ in range(self.seats)]

    def update(self, state: HandState, decision_offer: Card | None = None) -> None:
        public = table_cards(state)
        if decision_offer is not None:
            public.add(decision_offer)
        for s in range(self.seats):
            self.seen[s] |= public
            self.seen[s].update(state.hands[s])
            self.seen[s].update(c for c, who in state.face_down if s in who)
            if state.over:
                for h in state.hands:
                    self.seen[s].update(h)

    def check(self, seat: int, message: Any, what: str) -> None:
        leaked = cards_named(message) - self.seen[seat]
        if leaked:
            raise HiddenCardLeak(f"{what} to seat {seat} names {sorted(map(str, leaked))}, which it cannot know")


@dataclass
class HandRun:
    """The outcome of one random playout."""

    state: HandState
    steps: int
    events: list[Event]
    actions: list[tuple[int, Action]]
    rejected_legal: list[str]


def random_hand(
    variant_name: str,
    seats: int,
    seed: int,
    options: Mapping[str, str] | None = None,
    max_steps: int = 3000,
    choose: Callable[[random.Random, SeatView, Sequence[Action]], Action] | None = None,
    check_hidden: bool = True,
    deck: list[Card] | None = None,
    hand_number: int = 1,
    totals: tuple[int, ...] | None = None,
) -> HandRun:
    """Deal one hand from a seeded shuffle and play random legal actions until it ends or ``max_steps`` pass,
    checking card conservation, legality of listed actions and hidden information at every step."""
    variant = find(variant_name)
    rules = variant.configure(options or {}, seats)
    rng = random.Random(seed)
    full = deck if deck is not None else shuffled(variant.deck(rules, seats), seed)
    expected = Counter(full)
    teams = default_teams(variant.team_play, seats)
    table = Table(seats, seed % seats, hand_number, teams, tuple([True] * seats), totals or tuple([0] * seats))
    state = variant.new_hand(rules, table, list(full), f"test:{seed}")
    tracker = KnowledgeTracker(seats)
    tracker.update(state)
    events: list[Event] = []
    actions: list[tuple[int, Action]] = []
    steps = 0
    while steps < max_steps:
        d = variant.decision(state)
        if d is None:
            break
        tracker.update(state, d.offer)
        legal = variant.legal_actions(state, d.seat)
        assert legal, f"{variant_name}: no legal action listed for seat {d.seat} in {d.phase}"
        view = variant.observe(state, d.seat)
        assert Counter(view.hand) == Counter(state.hands[d.seat]), "the view's hand is not the seat's hand"
        if check_hidden:
            for s in range(seats):
                tracker.check(s, variant.observe(state, s), "view")
            tracker.check(d.seat, legal, "legal actions")
        pick = choose(rng, view, legal) if choose else rng.choice(legal)
        try:
            new_events = variant.apply(state, d.seat, pick)
        except IllegalAction as exc:
            raise AssertionError(f"{variant_name}: listed legal action {pick} was rejected: {exc}") from exc
        actions.append((d.seat, pick))
        events.extend(new_events)
        assert zone_cards(state) == expected, f"{variant_name}: cards appeared or vanished after {pick}"
        tracker.update(state, None)
        if check_hidden:
            for e in new_events:
                for s in range(seats):
                    if e.visible_to(s):
                        tracker.check(s, e, f"event {e.kind}")
        steps += 1
    return HandRun(state, steps, events, actions, [])


# ---------------------------------------------------------------- over the wire (black box)


class TcpProxy:
    """A TCP forwarder to ``target`` (``HOST:PORT``) whose connections a test can cut at once (``drop``): a network
    failure, for bots that must reconnect. Runs on the caller's asyncio loop."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.address = ""
        self.dropped = 0
        self._server: asyncio.Server | None = None
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.address = f"127.0.0.1:{port}"
        return self.address

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, _, port = self.target.rpartition(":")
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.transport.abort()
            return
        pair = (writer, up_writer)
        self._pairs.add(pair)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                dst.transport.abort()

        try:
            await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        finally:
            self._pairs.discard(pair)

    def drop(self) -> int:
        """Reset every open connection, both ways; returns how many. New connections are forwarded again."""
        pairs = list(self._pairs)
        for down, up in pairs:
            down.transport.abort()
            up.transport.abort()
        self.dropped += len(pairs)
        return len(pairs)

    async def close(self) -> None:
        self.drop()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def pb_cards(message: Any) -> list[Card]:
    """Every card a protobuf message names (``rummy.referee.v1.Card`` at any depth), as a seat's client sees it."""
    from rummy.referee.v1 import referee_pb2 as pb
    from rummy.wire.protocodec import card_from_pb

    out: list[Card] = []

    def walk(m: Any) -> None:
        if isinstance(m, pb.Card):
            out.append(card_from_pb(m))
            return
        for fd, value in m.ListFields():
            if fd.message_type is None:
                continue
            if fd.message_type.GetOptions().map_entry:
                continue  # maps hold strings only (options)
            for item in (value if fd.is_repeated else [value]):
                walk(item)

    walk(message)
    return out


@dataclass
class SeatLogCheck:
    """What ``check_seat_log`` went through: messages, cards named, events and decisions matched to the record."""

    messages: int = 0
    cards: int = 0
    events: int = 0
    decisions: int = 0


def check_seat_log(numbered: Sequence[tuple[int, dict[str, Any]]], seat: int, messages: Sequence[Any]) -> SeatLogCheck:
    """``check_seat_logs`` for one seat."""
    return check_seat_logs(numbered, {seat: messages})


class _SeatLog:
    """One seat's received messages, indexed for the check: events by sequence, decisions in order."""

    def __init__(self, seat: int, messages: Sequence[Any], complete: bool) -> None:
        self.seat = seat
        self.events: dict[int, Any] = {}
        self.decisions: list[tuple[int, Any]] = []  # (the last event sequence received before it, the request)
        self.known: dict[int, tuple[HandState, set[Card]]] = {}  # id(hand state) -> (it, what the seat may know)
        last_sequence = last_seq = 0
        asked: set[int] = set()
        for msg in messages:
            body = msg.WhichOneof("body")
            inner = getattr(msg, body)
            if body == "event":
                assert not complete or inner.seq in (0, last_seq + 1), f"seat {seat}: event seq {inner.seq} after {last_seq}"
                last_seq = inner.seq or last_seq
                assert inner.sequence not in self.events, f"seat {seat}: event {inner.sequence} received twice"
                self.events[inner.sequence] = inner
                last_sequence = max(last_sequence, inner.sequence)
            elif body == "decision":
                if inner.request_id not in asked:  # a rejoin resends the open request: one decision
                    asked.add(inner.request_id)
                    self.decisions.append((last_sequence, inner))
            elif named := pb_cards(inner):
                raise HiddenCardLeak(f"a {body} message to seat {seat} names cards {sorted(map(str, named))}")

    def knowledge(self, match: Any, state: HandState) -> set[Card]:
        seen = public_so_far(self.known, match, state)
        seen.update(state.hands[self.seat])
        seen.update(c for c, who in state.face_down if self.seat in who)
        return seen


def check_seat_logs(numbered: Sequence[tuple[int, dict[str, Any]]], logs: Mapping[int, Sequence[Any]],
                    complete: bool = True) -> SeatLogCheck:
    """Check every ``PlayResponse`` each seat's client received in a match (``logs``: seat -> messages, in the
    order received) against the match's record, in one replay: each card a message names must be one that seat
    could know at that moment (COM-6): a card it holds or has held this hand, one face up (melded, on the pile as
    the variant shows it, turned up, on offer), a face-down card it was let in on, or any card of a hand that is
    over. An event is placed by its ``sequence`` and must be the record's, sent to that seat; a decision is placed
    by its view, which must be that seat's view (``observe``) at a moment no earlier than the events before it.
    ``complete``: each log holds every event for its seat, seq 1, 2, 3, ... (False: a client that was away and
    did not ask for what it missed; each event it got is still checked).

    :raises HiddenCardLeak: naming the message and the cards. :raises AssertionError: a message the record does not
        account for (an event it has not or that is not for that seat, a view no moment gives, a seq out of order).
    """
    from referee.service.replay import verify
    from rummy.wire import protocodec as codec

    report = SeatLogCheck(messages=sum(len(m) for m in logs.values()))
    seats = {seat: _SeatLog(seat, messages, complete) for seat, messages in logs.items()}
    sequence = 0

    def check(what: str, seat: int, cards: list[Card], allowed: set[Card]) -> None:
        report.cards += len(cards)
        leaked = set(cards) - allowed
        if leaked:
            raise HiddenCardLeak(f"{what} to seat {seat} names {sorted(map(str, leaked))}, which it cannot know then")

    def step(match: Any, before: HandState | None, step_events: list[Event]) -> None:
        nonlocal sequence
        assert match.state is not None
        now = {seat: log.knowledge(match, match.state) for seat, log in seats.items()}
        if before is not None:  # the first deal's events go to no one: the seats see it in their views
            current = {seat: log.knowledge(match, before) for seat, log in seats.items()}
            for e in step_events:
                if e.kind == "HAND_STARTED":
                    current = now
                sequence += 1
                for seat, log in seats.items():
                    got = log.events.pop(sequence, None)
                    if not e.visible_to(seat):
                        assert got is None, f"seat {seat} got event {sequence} ({e.kind}), which is not for it"
                        continue
                    if got is None:
                        assert not complete, f"seat {seat} never got event {sequence} ({e.kind})"
                        continue
                    assert got.kind == e.kind and tuple(codec.cards_from_pb(got.cards)) == e.cards, \
                        f"event {sequence} to seat {seat} is not the record's"
                    check(f"event {sequence} ({e.kind})", seat, pb_cards(got), current[seat])
                    report.events += 1
        d = None if match.over else match.pending()
        asked = seats.get(d.seat) if d is not None else None
        if d is None or asked is None or not asked.decisions:
            return
        view = codec.view_to_pb(match.view(d.seat)).SerializeToString(deterministic=True)
        while asked.decisions and asked.decisions[0][0] <= sequence and \
                asked.decisions[0][1].view.SerializeToString(deterministic=True) == view:
            _, request = asked.decisions.pop(0)
            check(f"decision {request.request_id}", d.seat, pb_cards(request), now[d.seat])
            report.decisions += 1

    verdict = verify(numbered, 0, on_step=step)
    assert verdict.exit_code in (0, 4), str(verdict)
    for seat, log in seats.items():
        assert not log.events, f"seat {seat} got events the record does not have: {sorted(log.events)[:5]}"
        assert not log.decisions, f"seat {seat} got a decision whose view is no moment of the match: request " \
                                  f"{log.decisions[0][1].request_id} after event {log.decisions[0][0]}"
    return report
