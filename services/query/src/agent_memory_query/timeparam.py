"""Time query parameters with errors that name the parameter."""

from __future__ import annotations

from datetime import datetime

from agent_memory_common.contracts.event import parse_ts
from agent_memory_common.web.http import ApiError


def parse_time_param(name: str, value: str | None) -> datetime | None:
    """RFC 3339 or epoch milliseconds, as for event timestamps."""
    if value is None:
        return None
    raw: str | int = int(value) if value.isdigit() else value
    try:
        return parse_ts(raw)
    except ValueError as exc:
        raise ApiError(422, "validation_error", f"{name}: {exc}", field=name) from None
