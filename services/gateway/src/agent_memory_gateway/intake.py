"""From request bytes to normalised, redacted events: pure functions, no I/O.

Kept apart from the HTTP layer so that every bad-input rule is unit-testable and the error a
client sees always names the field at fault.

Two paths, one result. ``EventIn`` (pydantic) is the definition of a valid event and words every
error, but building two models per event was the largest cost of the gateway (~20 µs of its
~48 µs per event). So ``prepare`` first tries ``_fast_items``: plain dict and type checks that
accept only events pydantic certainly accepts, and then writes the wire JSON straight from the
dicts, field for field what ``Event.to_wire`` writes. Anything it is not sure about (a wrong
type, an unknown key, an oversize event...) sends the whole request down the pydantic path, so a
bad request gets exactly the answer it always got. ``services/gateway/tests/test_intake.py``
holds the two paths to the same output.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, NamedTuple

import orjson
from pydantic import TypeAdapter, ValidationError

from agent_memory_common.auth.access import Principal
from agent_memory_common.contracts.event import EVENT_TYPES, ROLES, Event, EventIn, parse_ts
from agent_memory_common.contracts.limits import metadata_problem, ts_problem
from agent_memory_common.contracts.ulid import new_ulid
from agent_memory_common.redaction.engine import Redactor
from agent_memory_common.web.http import ApiError, validation_details
from agent_memory_gateway.settings import GatewayOptions

_EVENTS = TypeAdapter(list[EventIn])
_ONE = TypeAdapter(EventIn)
REDACTIONS_KEY = "_redactions"

# What EventIn accepts, restated for the fast path; keep in step with EventIn (the tests compare).
_FIELDS = frozenset(EventIn.model_fields)
_ROLES = frozenset(ROLES)
_TYPES = frozenset(EVENT_TYPES)
_ID_MAX_CHARS = 200
_ID_BAD_CHAR = re.compile(r"[\x00-\x1f\x7f]")  # EventIn's id pattern, negated
_TS_TYPES = (str, int, float)
_NO_METADATA: dict[str, Any] = {}  # shared, never mutated


class Prepared(NamedTuple):
    """One event ready to publish: its JSON as the recorder will read it, and its keys.

    A tuple: a frozen dataclass costs three times as much to build, once per event.
    """

    event_id: str
    project_id: str
    wire: bytes


def prepare(
    body: bytes,
    options: GatewayOptions,
    *,
    tenant: str,
    received_at: datetime,
    redactor: Redactor,
    principal: Principal | None = None,
) -> list[Prepared]:
    """From request body to events ready to publish; ``ApiError`` (400/413/422) names the field.

    ``principal``: the caller's key; when it is bound to projects, an agent or a user, every
    event must match (403 naming the field) and a missing ``user_id`` becomes the key's user.
    """
    raw, batch = parse_body(body)
    check_batch(raw, batch, options)
    bounded = principal is not None and (
        principal.projects is not None
        or principal.agent_id is not None
        or principal.user_id is not None
    )
    items = _fast_items(raw, options.max_event_bytes)
    if items is None:
        valid = validate(raw, batch, options)
        if bounded:
            assert principal is not None
            valid = [
                item.model_copy(update={"user_id": user})
                for item, user in zip(
                    valid,
                    bind([(e.project_id, e.agent_id, e.user_id) for e in valid], principal, batch),
                    strict=True,
                )
            ]
        events = normalise(valid, tenant=tenant, received_at=received_at, redactor=redactor)
        return [Prepared(e.event_id, e.project_id, e.to_wire()) for e in events]
    if bounded:
        assert principal is not None
        users = bind([(it[2], it[3], it[5]) for it in items], principal, batch)
        items = [(*it[:5], user, *it[6:]) for it, user in zip(items, users, strict=True)]
    return _encode(items, body, tenant=tenant, received_at=received_at, redactor=redactor)


def bind(
    ids: list[tuple[str, str, str | None]], principal: Principal, batch: bool
) -> list[str | None]:
    """Each event's ``user_id`` under a bound key: (project, agent, user) must match the key.

    A mismatch is refused (403 naming the field) rather than overwritten: an agent that posts
    as someone else has a bug or a stolen key, and recording its events under another identity
    would hide both. A missing ``user_id`` is filled in: that is attribution, not a change.
    """
    users: list[str | None] = []
    for index, (project_id, agent_id, user_id) in enumerate(ids):
        prefix = f"events[{index}]." if batch else ""
        principal.require_project(project_id, field=f"{prefix}project_id")
        if principal.agent_id is not None and agent_id != principal.agent_id:
            raise ApiError(
                403,
                "forbidden",
                f"this key writes only as agent {principal.agent_id!r}, not {agent_id!r}",
                field=f"{prefix}agent_id",
            )
        if principal.user_id is not None:
            if user_id is not None and user_id != principal.user_id:
                raise ApiError(
                    403,
                    "forbidden",
                    f"this key writes only as user {principal.user_id!r}, not {user_id!r}",
                    field=f"{prefix}user_id",
                )
            user_id = principal.user_id
        users.append(user_id)
    return users


def _encode(
    items: list[_FastItem],
    body: bytes,
    *,
    tenant: str,
    received_at: datetime,
    redactor: Redactor,
) -> list[Prepared]:
    """The fast path's second half: redact, fill ids and times, write the wire JSON."""
    # JSON can only carry a NUL as the escape \u0000, so without one there is nothing to replace
    nul_free = b"\\u0000" not in body
    now_ms = int(received_at.timestamp() * 1000)
    prepared = []
    for event_id, ts, project_id, agent_id, session_id, user_id, role, kind, text, meta in items:
        text, meta = _redact(text, meta, redactor, nul_free=nul_free)
        event_id = event_id or new_ulid(now_ms)
        wire = orjson.dumps(
            {  # the order and values of Event.to_dict
                "event_id": event_id,
                "ts": received_at if ts is None else ts,
                "tenant": tenant,
                "project_id": project_id,
                "agent_id": agent_id,
                "session_id": session_id,
                "user_id": user_id,
                "role": role,
                "type": kind,
                "text": text,
                "metadata": meta,
                "received_at": received_at,
            }
        )
        prepared.append(Prepared(event_id, project_id, wire))
    return prepared


