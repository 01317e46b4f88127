"""Plays a uniformly random legal action: ``python -m rummybot.bots.random_bot --referee H:P --bot-token T``."""

from referee.rules.policies import random_policy
from rummybot.bots.base import PolicyBot
from rummybot.sdk import main

if __name__ == "__main__":
    main(PolicyBot("random", lambda variant: random_policy))
