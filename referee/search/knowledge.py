"""What one seat knows about the cards it cannot see, from what it was shown and nothing else.

``seat_record(match, seat)`` collects the sampler's whole input: the seat's view, the events the referee sent
it this hand, and the public part of the state (a copy with every hidden zone emptied). Every field of a hand
state is classified below as public, rebuilt or redacted, and a field the table does not know stops the
sampler (fail closed), so a new variant field can never carry a hidden card into a sample.

``know(record)`` reads the events in order and keeps, for every place a hidden card can be (another seat's
hand, the stock, a face-down card), which cards there are known and how many are unseen:

- a card another seat took face up (from a pile, an offer, a meld) is known to be in its hand until it is seen
  to leave; a card that leaves a hand is taken from the known ones first;
- a card this seat passed face down, and the card passed to it, are known (ICE-2);
- the discard pile is public: every card in it was dealt or discarded face up;
- a stock turned over from the pile (FOR-9) is known card by card; a shuffled one (IND-14, FOR-9 shuffle) is a
  *pool*: its cards are known as a set, and a card drawn from it by another seat is "one of the pool";
- a card that leaves a hand face down unseen (an Iceberg pass between two other seats, an Indian card put away)
  may be any card of that hand: the hand's known and unseen cards become one pool over the hand and that card;
- rules that bound a hand (Iceberg: a seat that has begun a turn holds no ace, ICE-2) restrict its unseen cards.

With two packs a played card may be either copy; the tracker takes the one that keeps the pools consistent, and
where several shuffled restocks make that ambiguous it counts the restocked cards as unseen instead (always
consistent with the view, only less precise about the stock).

Unseen cards of pool 0 are the cards the seat has never seen; pool r >= 1 is the r-th shuffled restock.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from referee.rules.cards import Card, Rank
from referee.rules.match import Match
from referee.rules.variants.base import Event, HandState, SeatView
from referee.search.errors import KnowledgeMismatch, NotSearchable

__all__ = ["SeatRecord", "Knowledge", "KnowledgeTracker", "Entry", "seat_record", "public_state", "know", "PUBLIC_FIELDS",
           "REBUILT_FIELDS", "public_fields"]

Entry = Card | int  # a card known to be there, or an unseen card of pool ``int``

# Hand-state fields a seat may know in full (COM-6: the table, sizes, scores, whose turn, what was declared).
PUBLIC_FIELDS = frozenset({
    "seats", "dealer", "hand_number", "teams", "active", "turn", "phase", "pile_view", "discards", "melds",
    "face_up", "in_front", "wild_ranks", "turns", "over", "end_reason", "went_out", "next_meld_id", "restocks",
    # variant fields, each public: the rules record, totals, who is out and why (Indian), what a declarer showed,
    # first lay-downs (PER-2), contracts laid and offers (Skarney), passes made and meld points (Iceberg)
    "rules", "totals", "dealt", "has_drawn", "penalty", "out_reason", "declarer", "declared", "first_laid",
    "laid", "skip_draw", "laid_off", "offer_from", "offer_queue", "last_draw", "passes", "earned",
    "aces_in_pack", "last_ace_seat",
})
# Fields the sampler deals afresh, or empties: hidden cards, chance, and the deal's forced steps.
REBUILT_FIELDS = frozenset({"hands", "stock", "face_down", "seed", "opening_events", "drawn"})

_NO_CARD_EFFECT = frozenset({
    "HAND_STARTED", "TIMED_OUT", "FORFEITED", "DROPPED", "WENT_OUT", "STOCK_EXHAUSTED", "DECK_EXHAUSTED",
    "LAST_IN_DEAL", "CONTRACT_LAID", "DECLINED", "SKIPPED_DRAW", "ONE_CARD", "HAND_STOPPED", "LAST_CARD",
    "LAST_ACE", "HAND_OVER",
})
_HAND_OVER = frozenset({"HAND_ENDED", "HAND_REVEALED", "MATCH_ENDED"})


@dataclass(frozen=True)
class SeatRecord:
    """The sampler's whole input: a seat's view, the events it was sent this hand, the public part of the state,
    what it knows of the face-down cards, and the cards in play (the deck's cards: public)."""

    variant: str
    view: SeatView
    events: Sequence[Event]  # (a list that only grows, for ``KnowledgeTracker``: it keeps the length and last event)
    # a HandState copy (``public_state``: other hands, the stock and the face-down cards emptied; seed blank); for
    # ``KnowledgeTracker.known`` alone, which reads only its rules and who sits to the right, any object holding
    # those (the environments' stand-in, which holds no other zone). Typed Any: the compiled class checks types.
    public: Any
    face_down: tuple[tuple[Card | None, frozenset[int]], ...]  # the card where this seat knows it
    composition: tuple[tuple[Card, int], ...]
    max_turns: int

    def __init__(self, variant: str, view: SeatView, events: Sequence[Event], public: Any,
                 face_down: tuple[tuple[Card | None, frozenset[int]], ...], composition: tuple[tuple[Card, int], ...],
                 max_turns: int) -> None:  # written, so mypyc compiles it (an environment makes one a step)
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "view", view)
        object.__setattr__(self, "events", events)
        object.__setattr__(self, "public", public)
        object.__setattr__(self, "face_down", face_down)
        object.__setattr__(self, "composition", composition)
        object.__setattr__(self, "max_turns", max_turns)

    @property
    def seat(self) -> int:
        return self.view.seat


