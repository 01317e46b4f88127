"""Domain objects to and from the wire (``rummy.referee.v1``): the only place that knows both.

Round trips are identity for cards, groups, actions, melds and views (tests/test_protocodec.py).

The wire's ``Rank`` and ``Suit`` keep zero for *unspecified* (a field a client forgot to set), so their numbers
are not ``referee.rules.cards``' own: a printed joker is ``RANK_JOKER`` (14) with ``SUIT_NONE`` (5) on the wire and
``Rank.JOKER`` (0) with ``Suit.NONE`` (0) in the rules core, whose numbers order cards (jokers first) and stay
as they are. ``RANK_TO_PB`` and the tables below are the one translation; a card whose rank or suit is unset, or
a number that is none, is refused ``BAD_CARD`` naming what is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from referee.rules.cards import Card, Rank, Suit
from referee.rules.errors import InvalidAction
from referee.rules.melds import MeldKind, Placed
from referee.rules.variants.base import (
    AcceptOffer,
    Action,
    Declare,
    DeclineOffer,
    Discard,
    DrawStock,
    Drop,
    EndTurn,
    Evaluation,
    Event,
    ExchangeWild,
    Group,
    HandScore,
    LayOff,
    Meld,
    Offer,
    Phase,
    SeatView,
    TableMeld,
    TakeDiscards,
)
from rummy.referee.v1 import referee_pb2 as pb

__all__ = [
    "card_to_pb", "card_from_pb", "cards_from_pb", "action_to_pb", "action_from_pb", "view_to_pb",
    "view_from_pb", "event_to_pb", "hand_result_to_pb", "evaluation_to_pb", "group_from_pb", "group_to_pb",
    "actions_to_pb", "rank_to_pb", "rank_from_pb", "RANK_TO_PB", "RANK_FROM_PB", "SUIT_TO_PB",
]

# The rules core's ranks and suits to the wire's numbers, and back (see the module's docstring).
RANK_TO_PB: dict[Rank, int] = {r: (pb.RANK_JOKER if r is Rank.JOKER else int(r)) for r in Rank}
SUIT_TO_PB: dict[Suit, int] = {s: (pb.SUIT_NONE if s is Suit.NONE else int(s)) for s in Suit}
RANK_FROM_PB: dict[int, Rank] = {v: k for k, v in RANK_TO_PB.items()}
_SUIT_BACK: dict[int, Suit] = {v: k for k, v in SUIT_TO_PB.items()}
assert pb.RANK_UNSPECIFIED not in RANK_FROM_PB and pb.SUIT_UNSPECIFIED not in _SUIT_BACK

_PHASE = {Phase.DRAW: pb.PHASE_DRAW, Phase.PLAY: pb.PHASE_PLAY, Phase.DISCARD: pb.PHASE_DISCARD, Phase.OFFER: pb.PHASE_OFFER}
_PHASE_BACK = {v: k for k, v in _PHASE.items()}
_KIND = {MeldKind.SET: pb.MELD_KIND_SET, MeldKind.RUN: pb.MELD_KIND_RUN, MeldKind.WILD_SET: pb.MELD_KIND_WILD_SET,
         MeldKind.SPECIAL: pb.MELD_KIND_SPECIAL, MeldKind.JOKERS: pb.MELD_KIND_JOKERS}
_KIND_BACK = {v: k for k, v in _KIND.items()}


def _name(enum: Any, number: int) -> str:
    """An enum value's wire name (``SUIT_HEARTS``), or its number when it is none."""
    try:
        return str(enum.Name(number))
    except ValueError:
        return f"{number} (no such value)"


def rank_to_pb(r: Rank) -> pb.Rank:
    return RANK_TO_PB[r]  # type: ignore[return-value]


def rank_from_pb(number: int, what: str = "a rank", code: str = "BAD_CARD") -> Rank:
    """:raises InvalidAction: (``code``) when ``number`` is ``RANK_UNSPECIFIED`` or no rank."""
    rank = RANK_FROM_PB.get(number)
    if rank is None:
        if number == pb.RANK_UNSPECIFIED:
            raise InvalidAction(code, f"{what} is unset (RANK_UNSPECIFIED): name one, e.g. RANK_QUEEN or RANK_JOKER")
        raise InvalidAction(code, f"{what} is not a rank: {number}")
    return rank