_FastItem = tuple[
    str | None, datetime | None, str, str, str, str | None, str, str, str, dict[str, Any]
]


def _fast_items(raw: list[Any], max_event_bytes: int) -> list[_FastItem] | None:
    """The events' fields if every event is certainly valid, else None (use pydantic).

    Returns None rather than raising: only the pydantic path words errors. Ids repeat within a
    batch (one session, one agent), so each distinct id string is checked once.
    """
    items: list[_FastItem] = []
    checked: set[str] = set()
    for item in raw:
        if type(item) is not dict or not _FIELDS.issuperset(item):
            return None
        try:
            project_id = item["project_id"]
            agent_id = item["agent_id"]
            session_id = item["session_id"]
            role = item["role"]
            text = item["text"]
        except KeyError:
            return None
        if type(project_id) is not str or type(agent_id) is not str:
            return None
        if type(session_id) is not str or type(text) is not str:
            return None
        event_id = item.get("event_id")
        user_id = item.get("user_id")
        for value in (project_id, agent_id, session_id, event_id, user_id):
            if value is None:
                continue
            if type(value) is not str:
                return None
            if value in checked:
                continue
            if not 0 < len(value) <= _ID_MAX_CHARS or _ID_BAD_CHAR.search(value):
                return None
            checked.add(value)
        kind = item.get("type", "message")
        if type(role) is not str or role not in _ROLES:
            return None
        if type(kind) is not str or kind not in _TYPES:
            return None
        meta = item.get("metadata", _NO_METADATA)
        if type(meta) is not dict:
            return None
        ts = item.get("ts")
        when = None
        if ts is not None:
            if type(ts) not in _TS_TYPES:
                return None
            try:
                when = parse_ts(ts)
            except ValueError:
                return None
            if ts_problem(when):
                return None
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        if meta:
            if metadata_problem(meta):  # before dumps: 255 levels would make it raise
                return None
            size += len(orjson.dumps(meta))
        if size > max_event_bytes:
            return None
        items.append(
            (event_id, when, project_id, agent_id, session_id, user_id, role, kind, text, meta)
        )
    return items


def check_batch(raw: list[Any], batch: bool, options: GatewayOptions) -> None:
    if batch and not raw:
        raise ApiError(422, "validation_error", "must hold at least one event", field="events")
    if len(raw) > options.max_batch_events:
        raise ApiError(
            413,
            "batch_too_large",
            f"{len(raw)} events in one request; the limit is {options.max_batch_events}",
            field="events",
        )


def parse_body(body: bytes) -> tuple[list[Any], bool]:
    """Decode JSON; return the raw event objects and whether the body was a batch."""
    try:
        data = orjson.loads(body)  # validates UTF-8 itself: no separate decode for good bodies
    except orjson.JSONDecodeError:
        data = _parse_bad_body(body)
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


def _parse_bad_body(body: bytes) -> Any:
    """Word the 400 for a body orjson refused: bad UTF-8 first (naming the byte), then JSON."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "invalid_utf8", f"body is not valid UTF-8 (byte {exc.start})") from None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, "invalid_json", f"body is not valid JSON: {exc}") from None


def validate(raw: list[Any], batch: bool, options: GatewayOptions) -> list[EventIn]:
    check_batch(raw, batch, options)
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
        text, metadata = _redact(item.text, item.metadata, redactor)
        events.append(
            Event.from_input(
                item, tenant=tenant, received_at=received_at, text=text, metadata=metadata
            )
        )
    return events


def _redact(
    text: str, metadata: dict[str, Any], redactor: Redactor, *, nul_free: bool = False
) -> tuple[str, dict[str, Any]]:
    """Redact text and metadata, recording counts under ``_redactions``; NUL -> U+FFFD."""
    text, counts = redactor.redact(text if nul_free else _no_nul(text))
    if metadata:
        cleaned, meta_counts = redactor.redact_value(
            metadata if nul_free else _no_nul_value(metadata)
        )
        assert isinstance(cleaned, dict)
        metadata = cleaned
        for kind, n in meta_counts.items():
            counts[kind] = counts.get(kind, 0) + n
    if counts:
        metadata = {**metadata, REDACTIONS_KEY: counts}
    return text, metadata


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