def public_state(state: Any, seat: int) -> HandState:  # (a HandState: Any as the check below takes any dataclass)
    """A copy of ``state`` holding only what ``seat`` may know: other seats' hands, the stock and the face-down
    cards emptied, the seed blanked, the other seats' last drawn card forgotten.

    :raises NotSearchable: ``UNKNOWN_STATE_FIELD`` for a field not classified in ``PUBLIC_FIELDS`` or
        ``REBUILT_FIELDS`` (fail closed: a new field could hold a hidden card)."""
    for f in fields(state):
        if f.name not in PUBLIC_FIELDS and f.name not in REBUILT_FIELDS:
            raise NotSearchable("UNKNOWN_STATE_FIELD", f"{type(state).__name__}.{f.name} is not classified as public "
                                "or hidden for sampling (referee/search/knowledge.py)")
    hands, stock, face_down = state.hands, state.stock, state.face_down
    opening = state.opening_events
    try:  # deep-copy everything but the hidden zones, which are never copied at all
        state.hands, state.stock, state.face_down, state.opening_events = [], [], [], []
        public: HandState = copy.deepcopy(state)
    finally:
        state.hands, state.stock, state.face_down, state.opening_events = hands, stock, face_down, opening
    public.hands = [list(h) if s == seat else [] for s, h in enumerate(hands)]
    public.seed = ""
    if hasattr(public, "drawn") and state.turn != seat:
        public.drawn = None  # another seat's draw from the stock is hidden; only the default move reads it
    return public


def seat_record(match: Match, seat: int) -> SeatRecord:
    """What ``seat`` of a live match has been shown in the hand in play. :raises NotSearchable: ``NO_HAND``"""
    state = match.state
    if state is None or state.over or match.over:
        raise NotSearchable("NO_HAND", "no hand is in play in this match")
    if not 0 <= seat < state.seats:
        raise NotSearchable("NO_SUCH_SEAT", f"the match has no seat {seat}")
    log = match.log
    # from the end: the hand in play is the last one (a long match's whole log is not walked at each call)
    start = next((i for i in range(len(log) - 1, -1, -1) if log[i].kind == "HAND_STARTED"), 0)
    events = tuple(e for e in log[start:] if e.visible_to(seat))
    composition: Counter[Card] = Counter()
    for zone in (*state.hands, state.stock, state.discards, state.face_up, *state.in_front):
        composition.update(zone)
    for m in state.melds:
        composition.update(p.card for p in m.cards)
    composition.update(c for c, _ in state.face_down)
    face_down = tuple((c if seat in who else None, who) for c, who in state.face_down)
    return SeatRecord(match.variant.name, match.view(seat), events, public_state(state, seat), face_down,
                      tuple(sorted(composition.items())), match.config.max_turns_per_hand)


# ---------------------------------------------------------------------------------------------- knowledge


