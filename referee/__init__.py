"""Rummy Referee, in folders by layer: ``referee.rules`` (the pure rules core, its own distribution),
``referee.service`` (the gRPC referee), ``referee.search`` (the search service), ``referee.tools`` (CLI, replay
viewer, bot checker). The generated messages and their mapping to the rules core are ``rummy`` (rummy-protos).

This file belongs to the server's distribution (rummy-referee): with only rummy-rules installed, as a bot author's
environment has it, ``referee`` is a namespace package holding ``referee.rules`` alone.
"""

import os

# gRPC's C core runs fork handlers in every forked child, starting event-engine threads there between fork and
# exec: about one child in four that a busy ladder forked to start a bot died there by SIGSEGV (strace showed it).
# Every child the referee, the runner and the ladder start execs at once, so they need none of it. gRPC reads this
# when it starts: set before any gRPC object exists (``tournaments`` imports this package first); a value the user
# set wins.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
