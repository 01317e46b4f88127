"""The live path's messages put together as bytes from encoded pieces, not built as message objects.

Why: in Python, building a protobuf message costs far more than encoding it (a 13-card hand: ~6 us as messages,
~0.5 us as bytes), and a message put into another is copied again (the view into its request, the request into a
batch). Protobuf's encoding composes: a message is the encodings of its fields in any order, a message field is
its tag, its length and the field's own encoding, and encodings of one type joined end to end merge into one
message. So each card, action, note and meld is encoded once for each field it goes in (by the protobuf library,
memoised), and a view, a decision request, an event or a batch is joined from them. ``rummy.wire.protocodec`` stays
the reference: tests/test_encoded.py checks that each of these decodes to exactly what it builds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf.message import Message

from referee.rules.cards import Card
from referee.rules.variants.base import Action, Event, SeatView, TableMeld
from rummy.referee.v1 import referee_pb2 as pb
from rummy.wire import protocodec as codec

__all__ = ["length_delimited", "view", "decision", "match_event", "event", "watch_response", "accepted", "batch"]

_MEMO_LIMIT = 4096  # entries per memo before it starts again (actions and melds vary; cards do not)


_ONE_BYTE = [bytes((n,)) for n in range(0x80)]


def _varint(n: int) -> bytes:
    """A non-negative integer as a base-128 varint (the library encodes negative ones: totals go through it)."""
    if n < 0x80:
        return _ONE_BYTE[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    """Field ``number`` holding ``payload`` (a message's encoding): its tag (wire type 2), length and bytes."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _unsigned(tag: bytes, value: int) -> bytes:
    """An unsigned integer or enum field (``tag``: ``_tag(number)``); nothing for zero, as the library writes it."""
    if not value:
        return b""
    return tag + (_ONE_BYTE[value] if value < 0x80 else _varint(value))


def _tag(number: int) -> bytes:
    return _varint(number << 3)  # wire type 0: a varint


def _encode(message: Message) -> bytes:
    data: bytes = message.SerializeToString()
    return data


def _number(message: Any, name: str) -> int:
    return int(message.DESCRIPTOR.fields_by_name[name].number)


def _cards_in(message: Any, name: str) -> dict[Card, bytes]:
    """Each card as the one element of repeated field ``name`` of ``message``, encoded by the library."""
    return {c: message(**{name: [m]}).SerializeToString() for c, m in codec._CARD_PB.items()}


_HAND = _cards_in(pb.SeatView, "hand")
_DISCARD_PILE = _cards_in(pb.SeatView, "discard_pile")
_FACE_UP = _cards_in(pb.SeatView, "face_up")
_RECEIVED = _cards_in(pb.SeatView, "received")
_CARDS = _cards_in(pb.Cards, "cards")
_OFFER = {c: pb.SeatView(offer=m).SerializeToString() for c, m in codec._CARD_PB.items()}
_IN_FRONT = _number(pb.SeatView, "in_front")
_NOTHING_IN_FRONT = length_delimited(_IN_FRONT, b"")  # one seat's empty ``in_front`` entry
_VIEW = _number(pb.DecisionRequest, "view")
_DECISION = _number(pb.PlayResponse, "decision")
_EVENT = _number(pb.PlayResponse, "event")
_BATCH = _number(pb.PlayResponse, "batch")
_BATCH_MESSAGES = _number(pb.Batch, "messages")
_WATCH_EVENT = _number(pb.WatchResponse, "event")

_SEAT, _HAND_NUMBER, _DEALER, _TURN, _PHASE, _STOCK_SIZE, _DISCARD_SIZE = (
    _tag(_number(pb.SeatView, n)) for n in ("seat", "hand_number", "dealer", "turn", "phase", "stock_size", "discard_size"))
_REQUEST_ID, _REQUEST_PHASE, _TIME_LEFT, _BANK_LEFT = (
    _tag(_number(pb.DecisionRequest, n)) for n in ("request_id", "phase", "time_left_ms", "bank_left_ms"))

_EVENT_CARDS = _cards_in(pb.MatchEvent, "cards")
_ACCEPTED = _number(pb.PlayResponse, "accepted")
(_EV_SEQUENCE, _EV_SEAT, _EV_MELD_ID, _EV_COUNT, _EV_POINTS, _EV_HAND_NUMBER, _EV_PRIVATE, _EV_SEQ) = (
    _tag(_number(pb.MatchEvent, n)) for n in ("sequence", "seat", "meld_id", "count", "points", "hand_number",
                                              "private", "seq"))
_EV_TEXT = _number(pb.MatchEvent, "text")
_ACCEPTED_REQUEST_ID = _tag(_number(pb.ActionAccepted, "request_id"))

# a request's, an event's and an acceptance's match id are each field 1: one encoding serves all three
assert _number(pb.DecisionRequest, "match_id") == _number(pb.MatchEvent, "match_id") == \
    _number(pb.ActionAccepted, "match_id")
_MATCH_IDS: dict[str, bytes] = {}
_KINDS: dict[str, bytes] = {}
_TABLES: dict[tuple[Any, ...], bytes] = {}
_MELDS: dict[TableMeld, bytes] = {}
_NOTES: dict[tuple[tuple[str, str], ...], bytes] = {}
_LEGAL: dict[Action, bytes] = {}


def _memo(memo: dict[Any, bytes], key: Any, make: Any) -> bytes:
    got = memo.get(key)
    if got is None:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        got = memo[key] = make(key)
    return got


def _match_id(match_id: str) -> bytes:
    return _encode(pb.DecisionRequest(match_id=match_id))


def _kind(kind: str) -> bytes:
    return _encode(pb.MatchEvent(kind=kind))


def _signed(tag: bytes, name: str, value: int) -> bytes:
    """A signed integer field: a negative one as the library writes it (ten bytes, two's complement)."""
    if value >= 0:
        return _unsigned(tag, value)
    msg = pb.MatchEvent()
    setattr(msg, name, value)
    return _encode(msg)


def _table(key: tuple[Any, ...]) -> bytes:
    variant, hand_sizes, wild_ranks, teams, active, totals = key
    return _encode(pb.SeatView(variant=variant, hand_sizes=hand_sizes, wild_ranks=[codec.RANK_TO_PB[r] for r in wild_ranks],  # type: ignore[misc]
                               teams=teams, active=active, totals=totals))


def _meld(m: TableMeld) -> bytes:
    return _encode(pb.SeatView(melds=[codec.meld_to_pb(m)]))


def _notes(notes: tuple[tuple[str, str], ...]) -> bytes:
    return _encode(pb.SeatView(notes=[pb.Note(key=k, value=v) for k, v in notes]))


def _legal(a: Action) -> bytes:
    return _encode(pb.DecisionRequest(legal_actions=[codec.action_to_pb(a)]))


def _each(memo: dict[Any, bytes], keys: Sequence[Any], make: Any) -> bytes:
    """The memoised encodings of ``keys`` joined: one look-up each when all are known, as they mostly are
    (a sequence, read twice when one is not)."""
    try:
        return b"".join([memo[k] for k in keys])
    except KeyError:
        return b"".join([_memo(memo, k, make) for k in keys])


def _join(pieces: dict[Card, bytes], cards: Iterable[Card]) -> bytes:
    return b"".join([pieces[c] for c in cards])


def view(v: SeatView) -> bytes:
    """``codec.view_to_pb(v)``, encoded."""
    table = _memo(_TABLES, (v.variant, v.hand_sizes, v.wild_ranks, v.teams, v.active, v.totals), _table)
    parts = [table, _unsigned(_SEAT, v.seat), _unsigned(_HAND_NUMBER, v.hand_number), _unsigned(_DEALER, v.dealer),
             _unsigned(_TURN, v.turn), _unsigned(_PHASE, codec._PHASE[v.phase]), _unsigned(_STOCK_SIZE, v.stock_size),
             _unsigned(_DISCARD_SIZE, v.discard_size), _join(_HAND, v.hand), _join(_DISCARD_PILE, v.discard_pile),
             _each(_MELDS, v.melds, _meld), _join(_FACE_UP, v.face_up),
             b"".join([length_delimited(_IN_FRONT, _join(_CARDS, f)) for f in v.in_front]) if any(v.in_front) else
             _NOTHING_IN_FRONT * len(v.in_front),
             _join(_RECEIVED, v.received), _memo(_NOTES, v.notes, _notes)]
    if v.offer is not None:
        parts.append(_OFFER[v.offer])
    return b"".join(parts)


def decision(match_id: str, request_id: int, v: SeatView, view_bytes: bytes, legal: Sequence[Action],
             time_left_ms: int, bank_left_ms: int) -> bytes:
    """A ``PlayResponse`` asking for a decision: ``view_bytes`` is ``view(v)``, made once per request (a rejoin
    asks again with less time left)."""
    head = (_memo(_MATCH_IDS, match_id, _match_id) + _unsigned(_REQUEST_ID, request_id)
            + _unsigned(_REQUEST_PHASE, codec._PHASE[v.phase]) + _unsigned(_TIME_LEFT, max(time_left_ms, 0))
            + _unsigned(_BANK_LEFT, bank_left_ms))
    body = head + length_delimited(_VIEW, view_bytes) + _each(_LEGAL, legal, _legal)
    return length_delimited(_DECISION, body)


def match_event(e: Event, match_id: str, sequence: int, hand_number: int) -> bytes:
    """``codec.event_to_pb(e, ...)``, encoded (the same bytes: fields in number order, as the library writes)."""
    parts = [_memo(_MATCH_IDS, match_id, _match_id), _unsigned(_EV_SEQUENCE, sequence),
             _memo(_KINDS, e.kind, _kind)]
    if e.seat is not None:  # ``seat`` and ``meld_id`` have presence: 0 is sent
        parts.append(_EV_SEAT + _varint(e.seat))
    parts.append(_join(_EVENT_CARDS, e.cards))
    if e.meld_id is not None:
        parts.append(_EV_MELD_ID + _varint(e.meld_id))
    parts.append(_signed(_EV_COUNT, "count", e.count))
    parts.append(_signed(_EV_POINTS, "points", e.points))
    if e.text:
        parts.append(length_delimited(_EV_TEXT, e.text.encode()))
    parts.append(_unsigned(_EV_HAND_NUMBER, hand_number))
    if e.to is not None:  # private: sent to some seats only
        parts.append(_EV_PRIVATE + _ONE_BYTE[1])
    return b"".join(parts)


def event(event_bytes: bytes, seq: int) -> bytes:
    """A ``PlayResponse`` carrying an encoded ``MatchEvent`` with its per-seat ``seq`` set."""
    return length_delimited(_EVENT, event_bytes + _unsigned(_EV_SEQ, seq))


def watch_response(event_bytes: bytes) -> bytes:
    """A ``WatchResponse`` carrying an encoded ``MatchEvent`` (a watcher's, so no per-seat ``seq``)."""
    return length_delimited(_WATCH_EVENT, event_bytes)


def accepted(match_id: str, request_id: int) -> bytes:
    """A ``PlayResponse`` saying the answer to ``request_id`` was taken."""
    return length_delimited(_ACCEPTED, _memo(_MATCH_IDS, match_id, _match_id)
                            + _unsigned(_ACCEPTED_REQUEST_ID, request_id))


def batch(messages: list[bytes]) -> bytes:
    """A ``PlayResponse`` holding encoded ``PlayResponse``s as one ``Batch``."""
    return length_delimited(_BATCH, b"".join([length_delimited(_BATCH_MESSAGES, m) for m in messages]))