@dataclass
class Knowledge:
    """Where the cards a seat cannot see may be. Per seat (the asking seat's own entries are empty): ``known``
    cards in its hand and ``slots`` unseen cards by pool; the stock top first and the face-down cards, each
    an ``Entry``; for each pool r >= 1 the seen cards ``pools[r]`` and never-seen cards ``pool_unseen[r]`` it
    holds; and per seat the ranks its unseen cards cannot have."""

    seat: int
    hand_sizes: tuple[int, ...]
    own_hand: tuple[Card, ...]
    known: list[Counter[Card]]
    slots: list[Counter[int]]
    stock: list[Entry]
    face_down: list[tuple[Entry, frozenset[int], frozenset[Rank]]]
    pools: dict[int, Counter[Card]]
    pool_unseen: dict[int, int]
    no_ranks: list[frozenset[Rank]]
    unseen: Counter[Card] = field(default_factory=Counter)  # the cards of pool 0

    def hidden_places(self) -> int:
        """Places whose card a sample deals at random (every unseen card of every pool)."""
        return sum(sum(s.values()) for s in self.slots) + sum(1 for e in self.stock if not isinstance(e, Card)) + sum(
            1 for e, _, _ in self.face_down if not isinstance(e, Card))

    def pool_zero_slots(self) -> int:
        zero = sum(s[0] for s in self.slots) + sum(1 for e in self.stock if e == 0)
        zero += sum(1 for e, _, _ in self.face_down if e == 0) + sum(self.pool_unseen.values())
        return zero


def know(record: SeatRecord) -> Knowledge:
    """Read ``record``'s events into ``Knowledge``. Two passes: the first finds how many cards each seat was
    dealt (a hand's size less what it gained plus what it lost), the second uses that to tell, when a card
    leaves a hand, whether an unseen card of the deal was still there.

    :raises KnowledgeMismatch: when the record does not add up to the view (a sampler bug)."""
    try:
        return _know(record, pools=True)
    except KnowledgeMismatch:
        # two packs and several shuffled restocks can leave the pools' bookkeeping ambiguous: then the cards of
        # every shuffled restock count as unseen (consistent with the view, less precise about the stock)
        return _know(record, pools=False)


def _know(record: SeatRecord, pools: bool) -> Knowledge:
    second = _Tracker(record, _dealt(record, pools), pools)
    second.feed(record.events)
    return second.result()


def _dealt(record: SeatRecord, pools: bool) -> list[int]:
    """How many cards each seat was dealt: its hand's size now less what the events added and took."""
    first = _Tracker(record, None, pools)
    first.feed(record.events)
    return [record.view.hand_sizes[s] - first.size[s] for s in range(len(first.size))]


class KnowledgeTracker:
    """``know(record)`` kept up to date for one seat through one hand, each event read once.

    ``know`` reads the hand's whole event list at every call, so a seat asking at every decision pays for the
    hand's length squared; a learning environment asks at every step. ``update(record)`` reads only the events
    added since the last call (the record's events must extend the ones it read: the same hand, the same seat)
    and answers what ``know(record)`` answers: the trackers are the same code, fed the same events in order (a
    failure part way through a hand falls back to the unpooled reading for the rest of the hand, as ``know``
    does at every later call, since a failed reading of a prefix fails for every longer one).

    :raises KnowledgeMismatch: as ``know``; :raises NotSearchable: as ``know``, or ``NOT_EXTENDED`` for a record
        whose events do not extend the ones read."""

    def __init__(self) -> None:
        self._tracker: _Tracker | None = None
        self._pools = True
        self._count = 0  # the events read: how many, the last
        self._last: Event | None = None
        self._seat = -1

    def update(self, record: SeatRecord) -> Knowledge:
        t = self._fed(record)
        try:
            return t.result()
        except KnowledgeMismatch:
            if not self._pools:
                raise
            return _know(record, pools=False)  # as ``know``: this call only; the pooled reading goes on

    def known(self, record: SeatRecord) -> list[dict[Card, int]]:
        """``update(record).known`` without the whole reading's check against the view (which costs ten times the
        reading of one move): the cards seen going into each hand and not seen leaving it, read from what the seat
        was told and nothing else, so never a card it cannot know. Where ``know`` would fail its check, these are
        the tracker's cards all the same."""
        t = self._fed(record)
        return [{c: k for c, k in held.items() if k > 0} if held else {} for held in t.known]

    def _fed(self, record: SeatRecord) -> _Tracker:
        events = record.events
        t = self._tracker
        n = self._count
        if t is not None and (record.seat != self._seat or len(events) < n
                              or (n and events[n - 1] is not self._last and events[n - 1] != self._last)):
            raise NotSearchable("NOT_EXTENDED", "the record's events do not extend the ones this tracker read")
        self._tracker, self._count, self._last = None, 0, None  # until the events are read whole: a failure starts
        # afresh next call
        if t is None:
            self._seat = record.seat
            t = self._start(record)
        else:
            t.r = record
            try:
                t.feed(events[n:])
            except KnowledgeMismatch:
                if not self._pools:
                    raise
                self._pools = False
                t = self._start(record)
        self._tracker, self._count, self._last = t, len(events), (events[-1] if events else None)
        return t

    def _start(self, record: SeatRecord) -> _Tracker:
        while True:
            try:
                t = _Tracker(record, _dealt(record, self._pools), self._pools)
                t.feed(record.events)
                return t
            except KnowledgeMismatch:
                if not self._pools:
                    raise
                self._pools = False


