"""Reads and writes of the segmenter; SQL lives in ``sql/queries.sql``.

Every function runs in the caller's transaction. Per session, everything happens under a
transaction-scoped advisory lock, so two replicas (or the consumer and the idle flush) never
compute the same session at the same time, and each computation starts from the state the
previous one committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.bus.consumer import Publication
from agent_memory_common.contracts.messages import SegmentMessage
from agent_memory_common.contracts.subjects import segment_subject
from agent_memory_common.db.postgres import load_queries
from agent_memory_segmenter.logic import (
    EventInfo,
    SessionKey,
    StoredSegment,
    Thresholds,
    Write,
    event_tokens,
    payload,
    reconcile,
    segment,
)

QUERIES = load_queries(__package__ or "")

# First key of pg_advisory_xact_lock(int, int): "SEGM", so that the session locks live in a
# space of their own (the two-int and one-bigint key spaces never collide).
LOCK_NAMESPACE = 0x5345474D

Cause = Literal["event", "idle"]


@dataclass(frozen=True)
class OutboxItem:
    """A version waiting in ``segment_outbox`` to be confirmed published."""

    tenant: str
    segment_id: str
    version: int
    publication: Publication


def publication(message: SegmentMessage) -> Publication:
    return Publication(
        subject=segment_subject(message.tenant, message.project_id),
        payload=message.to_wire(),
        msg_id=message.msg_id,
    )


def _params(key: SessionKey, **extra: Any) -> dict[str, Any]:
    return {
        "tenant": key.tenant,
        "project_id": key.project_id,
        "session_id": key.session_id,
        **extra,
    }


async def lock_session(conn: AsyncConnection, key: SessionKey) -> None:
    await conn.execute(QUERIES["lock_session"], {"namespace": LOCK_NAMESPACE, "key": key.lock_key})


async def try_lock_session(conn: AsyncConnection, key: SessionKey) -> bool:
    cur = await conn.execute(
        QUERIES["try_lock_session"], {"namespace": LOCK_NAMESPACE, "key": key.lock_key}
    )
    row = await cur.fetchone()
    return bool(row and row[0])


def _event_info(row: Sequence[Any]) -> EventInfo:
    event_id, ts, type_, chars, agent_id = row
    return EventInfo(event_id, ts, type_, event_tokens(type_, int(chars)), agent_id)


async def resegment(
    conn: AsyncConnection,
    key: SessionKey,
    thresholds: Thresholds,
    *,
    since: tuple[datetime, str] | None,
    cause_event_ids: Sequence[str],
    historical_s: float | None = None,
) -> list[Write]:
    """Recompute the session's segments from its stored events and store the difference.

    ``since`` is the sort key of the earliest event that prompted this: the scan resumes at
    the last stored segment whose first own event sorts before it (everything earlier cannot
    depend on that event), or from the start of the session. The caller holds the lock.
    Returns the writes made; published ones are recorded in ``segment_versions``.

    The open tail is marked ``historical`` when its last event is older than
    ``historical_s`` in event time (None: never), which lets the idle flush close it after a
    short quiet period (``flush_idle``); only its status can change that way.
    """
    start_ordinal = 0
    carried: list[EventInfo] = []
    rows: Sequence[Sequence[Any]]
    restart = None
    if since is not None:
        cur = await conn.execute(
            QUERIES["find_restart"], _params(key, ts=since[0], event_id=since[1])
        )
        restart = await cur.fetchone()
    if restart is None:
        cur = await conn.execute(QUERIES["session_events"], _params(key))
        rows = await cur.fetchall()
    else:
        start_ordinal, event_ids, overlap_count, first_ts, first_id = restart
        cur = await conn.execute(
            QUERIES["session_events_from"], _params(key, ts=first_ts, event_id=first_id)
        )
        rows = await cur.fetchall()
        if overlap_count:
            carried_ids = list(event_ids[:overlap_count])
            cur = await conn.execute(
                QUERIES["events_by_id"], {"tenant": key.tenant, "event_ids": carried_ids}
            )
            found = {r[0]: _event_info(r) for r in await cur.fetchall()}
            # an erased event (tombstoned) is no longer carried over
            carried = [found[i] for i in carried_ids if i in found]
    plans = segment(
        [_event_info(r) for r in rows], thresholds, start_ordinal=start_ordinal, carried=carried
    )
    stored = await _stored_from(conn, key, start_ordinal)
    writes = reconcile(stored, plans)
    for write in writes:
        await _apply(conn, key, write, "event", cause_event_ids)
    await conn.execute(QUERIES["touch_tail"], _params(key, historical_s=historical_s))
    return writes


async def _stored_from(conn: AsyncConnection, key: SessionKey, ordinal: int) -> list[StoredSegment]:
    cur = await conn.execute(QUERIES["session_segments_from"], _params(key, ordinal=ordinal))
    return [
        StoredSegment(
            ordinal=r[0],
            version=r[1],
            status=r[2],
            close_reason=r[3],
            event_ids=tuple(r[4]),
            overlap_count=r[5],
            agent_id=r[6],
            start_ts=r[7],
            end_ts=r[8],
        )
        for r in await cur.fetchall()
    ]


async def _apply(
    conn: AsyncConnection,
    key: SessionKey,
    write: Write,
    cause: Cause,
    cause_event_ids: Sequence[str],
) -> None:
    seg_id = key.segment_id(write.ordinal)
    if write.delete:
        await conn.execute(QUERIES["delete_segment"], {"tenant": key.tenant, "segment_id": seg_id})
        return
    body = payload(key, write)
    await conn.execute(
        QUERIES["upsert_segment"],
        _params(
            key,
            segment_id=seg_id,
            version=write.version,
            agent_id=body.agent_id,
            ordinal=write.ordinal,
            start_ts=body.start_ts,
            end_ts=body.end_ts,
            event_ids=body.event_ids,
            overlap_count=body.overlap_count,
            token_count=body.token_count,
            status=write.status,
            close_reason=write.close_reason,
        ),
    )
    if write.publish:
        await _insert_version(conn, body, cause, cause_event_ids)


async def _insert_version(
    conn: AsyncConnection, body: SegmentMessage, cause: Cause, cause_event_ids: Sequence[str]
) -> None:
    """The version as published, kept for republishing (caused_publications, the outbox)."""
    await conn.execute(
        QUERIES["insert_version"],
        {
            "tenant": body.tenant,
            "segment_id": body.segment_id,
            "version": body.version,
            "payload": body.to_wire().decode(),
            "cause": cause,
            "cause_event_ids": list(cause_event_ids),
        },
    )


async def caused_publications(
    conn: AsyncConnection, tenant: str, event_ids: Sequence[str]
) -> list[Publication]:
    """The current published versions these events caused, new or from an earlier attempt.

    Asking again on every delivery is what makes the announcement survive a crash between
    the commit and the publish: the redelivered events find their versions here.
    """
    cur = await conn.execute(
        QUERIES["caused_publications"], {"tenant": tenant, "event_ids": list(event_ids)}
    )
    return [
        publication(SegmentMessage.model_validate(body))
        for _seg_id, _version, body, _project_id in await cur.fetchall()
    ]


# --- idle flush ------------------------------------------------------------------------------


async def idle_candidates(
    conn: AsyncConnection, idle_s: float, limit: int, quiet_s: float | None = None
) -> list[SessionKey]:
    """Sessions whose open tail is quiet for ``idle_s``, or for ``quiet_s`` if historical."""
    params = {"idle_s": idle_s, "quiet_s": idle_s if quiet_s is None else quiet_s, "limit": limit}
    cur = await conn.execute(QUERIES["idle_candidates"], params)
    return [SessionKey(*row) for row in await cur.fetchall()]


async def flush_idle(
    conn: AsyncConnection, key: SessionKey, idle_s: float, quiet_s: float | None = None
) -> OutboxItem | None:
    """Close the session's open tail if it is idle; None if not (or another replica has it).

    Idle: no new event for ``idle_s`` of wall-clock time, or for ``quiet_s`` when the tail is
    ``historical`` (its events were old when they arrived: an import, not an agent pausing).

    Only the status changes, never the content: the tail is already what the pure function
    gives for the stored events (the query checks that no event arrived since it was last
    computed). The version goes to the outbox in the same transaction, as there is no
    redelivery to fall back on if the publish after commit does not happen.
    """
    if not await try_lock_session(conn, key):
        return None  # being recomputed right now, so not idle
    cur = conn.cursor(row_factory=dict_row)
    quiet = idle_s if quiet_s is None else quiet_s
    await cur.execute(QUERIES["idle_tail"], _params(key, idle_s=idle_s, quiet_s=quiet))
    tail = await cur.fetchone()
    if tail is None:
        return None
    seg_id = tail["segment_id"]
    await conn.execute(QUERIES["close_idle"], {"tenant": key.tenant, "segment_id": seg_id})
    body = SegmentMessage(
        tenant=key.tenant,
        segment_id=seg_id,
        version=tail["version"],
        project_id=key.project_id,
        agent_id=tail["agent_id"],
        session_id=key.session_id,
        ordinal=tail["ordinal"],
        start_ts=tail["start_ts"],
        end_ts=tail["end_ts"],
        event_ids=list(tail["event_ids"]),
        overlap_count=tail["overlap_count"],
        token_count=tail["token_count"],
        close_reason="idle",
    )
    await _insert_version(conn, body, "idle", ())
    params = {"tenant": key.tenant, "segment_id": seg_id, "version": body.version}
    await conn.execute(QUERIES["insert_outbox"], params)
    return OutboxItem(key.tenant, seg_id, body.version, publication(body))


async def outbox_done(conn: AsyncConnection, item: OutboxItem) -> None:
    await conn.execute(
        QUERIES["delete_outbox"],
        {"tenant": item.tenant, "segment_id": item.segment_id, "version": item.version},
    )


async def outbox_due(conn: AsyncConnection, grace_s: float, limit: int) -> list[OutboxItem]:
    """Outbox rows older than ``grace_s``, locked (SKIP LOCKED) for this transaction."""
    cur = await conn.execute(QUERIES["outbox_due"], {"grace_s": grace_s, "limit": limit})
    return [
        OutboxItem(tenant, seg_id, version, publication(SegmentMessage.model_validate(body)))
        for tenant, seg_id, version, body in await cur.fetchall()
    ]


# --- erasure ---------------------------------------------------------------------------------


async def erase_session(
    conn: AsyncConnection,
    key: SessionKey,
    thresholds: Thresholds,
    erasure_id: str,
    historical_s: float | None = None,
) -> tuple[int, int]:
    """Recompute a session without its erased events, then drop the published versions that
    named them. Returns (segments changed, versions removed). The caller holds the lock.

    The new versions are caused by ``erasure:<id>`` (``caused_publications`` finds them again
    on a redelivery): a segment that lost some events gets a new version without them, one
    that lost all of them is retracted, and the summarizer rewrites the tree from those.
    """
    writes = await resegment(
        conn,
        key,
        thresholds,
        since=None,
        cause_event_ids=[erasure_cause(erasure_id)],
        historical_s=historical_s,
    )
    cur = await conn.execute(QUERIES["erase_versions"], _params(key, erasure_id=erasure_id))
    removed = cur.rowcount
    await conn.execute(QUERIES["erase_outbox"], {"tenant": key.tenant})
    return len(writes), removed


def erasure_cause(erasure_id: str) -> str:
    return f"erasure:{erasure_id}"
