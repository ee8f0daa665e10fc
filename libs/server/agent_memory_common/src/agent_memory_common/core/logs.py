"""Structured logging: JSON off a TTY, readable on one, context bound per message."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(
    service: str, level: str = "INFO", json: bool | None = None, stream: TextIO | None = None
) -> None:
    """Configure structlog and the stdlib root logger, to stderr or to ``stream``.

    A ``stream`` replaces an earlier configuration, the root logger's handlers included:
    ``agent-memory up`` moves its own log into its log file once the folder exists, so that
    its terminal shows only the lines it says to a person (issue #56).
    """
    replace = stream is not None
    stream = sys.stderr if stream is None else stream
    use_json = (not stream.isatty()) if json is None else json
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer()
    )
    logging.basicConfig(level=level.upper(), stream=stream, format="%(message)s", force=replace)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=True,
    )
    structlog.contextvars.bind_contextvars(service=service)


def get_logger(name: str | None = None) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)  # type: ignore[no-any-return]
