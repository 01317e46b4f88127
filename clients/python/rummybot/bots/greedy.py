"""Keeps melds, melds what it can, discards its highest dead card: ``python -m rummybot.bots.greedy ...``."""

from referee.rules.policies import greedy_policy
from rummybot.bots.base import PolicyBot
from rummybot.sdk import main

if __name__ == "__main__":
    main(PolicyBot("greedy", greedy_policy))
