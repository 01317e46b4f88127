"""Rummy Referee's Python bot SDK. ``Bot`` + ``main`` make a bot; ``PolicyBot`` wraps a policy function."""

from rummybot.bots.base import PolicyBot
from rummybot.sdk import Bot, Request, main, run_bot

__all__ = ["Bot", "Request", "PolicyBot", "main", "run_bot"]
