"""Rummy Referee, in folders by layer: ``referee.rules`` (the pure rules core, its own distribution),
``referee.service`` (the gRPC referee), ``referee.search`` (the search service), ``referee.tools`` (CLI, replay
viewer, bot checker). The generated messages and their mapping to the rules core are ``rummy`` (rummy-protos).

This file belongs to the server's distribution (rummy-referee): with only rummy-rules installed, as a bot author's
environment has it, ``referee`` is a namespace package holding ``referee.rules`` alone.
"""

import os

# gRPC's C core forks "safely" by default here: its fork handlers start event-engine threads in a child between
# fork and exec, and about one child in four of a busy service died there by SIGSEGV (house bots of a ladder
# restarted dead, strace showed). Every child these processes start execs at once, so they need none of it. Read by gRPC
# when it starts: set before any gRPC object exists; a value the user set wins.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

