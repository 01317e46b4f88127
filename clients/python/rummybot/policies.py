"""The bundled policies (greedy per variant, random for any), as the SDK has always offered them.

They live in the rules core (``referee.rules.policies``, the rummy-rules distribution) because the referee's search
service plays them in its rollouts too, and the referee imports nothing of the SDK; this module keeps the SDK's
import path for bot authors.
"""

from referee.rules.policies import Policy, greedy_policy, random_policy

__all__ = ["Policy", "random_policy", "greedy_policy"]
