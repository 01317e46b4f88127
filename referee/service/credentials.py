"""Bot tokens the referee can check without storing them: minted by whoever holds the admin token.

Why: a bot connects with its bot token before any match names it (tournaments keep bots alive between matches),
so a made-up token cannot be told from a real one by looking for a match. A token minted here carries an HMAC of
its nonce under a key derived from the server's admin token, so the referee recognises the tokens of the admin's
own bots at once, with no registration call and no state, and refuses the rest: no stranger can fill the
referee's streams with tokens it invented. A referee with no admin token is open to anyone (anyone may create
matches there); unknown tokens then get a small shared budget instead (``ServerLimits.max_unclaimed_streams``).

    token = mint_bot_token(admin_token, "greedy")   # 'greedy.k3...Q.5f1c...' (the label is only for people)
    is_minted(admin_token, token)                    # True; any other string: False, in constant time
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

__all__ = ["mint_bot_token", "is_minted", "looks_minted"]

_CONTEXT = b"rummy-referee bot token v1"
_MAC_HEX = 32  # 128 bits of the HMAC-SHA256: as hard to guess as the nonce
_LABEL = re.compile(r"[^A-Za-z0-9_-]+")


def _key(admin_token: str) -> bytes:
    """The minting key: derived from the admin token, so the admin token itself never keys anything a bot holds."""
    return hmac.new(admin_token.encode(), _CONTEXT, hashlib.sha256).digest()


def _mac(key: bytes, label: str, nonce: str) -> str:
    return hmac.new(key, f"{label}.{nonce}".encode(), hashlib.sha256).hexdigest()[:_MAC_HEX]


def mint_bot_token(admin_token: str, label: str = "bot") -> str:
    """A new bot token this server will recognise: ``LABEL.NONCE.MAC`` (128 random bits, 128 bits of MAC).
    ``label`` is kept to ``[A-Za-z0-9_-]`` (at most 32 characters) so the token is safe in any header or file."""
    clean = _LABEL.sub("-", label)[:32] or "bot"
    nonce = secrets.token_urlsafe(16)
    return f"{clean}.{nonce}.{_mac(_key(admin_token), clean, nonce)}"


def looks_minted(token: str) -> bool:
    """The token has the shape of a minted one (it may still be forged)."""
    parts = token.split(".")
    return len(parts) == 3 and len(parts[2]) == _MAC_HEX


def is_minted(admin_token: str, token: str) -> bool:
    """``token`` was minted with ``admin_token`` (the MAC compared in constant time)."""
    parts = token.split(".")
    if len(parts) != 3 or len(token) > 200:
        return False
    label, nonce, mac = parts
    return hmac.compare_digest(_mac(_key(admin_token), label, nonce).encode(), mac.encode("utf-8", "replace"))
