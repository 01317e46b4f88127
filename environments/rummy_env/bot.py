"""A trained policy (``rummy_env.train``) as a rummybot bot over gRPC:

    python -m rummy_env.bot --weights policy-fortune.npz --referee HOST:PORT --bot-token T

``--weights`` (or ``RUMMY_POLICY_WEIGHTS``) names the saved policy; every other argument is the SDK's. The bot
builds the very observation tensor the policy was trained on from the view the referee sends, and spells its move
id by id over the legal actions it was sent (the env's ``Chooser``): no rule is decided here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from rummy_env.gym_env import Policy
from rummy_env.train import MlpPolicy
from rummybot.bots.base import PolicyBot
from rummybot.sdk import main as sdk_main

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--weights", default=os.environ.get("RUMMY_POLICY_WEIGHTS"))
    args, rest = p.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    if not args.weights:
        print("give the trained policy: --weights FILE.npz (or RUMMY_POLICY_WEIGHTS)", file=sys.stderr)
        raise SystemExit(2)
    policy = MlpPolicy.load(args.weights)

    def choose(variant: str) -> Policy:
        if variant != policy.variant:
            raise ValueError(f"this policy plays {policy.variant}, not {variant}")
        return policy.choose

    sdk_main(PolicyBot(f"mlp-{policy.variant}", choose), rest)


if __name__ == "__main__":
    main()
