"""Recorder: decode -> append to Postgres -> announce on ``mem.recorded.*``.

The announcement is made for every message, inserted or already present, because a crash
between commit and publish must still let later stages hear of the event; JetStream's
de-duplication (same message id) absorbs the repeat.

Decoding is on the hot path of every event. ``Event.from_wire`` (pydantic) was ~9 µs of the
recorder's ~60 µs per event, so ``decode`` reads the gateway's own output with orjson and plain
checks and hands anything else (an older writer, a hand-made message, poison) to
``Event.from_wire``, which stays the definition of a valid message and raises for poison.

Dedup at ingest (``dedup.py``, docs/lifecycle.md): a new event that repeats an original of its
session is stored, marked in ``event_duplicates`` in the same transaction, and not announced,
so no later stage sees it. A redelivered event is announced or not by its stored mark.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

import orjson
from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.bus.consumer import Publication
from agent_memory_common.bus.erasure import ErasureResult
from agent_memory_common.contracts.event import EVENT_TYPES, ROLES, Event
from agent_memory_common.contracts.messages import ErasureRequest
from agent_memory_common.contracts.subjects import msg_id, recorded_subject
from agent_memory_common.db.locks import hold_xact_locks, lock_name
from agent_memory_recorder.dedup import DedupIndex, DedupRules, fingerprint
from agent_memory_recorder.store import (
    EventRow,
    Mark,
    erase_events,
    insert_duplicates,
    insert_new_rows,
    insert_rows,
    recent_originals,
    stored_duplicates,
)

_WIRE_KEYS = frozenset(Event.model_fields)
_ROLES = frozenset(ROLES)
_TYPES = frozenset(EVENT_TYPES)
# How orjson writes an aware datetime (what the gateway sends); pydantic reads the same instant.
_WIRE_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)")
_STR_FIELDS = ("event_id", "tenant", "project_id", "agent_id", "session_id", "text")


def decode(data: bytes) -> EventRow:
    """The ``events`` row of one message; raises ``pydantic.ValidationError`` for poison."""
    try:
        d = orjson.loads(data)
    except orjson.JSONDecodeError:
        d = None
    row = _plain_row(d) if type(d) is dict else None
    return row if row is not None else _row(Event.from_wire(data))


def _plain_row(d: dict[str, Any]) -> EventRow | None:
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
    return EventRow(
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


def _row(e: Event) -> EventRow:
    return EventRow(
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


Handler = Callable[[AsyncConnection, Sequence[Msg]], Awaitable[list[Publication]]]


def _announce(rows: Sequence[EventRow], msgs: Sequence[Msg]) -> list[Publication]:
    return [
        Publication(
            subject=recorded_subject(r.tenant, r.project_id),
            payload=m.data,
            msg_id=msg_id(r.tenant, r.event_id),
        )
        for r, m in zip(rows, msgs, strict=True)
    ]


async def hold_sessions(conn: AsyncConnection, rows: Sequence[EventRow]) -> None:
    """Store one session's events in one replica at a time, to the commit.

    Then ``seq`` order is commit order within a session, which the indexers rely on to find a
    turn stored before its previous turn (``sources.stored_before_successors``): without the
    lock, two replicas could commit a session's events in the opposite order of their seq.
    """
    await hold_xact_locks(
        conn, (lock_name("record-session", r.tenant, r.session_id) for r in rows if r.session_id)
    )


async def record(conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
    """Append and announce every event, without dedup (erased ids are refused, unannounced)."""
    rows = [decode(m.data) for m in msgs]
    await hold_sessions(conn, rows)
    refused = await insert_rows(conn, rows)
    if refused:
        kept = [
            (r, m) for r, m in zip(rows, msgs, strict=True) if (r.tenant, r.event_id) not in refused
        ]
        return _announce([r for r, _ in kept], [m for _, m in kept])
    return _announce(rows, msgs)


async def erase(conn: AsyncConnection, request: ErasureRequest) -> ErasureResult:
    """The recorder's part of an erasure: the events themselves (their dedup marks go with
    them, by the foreign key or the statement below)."""
    return ErasureResult({"events": await erase_events(conn, request.erasure_id)})


def make_handler(rules: DedupRules) -> Handler:
    """The recorder's batch handler; with dedup on, it owns the index of recent originals."""
    if not rules.enabled:
        return record
    index = DedupIndex(rules)

    async def record_dedup(conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        rows = [decode(m.data) for m in msgs]
        await hold_sessions(conn, rows)
        # before the insert: what the index loads must not include this batch's own rows
        await _load_sessions(conn, index, rows)
        new, refused = await insert_new_rows(conn, rows)
        all_new = len(new) == len(rows)  # the usual batch: no per-row lookups
        fresh = rows if all_new else [r for r in rows if (r.tenant, r.event_id) in new]
        duplicates = await _mark_duplicates(conn, index, fresh)
        duplicates |= refused  # erased ids: refused, never announced
        if not all_new:
            decided = new | refused
            old = [(r.tenant, r.event_id) for r in rows if (r.tenant, r.event_id) not in decided]
            if old:  # redelivered: announce as first decided
                duplicates |= await stored_duplicates(conn, old)
        if not duplicates:
            return _announce(rows, msgs)
        keep = [
            (r, m)
            for r, m in zip(rows, msgs, strict=True)
            if (r.tenant, r.event_id) not in duplicates
        ]
        return _announce([r for r, _ in keep], [m for _, m in keep])

    return record_dedup


async def _load_sessions(
    conn: AsyncConnection, index: DedupIndex, rows: Sequence[EventRow]
) -> None:
    """Load the committed originals of the batch's sessions that the index does not hold."""
    rules = index.rules
    missing = index.missing((r.tenant, r.project_id, r.session_id) for r in rows)
    if not missing:
        return
    loaded = await recent_originals(conn, missing, rules.recent_per_session)
    for key, originals in zip(missing, loaded, strict=True):
        index.load(
            key,
            (
                f
                for event_id, ts, role, type_, text in originals
                if (f := fingerprint(event_id, ts.timestamp(), role, type_, text, rules))
            ),
        )


async def _mark_duplicates(
    conn: AsyncConnection, index: DedupIndex, rows: Sequence[EventRow]
) -> set[tuple[str, str]]:
    """Decide for each new row, in order, whether it repeats an original; store the marks."""
    rules = index.rules
    marks: list[Mark] = []
    for r in rows:
        ts = datetime.fromisoformat(r.ts).timestamp()
        fp = fingerprint(r.event_id, ts, r.role, r.type, r.text, rules)
        if fp is None:
            continue
        key = (r.tenant, r.project_id, r.session_id)
        verdict = index.check(key, fp)
        if verdict is None:
            index.add(key, fp)
        else:
            marks.append(
                (
                    r.tenant,
                    r.event_id,
                    verdict.duplicate_of,
                    r.project_id,
                    r.session_id,
                    verdict.method,
                    verdict.similarity,
                )
            )
    return await insert_duplicates(conn, marks)
