#!/bin/sh
# A whole bot in POSIX sh: answer every decision with the first action the referee lists as legal.
# Run it through the bridge:  referee-bridge --referee 127.0.0.1:50051 --bot-token T -- sh first_legal.sh
# `read` takes one line as soon as it comes and `echo` writes at once: nothing is held in a buffer. (Not awk:
# Debian's mawk waits to fill its input buffer before it reads a line, so it answers a turn late.)
while IFS= read -r line; do
  case $line in
    '{"type":"decision"'*) echo '{"legal_index": 0}' ;;
    '{"type":"rejected"'*) echo "rejected: $line" >&2 ;;
  esac
done
