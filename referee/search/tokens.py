"""State tokens: a search state, compressed and signed, that only the server which made it will read back.

A token is ``rs1.`` + base64url(zlib(pickle(state)) + HMAC-SHA256(key, version + body)[:16]). Self-contained
tokens cost the server no memory and no bookkeeping (a search bot makes thousands a second: stored states
would need a TTL and a per-client quota), and any process sharing the key can read them. They cannot be forged
into anything: the signature is checked before a byte is unpickled, so the server only ever loads states it
made itself, and only classes of the rules core are allowed even then; and no live match accepts a token.
Tokens are signed, not encrypted: a token holds a sampled world its holder may see anyway.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import io
import pickle
import secrets
import zlib
from typing import Any

from referee.errors import InvalidAction
from referee.search.errors import BadToken
from referee.search.simulate import SearchState

__all__ = ["TokenCodec", "PREFIX", "MAX_TOKEN_CHARS"]

PREFIX = "rs1."
MAX_TOKEN_CHARS = 256 * 1024
_MAC_BYTES = 16
_MAX_STATE_BYTES = 4 * 1024 * 1024  # decompressed
_ALLOWED_BUILTINS = frozenset({"set", "frozenset", "list", "dict", "tuple"})


class _Unpickler(pickle.Unpickler):
    """Only the rules core's own classes (and plain containers): a second wall behind the signature."""

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith("referee.") or (module == "builtins" and name in _ALLOWED_BUILTINS):
            return super().find_class(module, name)
        raise BadToken("BAD_SEARCH_TOKEN", f"a state token may not name {module}.{name}")


class TokenCodec:
    """Seals and opens tokens with one key (by default a random one per server process)."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, PREFIX.encode() + body, hashlib.sha256).digest()[:_MAC_BYTES]

    def seal(self, state: SearchState) -> str:
        body = zlib.compress(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL), 1)
        return PREFIX + base64.urlsafe_b64encode(body + self._mac(body)).decode("ascii").rstrip("=")

    def open(self, token: str) -> SearchState:
        """:raises InvalidAction: ``BAD_SEARCH_TOKEN`` for text that is not a token at all; :raises BadToken:
        ``BAD_SEARCH_TOKEN`` for a token this key did not sign, or one altered since."""
        if not token.startswith(PREFIX) or len(token) > MAX_TOKEN_CHARS:
            raise InvalidAction("BAD_SEARCH_TOKEN", f"not a state token (they start with {PREFIX!r} and are at most "
                                f"{MAX_TOKEN_CHARS} characters)")
        text = token[len(PREFIX):]
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError) as exc:
            raise InvalidAction("BAD_SEARCH_TOKEN", "not a state token: its body is not base64url") from exc
        body, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
        if len(raw) <= _MAC_BYTES or not hmac.compare_digest(mac, self._mac(body)):
            raise BadToken("BAD_SEARCH_TOKEN", "this server did not sign that token, or it was altered: tokens are "
                           "read only by the server that made them")
        inflate = zlib.decompressobj()
        data = inflate.decompress(body, _MAX_STATE_BYTES)
        if inflate.unconsumed_tail:
            raise BadToken("BAD_SEARCH_TOKEN", "the token's state is too large")
        state = _Unpickler(io.BytesIO(data)).load()
        if not isinstance(state, SearchState):
            raise BadToken("BAD_SEARCH_TOKEN", "the token holds no search state")
        return state