def _suit_from_pb(number: int, what: str) -> Suit:
    suit = _SUIT_BACK.get(number)
    if suit is None:
        if number == pb.SUIT_UNSPECIFIED:
            raise InvalidAction("BAD_CARD", f"{what} is unset (SUIT_UNSPECIFIED): name one, e.g. SUIT_SPADES, or "
                                "SUIT_NONE for a printed joker")
        raise InvalidAction("BAD_CARD", f"{what} is not a suit: {number}")
    return suit


def card_to_pb(c: Card) -> pb.Card:
    return pb.Card(rank=RANK_TO_PB[c.rank], suit=SUIT_TO_PB[c.suit])  # type: ignore[arg-type]


def card_from_pb(m: pb.Card) -> Card:
    """:raises InvalidAction: ``BAD_CARD`` for a rank or suit unset or out of range, a joker with a suit, a suited
    card with none; the message names the fields and values by their wire names."""
    card = _CARD_BY_CODE.get((m.rank, m.suit))
    if card is None:
        if m.rank == pb.RANK_UNSPECIFIED and m.suit == pb.SUIT_UNSPECIFIED:
            raise InvalidAction("BAD_CARD", "a card with neither rank nor suit set (RANK_UNSPECIFIED, SUIT_UNSPECIFIED): "
                                "a card names both, e.g. RANK_QUEEN and SUIT_SPADES, or RANK_JOKER and SUIT_NONE")
        rank = rank_from_pb(m.rank, "the card's rank")
        _suit_from_pb(m.suit, f"the suit of a card of rank {_name(pb.Rank, m.rank)}")
        if rank is Rank.JOKER:
            raise InvalidAction("BAD_CARD", f"a printed joker (RANK_JOKER) has suit SUIT_NONE, not {_name(pb.Suit, m.suit)}")
        raise InvalidAction("BAD_CARD", f"a card of rank {_name(pb.Rank, m.rank)} has one of the four suits, not SUIT_NONE "
                            "(the suit of a printed joker)")
    return card


def cards_from_pb(ms: Iterable[pb.Card]) -> tuple[Card, ...]:
    return tuple(card_from_pb(m) for m in ms)


# One message per card, and per action and note seen lately, built once: a message passed to a constructor or a
# repeated field is copied (so these are never shared), and views and legal-action lists repeat them constantly.
_CARD_PB: dict[Card, pb.Card] = {Card(r, s): card_to_pb(Card(r, s)) for r in Rank for s in Suit
                                 if (r is Rank.JOKER) == (s is Suit.NONE)}
_CARD_BY_CODE: dict[tuple[int, int], Card] = {(m.rank, m.suit): c for c, m in _CARD_PB.items()}  # the decoder's, by wire numbers
_MEMO_LIMIT = 4096
_ACTION_PB: dict[Action, pb.Action] = {}
_NOTE_PB: dict[tuple[str, str], pb.Note] = {}


def _cards(cs: Iterable[Card]) -> list[pb.Card]:
    return [_CARD_PB[c] for c in cs]


def actions_to_pb(actions: Iterable[Action]) -> list[pb.Action]:
    """Actions as messages to put in a ``DecisionRequest`` (or any message: they are copied in), each built once;
    change a copy, never these."""
    if len(_ACTION_PB) > _MEMO_LIMIT:
        _ACTION_PB.clear()
    out = []
    for a in actions:
        m = _ACTION_PB.get(a)
        if m is None:
            m = _ACTION_PB[a] = action_to_pb(a)
        out.append(m)
    return out


def _notes(notes: Iterable[tuple[str, str]]) -> list[pb.Note]:
    if len(_NOTE_PB) > _MEMO_LIMIT:
        _NOTE_PB.clear()
    out = []
    for kv in notes:
        m = _NOTE_PB.get(kv)
        if m is None:
            m = _NOTE_PB[kv] = pb.Note(key=kv[0], value=kv[1])
        out.append(m)
    return out


def _assign_to_pb(pairs: Sequence[tuple[Card, Card]]) -> list[pb.WildAssignment]:
    return [pb.WildAssignment(wild=card_to_pb(w), as_card=card_to_pb(a)) for w, a in pairs]


def _assign_from_pb(ms: Iterable[pb.WildAssignment]) -> tuple[tuple[Card, Card], ...]:
    out = []
    for m in ms:
        as_card = m.as_card
        if as_card.suit == pb.SUIT_NONE and as_card.rank != pb.RANK_JOKER:
            # a set wild with an unnamed suit: any suit reads the same for the meld engine
            out.append((card_from_pb(m.wild), Card(rank_from_pb(as_card.rank, "the rank a wild stands for"), Suit.SPADES)))
        else:
            out.append((card_from_pb(m.wild), card_from_pb(as_card)))
    return tuple(out)


