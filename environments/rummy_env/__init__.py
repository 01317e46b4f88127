"""Environments for training agents on the referee's own rules core (docs/ENVIRONMENTS.md).

``make("fortune", num_players=4, max_set="unlimited")`` is a PettingZoo AEC env; ``rummy_env.gym_env`` plays one
seat against policies; ``rummy_env.openspiel_game`` registers ``python_rummy_<variant>`` games with pyspiel;
``rummy_env.vector`` steps many games in one call. The action ids and the observation layout are in
``rummy_env.actions`` and ``rummy_env.observation``.
"""

from __future__ import annotations

from typing import Any

from referee.rules import native as _native

_native.extend(__path__, "rummy_env")  # the compiled ``observation`` when the native build is fresh (``referee
_native.load("rummy_env")  # native build``); the plain module otherwise, the very same code

from rummy_env.actions import ActionSpace, Chooser, action_space  # noqa: E402 - after the compiled modules are put first
from rummy_env.game import RummyGame  # noqa: E402
from rummy_env.observation import layout  # noqa: E402

__all__ = ["make", "RummyGame", "ActionSpace", "Chooser", "action_space", "layout", "VARIANTS"]

VARIANTS = ("indian", "500-rum", "500-partnership", "persian", "fortune", "arlington", "skarney", "skarney-singles",
            "iceberg")


def make(variant: str, num_players: int | None = None, **kwargs: Any) -> Any:
    """The PettingZoo AEC env of ``variant`` (imports PettingZoo on first use: the ``envs`` extra)."""
    from rummy_env.pettingzoo_env import make as _make

    return _make(variant, num_players, **kwargs)
