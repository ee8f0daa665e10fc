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


async def insert_rows(conn: AsyncConnection, rows: Sequence[Row]) -> None:
    """Append events in the caller's transaction; rows that already exist are left as they are."""
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["create_incoming"])
        async with cur.copy(QUERIES["copy_incoming"]) as copy:
            for row in rows:
                await copy.write_row(row)
        await cur.execute(QUERIES["insert_from_incoming"])
