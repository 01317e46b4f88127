from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Rank(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RANK_UNSPECIFIED: _ClassVar[Rank]
    RANK_ACE: _ClassVar[Rank]
    RANK_TWO: _ClassVar[Rank]
    RANK_THREE: _ClassVar[Rank]
    RANK_FOUR: _ClassVar[Rank]
    RANK_FIVE: _ClassVar[Rank]
    RANK_SIX: _ClassVar[Rank]
    RANK_SEVEN: _ClassVar[Rank]
    RANK_EIGHT: _ClassVar[Rank]
    RANK_NINE: _ClassVar[Rank]
    RANK_TEN: _ClassVar[Rank]
    RANK_JACK: _ClassVar[Rank]
    RANK_QUEEN: _ClassVar[Rank]
    RANK_KING: _ClassVar[Rank]
    RANK_JOKER: _ClassVar[Rank]

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_SPADES: _ClassVar[Suit]
    SUIT_HEARTS: _ClassVar[Suit]
    SUIT_DIAMONDS: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]
    SUIT_NONE: _ClassVar[Suit]

class MeldKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MELD_KIND_UNSPECIFIED: _ClassVar[MeldKind]
    MELD_KIND_SET: _ClassVar[MeldKind]
    MELD_KIND_RUN: _ClassVar[MeldKind]
    MELD_KIND_WILD_SET: _ClassVar[MeldKind]
    MELD_KIND_SPECIAL: _ClassVar[MeldKind]
    MELD_KIND_JOKERS: _ClassVar[MeldKind]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_DRAW: _ClassVar[Phase]
    PHASE_PLAY: _ClassVar[Phase]
    PHASE_DISCARD: _ClassVar[Phase]
    PHASE_OFFER: _ClassVar[Phase]

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_WAITING: _ClassVar[MatchStatus]
    MATCH_STATUS_RUNNING: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
    MATCH_STATUS_ABORTED: _ClassVar[MatchStatus]
RANK_UNSPECIFIED: Rank
RANK_ACE: Rank
RANK_TWO: Rank
RANK_THREE: Rank
RANK_FOUR: Rank
RANK_FIVE: Rank
RANK_SIX: Rank
RANK_SEVEN: Rank
RANK_EIGHT: Rank
RANK_NINE: Rank
RANK_TEN: Rank
RANK_JACK: Rank
RANK_QUEEN: Rank
RANK_KING: Rank
RANK_JOKER: Rank
SUIT_UNSPECIFIED: Suit
SUIT_SPADES: Suit
SUIT_HEARTS: Suit
SUIT_DIAMONDS: Suit
SUIT_CLUBS: Suit
SUIT_NONE: Suit
MELD_KIND_UNSPECIFIED: MeldKind
MELD_KIND_SET: MeldKind
MELD_KIND_RUN: MeldKind
MELD_KIND_WILD_SET: MeldKind
MELD_KIND_SPECIAL: MeldKind
MELD_KIND_JOKERS: MeldKind
PHASE_UNSPECIFIED: Phase
PHASE_DRAW: Phase
PHASE_PLAY: Phase
PHASE_DISCARD: Phase
PHASE_OFFER: Phase
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_WAITING: MatchStatus
MATCH_STATUS_RUNNING: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus
MATCH_STATUS_ABORTED: MatchStatus

class Card(_message.Message):
    __slots__ = ("rank", "suit")
    RANK_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    rank: Rank
    suit: Suit
    def __init__(self, rank: _Optional[_Union[Rank, str]] = ..., suit: _Optional[_Union[Suit, str]] = ...) -> None: ...

class MeldCard(_message.Message):
    __slots__ = ("card", "as_rank", "as_suit", "wild", "laid_by", "position")
    CARD_FIELD_NUMBER: _ClassVar[int]
    AS_RANK_FIELD_NUMBER: _ClassVar[int]
    AS_SUIT_FIELD_NUMBER: _ClassVar[int]
    WILD_FIELD_NUMBER: _ClassVar[int]
    LAID_BY_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    card: Card
    as_rank: Rank
    as_suit: Suit
    wild: bool
    laid_by: int
    position: int
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ..., as_rank: _Optional[_Union[Rank, str]] = ..., as_suit: _Optional[_Union[Suit, str]] = ..., wild: _Optional[bool] = ..., laid_by: _Optional[int] = ..., position: _Optional[int] = ...) -> None: ...