def _empty_counter() -> Counter[Any]:
    """An empty ``Counter`` made by ``dict``'s constructor alone: ``Counter.__init__`` (which only calls ``update``
    with nothing) is Python, about 4,400 instructions a call, and a tracker starts with two per seat, most of its
    start at every hand of a learning environment."""
    return Counter.__new__(Counter)


class _Tracker:
    def __init__(self, record: SeatRecord, dealt: list[int] | None, pools: bool = True) -> None:
        self.r = record
        self.use_pools = pools
        self.me = record.seat
        n = len(record.view.hand_sizes)
        self.n = n
        self.dealt = dealt
        self.size = [0] * n  # change since the deal
        self.zero = [0] * n  # unseen cards of the deal (pool 0) gained since the deal, less those gone
        self.known: list[Counter[Card]] = [_empty_counter() for _ in range(n)]
        self.slots: list[Counter[int]] = [_empty_counter() for _ in range(n)]  # pools >= 1
        self.pile: list[Card | None] = []  # bottom to top; None: a card dealt face up, not identified yet
        self.stock: list[Entry] | None = None  # None: the dealt stock, every card unseen
        self.face_down: list[tuple[Entry, int, int]] = []  # entry, passer, receiver
        self.pools: dict[int, Counter[Card]] = {}
        self.pool_unseen: dict[int, int] = {}
        self.next_pool = 0
        self.started: set[int] = set()
        self.guesses: list[tuple[int, int, Card]] = []  # (seat, pool, card): a played card taken for the pool's
        variant = record.variant
        self.iceberg = variant == "iceberg"
        self.take_melds_top = variant in ("fortune", "arlington")  # FOR-4: the top card is melded, then the rest taken
        rules = getattr(record.public, "rules", None)
        self.turn_over = getattr(rules, "restock", "shuffle") == "turn-over"

    # ------------------------------------------------------------ the events

    def feed(self, events: Sequence[Event]) -> None:
        """Read ``events``, the next ones of the hand in order (whole moves: a meld that takes the pile's top card
        is followed by its take in the same move)."""
        for i, e in enumerate(events):
            kind = e.kind
            if kind in _HAND_OVER:
                raise NotSearchable("NO_HAND", "the hand is over")
            if kind in _NO_CARD_EFFECT:
                continue
            seat = e.seat
            if seat is None:
                if kind == "RESTOCKED":
                    self.restock(e.count)
                    continue
                raise NotSearchable("UNKNOWN_EVENT", f"the sampler does not know the event {kind}")
            if self.iceberg and kind in ("DREW_STOCK", "PICKED_UP", "ACES_PLACED"):
                self.started.add(seat)
            nxt = events[i + 1] if i + 1 < len(events) else None
            if kind == "DREW_STOCK":
                self.gain(seat, self.stock_pop(), e.cards[0] if e.cards else None)
            elif kind == "TOOK_DISCARDS":
                taken = self.pile_pop(e.count)
                named: list[Card | None] = list(e.cards) if len(e.cards) == len(taken) else [None] * len(taken)
                for was, name in zip(taken, named, strict=True):
                    self.gain(seat, was, name)
            elif kind in ("MELDED", "LAID_OFF"):
                cards = list(e.cards)
                if self.take_melds_top and nxt is not None and nxt.kind == "TOOK_DISCARDS" and nxt.seat == seat:
                    top = self.pile_pop(1)[0]
                    cards.remove(top if top is not None else self._likely_top(seat, cards))  # from the pile
                for c in cards:
                    self.lose(seat, c)
            elif kind == "DISCARDED":
                self.lose(seat, e.cards[0])
                self.pile.append(e.cards[0])
            elif kind == "EXCHANGED_WILD":  # the natural goes on the meld, the wild into the hand (SKA-5, ARL-7)
                self.lose(seat, e.cards[0])
                self.gain(seat, e.cards[1], None)
            elif kind == "OFFERED":
                self.lose(seat, e.cards[0])
            elif kind in ("ACCEPTED", "OFFER_KEPT"):
                self.gain(seat, e.cards[0], None)
            elif kind == "ACES_PLACED":
                for c in e.cards:
                    self.lose(seat, c)
            elif kind == "PASSED":
                receiver = self.r.public.right_of(seat)
                if e.cards:
                    self.lose(seat, e.cards[0])
                    self.face_down.append((e.cards[0], seat, receiver))
                else:
                    passed = self.lose_unseen(seat)
                    self.face_down.append((passed, seat, receiver))
            elif kind == "PICKED_UP":
                at = max((j for j, (_, _, to) in enumerate(self.face_down) if to == seat), default=None)
                if at is None:
                    raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"seat {seat} picked up a card nobody passed it")
                picked, _, _ = self.face_down.pop(at)
                self.gain(seat, picked, e.cards[0] if e.cards else None)
            elif kind == "DECLARED":
                if seat != self.me:
                    for c in e.cards:
                        self.lose(seat, c)
                    away = self.lose_unseen(seat)
                    self.face_down.append((away, seat, seat))  # the card put away (IND-7)
                else:
                    self.face_down.append((e.cards[-1], seat, seat))
            else:
                raise NotSearchable("UNKNOWN_EVENT", f"the sampler does not know the event {kind}")

    def _likely_top(self, seat: int, cards: Sequence[Card]) -> Card:
        """The pile's top card was the dealt up-card, never identified: any melded card not known to be in the
        hand will do (every choice gives the same hand)."""
        for c in cards:
            if not self.known[seat][c]:
                return c
        return cards[0]

    # ------------------------------------------------------------ zones

    def stock_pop(self) -> Entry:
        if self.stock is None:
            return 0
        if not self.stock:
            raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", "a draw from a stock the record says is empty")
        return self.stock.pop(0)

    def pile_pop(self, count: int) -> list[Card | None]:
        if len(self.pile) < count:  # the cards dealt face up to start the pile, below everything discarded
            self.pile[:0] = [None] * (count - len(self.pile))
        taken = self.pile[len(self.pile) - count:]
        del self.pile[len(self.pile) - count:]
        return taken

    def restock(self, count: int) -> None:
        """The pile but its top card becomes the stock: in order (turned over, FOR-9) or shuffled (a new pool)."""
        if len(self.pile) < count + 1:
            self.pile[:0] = [None] * (count + 1 - len(self.pile))
        moving, self.pile = self.pile[:-1], self.pile[-1:]
        if self.turn_over:
            self.stock = [c if c is not None else 0 for c in moving]  # the pile's bottom card is the stock's top
            return
        if not self.use_pools:
            self.stock = [0] * len(moving)
            return
        pool = self._new_pool(Counter(c for c in moving if c is not None), sum(1 for c in moving if c is None))
        self.stock = [pool] * len(moving)

    # ------------------------------------------------------------ hands

    def _zero_left(self, seat: int) -> bool:
        return self.dealt is None or self.dealt[seat] + self.zero[seat] > 0

    def _consume(self, pool: int, card: Card) -> None:
        """``card`` came out of pool ``pool`` (seen now): it is no longer one of the pool's unknowns."""
        if pool == 0:
            return
        if self.pools[pool][card]:
            self.pools[pool][card] -= 1
        elif self.pool_unseen[pool]:
            self.pool_unseen[pool] -= 1
        else:
            self._undo_guess(pool, card)
            self.pools[pool][card] -= 1

    def _undo_guess(self, pool: int, card: Card) -> None:
        """With two packs, a card another seat played was taken for the pool's copy: it was the deal's."""
        at = next((i for i in range(len(self.guesses) - 1, -1, -1) if self.guesses[i][1:] == (pool, card)), None)
        if at is None:
            raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"{card} cannot have come from restock {pool}")
        seat, _, _ = self.guesses.pop(at)
        self.slots[seat][pool] += 1
        self.zero[seat] -= 1
        self.pools[pool][card] += 1

    def gain(self, seat: int, entry: Entry | None, shown: Card | None) -> None:
        """A card goes into ``seat``'s hand: ``entry`` is what this seat knows of it, ``shown`` the card if the
        event names it."""
        self.size[seat] += 1
        if isinstance(entry, int) and shown is not None:
            self._consume(entry, shown)
            entry = shown
        if entry is None:
            if shown is None:
                entry = 0  # a dealt up-card never identified: an unseen card for the sampler
            else:
                entry = shown
        if seat == self.me:
            return
        if isinstance(entry, Card):
            self.known[seat][entry] += 1
        elif entry == 0:
            self.zero[seat] += 1
        else:
            self.slots[seat][entry] += 1

    def lose(self, seat: int, card: Card) -> None:
        """``card`` is seen leaving ``seat``'s hand: a known one if it has one, else an unseen one."""
        self.size[seat] -= 1
        if seat == self.me:
            return
        if self.known[seat].get(card):
            self.known[seat][card] -= 1
            return
        if not self.pools:  # no restock or pass made a pool yet (most of a hand): an unseen card of the deal, as
            self.zero[seat] -= 1  # the searches below find no pool and no guess (guesses name pools)
            return
        pool = next((p for p in sorted(self.slots[seat]) if self.slots[seat][p] and self.pools[p][card]), None)
        if pool is None:
            # the pool holds this card and the seat drew from it, but an earlier play was taken for that draw
            swap = next((i for i in range(len(self.guesses) - 1, -1, -1) if self.guesses[i][0] == seat
                         and self.pools.get(self.guesses[i][1], Counter())[card]), None)
            if swap is not None:
                _, pool, earlier = self.guesses[swap]
                self._undo_guess(pool, earlier)
        if pool is None and not self._zero_left(seat):
            pool = next((p for p in sorted(self.slots[seat]) if self.slots[seat][p] and self.pool_unseen[p]), None)
        if pool is None and not self._zero_left(seat):
            pool = next((p for p in sorted(self.slots[seat]) if self.slots[seat][p]
                         and any(g[1:] == (p, card) for g in self.guesses)), None)
            if pool is not None:
                self._undo_guess(pool, card)
        if pool is None:
            self.zero[seat] -= 1
            return
        self.slots[seat][pool] -= 1
        if self.pools[pool][card]:
            self.guesses.append((seat, pool, card))
        self._consume(pool, card)

    def lose_unseen(self, seat: int) -> Entry:
        """A card leaves ``seat``'s hand face down, unseen by this seat. If the hand held cards this seat knew,
        any of them may be the one: they and the hand's unseen cards of the deal become a pool, spread over
        the hand and the face-down card (``Entry`` of the new pool)."""
        self.size[seat] -= 1
        known = self.known[seat]
        held = sum(known.values())
        if self.dealt is not None and (held or sum(self.slots[seat].values())):
            zero = max(self.dealt[seat] + self.zero[seat], 0)
            merged = self._new_pool(+known, zero)
            for old in [p for p, n in self.slots[seat].items() if n]:
                self._merge(old, merged)
            self.slots[seat][merged] += held + zero - 1
            self.zero[seat] -= zero
            self.known[seat] = _empty_counter()
            return merged
        if self._zero_left(seat):
            self.zero[seat] -= 1
            return 0
        pool = next((p for p in sorted(self.slots[seat]) if self.slots[seat][p]), None)
        if pool is not None:
            self.slots[seat][pool] -= 1
            return pool
        card = min(self.known[seat].elements(), default=None)
        if card is None:
            raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"seat {seat} passed a card from an empty hand")
        self.known[seat][card] -= 1
        return card

    def _new_pool(self, cards: Counter[Card], unseen: int) -> int:
        self.next_pool += 1
        self.pools[self.next_pool] = cards
        self.pool_unseen[self.next_pool] = unseen
        return self.next_pool

    def _merge(self, old: int, new: int) -> None:
        """Pool ``old`` becomes part of pool ``new``: its cards may now be in any of either's places."""
        self.pools[new] += self.pools.pop(old)
        self.pool_unseen[new] += self.pool_unseen.pop(old)
        for slot in self.slots:
            if slot[old]:
                slot[new] += slot.pop(old)
        if self.stock is not None:
            self.stock[:] = [new if not isinstance(e, Card) and e == old else e for e in self.stock]
        self.face_down[:] = [(new if not isinstance(e, Card) and e == old else e, a, b) for e, a, b in self.face_down]
        self.guesses[:] = [(s, new if p == old else p, c) for s, p, c in self.guesses]

    # ------------------------------------------------------------ the result

    def result(self) -> Knowledge:
        r, view = self.r, self.r.view
        sizes = view.hand_sizes
        slots: list[Counter[int]] = []
        for s in range(self.n):
            slot = +self.slots[s]
            if s != self.me:
                slot[0] = sizes[s] - sum(self.known[s].values()) - sum(slot.values())
                if slot[0] < 0:
                    raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"seat {s} holds {sizes[s]} cards, fewer than "
                                            f"the {sizes[s] - slot[0]} its record accounts for")
            slots.append(slot)
        if self.stock is None:
            stock: list[Entry] = [0] * view.stock_size
        else:
            stock = list(self.stock)
        if len(stock) != view.stock_size:
            raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"the record leaves {len(stock)} stock cards, the view "
                                    f"shows {view.stock_size}")
        pile = list(r.public.discards)
        if len(self.pile) < len(pile):
            self.pile[:0] = [None] * (len(pile) - len(self.pile))
        if len(self.pile) != len(pile) or any(c is not None and c != t for c, t in zip(self.pile, pile, strict=True)):
            raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", "the record's discard pile is not the table's")
        if len(self.face_down) != len(r.face_down):
            raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"the record leaves {len(self.face_down)} face-down cards, "
                                    f"the table has {len(r.face_down)}")
        no_ace = frozenset({Rank.ACE})
        face_down: list[tuple[Entry, frozenset[int], frozenset[Rank]]] = []
        for (entry, passer, _), (card, who) in zip(self.face_down, r.face_down, strict=True):
            if card is not None:
                entry = card  # the seat knows it
            face_down.append((entry, who, no_ace if passer in self.started else frozenset()))
        no_ranks = [no_ace if s in self.started else frozenset() for s in range(self.n)]
        k = Knowledge(self.me, tuple(sizes), view.hand, [+c for c in self.known], slots, stock, face_down,
                      {p: +c for p, c in self.pools.items()}, dict(self.pool_unseen), no_ranks)
        located: Counter[Card] = Counter(view.hand)
        located.update(r.public.discards)
        located.update(r.public.face_up)
        for f in r.public.in_front:
            located.update(f)
        for m in r.public.melds:
            located.update(p.card for p in m.cards)
        for c in k.known:
            located.update(c)
        located.update(e for e in stock if isinstance(e, Card))
        located.update(e for e, _, _ in face_down if isinstance(e, Card))
        for pool in k.pools.values():
            located.update(pool)
        composition = Counter(dict(r.composition))
        if located - composition:
            raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"the record places cards not in play: {located - composition}")
        k.unseen = composition - located
        if sum(k.unseen.values()) != k.pool_zero_slots():
            raise KnowledgeMismatch("KNOWLEDGE_MISMATCH", f"{sum(k.unseen.values())} unseen cards for "
                                    f"{k.pool_zero_slots()} places")
        return k


def public_fields(state: HandState) -> dict[str, Any]:
    """The public fields of ``state`` by name (tests compare a sample's with the truth's)."""
    return {f.name: getattr(state, f.name) for f in fields(state) if f.name in PUBLIC_FIELDS}
