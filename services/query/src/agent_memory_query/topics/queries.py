"""The topic graph's SQL (``sql/topics.sql``), read by the listing store and the centroid
cache alike: one module, so the store (which holds the cache) and the cache need not import
each other."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries

Q = load_queries(__package__ or "", "sql/topics.sql")


async def rows(conn: AsyncConnection, name: str, **params: Any) -> list[dict[str, Any]]:
    """Every row of the query ``name`` as a dict."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q[name], params)
        return await cur.fetchall()
