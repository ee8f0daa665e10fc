"""Reads behind the listings; SQL in ``sql/listing.sql``. Aggregates over the event log (one
index range scan per tenant or project), so they answer from the first stored event on."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries
from agent_memory_query.sharing.policy import BOUNDS_SQL, ReadBounds

Q = {
    name: query.replace("{bounds}", BOUNDS_SQL)
    for name, query in load_queries(__package__ or "", "sql/listing.sql").items()
}


async def _all(conn: AsyncConnection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q[name], params)
        return await cur.fetchall()


async def projects(
    conn: AsyncConnection, tenant: str, bounds: ReadBounds, limit: int
) -> list[dict[str, Any]]:
    rows = await _all(conn, "projects", {"tenant": tenant, "limit": limit, **bounds.params})
    counts = {
        r["project_id"]: r
        for r in await _all(
            conn,
            "segment_counts",
            {"tenant": tenant, "project_ids": [r["project_id"] for r in rows]},
        )
    }
    for row in rows:
        seg = counts.get(row["project_id"], {})
        row["open_segments"] = seg.get("open_segments", 0)
        row["closed_segments"] = seg.get("closed_segments", 0)
    return rows


async def sessions(
    conn: AsyncConnection, tenant: str, bounds: ReadBounds, project_id: str, limit: int
) -> list[dict[str, Any]]:
    params = {"tenant": tenant, "project_id": project_id, "limit": limit, **bounds.params}
    rows = await _all(conn, "sessions", params)
    return [r | {"project_id": project_id} for r in rows]


async def agents(
    conn: AsyncConnection, tenant: str, bounds: ReadBounds, project_id: str | None, limit: int
) -> list[dict[str, Any]]:
    params = {"tenant": tenant, "project_id": project_id, "limit": limit, **bounds.params}
    return await _all(conn, "agents", params)
