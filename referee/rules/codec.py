"""JSON forms of actions and events, for records and the stdio bridge (cards in the text notation)."""

from __future__ import annotations

from typing import Any

from referee.rules.cards import Card, parse_card
from referee.rules.errors import InvalidAction
from referee.rules.variants.base import (
    AcceptOffer,
    Action,
    Declare,
    DeclineOffer,
    Discard,
    DrawStock,
    Drop,
    EndTurn,
    Event,
    ExchangeWild,
    Group,
    LayOff,
    Meld,
    Offer,
    TakeDiscards,
)

__all__ = ["action_to_json", "action_from_json", "event_to_json"]


def _cards(cs: tuple[Card, ...]) -> list[str]:
    return [str(c) for c in cs]


def _pairs(ps: tuple[tuple[Card, Card], ...]) -> list[list[str]]:
    return [[str(a), str(b)] for a, b in ps]


def _group(g: Group) -> dict[str, Any]:
    return {"cards": _cards(g.cards), "stands_for": _pairs(g.stands_for)}


def _read_group(d: dict[str, Any]) -> Group:
    return Group(tuple(parse_card(c) for c in d.get("cards", [])),
                 tuple((parse_card(a), parse_card(b)) for a, b in d.get("stands_for", [])))


def action_to_json(a: Action) -> dict[str, Any]:
    match a:
        case DrawStock():
            return {"kind": "draw_stock"}
        case TakeDiscards(count, meld, lay_off_on):
            return {"kind": "take_discards", "count": count, "meld": _group(meld) if meld else None, "lay_off_on": lay_off_on}
        case Meld(groups):
            return {"kind": "meld", "groups": [_group(g) for g in groups]}
        case LayOff(meld_id, cards, stands_for):
            return {"kind": "lay_off", "meld_id": meld_id, "cards": _cards(cards), "stands_for": _pairs(stands_for)}
        case ExchangeWild(meld_id, natural, wild):
            return {"kind": "exchange_wild", "meld_id": meld_id, "natural": str(natural), "wild": str(wild)}
        case Discard(card):
            return {"kind": "discard", "card": str(card)}
        case Declare(groups, discard):
            return {"kind": "declare", "groups": [_group(g) for g in groups], "discard": str(discard) if discard else None}
        case Drop():
            return {"kind": "drop"}
        case EndTurn():
            return {"kind": "end_turn"}
        case Offer(card):
            return {"kind": "offer", "card": str(card)}
        case AcceptOffer():
            return {"kind": "accept_offer"}
        case DeclineOffer():
            return {"kind": "decline_offer"}
    raise InvalidAction("BAD_ACTION", f"not an action: {a!r}")


def action_from_json(d: dict[str, Any]) -> Action:
    kind = d.get("kind")
    try:
        if kind == "draw_stock":
            return DrawStock()
        if kind == "take_discards":
            return TakeDiscards(int(d.get("count", 1)), _read_group(d["meld"]) if d.get("meld") else None, d.get("lay_off_on"))
        if kind == "meld":
            return Meld(tuple(_read_group(g) for g in d["groups"]))
        if kind == "lay_off":
            return LayOff(int(d["meld_id"]), tuple(parse_card(c) for c in d["cards"]),
                          tuple((parse_card(a), parse_card(b)) for a, b in d.get("stands_for", [])))
        if kind == "exchange_wild":
            return ExchangeWild(int(d["meld_id"]), parse_card(d["natural"]), parse_card(d["wild"]))
        if kind == "discard":
            return Discard(parse_card(d["card"]))
        if kind == "declare":
            return Declare(tuple(_read_group(g) for g in d["groups"]), parse_card(d["discard"]) if d.get("discard") else None)
        if kind == "drop":
            return Drop()
        if kind == "end_turn":
            return EndTurn()
        if kind == "offer":
            return Offer(parse_card(d["card"]))
        if kind == "accept_offer":
            return AcceptOffer()
        if kind == "decline_offer":
            return DeclineOffer()
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidAction("BAD_ACTION", f"malformed {kind} action: {exc}") from exc
    raise InvalidAction("BAD_ACTION", f"unknown action kind {kind!r}")


def event_to_json(e: Event) -> dict[str, Any]:
    return {
        "kind": e.kind, "seat": e.seat, "cards": _cards(e.cards), "meld_id": e.meld_id, "count": e.count,
        "points": e.points, "text": e.text, "to": sorted(e.to) if e.to is not None else None, "not_to": sorted(e.not_to),
    }
