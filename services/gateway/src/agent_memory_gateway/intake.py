"""From request bytes to normalised, redacted events: pure functions, no I/O.

Kept apart from the HTTP layer so that every bad-input rule is unit-testable and the error a
client sees always names the field at fault.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from agent_memory_common.event import Event, EventIn
from agent_memory_common.http import ApiError, validation_details
from agent_memory_gateway.redaction import Redactor
from agent_memory_gateway.settings import GatewayOptions

_EVENTS = TypeAdapter(list[EventIn])
_ONE = TypeAdapter(EventIn)
REDACTIONS_KEY = "_redactions"


def parse_body(body: bytes) -> tuple[list[Any], bool]:
    """Decode JSON; return the raw event objects and whether the body was a batch."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "invalid_utf8", f"body is not valid UTF-8 (byte {exc.start})") from None
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, "invalid_json", f"body is not valid JSON: {exc}") from None
    if isinstance(data, dict) and "events" in data:
        if set(data) != {"events"}:
            extra = sorted(set(data) - {"events"})[0]
            raise ApiError(
                422, "validation_error", "unexpected field next to 'events'", field=extra
            )
        if not isinstance(data["events"], list):
            raise ApiError(422, "validation_error", "must be a list of events", field="events")
        return data["events"], True
    if isinstance(data, list):
        return data, True
    if isinstance(data, dict):
        return [data], False
    raise ApiError(
        422, "validation_error", 'body must be an event object or {"events": [...]}', field="body"
    )


def validate(raw: list[Any], batch: bool, options: GatewayOptions) -> list[EventIn]:
    if batch and not raw:
        raise ApiError(422, "validation_error", "must hold at least one event", field="events")
    if len(raw) > options.max_batch_events:
        raise ApiError(
            413,
            "batch_too_large",
            f"{len(raw)} events in one request; the limit is {options.max_batch_events}",
            field="events",
        )
    try:
        items = _EVENTS.validate_python(raw) if batch else [_ONE.validate_python(raw[0])]
    except ValidationError as exc:
        details = validation_details(list(exc.errors()))
        for d in details:
            d["field"] = _batch_field(d["field"]) if batch else d["field"]
        first = details[0]
        raise ApiError(
            422,
            "validation_error",
            f"{first['field']}: {first['message']}",
            field=first["field"],
            details=details,
        ) from None
    for index, item in enumerate(items):
        size = len(item.text.encode("utf-8")) + (
            len(orjson.dumps(item.metadata)) if item.metadata else 0
        )
        if size > options.max_event_bytes:
            prefix = f"events[{index}]." if batch else ""
            raise ApiError(
                413,
                "event_too_large",
                f"event is {size} bytes (text + metadata); the limit is {options.max_event_bytes}",
                field=f"{prefix}text",
            )
    return items


def _batch_field(field: str) -> str:
    # pydantic reports list positions as "[3].role"; clients posted them under "events"
    return f"events{field}" if field.startswith("[") else f"events.{field}"


def normalise(
    items: list[EventIn], *, tenant: str, received_at: datetime, redactor: Redactor
) -> list[Event]:
    """Redact secrets, fill ids and times; NUL becomes U+FFFD (Postgres refuses NUL)."""
    events = []
    for item in items:
        text, counts = redactor.redact(_no_nul(item.text))
        metadata: dict[str, Any] = item.metadata
        if metadata:
            cleaned, meta_counts = redactor.redact_value(_no_nul_value(metadata))
            assert isinstance(cleaned, dict)
            metadata = cleaned
            for kind, n in meta_counts.items():
                counts[kind] = counts.get(kind, 0) + n
        if counts:
            metadata = {**metadata, REDACTIONS_KEY: counts}
        events.append(
            Event.from_input(
                item, tenant=tenant, received_at=received_at, text=text, metadata=metadata
            )
        )
    return events


def _no_nul(text: str) -> str:
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def _no_nul_value(value: Any) -> Any:
    if isinstance(value, str):
        return _no_nul(value)
    if isinstance(value, dict):
        return {_no_nul(k): _no_nul_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nul_value(v) for v in value]
    return value