def group_to_pb(g: Group) -> pb.Group:
    return pb.Group(cards=_cards(g.cards), stands_for=_assign_to_pb(g.stands_for))


def group_from_pb(m: pb.Group) -> Group:
    return Group(cards_from_pb(m.cards), _assign_from_pb(m.stands_for))


def action_to_pb(a: Action) -> pb.Action:
    match a:
        case DrawStock():
            return pb.Action(draw_stock=pb.DrawStock())
        case TakeDiscards(count, meld, lay_off_on):
            t = pb.TakeDiscards(count=count)
            if meld is not None:
                t.meld.CopyFrom(group_to_pb(meld))
            if lay_off_on is not None:
                t.lay_off_on = lay_off_on
            return pb.Action(take_discards=t)
        case Meld(groups):
            return pb.Action(meld=pb.MeldAction(groups=[group_to_pb(g) for g in groups]))
        case LayOff(meld_id, cards, stands_for):
            return pb.Action(lay_off=pb.LayOff(meld_id=meld_id, cards=_cards(cards), stands_for=_assign_to_pb(stands_for)))
        case ExchangeWild(meld_id, natural, wild):
            return pb.Action(exchange_wild=pb.ExchangeWild(meld_id=meld_id, natural=card_to_pb(natural), wild=card_to_pb(wild)))
        case Discard(card):
            return pb.Action(discard=pb.Discard(card=card_to_pb(card)))
        case Declare(groups, discard):
            d = pb.Declare(groups=[group_to_pb(g) for g in groups])
            if discard is not None:
                d.discard.CopyFrom(card_to_pb(discard))
            return pb.Action(declare=d)
        case Drop():
            return pb.Action(drop=pb.Drop())
        case EndTurn():
            return pb.Action(end_turn=pb.EndTurn())
        case Offer(card):
            return pb.Action(offer=pb.Offer(card=card_to_pb(card)))
        case AcceptOffer():
            return pb.Action(accept_offer=pb.AcceptOffer())
        case DeclineOffer():
            return pb.Action(decline_offer=pb.DeclineOffer())
    raise InvalidAction("BAD_ACTION", f"not an action: {a!r}")


def action_from_pb(m: pb.Action) -> Action:
    """:raises InvalidAction: when the message names no action or a malformed card."""
    kind = m.WhichOneof("kind")
    if kind == "draw_stock":
        return DrawStock()
    if kind == "take_discards":
        t = m.take_discards
        return TakeDiscards(t.count, group_from_pb(t.meld) if t.HasField("meld") else None,
                            t.lay_off_on if t.HasField("lay_off_on") else None)
    if kind == "meld":
        if not m.meld.groups:
            raise InvalidAction("EMPTY_MELD", "a meld action needs at least one group of cards")
        return Meld(tuple(group_from_pb(g) for g in m.meld.groups))
    if kind == "lay_off":
        if not m.lay_off.cards:
            raise InvalidAction("EMPTY_LAY_OFF", "a lay-off needs at least one card")
        return LayOff(m.lay_off.meld_id, cards_from_pb(m.lay_off.cards), _assign_from_pb(m.lay_off.stands_for))
    if kind == "exchange_wild":
        e = m.exchange_wild
        return ExchangeWild(e.meld_id, card_from_pb(e.natural), card_from_pb(e.wild))
    if kind == "discard":
        if not m.discard.HasField("card"):
            raise InvalidAction("BAD_CARD", "a discard must name its card")
        return Discard(card_from_pb(m.discard.card))
    if kind == "declare":
        d = m.declare
        return Declare(tuple(group_from_pb(g) for g in d.groups), card_from_pb(d.discard) if d.HasField("discard") else None)
    if kind == "drop":
        return Drop()
    if kind == "end_turn":
        return EndTurn()
    if kind == "offer":
        return Offer(card_from_pb(m.offer.card))
    if kind == "accept_offer":
        return AcceptOffer()
    if kind == "decline_offer":
        return DeclineOffer()
    raise InvalidAction("NO_ACTION", "the action message names no action")


def _placed_to_pb(p: Placed, laid_by: int) -> pb.MeldCard:
    return pb.MeldCard(card=_CARD_PB[p.card], as_rank=RANK_TO_PB[p.rank], as_suit=SUIT_TO_PB[p.suit], wild=p.is_wild,  # type: ignore[arg-type]
                       laid_by=laid_by, position=p.pos)


