"""Writes of the recorder; SQL lives in ``sql/queries.sql``."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import AsyncConnection

from agent_memory_common.db import load_queries

QUERIES = load_queries(__package__ or "")

# One ``events`` row in the column order of ``copy_incoming``: tenant, event_id, ts, project_id,
# agent_id, session_id, user_id, role, type, text, metadata (JSON text), received_at. The two
# times are RFC 3339 text, which Postgres parses: no datetime objects to build and format.
Row = tuple[str, str, str, str, str, str, str | None, str, str, str, str, str]


async def insert_rows(conn: AsyncConnection, rows: Sequence[Row]) -> set[tuple[str, str]]:
    """Append events in the caller's transaction; rows that already exist are left as they are.

    Returns the (tenant, event_id) of erased events, which are refused (never stored again)."""
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["create_incoming"])
        async with cur.copy(QUERIES["copy_incoming"]) as copy:
            for row in rows:
                await copy.write_row(row)
        await cur.execute(QUERIES["insert_from_incoming"])
        await cur.execute(QUERIES["refused_in_incoming"])
        return {(r[0], r[1]) for r in await cur.fetchall()}


async def erase_events(conn: AsyncConnection, erasure_id: str) -> int:
    """Delete the tombstoned events of one erasure (the caller allowed it)."""
    cur = await conn.execute(QUERIES["erase_events"], {"erasure_id": erasure_id})
    return cur.rowcount
