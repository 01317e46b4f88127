"""A session's connection, standing in for a bot's stream in tests that drive a ``MatchSession`` directly."""

from __future__ import annotations

from referee.service.session import Connection
from rummy.referee.v1 import referee_pb2 as pb


class RequestProbe(Connection):
    """A connection that keeps the decision requests it is sent (and drops everything else)."""

    def __init__(self) -> None:
        super().__init__("probe")
        self.requests: list[pb.DecisionRequest] = []

    def send_encoded(self, data: bytes, urgent: bool) -> None:
        msg = pb.PlayResponse.FromString(data)
        if msg.WhichOneof("body") == "decision":
            self.requests.append(msg.decision)
