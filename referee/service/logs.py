"""Structured logs (structlog): every line of a match carries its match id, seat and hand number."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog

__all__ = ["configure_logging", "get_logger"]


class _Stderr:
    """``sys.stderr`` as it is when a line is written, not as it was when logging was configured: a test runner
    or an embedding program may swap it for a stream it later closes, and a line written there would raise."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "info", json: bool = True, stream: TextIO | None = None) -> None:
    """JSON lines for machines (the default), or a readable console format; to ``stream``, or to standard error."""
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(stream or _Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )


def get_logger(**bound: object) -> structlog.typing.FilteringBoundLogger:
    return structlog.get_logger("referee").bind(**bound)  # type: ignore[no-any-return]
