"""The gRPC referee service: sessions, clocks, limits, records and their resumption."""