class TableMeld(_message.Message):
    __slots__ = ("id", "owner", "kind", "cards", "label")
    ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    id: int
    owner: int
    kind: MeldKind
    cards: _containers.RepeatedCompositeFieldContainer[MeldCard]
    label: str
    def __init__(self, id: _Optional[int] = ..., owner: _Optional[int] = ..., kind: _Optional[_Union[MeldKind, str]] = ..., cards: _Optional[_Iterable[_Union[MeldCard, _Mapping]]] = ..., label: _Optional[str] = ...) -> None: ...

class Group(_message.Message):
    __slots__ = ("cards", "stands_for")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    STANDS_FOR_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    stands_for: _containers.RepeatedCompositeFieldContainer[WildAssignment]
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., stands_for: _Optional[_Iterable[_Union[WildAssignment, _Mapping]]] = ...) -> None: ...

class WildAssignment(_message.Message):
    __slots__ = ("wild", "as_card")
    WILD_FIELD_NUMBER: _ClassVar[int]
    AS_CARD_FIELD_NUMBER: _ClassVar[int]
    wild: Card
    as_card: Card
    def __init__(self, wild: _Optional[_Union[Card, _Mapping]] = ..., as_card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class DrawStock(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TakeDiscards(_message.Message):
    __slots__ = ("count", "meld", "lay_off_on")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MELD_FIELD_NUMBER: _ClassVar[int]
    LAY_OFF_ON_FIELD_NUMBER: _ClassVar[int]
    count: int
    meld: Group
    lay_off_on: int
    def __init__(self, count: _Optional[int] = ..., meld: _Optional[_Union[Group, _Mapping]] = ..., lay_off_on: _Optional[int] = ...) -> None: ...

class MeldAction(_message.Message):
    __slots__ = ("groups",)
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[Group]
    def __init__(self, groups: _Optional[_Iterable[_Union[Group, _Mapping]]] = ...) -> None: ...

class LayOff(_message.Message):
    __slots__ = ("meld_id", "cards", "stands_for")
    MELD_ID_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    STANDS_FOR_FIELD_NUMBER: _ClassVar[int]
    meld_id: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    stands_for: _containers.RepeatedCompositeFieldContainer[WildAssignment]
    def __init__(self, meld_id: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., stands_for: _Optional[_Iterable[_Union[WildAssignment, _Mapping]]] = ...) -> None: ...

class ExchangeWild(_message.Message):
    __slots__ = ("meld_id", "natural", "wild")
    MELD_ID_FIELD_NUMBER: _ClassVar[int]
    NATURAL_FIELD_NUMBER: _ClassVar[int]
    WILD_FIELD_NUMBER: _ClassVar[int]
    meld_id: int
    natural: Card
    wild: Card
    def __init__(self, meld_id: _Optional[int] = ..., natural: _Optional[_Union[Card, _Mapping]] = ..., wild: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class Discard(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: Card
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class Declare(_message.Message):
    __slots__ = ("groups", "discard")
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[Group]
    discard: Card
    def __init__(self, groups: _Optional[_Iterable[_Union[Group, _Mapping]]] = ..., discard: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class Drop(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EndTurn(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Offer(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: Card
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class AcceptOffer(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeclineOffer(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Action(_message.Message):
    __slots__ = ("draw_stock", "take_discards", "meld", "lay_off", "exchange_wild", "discard", "declare", "drop", "end_turn", "offer", "accept_offer", "decline_offer")
    DRAW_STOCK_FIELD_NUMBER: _ClassVar[int]
    TAKE_DISCARDS_FIELD_NUMBER: _ClassVar[int]
    MELD_FIELD_NUMBER: _ClassVar[int]
    LAY_OFF_FIELD_NUMBER: _ClassVar[int]
    EXCHANGE_WILD_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    DECLARE_FIELD_NUMBER: _ClassVar[int]
    DROP_FIELD_NUMBER: _ClassVar[int]
    END_TURN_FIELD_NUMBER: _ClassVar[int]
    OFFER_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_OFFER_FIELD_NUMBER: _ClassVar[int]
    DECLINE_OFFER_FIELD_NUMBER: _ClassVar[int]
    draw_stock: DrawStock
    take_discards: TakeDiscards
    meld: MeldAction
    lay_off: LayOff
    exchange_wild: ExchangeWild
    discard: Discard
    declare: Declare
    drop: Drop
    end_turn: EndTurn
    offer: Offer
    accept_offer: AcceptOffer
    decline_offer: DeclineOffer
    def __init__(self, draw_stock: _Optional[_Union[DrawStock, _Mapping]] = ..., take_discards: _Optional[_Union[TakeDiscards, _Mapping]] = ..., meld: _Optional[_Union[MeldAction, _Mapping]] = ..., lay_off: _Optional[_Union[LayOff, _Mapping]] = ..., exchange_wild: _Optional[_Union[ExchangeWild, _Mapping]] = ..., discard: _Optional[_Union[Discard, _Mapping]] = ..., declare: _Optional[_Union[Declare, _Mapping]] = ..., drop: _Optional[_Union[Drop, _Mapping]] = ..., end_turn: _Optional[_Union[EndTurn, _Mapping]] = ..., offer: _Optional[_Union[Offer, _Mapping]] = ..., accept_offer: _Optional[_Union[AcceptOffer, _Mapping]] = ..., decline_offer: _Optional[_Union[DeclineOffer, _Mapping]] = ...) -> None: ...

class Note(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("variant", "seat", "hand_number", "dealer", "turn", "phase", "hand", "hand_sizes", "stock_size", "discard_pile", "discard_size", "melds", "face_up", "wild_ranks", "in_front", "received", "teams", "active", "totals", "notes", "offer")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    STOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PILE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_SIZE_FIELD_NUMBER: _ClassVar[int]
    MELDS_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_FIELD_NUMBER: _ClassVar[int]
    WILD_RANKS_FIELD_NUMBER: _ClassVar[int]
    IN_FRONT_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    TEAMS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    OFFER_FIELD_NUMBER: _ClassVar[int]
    variant: str
    seat: int
    hand_number: int
    dealer: int
    turn: int
    phase: Phase
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    stock_size: int
    discard_pile: _containers.RepeatedCompositeFieldContainer[Card]
    discard_size: int
    melds: _containers.RepeatedCompositeFieldContainer[TableMeld]
    face_up: _containers.RepeatedCompositeFieldContainer[Card]
    wild_ranks: _containers.RepeatedScalarFieldContainer[Rank]
    in_front: _containers.RepeatedCompositeFieldContainer[Cards]
    received: _containers.RepeatedCompositeFieldContainer[Card]
    teams: _containers.RepeatedScalarFieldContainer[int]
    active: _containers.RepeatedScalarFieldContainer[bool]
    totals: _containers.RepeatedScalarFieldContainer[int]
    notes: _containers.RepeatedCompositeFieldContainer[Note]
    offer: Card
    def __init__(self, variant: _Optional[str] = ..., seat: _Optional[int] = ..., hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., turn: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., stock_size: _Optional[int] = ..., discard_pile: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., discard_size: _Optional[int] = ..., melds: _Optional[_Iterable[_Union[TableMeld, _Mapping]]] = ..., face_up: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., wild_ranks: _Optional[_Iterable[_Union[Rank, str]]] = ..., in_front: _Optional[_Iterable[_Union[Cards, _Mapping]]] = ..., received: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., teams: _Optional[_Iterable[int]] = ..., active: _Optional[_Iterable[bool]] = ..., totals: _Optional[_Iterable[int]] = ..., notes: _Optional[_Iterable[_Union[Note, _Mapping]]] = ..., offer: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class Cards(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("match_id", "sequence", "kind", "seat", "cards", "meld_id", "count", "points", "text", "hand_number", "private", "seq")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    MELD_ID_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    sequence: int
    kind: str
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    meld_id: int
    count: int
    points: int
    text: str
    hand_number: int
    private: bool
    seq: int
    def __init__(self, match_id: _Optional[str] = ..., sequence: _Optional[int] = ..., kind: _Optional[str] = ..., seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., meld_id: _Optional[int] = ..., count: _Optional[int] = ..., points: _Optional[int] = ..., text: _Optional[str] = ..., hand_number: _Optional[int] = ..., private: _Optional[bool] = ..., seq: _Optional[int] = ...) -> None: ...

class Join(_message.Message):
    __slots__ = ("seat", "bot_token", "bot_name", "sdk", "resume", "batch")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SDK_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    seat: SeatCredential
    bot_token: str
    bot_name: str
    sdk: str
    resume: _containers.RepeatedCompositeFieldContainer[ResumePoint]
    batch: bool
    def __init__(self, seat: _Optional[_Union[SeatCredential, _Mapping]] = ..., bot_token: _Optional[str] = ..., bot_name: _Optional[str] = ..., sdk: _Optional[str] = ..., resume: _Optional[_Iterable[_Union[ResumePoint, _Mapping]]] = ..., batch: _Optional[bool] = ...) -> None: ...

class ResumePoint(_message.Message):
    __slots__ = ("match_id", "last_seq")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    last_seq: int
    def __init__(self, match_id: _Optional[str] = ..., last_seq: _Optional[int] = ...) -> None: ...

class SeatCredential(_message.Message):
    __slots__ = ("match_id", "token")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("join", "action", "resign")
    JOIN_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESIGN_FIELD_NUMBER: _ClassVar[int]
    join: Join
    action: ActionMessage
    resign: Resign
    def __init__(self, join: _Optional[_Union[Join, _Mapping]] = ..., action: _Optional[_Union[ActionMessage, _Mapping]] = ..., resign: _Optional[_Union[Resign, _Mapping]] = ...) -> None: ...

class ActionMessage(_message.Message):
    __slots__ = ("match_id", "request_id", "action")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    action: Action
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Resign(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_name", "server_version")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    server_version: str
    def __init__(self, bot_name: _Optional[str] = ..., server_version: _Optional[str] = ...) -> None: ...

class Seated(_message.Message):
    __slots__ = ("match_id", "seat", "variant", "options", "seats", "teams", "time_control", "last_seq")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TEAMS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    variant: str
    options: _containers.ScalarMap[str, str]
    seats: int
    teams: _containers.RepeatedScalarFieldContainer[int]
    time_control: TimeControl
    last_seq: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., variant: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., seats: _Optional[int] = ..., teams: _Optional[_Iterable[int]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., last_seq: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("match_id", "request_id", "phase", "view", "legal_actions", "time_left_ms", "bank_left_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    phase: Phase
    view: SeatView
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    time_left_ms: int
    bank_left_ms: int
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., view: _Optional[_Union[SeatView, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., time_left_ms: _Optional[int] = ..., bank_left_ms: _Optional[int] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("match_id", "request_id", "code", "message")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    code: str
    message: str
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class ActionAccepted(_message.Message):
    __slots__ = ("match_id", "request_id")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ...) -> None: ...

class HandResult(_message.Message):
    __slots__ = ("match_id", "hand_number", "points", "totals", "winner", "reason", "details", "seq")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    hand_number: int
    points: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    winner: int
    reason: str
    details: _containers.RepeatedScalarFieldContainer[str]
    seq: int
    def __init__(self, match_id: _Optional[str] = ..., hand_number: _Optional[int] = ..., points: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., winner: _Optional[int] = ..., reason: _Optional[str] = ..., details: _Optional[_Iterable[str]] = ..., seq: _Optional[int] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("welcome", "seated", "event", "decision", "rejected", "accepted", "hand_result", "match_result", "batch")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    SEATED_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    HAND_RESULT_FIELD_NUMBER: _ClassVar[int]
    MATCH_RESULT_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    seated: Seated
    event: MatchEvent
    decision: DecisionRequest
    rejected: ActionRejected
    accepted: ActionAccepted
    hand_result: HandResult
    match_result: MatchResult
    batch: Batch
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., seated: _Optional[_Union[Seated, _Mapping]] = ..., event: _Optional[_Union[MatchEvent, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., accepted: _Optional[_Union[ActionAccepted, _Mapping]] = ..., hand_result: _Optional[_Union[HandResult, _Mapping]] = ..., match_result: _Optional[_Union[MatchResult, _Mapping]] = ..., batch: _Optional[_Union[Batch, _Mapping]] = ...) -> None: ...

class Batch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[PlayResponse]
    def __init__(self, messages: _Optional[_Iterable[_Union[PlayResponse, _Mapping]]] = ...) -> None: ...

class OptionInfo(_message.Message):
    __slots__ = ("name", "choices", "default_value", "doc", "clause")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CHOICES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOC_FIELD_NUMBER: _ClassVar[int]
    CLAUSE_FIELD_NUMBER: _ClassVar[int]
    name: str
    choices: _containers.RepeatedScalarFieldContainer[str]
    default_value: str
    doc: str
    clause: str
    def __init__(self, name: _Optional[str] = ..., choices: _Optional[_Iterable[str]] = ..., default_value: _Optional[str] = ..., doc: _Optional[str] = ..., clause: _Optional[str] = ...) -> None: ...

class VariantInfo(_message.Message):
    __slots__ = ("name", "aliases", "title", "min_seats", "max_seats", "team_play", "lower_is_better", "options")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALIASES_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MIN_SEATS_FIELD_NUMBER: _ClassVar[int]
    MAX_SEATS_FIELD_NUMBER: _ClassVar[int]
    TEAM_PLAY_FIELD_NUMBER: _ClassVar[int]
    LOWER_IS_BETTER_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    aliases: _containers.RepeatedScalarFieldContainer[str]
    title: str
    min_seats: int
    max_seats: int
    team_play: bool
    lower_is_better: bool
    options: _containers.RepeatedCompositeFieldContainer[OptionInfo]
    def __init__(self, name: _Optional[str] = ..., aliases: _Optional[_Iterable[str]] = ..., title: _Optional[str] = ..., min_seats: _Optional[int] = ..., max_seats: _Optional[int] = ..., team_play: _Optional[bool] = ..., lower_is_better: _Optional[bool] = ..., options: _Optional[_Iterable[_Union[OptionInfo, _Mapping]]] = ...) -> None: ...

class ListVariantsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListVariantsResponse(_message.Message):
    __slots__ = ("variants",)
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    variants: _containers.RepeatedCompositeFieldContainer[VariantInfo]
    def __init__(self, variants: _Optional[_Iterable[_Union[VariantInfo, _Mapping]]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("per_move_ms", "bank_ms", "grace_ms", "connect_ms")
    PER_MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    CONNECT_MS_FIELD_NUMBER: _ClassVar[int]
    per_move_ms: int
    bank_ms: int
    grace_ms: int
    connect_ms: int
    def __init__(self, per_move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ..., connect_ms: _Optional[int] = ...) -> None: ...

class SeatSpec(_message.Message):
    __slots__ = ("name", "bot_token")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    bot_token: str
    def __init__(self, name: _Optional[str] = ..., bot_token: _Optional[str] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("variant", "options", "seats", "teams", "seed", "time_control", "decks", "max_turns_per_hand", "max_hands", "forfeit_after", "idempotency_key")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TEAMS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    DECKS_FIELD_NUMBER: _ClassVar[int]
    MAX_TURNS_PER_HAND_FIELD_NUMBER: _ClassVar[int]
    MAX_HANDS_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_AFTER_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    variant: str
    options: _containers.ScalarMap[str, str]
    seats: _containers.RepeatedCompositeFieldContainer[SeatSpec]
    teams: _containers.RepeatedScalarFieldContainer[int]
    seed: str
    time_control: TimeControl
    decks: _containers.RepeatedCompositeFieldContainer[Cards]
    max_turns_per_hand: int
    max_hands: int
    forfeit_after: int
    idempotency_key: str
    def __init__(self, variant: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., seats: _Optional[_Iterable[_Union[SeatSpec, _Mapping]]] = ..., teams: _Optional[_Iterable[int]] = ..., seed: _Optional[str] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., decks: _Optional[_Iterable[_Union[Cards, _Mapping]]] = ..., max_turns_per_hand: _Optional[int] = ..., max_hands: _Optional[int] = ..., forfeit_after: _Optional[int] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match_id", "seat_tokens")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat_tokens: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[str]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: MatchEvent
    def __init__(self, event: _Optional[_Union[MatchEvent, _Mapping]] = ...) -> None: ...

class AbortMatchRequest(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class AbortMatchResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: MatchResult
    def __init__(self, result: _Optional[_Union[MatchResult, _Mapping]] = ...) -> None: ...

class GetResultRequest(_message.Message):
    __slots__ = ("match_id", "wait")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    wait: bool
    def __init__(self, match_id: _Optional[str] = ..., wait: _Optional[bool] = ...) -> None: ...

class GetResultResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: MatchResult
    def __init__(self, result: _Optional[_Union[MatchResult, _Mapping]] = ...) -> None: ...

class Placement(_message.Message):
    __slots__ = ("seats",)
    SEATS_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seats: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("match_id", "status", "variant", "ranking", "totals", "hands", "reason", "forfeited", "seed", "seat_names", "record_path", "faults")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    RANKING_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    RECORD_PATH_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: MatchStatus
    variant: str
    ranking: _containers.RepeatedCompositeFieldContainer[Placement]
    totals: _containers.RepeatedScalarFieldContainer[int]
    hands: _containers.RepeatedCompositeFieldContainer[HandResult]
    reason: str
    forfeited: _containers.RepeatedScalarFieldContainer[int]
    seed: str
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    record_path: str
    faults: _containers.RepeatedCompositeFieldContainer[SeatFaults]
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[_Union[MatchStatus, str]] = ..., variant: _Optional[str] = ..., ranking: _Optional[_Iterable[_Union[Placement, _Mapping]]] = ..., totals: _Optional[_Iterable[int]] = ..., hands: _Optional[_Iterable[_Union[HandResult, _Mapping]]] = ..., reason: _Optional[str] = ..., forfeited: _Optional[_Iterable[int]] = ..., seed: _Optional[str] = ..., seat_names: _Optional[_Iterable[str]] = ..., record_path: _Optional[str] = ..., faults: _Optional[_Iterable[_Union[SeatFaults, _Mapping]]] = ...) -> None: ...

class SeatFaults(_message.Message):
    __slots__ = ("seat", "rejected", "timed_out", "disconnects", "asked")
    class RejectedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    DISCONNECTS_FIELD_NUMBER: _ClassVar[int]
    ASKED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    rejected: _containers.ScalarMap[str, int]
    timed_out: int
    disconnects: int
    asked: int
    def __init__(self, seat: _Optional[int] = ..., rejected: _Optional[_Mapping[str, int]] = ..., timed_out: _Optional[int] = ..., disconnects: _Optional[int] = ..., asked: _Optional[int] = ...) -> None: ...

class EvaluateRequest(_message.Message):
    __slots__ = ("variant", "options", "wild_ranks", "groups", "seats")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    WILD_RANKS_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    variant: str
    options: _containers.ScalarMap[str, str]
    wild_ranks: _containers.RepeatedScalarFieldContainer[Rank]
    groups: _containers.RepeatedCompositeFieldContainer[Group]
    seats: int
    def __init__(self, variant: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., wild_ranks: _Optional[_Iterable[_Union[Rank, str]]] = ..., groups: _Optional[_Iterable[_Union[Group, _Mapping]]] = ..., seats: _Optional[int] = ...) -> None: ...

class GroupVerdict(_message.Message):
    __slots__ = ("cards", "valid", "kind", "pure", "reason", "points", "description")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    VALID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PURE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    valid: bool
    kind: str
    pure: bool
    reason: str
    points: int
    description: str
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., valid: _Optional[bool] = ..., kind: _Optional[str] = ..., pure: _Optional[bool] = ..., reason: _Optional[str] = ..., points: _Optional[int] = ..., description: _Optional[str] = ...) -> None: ...

class EvaluateResponse(_message.Message):
    __slots__ = ("groups", "declaration_valid", "declaration_reason", "hand_points", "melded_points", "detail")
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    DECLARATION_VALID_FIELD_NUMBER: _ClassVar[int]
    DECLARATION_REASON_FIELD_NUMBER: _ClassVar[int]
    HAND_POINTS_FIELD_NUMBER: _ClassVar[int]
    MELDED_POINTS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[GroupVerdict]
    declaration_valid: bool
    declaration_reason: str
    hand_points: int
    melded_points: int
    detail: str
    def __init__(self, groups: _Optional[_Iterable[_Union[GroupVerdict, _Mapping]]] = ..., declaration_valid: _Optional[bool] = ..., declaration_reason: _Optional[str] = ..., hand_points: _Optional[int] = ..., melded_points: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...
