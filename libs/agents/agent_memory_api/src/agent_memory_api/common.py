"""What every part of the API shares: timestamps, the error body, health and readiness."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BeforeValidator, ConfigDict, WithJsonSchema, with_config
from typing_extensions import TypedDict

CLOSED = ConfigDict(extra="forbid")


def _iso(value: Any) -> Any:
    """A ``datetime`` as orjson writes it (``datetime.isoformat()``); text as it is."""
    return value.isoformat() if isinstance(value, datetime) else value


Timestamp = Annotated[
    str,
    BeforeValidator(_iso),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
"""An RFC 3339 instant, e.g. ``2026-01-31T12:00:00+00:00``."""


@with_config(CLOSED)
class ErrorDetail(TypedDict):
    field: str
    message: str


@with_config(CLOSED)
class ErrorBody(TypedDict):
    """Every error: a machine-readable code, a message, the field at fault (or null)."""

    error: str
    message: str
    field: str | None
    details: NotRequired[list[ErrorDetail]]


@with_config(CLOSED)
class Health(TypedDict):
    status: Literal["ok"]


@with_config(CLOSED)
class Ready(TypedDict):
    status: Literal["ready"]
