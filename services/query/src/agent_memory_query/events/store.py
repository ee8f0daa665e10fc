"""Reads of the event log. Static SQL lives in ``sql/events.sql``; the event listing is
composed with ``psycopg.sql`` because its filters are optional."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from psycopg import AsyncConnection, sql
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries
from agent_memory_query.sharing.policy import BOUNDS_SQL, ReadBounds
from agent_memory_search.event_scope import event_conditions

QUERIES = load_queries(__package__ or "", "sql/events.sql")

_COLUMNS = sql.SQL(
    "seq, tenant, event_id, ts, project_id, agent_id, session_id, user_id, role, type, text, "
    "metadata, received_at, recorded_at, "
    "(SELECT d.duplicate_of FROM event_duplicates AS d"
    " WHERE d.tenant = events.tenant AND d.event_id = events.event_id) AS duplicate_of"
)


@dataclass(frozen=True)
class EventFilter:
    tenant: str
    project_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


async def list_events(
    conn: AsyncConnection,
    flt: EventFilter,
    *,
    order: Literal["asc", "desc"],
    limit: int,
    after: tuple[datetime, int] | None,
    bounds: ReadBounds | None = None,
) -> list[dict[str, Any]]:
    """Keyset pagination on (ts, seq): stable while new events keep arriving; ``bounds``: only
    what the caller's key may read."""
    params: dict[str, Any] = {"limit": limit}
    where = event_conditions(flt, params)
    if bounds is not None:
        where.append(sql.SQL(BOUNDS_SQL))
        params.update(bounds.params)
    if after is not None:
        op = sql.SQL(">") if order == "asc" else sql.SQL("<")
        where.append(sql.SQL("(ts, seq) {} (%(after_ts)s, %(after_seq)s)").format(op))
        params["after_ts"], params["after_seq"] = after
    direction = sql.SQL("ASC") if order == "asc" else sql.SQL("DESC")
    query = sql.SQL(
        "SELECT {cols} FROM events WHERE {where} ORDER BY ts {dir}, seq {dir} LIMIT %(limit)s"
    ).format(cols=_COLUMNS, where=sql.SQL(" AND ").join(where), dir=direction)
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(query, params)
        return await cur.fetchall()


async def get_event(conn: AsyncConnection, tenant: str, event_id: str) -> dict[str, Any] | None:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["event_by_id"], {"tenant": tenant, "event_id": event_id})
        return await cur.fetchone()


async def count_events(conn: AsyncConnection, tenant: str) -> int:
    cur = await conn.execute(QUERIES["count_events"], {"tenant": tenant})
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def count_segments(conn: AsyncConnection, tenant: str) -> tuple[int, int]:
    """(open segments, segments closing): the latter close without waiting for a new event
    (a historical session's tail, or an idle close not yet confirmed published)."""
    cur = await conn.execute(QUERIES["count_segments"], {"tenant": tenant})
    row = await cur.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


async def count_duplicates(conn: AsyncConnection, tenant: str) -> int:
    """Events stored but marked ``duplicate_of`` another (dedup at ingest)."""
    cur = await conn.execute(QUERIES["count_duplicates"], {"tenant": tenant})
    row = await cur.fetchone()
    return int(row[0]) if row else 0
