"""Health, readiness and pipeline status."""

from __future__ import annotations

from typing import Any

import nats.errors
import nats.js.errors
import psycopg
from fastapi import APIRouter

from agent_memory_api.common import Health, Ready
from agent_memory_api.status import Status
from agent_memory_common.auth.access import PUBLIC, READ
from agent_memory_common.bus.streams import PIPELINE_CONSUMERS
from agent_memory_common.contracts.subjects import DLQ_WILDCARD, STREAM_DLQ, dlq_subject
from agent_memory_common.core.errors import TransientError
from agent_memory_common.web.http import ApiError, error_responses
from agent_memory_query.context import Ctx, Tenant
from agent_memory_query.events.store import count_duplicates, count_events, count_segments

router = APIRouter(tags=["status"])
_NATS_ERRORS = (TransientError, TimeoutError, nats.errors.Error, nats.js.errors.Error)


async def consumer_status(ctx: Ctx) -> list[dict[str, Any]]:
    """Every pipeline consumer's backlog. The counts are JetStream's, across all tenants."""
    js = ctx.link.require_js()
    dead = await dead_letters(js)
    out = []
    for spec in PIPELINE_CONSUMERS:
        try:
            info = await js.consumer_info(spec.stream, spec.durable)
        except nats.js.errors.NotFoundError:
            out.append({"name": spec.durable, "stream": spec.stream, "exists": False})
            continue
        out.append(
            {
                "name": spec.durable,
                "stream": spec.stream,
                "exists": True,
                "pending": info.num_pending or 0,
                "ack_pending": info.num_ack_pending or 0,
                "redelivered": info.num_redelivered or 0,
                "ack_floor": info.ack_floor.stream_seq if info.ack_floor else 0,
                "delivered": info.delivered.stream_seq if info.delivered else 0,
                "caught_up": not (info.num_pending or info.num_ack_pending),
                "dead_letters": dead.get(dlq_subject(spec.durable), 0),
            }
        )
    return out


async def dead_letters(js: Any) -> dict[str, int]:
    """Messages parked on ``mem.dlq.<consumer>``, per subject (the dashboard's pipeline page)."""
    try:
        info = await js.stream_info(STREAM_DLQ, subjects_filter=DLQ_WILDCARD)
    except nats.js.errors.NotFoundError:
        return {}
    return dict(info.state.subjects or {})


_COUNTS = ("pending", "ack_pending", "redelivered", "ack_floor", "delivered", "dead_letters")


def _without_counts(consumer: dict[str, Any]) -> dict[str, Any]:
    """What one tenant may see of a consumer shared by all: whether it has caught up."""
    return {k: v for k, v in consumer.items() if k not in _COUNTS}


@router.get(
    "/v1/status",
    dependencies=[READ],
    response_model=Status,
    summary="Per-consumer backlog, stored event and open segment counts, and whether "
    "everything is drained",
    responses=error_responses(401, 503),
)
async def status(ctx: Ctx, tenant: Tenant) -> dict[str, Any]:
    # Postgres first: a close announced between the two reads then shows as a pending message
    # of the summarizer, never as neither (drained too early)
    try:
        async with ctx.pool.connection() as conn:
            stored = await count_events(conn, tenant)
            duplicates = await count_duplicates(conn, tenant)
            segments_open, segments_closing = await count_segments(conn, tenant)
    except psycopg.OperationalError as exc:
        raise ApiError(
            503, "unavailable", f"Postgres unavailable: {exc}", headers={"Retry-After": "2"}
        ) from None
    try:
        consumers = await consumer_status(ctx)
    except _NATS_ERRORS as exc:
        raise ApiError(
            503, "unavailable", f"NATS unavailable: {exc}", headers={"Retry-After": "2"}
        ) from None
    # a closing segment is work still to come (its summary, its TOC node), announced by the
    # segmenter later: until it is announced no consumer has anything pending for it
    drained = segments_closing == 0 and all(c["exists"] and c["caught_up"] for c in consumers)
    if not ctx.auth.local_mode:
        # Another tenant's traffic shows in the shared counters: with tokens, only booleans.
        consumers = [_without_counts(c) for c in consumers]
    return {
        "consumers": consumers,
        "events_stored": stored,
        "duplicates_stored": duplicates,
        "segments_open": segments_open,
        "segments_closing": segments_closing,
        "drained": drained,
    }


@router.get(
    "/healthz", summary="The process is alive", response_model=Health, dependencies=[PUBLIC]
)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    dependencies=[PUBLIC],
    summary="Postgres and NATS reachable",
    response_model=Ready,
    responses=error_responses(503),
)
async def readyz(ctx: Ctx) -> dict[str, str]:
    if not ctx.link.connected:
        raise ApiError(503, "unavailable", "NATS not connected", headers={"Retry-After": "2"})
    try:
        async with ctx.pool.connection(timeout=2) as conn:
            await conn.execute("SELECT 1")
    except (psycopg.OperationalError, TimeoutError) as exc:
        raise ApiError(
            503, "unavailable", f"Postgres unavailable: {exc}", headers={"Retry-After": "2"}
        ) from None
    return {"status": "ready"}
