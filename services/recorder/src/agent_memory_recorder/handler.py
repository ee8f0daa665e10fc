"""Recorder: decode -> append to Postgres -> announce on ``mem.recorded.*``.

The announcement is made for every message, inserted or already present, because a crash
between commit and publish must still let later stages hear of the event; JetStream's
de-duplication (same message id) absorbs the repeat.

Decoding is on the hot path of every event. ``Event.from_wire`` (pydantic) was ~9 µs of the
recorder's ~60 µs per event, so ``decode`` reads the gateway's own output with orjson and plain
checks and hands anything else (an older writer, a hand-made message, poison) to
``Event.from_wire``, which stays the definition of a valid message and raises for poison.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson
from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.consumer import Publication
from agent_memory_common.erasure import ErasureResult
from agent_memory_common.event import EVENT_TYPES, ROLES, Event
from agent_memory_common.messages import ErasureRequest
from agent_memory_common.subjects import msg_id, recorded_subject
from agent_memory_recorder.store import Row, erase_events, insert_rows

_WIRE_KEYS = frozenset(Event.model_fields)
_ROLES = frozenset(ROLES)
_TYPES = frozenset(EVENT_TYPES)
# How orjson writes an aware datetime (what the gateway sends); pydantic reads the same instant.
_WIRE_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)")
_STR_FIELDS = ("event_id", "tenant", "project_id", "agent_id", "session_id", "text")
_SUBJECT_CACHE_MAX = 10_000
_subjects: dict[tuple[str, str], str] = {}


def decode(data: bytes) -> Row:
    """The ``events`` row of one message; raises ``pydantic.ValidationError`` for poison."""
    try:
        d = orjson.loads(data)
    except orjson.JSONDecodeError:
        d = None
    row = _plain_row(d) if type(d) is dict else None
    return row if row is not None else _row(Event.from_wire(data))


def _plain_row(d: dict[str, Any]) -> Row | None:
    """The row when ``d`` is certainly a valid event as the gateway writes it, else None."""
    if len(d) != len(_WIRE_KEYS) or not _WIRE_KEYS.issuperset(d):
        return None
    for name in _STR_FIELDS:
        if type(d[name]) is not str:
            return None
    user_id, role, kind, metadata = d["user_id"], d["role"], d["type"], d["metadata"]
    if user_id is not None and type(user_id) is not str:
        return None
    if type(role) is not str or role not in _ROLES or type(kind) is not str or kind not in _TYPES:
        return None
    if type(metadata) is not dict:
        return None
    ts, received_at = d["ts"], d["received_at"]
    if type(ts) is not str or type(received_at) is not str:
        return None
    if not (_WIRE_TS.fullmatch(ts) and _WIRE_TS.fullmatch(received_at)):
        return None
    try:  # a real date (no month 13), so Postgres reads the same instant pydantic would
        datetime.fromisoformat(ts)
        datetime.fromisoformat(received_at)
    except ValueError:
        return None
    return (
        d["tenant"],
        d["event_id"],
        ts,
        d["project_id"],
        d["agent_id"],
        d["session_id"],
        user_id,
        role,
        kind,
        d["text"],
        orjson.dumps(metadata).decode(),
        received_at,
    )


def _row(e: Event) -> Row:
    return (
        e.tenant,
        e.event_id,
        e.ts.isoformat(),
        e.project_id,
        e.agent_id,
        e.session_id,
        e.user_id,
        e.role,
        e.type,
        e.text,
        orjson.dumps(e.metadata).decode(),
        e.received_at.isoformat(),
    )


def _subject(tenant: str, project_id: str) -> str:
    key = (tenant, project_id)
    subject = _subjects.get(key)
    if subject is None:
        if len(_subjects) >= _SUBJECT_CACHE_MAX:
            _subjects.clear()
        subject = _subjects[key] = recorded_subject(tenant, project_id)
    return subject


async def record(conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
    rows = [decode(m.data) for m in msgs]
    refused = await insert_rows(conn, rows)
    return [
        Publication(subject=_subject(r[0], r[3]), payload=m.data, msg_id=msg_id(r[0], r[1]))
        for r, m in zip(rows, msgs, strict=True)
        if not refused or (r[0], r[1]) not in refused
    ]


async def erase(conn: AsyncConnection, request: ErasureRequest) -> ErasureResult:
    """The recorder's part of an erasure: the events themselves."""
    return ErasureResult({"events": await erase_events(conn, request.erasure_id)})
