"""The gRPC referee service: sessions, clocks, limits, records and their resumption.

``encoded`` (the live path's messages) is compiled with the rules core when the build is fresh: its path first.
"""

from referee.rules import native as _native

_native.extend(__path__, "referee.service")
_native.load("referee.service")
