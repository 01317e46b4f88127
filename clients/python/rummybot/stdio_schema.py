"""The JSON Schema of the stdio bridge's lines, generated from the proto's descriptors (one source of truth).

Each line the bridge writes is ``{"type": KIND, KIND: <the PlayResponse field in protobuf's JSON mapping>}``;
each line a bot writes is ``{"legal_index": K}`` or ``{"action": <Action in protobuf's JSON mapping>}``.
``python -m rummybot.stdio_schema`` prints the schema (committed as ``clients/stdio/schema.json``).
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from rummy.referee.v1 import referee_pb2 as pb

__all__ = ["LINE_KINDS", "schema", "main"]

# the PlayResponse fields a bot is sent, in the order a match produces them
LINE_KINDS = ("welcome", "seated", "event", "decision", "rejected", "accepted", "hand_result", "match_result")

_INT64 = {FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT64,
          FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64}
_INT32 = {FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_SINT32,
          FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_SFIXED32}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _scalar(field: FieldDescriptor, defs: dict[str, Any]) -> dict[str, Any]:
    t = field.type
    if t == FieldDescriptor.TYPE_MESSAGE:
        _message(field.message_type, defs)
        return _ref(field.message_type.name)
    if t == FieldDescriptor.TYPE_ENUM:
        _enum(field.enum_type, defs)
        return _ref(field.enum_type.name)
    if t in _INT64:  # protobuf's JSON mapping writes 64-bit integers as strings; parsers accept both
        return {"type": ["string", "integer"], "pattern": "^-?[0-9]+$"}
    if t in _INT32:
        return {"type": "integer", "minimum": 0} if t in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32) else {"type": "integer"}
    if t == FieldDescriptor.TYPE_BOOL:
        return {"type": "boolean"}
    if t in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return {"type": "number"}
    return {"type": "string"}


# A card names both its rank and its suit: the referee refuses one with either unset (BAD_CARD), and never sends one,
# so the schema has neither RANK_UNSPECIFIED nor SUIT_UNSPECIFIED and requires both fields of a Card.
_NO_UNSPECIFIED = {"Rank", "Suit"}
_REQUIRED = {"Card": ["rank", "suit"]}


def _enum(enum: EnumDescriptor, defs: dict[str, Any]) -> None:
    values = [v.name for v in enum.values if not (enum.name in _NO_UNSPECIFIED and v.number == 0)]
    defs.setdefault(enum.name, {"enum": values})


def _message(message: Descriptor, defs: dict[str, Any]) -> None:
    if message.name in defs:
        return
    props: dict[str, Any] = {}
    defs[message.name] = {"type": "object", "properties": props, "additionalProperties": False}
    if message.name in _REQUIRED:
        defs[message.name]["required"] = _REQUIRED[message.name]
    for field in message.fields:
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value = field.message_type.fields_by_name["value"]
            props[field.name] = {"type": "object", "additionalProperties": _scalar(value, defs)}
        elif field.is_repeated:
            props[field.name] = {"type": "array", "items": _scalar(field, defs)}
        else:
            props[field.name] = _scalar(field, defs)


def schema() -> dict[str, Any]:
    """The bridge's two line formats: ``bridge_line`` (to the bot) and ``bot_answer`` (from it)."""
    defs: dict[str, Any] = {}
    play_response = pb.PlayResponse.DESCRIPTOR
    kinds = []
    for kind in LINE_KINDS:
        field = play_response.fields_by_name[kind]
        _message(field.message_type, defs)
        kinds.append({"type": "object", "required": ["type", kind], "additionalProperties": False,
                      "properties": {"type": {"const": kind}, kind: _ref(field.message_type.name)}})
    _message(pb.Action.DESCRIPTOR, defs)
    defs["bridge_line"] = {"description": "one line from the bridge to the bot", "oneOf": kinds}
    defs["bot_answer"] = {
        "description": "one line from the bot: an index into the decision's legal_actions, or any action; "
                       "request_id (and match_id) name the decision answered, by default the oldest open one",
        "type": "object",
        "properties": {"legal_index": {"type": "integer", "minimum": 0}, "action": _ref("Action"),
                       "request_id": {"type": ["string", "integer"], "pattern": "^[0-9]+$"},
                       "match_id": {"type": "string"}},
        "oneOf": [{"required": ["legal_index"], "not": {"required": ["action"]}},
                  {"required": ["action"], "not": {"required": ["legal_index"]}}],
    }
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "rummy.referee.v1/stdio-bridge.schema.json",
            "title": "Rummy Referee stdio bridge lines (generated from referee.proto: do not edit)",
            "$defs": defs}


def main() -> None:
    print(json.dumps(schema(), indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
