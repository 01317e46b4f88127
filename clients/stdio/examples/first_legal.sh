#!/bin/sh
# A whole bot in awk: answer every decision with the first action the referee lists as legal.
# Run it through the bridge:  referee-bridge --referee 127.0.0.1:50051 --bot-token T -- sh first_legal.sh
exec awk '/^\{"type":"decision"/ { print "{\"legal_index\": 0}"; fflush() }
          /^\{"type":"rejected"/ { print "rejected: " $0 > "/dev/stderr" }'
