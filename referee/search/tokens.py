"""State tokens: a search state, compressed and signed, that only the server which made it will read back.

A token is ``rs2.`` + OWNER + ``.`` + base64url(zlib(pickle(state)) + HMAC-SHA256(key, prefix + owner + body)[:16]).
Self-contained tokens cost the server no memory and no bookkeeping (a search bot makes thousands a second:
stored states would need a TTL and a per-client quota), and any process sharing the key can read them (the
search pool's workers do). They cannot be forged into anything: the signature is checked before a byte is
unpickled, so the server only ever loads states it made itself, and only classes of the rules core are allowed
even then; and no live match accepts a token. Tokens are signed, not encrypted: a token holds a sampled world
its holder may see anyway.

OWNER names, without saying which, the seat whose samples the token descends from: the search pool charges a
token's work to it, so each seat has its own share of the pool even when every bot connects from one address.
It is a nonce derived from the seat and a MAC of that nonce (``owner_for``), checked with one short HMAC before
the token's body is read (``owner_of``): a client cannot make up owners to escape its share, and the nonce
says nothing of the match or the seat.
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

from referee.rules.errors import InvalidAction
from referee.search.errors import BadToken
from referee.search.simulate import SearchState

__all__ = ["TokenCodec", "PREFIX", "MAX_TOKEN_CHARS", "OWNER_CHARS"]

PREFIX = "rs2."
MAX_TOKEN_CHARS = 256 * 1024
OWNER_CHARS = 20  # base64url of a 9-byte nonce and a 6-byte tag
_MAC_BYTES = 16
_MAX_STATE_BYTES = 4 * 1024 * 1024  # decompressed
_ALLOWED_BUILTINS = frozenset({"set", "frozenset", "list", "dict", "tuple"})
_NOT_A_TOKEN = f"not a state token (they start with {PREFIX!r} and are at most {MAX_TOKEN_CHARS} characters)"


class _Unpickler(pickle.Unpickler):
    """Only the rules core's own classes (and plain containers): a second wall behind the signature."""

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith("referee.") or (module == "builtins" and name in _ALLOWED_BUILTINS):
            return super().find_class(module, name)
        raise BadToken("BAD_SEARCH_TOKEN", f"a state token may not name {module}.{name}")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    """:raises InvalidAction: ``BAD_SEARCH_TOKEN`` for text that is not base64url (or not ASCII)."""
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidAction("BAD_SEARCH_TOKEN", "not a state token: its body is not base64url") from exc


class TokenCodec:
    """Seals and opens tokens with one key (by default a random one per server process)."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)

    def _hmac(self, label: bytes, data: bytes) -> bytes:
        return hmac.new(self._key, label + b"\0" + data, hashlib.sha256).digest()

    def _mac(self, owner: str, body: bytes) -> bytes:
        return self._hmac(PREFIX.encode(), owner.encode("ascii") + b"." + body)[:_MAC_BYTES]

    def owner_for(self, *who: str) -> str:
        """The owner tag of a seat (``owner_for(match_id, str(seat))``): the same seat always gets the same one."""
        nonce = self._hmac(b"owner-id", "\0".join(who).encode("utf-8"))[:9]
        return _b64(nonce + self._hmac(b"owner-tag", nonce)[:6])

    def owner_of(self, token: str) -> str:
        """The owner a token claims, checked (one short HMAC: cheap enough for the event loop); the body is not.

        :raises InvalidAction: ``BAD_SEARCH_TOKEN`` for text that is not a token; :raises BadToken:
            ``BAD_SEARCH_TOKEN`` for an owner this key did not make."""
        if not token.startswith(PREFIX) or len(token) > MAX_TOKEN_CHARS or not token.isascii():
            raise InvalidAction("BAD_SEARCH_TOKEN", _NOT_A_TOKEN)
        owner, dot, _ = token[len(PREFIX):].partition(".")
        if not dot or len(owner) != OWNER_CHARS:
            raise InvalidAction("BAD_SEARCH_TOKEN", _NOT_A_TOKEN)
        raw = _unb64(owner)
        if len(raw) != 15 or not hmac.compare_digest(raw[9:], self._hmac(b"owner-tag", raw[:9])[:6]):
            raise BadToken("BAD_SEARCH_TOKEN", "this server did not sign that token, or it was altered: tokens are "
                           "read only by the server that made them")
        return owner

    def seal(self, state: SearchState, owner: str | None = None) -> str:
        """A token of ``state`` charged to ``owner`` (``owner_for``; by default an owner of its own)."""
        owner = owner if owner is not None else self.owner_for("")
        body = zlib.compress(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL), 1)
        return f"{PREFIX}{owner}.{_b64(body + self._mac(owner, body))}"

    def open(self, token: str) -> SearchState:
        """:raises InvalidAction: ``BAD_SEARCH_TOKEN`` for text that is not a token at all; :raises BadToken:
        ``BAD_SEARCH_TOKEN`` for a token this key did not sign, or one altered since."""
        return self.open_owned(token)[1]

    def open_owned(self, token: str) -> tuple[str, SearchState]:
        """The token's owner and state (see ``open``)."""
        owner = self.owner_of(token)
        raw = _unb64(token[len(PREFIX) + OWNER_CHARS + 1:])
        body, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
        if len(raw) <= _MAC_BYTES or not hmac.compare_digest(mac, self._mac(owner, body)):
            raise BadToken("BAD_SEARCH_TOKEN", "this server did not sign that token, or it was altered: tokens are "
                           "read only by the server that made them")
        inflate = zlib.decompressobj()
        try:
            data = inflate.decompress(body, _MAX_STATE_BYTES)
        except zlib.error as exc:  # signed by this key, so never in practice: still typed, never a crash
            raise BadToken("BAD_SEARCH_TOKEN", "the token's state does not inflate") from exc
        if inflate.unconsumed_tail:
            raise BadToken("BAD_SEARCH_TOKEN", "the token's state is too large")
        state = _Unpickler(io.BytesIO(data)).load()
        if not isinstance(state, SearchState):
            raise BadToken("BAD_SEARCH_TOKEN", "the token holds no search state")
        return owner, state
