"""The live path's messages joined from encoded pieces (``referee.service.encoded``) decode to exactly what
``rummy.wire.protocodec`` builds as messages: every view, request and event of random games of every variant."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules.match import Match, MatchConfig
from referee.rules.variants import all_variants
from referee.rules.variants.base import Drop, Event
from referee.service import encoded
from rummy.referee.v1 import referee_pb2 as pb
from rummy.wire import protocodec as codec

VARIANTS = [(v.name, n) for v in all_variants() for n in sorted({v.min_seats, v.max_seats})]


def _request_as_messages(match_id: str, rid: int, view: pb.SeatView, legal: list[pb.Action], left: int,
                         bank: int) -> pb.PlayResponse:
    return pb.PlayResponse(decision=pb.DecisionRequest(match_id=match_id, request_id=rid, phase=view.phase, view=view,
                                                         legal_actions=legal, time_left_ms=max(left, 0),
                                                         bank_left_ms=bank))


@pytest.mark.parametrize(("variant", "seats"), VARIANTS)
def test_every_view_request_and_event_of_a_game_decodes_to_the_messages_protocodec_builds(variant: str,
                                                                                          seats: int) -> None:
    rng = random.Random(variant)
    m = Match(MatchConfig(variant, seats, seed=f"encoded-{variant}", max_hands=2, max_turns_per_hand=120))
    checked = 0
    while (d := m.pending()) is not None:
        view = m.view(d.seat)
        legal = m.legal_actions(d.seat)
        view_bytes = encoded.view(view)
        assert pb.SeatView.FromString(view_bytes) == codec.view_to_pb(view)
        rid, left, bank = rng.randrange(1, 2**40), rng.choice([-5, 0, 1, 127, 128, 30000]), rng.choice([0, 300])
        want = _request_as_messages(f"m-{variant}", rid, codec.view_to_pb(view), codec.actions_to_pb(legal), left, bank)
        got = pb.PlayResponse.FromString(encoded.decision(f"m-{variant}", rid, view, view_bytes, legal, left, bank))
        assert got == want
        for i, e in enumerate(m.submit(d.seat, rng.choice([a for a in legal if not isinstance(a, Drop)] or legal))):
            msg = codec.event_to_pb(e, f"m-{variant}", i + 1, m.game.hands_played)
            assert encoded.match_event(e, f"m-{variant}", i + 1, m.game.hands_played) == msg.SerializeToString()
            as_message = pb.PlayResponse(event=msg)
            as_message.event.seq = i + 7
            assert pb.PlayResponse.FromString(encoded.event(msg.SerializeToString(), i + 7)) == as_message
            # a watcher's message: the same event, no per-seat seq
            assert pb.WatchResponse.FromString(encoded.watch_response(msg.SerializeToString())) == pb.WatchResponse(event=msg)
        checked += 1
    assert checked > 20


def test_a_view_with_negative_totals_and_cards_in_front() -> None:
    """500 Rum totals go below zero (a signed varint the library writes); Iceberg shows cards in front of seats."""
    for variant in ("500-rum", "iceberg"):
        m = Match(MatchConfig(variant, 3, seed="neg"))
        m.game.totals[:] = [-135, 0, 2**40]
        view = m.view(0)
        assert pb.SeatView.FromString(encoded.view(view)) == codec.view_to_pb(view)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40000), min_size=0, max_size=4))
def test_a_batch_is_the_messages_it_holds_in_order(texts: list[str]) -> None:
    """Lengths on both sides of each varint width (127/128, 16383/16384 bytes) frame as the library frames them."""
    messages = [pb.PlayResponse(event=pb.MatchEvent(text=t, seq=i + 1)) for i, t in enumerate(texts)]
    data = encoded.batch([msg.SerializeToString() for msg in messages])
    assert data == pb.PlayResponse(batch=pb.Batch(messages=messages)).SerializeToString()


@pytest.mark.parametrize("size", [0, 1, 127, 128, 16383, 16384, 2**21])
def test_a_length_delimited_field_is_framed_as_the_library_frames_it(size: int) -> None:
    inner = pb.MatchEvent(text="x" * size).SerializeToString()
    assert encoded.length_delimited(3, inner) == pb.PlayResponse(event=pb.MatchEvent.FromString(inner)).SerializeToString()


def test_an_event_with_no_seat_and_seat_zero_differ() -> None:
    """``seat`` has presence: seat 0 is sent, no seat is not (the event's bytes come from the library)."""
    for e in (Event("HAND_ENDED"), Event("DISCARDED", 0)):
        msg = codec.event_to_pb(e, "m", 1, 1)
        got = pb.PlayResponse.FromString(encoded.event(msg.SerializeToString(), 3))
        assert got.event.HasField("seat") == (e.seat is not None)


@given(st.integers(-2**31, 2**31 - 1), st.integers(-2**40, 2**40), st.one_of(st.none(), st.integers(0, 2**32 - 1)),
       st.one_of(st.none(), st.integers(0, 2**32 - 1)), st.text(max_size=300), st.booleans(), st.integers(0, 2**40))
def test_an_event_is_encoded_byte_for_byte_as_the_library_encodes_it(count: int, points: int, seat: int | None,
                                                                     meld_id: int | None, text: str, private: bool,
                                                                     sequence: int) -> None:
    """Negative counts and points (ten-byte varints), seat and meld 0 against none, any text."""
    e = Event("MELDED", seat, (), meld_id, count, points, text, frozenset({1}) if private else None)
    assert encoded.match_event(e, "m-1", sequence, 3) == codec.event_to_pb(e, "m-1", sequence, 3).SerializeToString()


@pytest.mark.parametrize("request_id", [0, 1, 127, 128, 2**40])
def test_an_acceptance_is_the_message_the_library_builds(request_id: int) -> None:
    want = pb.PlayResponse(accepted=pb.ActionAccepted(match_id="m-7", request_id=request_id))
    assert encoded.accepted("m-7", request_id) == want.SerializeToString()
