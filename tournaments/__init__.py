"""The tournament harness: bots as command lines play scheduled matches on a referee; results go to SQLite as
they come; ratings (Elo by maximum likelihood with error bars, OpenSkill) come out as tables and files.

One idea per module: ``config`` (TOML), ``schedule`` (round-robin, gauntlet, ladder; duplicate deals),
``botproc`` (persistent bot processes), ``runner`` (concurrent matches, resume, Ctrl-C), ``store`` (SQLite),
``ratings``, ``report`` (terminal, CSV, JSON), ``cli`` (``tournament run | ratings | schedule``), ``demo``.
"""

import referee  # noqa: F401 - first: it turns gRPC's fork handlers off before gRPC starts (referee/__init__.py)
