"""Segmenter: each RECORDED event -> recompute its session's segments -> announce changes.

The event is already in Postgres when its message arrives (the recorder publishes after its
commit), so the message is only a nudge: which session to recompute, and from where. The
result depends on the stored events alone, which makes redelivery, reordering and a second
replica harmless.

Published message: ``agent_memory_common.contracts.messages.SegmentMessage`` on
``mem.segments.<tenant>.<project>`` with Nats-Msg-Id ``<tenant>/<segment_id>/v<version>``, sent
once per closed version (a consumer keeps the highest version it has seen per segment).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.bus.consumer import Handler, Publication
from agent_memory_common.bus.erasure import Eraser, ErasureResult, erased_sessions
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.messages import ErasureRequest, RecordedMessage
from agent_memory_common.core.logs import get_logger
from agent_memory_segmenter.logic import SessionKey, Thresholds
from agent_memory_segmenter.store import (
    caused_publications,
    erase_session,
    erasure_cause,
    lock_session,
    resegment,
)

log = get_logger(__name__)


def make_handler(thresholds: Thresholds, historical_s: float | None = None) -> Handler:
    """``historical_s``: a tail whose last event is older than this (event time) is marked
    historical, to be closed after a short quiet period (``SegmenterOptions``)."""

    async def handle(conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        events = [RecordedMessage.from_wire(m.data) for m in msgs]
        sessions: dict[SessionKey, list[Event]] = defaultdict(list)
        for e in events:
            sessions[SessionKey(e.tenant, e.project_id, e.session_id)].append(e)
        # one lock order for every replica, so that two batches can wait but never deadlock
        for key in sorted(
            sessions, key=lambda k: (k.lock_key, k.tenant, k.project_id, k.session_id)
        ):
            mine = sessions[key]
            await lock_session(conn, key)
            await resegment(
                conn,
                key,
                thresholds,
                since=min((e.ts, e.event_id) for e in mine),
                cause_event_ids=sorted({e.event_id for e in mine}),
                historical_s=historical_s,
            )
        by_tenant: dict[str, set[str]] = defaultdict(set)
        for e in events:
            by_tenant[e.tenant].add(e.event_id)
        publications: dict[str, Publication] = {}
        for tenant, ids in sorted(by_tenant.items()):
            for p in await caused_publications(conn, tenant, sorted(ids)):
                publications[p.msg_id] = p
        log.debug(
            "segmenter.batch",
            messages=len(msgs),
            sessions=len(sessions),
            publications=len(publications),
        )
        return list(publications.values())

    return handle


def make_eraser(thresholds: Thresholds, historical_s: float | None = None) -> Eraser:
    """The segmenter's part of an erasure: every session that lost events is segmented again
    without them (segments retracted or re-published), and the old versions go."""

    async def erase(conn: AsyncConnection, request: ErasureRequest) -> ErasureResult:
        changed = removed = 0
        keys = [
            SessionKey(request.tenant, project_id, session_id)
            for project_id, session_id in await erased_sessions(conn, request.erasure_id)
        ]
        for key in sorted(keys, key=lambda k: (k.lock_key, k.tenant, k.project_id, k.session_id)):
            await lock_session(conn, key)
            c, r = await erase_session(conn, key, thresholds, request.erasure_id, historical_s)
            changed += c
            removed += r
        publications = await caused_publications(
            conn, request.tenant, [erasure_cause(request.erasure_id)]
        )
        counts = {"segments_rewritten": changed, "segment_versions_removed": removed}
        return ErasureResult(counts, publications)

    return erase
