"""Ladder keys: a remote bot's credential, shown once, stored only as a hash, checked in constant time.

A key is 192 random bits from :mod:`secrets` (``rl_`` and 32 URL-safe characters). The ladder keeps only its
SHA-256. A slow password hash (scrypt, argon2) is for secrets people choose, which can be guessed; nobody can
enumerate 2^192 keys, so one SHA-256 is as strong here, and being unsalted it is also the index a Join's key is
looked up by: one hash and one dictionary look-up per Join, whatever the number of bots. The stored and the
computed digest are still compared with :func:`hmac.compare_digest`.

The key is the bot's bot token: an SDK reads it from ``RUMMY_BOT_TOKEN`` (never from a command line, which other
users of the machine can read) and joins the ladder's referee with it. The :class:`Registry` is what the referee
asks (``RefereeService.bot_token_known``) whether a token is a ladder key, and which bot it is.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["KEY_PREFIX", "new_key", "key_digest", "Registry"]

KEY_PREFIX = "rl_"
KEY_BYTES = 24  # 192 bits


def new_key() -> str:
    """A fresh ladder key: printed once by ``ladder bots add``, never stored."""
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


def key_digest(key: str) -> str:
    """What the ladder stores of a key: ``sha256:HEX``."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class _Known:
    bot_id: int
    digest: str


class Registry:
    """The keys of the bots that may play (revoked ones are not in it), by digest. Read from the referee's loop on
    every Join; replaced whole (one assignment) when the store changes, so a reader never sees half an update."""

    def __init__(self, keys: Iterable[tuple[int, str]] = ()) -> None:
        self._by_digest: dict[str, _Known] = {d: _Known(i, d) for i, d in keys if d}
        self._live: dict[int, str] = {}  # bot id -> its key, as presented by the bot itself (memory only)

    def replace(self, keys: Iterable[tuple[int, str]]) -> None:
        """The registry as the store now has it: a revoked bot's key stops working at once."""
        fresh = {d: _Known(i, d) for i, d in keys if d}
        self._by_digest = fresh
        ids = {k.bot_id for k in fresh.values()}
        self._live = {i: k for i, k in self._live.items() if i in ids}

    def bot_of(self, token: str) -> int | None:
        """The bot a key belongs to, or None (not a ladder key, or revoked)."""
        if not token.startswith(KEY_PREFIX) or len(token) > 200:
            return None
        digest = key_digest(token)
        known = self._by_digest.get(digest)
        if known is None or not hmac.compare_digest(known.digest.encode(), digest.encode()):
            return None
        return known.bot_id

    def check(self, token: str) -> bool:
        """``bot_token_known``'s answer for a ladder key; remembers the key of a bot that presented it, so the
        matchmaker can name that bot's seats with it (the key never leaves this process's memory)."""
        bot = self.bot_of(token)
        if bot is None:
            return False
        self._live[bot] = token
        return True

    def key_of(self, bot_id: int) -> str | None:
        """The key the bot joined with (None: it has not joined since the service started)."""
        return self._live.get(bot_id)

    def __len__(self) -> int:
        return len(self._by_digest)