def meld_to_pb(m: TableMeld) -> pb.TableMeld:
    return pb.TableMeld(id=m.id, owner=m.owner, kind=_KIND[m.meld_kind], label=m.label,
                        cards=[_placed_to_pb(p, by) for p, by in zip(m.cards, m.laid_by, strict=False)])


def view_to_pb(v: SeatView) -> pb.SeatView:
    out = pb.SeatView(
        variant=v.variant, seat=v.seat, hand_number=v.hand_number, dealer=v.dealer, turn=v.turn, phase=_PHASE[v.phase],
        hand=_cards(v.hand), hand_sizes=list(v.hand_sizes), stock_size=v.stock_size, discard_pile=_cards(v.discard_pile),
        discard_size=v.discard_size, melds=[meld_to_pb(m) for m in v.melds], face_up=_cards(v.face_up),
        wild_ranks=[RANK_TO_PB[r] for r in v.wild_ranks], in_front=[pb.Cards(cards=_cards(f)) for f in v.in_front],  # type: ignore[misc]
        received=_cards(v.received), teams=list(v.teams), active=list(v.active), totals=list(v.totals),
        notes=_notes(v.notes),
    )
    if v.offer is not None:
        out.offer.CopyFrom(_CARD_PB[v.offer])
    return out


def _meld_from_pb(m: pb.TableMeld) -> TableMeld:
    from referee.rules.melds import MeldReading

    placed = tuple(Placed(c.position, card_from_pb(c.card), rank_from_pb(c.as_rank, "a meld card's as_rank"),
                          _suit_from_pb(c.as_suit, "a meld card's as_suit")) for c in m.cards)
    kind = _KIND_BACK.get(m.kind, MeldKind.SET)
    base_kind = kind if kind in (MeldKind.SET, MeldKind.RUN, MeldKind.WILD_SET, MeldKind.JOKERS) else MeldKind.SET
    return TableMeld(m.id, m.owner, MeldReading(base_kind, placed), tuple(c.laid_by for c in m.cards),
                     kind if kind is MeldKind.SPECIAL else None, m.label, 0)


def view_from_pb(m: pb.SeatView) -> SeatView:
    """The SDK's side: a view as the domain type, so policies are the same in-process and over the wire."""
    return SeatView(
        variant=m.variant, seat=m.seat, hand_number=m.hand_number, dealer=m.dealer, turn=m.turn,
        phase=_PHASE_BACK.get(m.phase, Phase.PLAY), hand=cards_from_pb(m.hand), hand_sizes=tuple(m.hand_sizes),
        stock_size=m.stock_size, discard_pile=cards_from_pb(m.discard_pile), discard_size=m.discard_size,
        melds=tuple(_meld_from_pb(x) for x in m.melds), face_up=cards_from_pb(m.face_up),
        wild_ranks=tuple(rank_from_pb(r, "a wild rank") for r in m.wild_ranks), in_front=tuple(cards_from_pb(f.cards) for f in m.in_front),
        received=cards_from_pb(m.received), teams=tuple(m.teams), active=tuple(m.active), totals=tuple(m.totals),
        notes=tuple((n.key, n.value) for n in m.notes), offer=card_from_pb(m.offer) if m.HasField("offer") else None,
    )


def event_to_pb(e: Event, match_id: str, sequence: int, hand_number: int) -> pb.MatchEvent:
    out = pb.MatchEvent(match_id=match_id, sequence=sequence, kind=e.kind, cards=_cards(e.cards), count=e.count,
                        points=e.points, text=e.text, hand_number=hand_number, private=not e.public)
    if e.seat is not None:
        out.seat = e.seat
    if e.meld_id is not None:
        out.meld_id = e.meld_id
    return out


def hand_result_to_pb(score: HandScore, match_id: str, hand_number: int, totals: Sequence[int]) -> pb.HandResult:
    out = pb.HandResult(match_id=match_id, hand_number=hand_number, points=list(score.points), totals=list(totals),
                        reason=score.reason, details=list(score.details))
    if score.winner is not None:
        out.winner = score.winner
    return out


def evaluation_to_pb(e: Evaluation) -> pb.EvaluateResponse:
    return pb.EvaluateResponse(
        groups=[pb.GroupVerdict(cards=_cards(g.cards), valid=g.valid, kind=g.kind, pure=g.pure, reason=g.reason,
                                points=g.points, description=g.description) for g in e.groups],
        declaration_valid=e.declaration_valid, declaration_reason=e.declaration_reason, hand_points=e.hand_points,
        melded_points=e.melded_points, detail=e.detail,
    )
