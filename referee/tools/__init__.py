"""Tools over the rules core and the service: the CLI, replay viewer, timeline, bot checker."""
