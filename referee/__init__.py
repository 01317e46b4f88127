"""Rummy Referee, in folders by layer: ``referee.rules`` (the pure rules core, its own distribution),
``referee.service`` (the gRPC referee), ``referee.search`` (the search service), ``referee.tools`` (CLI, replay
viewer, bot checker). The generated messages and their mapping to the rules core are ``rummy`` (rummy-protos).

This file belongs to the server's distribution (rummy-referee): with only rummy-rules installed, as a bot author's
environment has it, ``referee`` is a namespace package holding ``referee.rules`` alone.
"""
