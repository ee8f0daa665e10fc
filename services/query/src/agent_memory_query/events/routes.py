"""``/v1/events``: the raw, append-only log, filtered and paginated."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Path, Query

from agent_memory_common.auth.access import READ
from agent_memory_common.web.http import ApiError, error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.events.schemas import Event, EventPage
from agent_memory_query.events.store import EventFilter, get_event, list_events
from agent_memory_query.search.usage import used_event
from agent_memory_query.sharing.policy import read_bounds, visible
from agent_memory_query.timeparam import parse_time_param

router = APIRouter(tags=["events"])


def event_json(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out.pop("seq", None)
    return out


def encode_cursor(ts: datetime, seq: int) -> str:
    return base64.urlsafe_b64encode(orjson.dumps([ts.isoformat(), seq])).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        ts_text, seq = orjson.loads(base64.urlsafe_b64decode(padded))
        return datetime.fromisoformat(ts_text), int(seq)
    except (ValueError, TypeError, orjson.JSONDecodeError):
        raise ApiError(
            422, "validation_error", "cursor: not a cursor from this API", field="cursor"
        ) from None


@router.get(
    "/v1/events",
    dependencies=[READ],
    response_model=EventPage,
    summary="List events, oldest first by default (those the key may read)",
    responses=error_responses(401, 403, 422),
)
async def get_events(
    ctx: Ctx,
    caller: Caller,
    project_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    since: Annotated[str | None, Query(description="RFC 3339 or epoch ms, inclusive")] = None,
    until: Annotated[str | None, Query(description="RFC 3339 or epoch ms, exclusive")] = None,
    order: Literal["asc", "desc"] = "asc",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(description="next_cursor of the previous page")] = None,
) -> dict[str, Any]:
    if project_id is not None:
        caller.require_project(project_id)
    flt = EventFilter(
        tenant=caller.tenant,
        project_id=project_id,
        agent_id=agent_id,
        session_id=session_id,
        since=parse_time_param("since", since),
        until=parse_time_param("until", until),
    )
    after = decode_cursor(cursor) if cursor else None
    async with ctx.pool.connection() as conn:
        bounds = await read_bounds(conn, caller)
        rows = await list_events(
            conn, flt, order=order, limit=limit + 1, after=after, bounds=bounds
        )
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = encode_cursor(rows[-1]["ts"], rows[-1]["seq"]) if more and rows else None
    return {"events": [event_json(r) for r in rows], "next_cursor": next_cursor}


@router.get(
    "/v1/events/{event_id:path}",
    dependencies=[READ],  # an id may hold "/" (it is accepted at ingest)
    response_model=Event,
    summary="One event by its id",
    responses=error_responses(401, 404, 422),
)
async def get_one_event(
    ctx: Ctx, caller: Caller, event_id: Annotated[str, Path(min_length=1)]
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        row = await get_event(conn, caller.tenant, event_id)
        if row is not None and not await visible(conn, caller, row["project_id"], row["agent_id"]):
            row = None  # outside the key's bounds: as if it did not exist
    if row is None:
        raise ApiError(404, "not_found", f"no event {event_id!r}", field="event_id")
    used_event(ctx, caller.tenant, event_id)  # opened by id: used (the usage factor)
    return event_json(row)
