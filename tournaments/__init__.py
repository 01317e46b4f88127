"""The tournament harness: bots as command lines play scheduled matches on a referee; results go to SQLite as
they come; ratings (Elo by maximum likelihood with error bars, OpenSkill) come out as tables and files.

One idea per module: ``config`` (TOML), ``schedule`` (round-robin, gauntlet, ladder; duplicate deals),
``botproc`` (persistent bot processes), ``runner`` (concurrent matches, resume, Ctrl-C), ``store`` (SQLite),
``ratings``, ``report`` (terminal, CSV, JSON), ``cli`` (``tournament run | ratings | schedule``), ``demo``.
"""

import os

# gRPC's C core forks "safely" by default here: its fork handlers start event-engine threads in a child between
# fork and exec, and about one child in four of a busy service died there by SIGSEGV (house bots of a ladder
# restarted dead, strace showed). Every child these processes start execs at once, so they need none of it. Read by gRPC
# when it starts: set before any gRPC object exists; a value the user set wins.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

