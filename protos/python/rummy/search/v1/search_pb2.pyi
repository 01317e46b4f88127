from rummy.referee.v1 import referee_pb2 as _referee_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RolloutPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLLOUT_POLICY_UNSPECIFIED: _ClassVar[RolloutPolicy]
    ROLLOUT_POLICY_NONE: _ClassVar[RolloutPolicy]
    ROLLOUT_POLICY_RANDOM: _ClassVar[RolloutPolicy]
    ROLLOUT_POLICY_DEFAULT: _ClassVar[RolloutPolicy]
    ROLLOUT_POLICY_GREEDY: _ClassVar[RolloutPolicy]
ROLLOUT_POLICY_UNSPECIFIED: RolloutPolicy
ROLLOUT_POLICY_NONE: RolloutPolicy
ROLLOUT_POLICY_RANDOM: RolloutPolicy
ROLLOUT_POLICY_DEFAULT: RolloutPolicy
ROLLOUT_POLICY_GREEDY: RolloutPolicy

class SampleDealsRequest(_message.Message):
    __slots__ = ("seat", "n", "seed")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    N_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    seat: _referee_pb2.SeatCredential
    n: int
    seed: str
    def __init__(self, seat: _Optional[_Union[_referee_pb2.SeatCredential, _Mapping]] = ..., n: _Optional[int] = ..., seed: _Optional[str] = ...) -> None: ...

class Sample(_message.Message):
    __slots__ = ("token", "hands", "stock")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    STOCK_FIELD_NUMBER: _ClassVar[int]
    token: str
    hands: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Cards]
    stock: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Card]
    def __init__(self, token: _Optional[str] = ..., hands: _Optional[_Iterable[_Union[_referee_pb2.Cards, _Mapping]]] = ..., stock: _Optional[_Iterable[_Union[_referee_pb2.Card, _Mapping]]] = ...) -> None: ...

class SampleDealsResponse(_message.Message):
    __slots__ = ("samples", "variant", "seat", "unseen_cards", "known")
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    UNSEEN_CARDS_FIELD_NUMBER: _ClassVar[int]
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    samples: _containers.RepeatedCompositeFieldContainer[Sample]
    variant: str
    seat: int
    unseen_cards: int
    known: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Cards]
    def __init__(self, samples: _Optional[_Iterable[_Union[Sample, _Mapping]]] = ..., variant: _Optional[str] = ..., seat: _Optional[int] = ..., unseen_cards: _Optional[int] = ..., known: _Optional[_Iterable[_Union[_referee_pb2.Cards, _Mapping]]] = ...) -> None: ...

class Rollout(_message.Message):
    __slots__ = ("policy", "max_decisions", "seed")
    POLICY_FIELD_NUMBER: _ClassVar[int]
    MAX_DECISIONS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    policy: RolloutPolicy
    max_decisions: int
    seed: str
    def __init__(self, policy: _Optional[_Union[RolloutPolicy, str]] = ..., max_decisions: _Optional[int] = ..., seed: _Optional[str] = ...) -> None: ...

class SimulateRequest(_message.Message):
    __slots__ = ("token", "actions", "rollout", "evaluate", "events")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_FIELD_NUMBER: _ClassVar[int]
    EVALUATE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    token: str
    actions: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Action]
    rollout: Rollout
    evaluate: bool
    events: bool
    def __init__(self, token: _Optional[str] = ..., actions: _Optional[_Iterable[_Union[_referee_pb2.Action, _Mapping]]] = ..., rollout: _Optional[_Union[Rollout, _Mapping]] = ..., evaluate: _Optional[bool] = ..., events: _Optional[bool] = ...) -> None: ...

class Rejection(_message.Message):
    __slots__ = ("index", "code", "message")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    index: int
    code: str
    message: str
    def __init__(self, index: _Optional[int] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Position(_message.Message):
    __slots__ = ("hand_over", "to_act", "phase", "legal_actions", "view", "scores", "end_reason")
    HAND_OVER_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    END_REASON_FIELD_NUMBER: _ClassVar[int]
    hand_over: bool
    to_act: int
    phase: _referee_pb2.Phase
    legal_actions: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Action]
    view: _referee_pb2.SeatView
    scores: _containers.RepeatedScalarFieldContainer[int]
    end_reason: str
    def __init__(self, hand_over: _Optional[bool] = ..., to_act: _Optional[int] = ..., phase: _Optional[_Union[_referee_pb2.Phase, str]] = ..., legal_actions: _Optional[_Iterable[_Union[_referee_pb2.Action, _Mapping]]] = ..., view: _Optional[_Union[_referee_pb2.SeatView, _Mapping]] = ..., scores: _Optional[_Iterable[int]] = ..., end_reason: _Optional[str] = ...) -> None: ...

class SimulateResponse(_message.Message):
    __slots__ = ("token", "applied", "rejected", "rollout_actions", "rollout_seats", "position", "provisional", "events")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_SEATS_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    PROVISIONAL_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    token: str
    applied: int
    rejected: Rejection
    rollout_actions: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Action]
    rollout_seats: _containers.RepeatedScalarFieldContainer[int]
    position: Position
    provisional: _containers.RepeatedScalarFieldContainer[int]
    events: _containers.RepeatedCompositeFieldContainer[_referee_pb2.MatchEvent]
    def __init__(self, token: _Optional[str] = ..., applied: _Optional[int] = ..., rejected: _Optional[_Union[Rejection, _Mapping]] = ..., rollout_actions: _Optional[_Iterable[_Union[_referee_pb2.Action, _Mapping]]] = ..., rollout_seats: _Optional[_Iterable[int]] = ..., position: _Optional[_Union[Position, _Mapping]] = ..., provisional: _Optional[_Iterable[int]] = ..., events: _Optional[_Iterable[_Union[_referee_pb2.MatchEvent, _Mapping]]] = ...) -> None: ...

class LegalActionsRequest(_message.Message):
    __slots__ = ("token", "seat")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    token: str
    seat: _referee_pb2.SeatCredential
    def __init__(self, token: _Optional[str] = ..., seat: _Optional[_Union[_referee_pb2.SeatCredential, _Mapping]] = ...) -> None: ...

class LegalActionsResponse(_message.Message):
    __slots__ = ("position",)
    POSITION_FIELD_NUMBER: _ClassVar[int]
    position: Position
    def __init__(self, position: _Optional[_Union[Position, _Mapping]] = ...) -> None: ...
