"""Reads and writes of ``project_sharing`` (SQL in ``sql/sharing.sql``); a project without a row
is ``unified``, the default."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries

Q = load_queries(__package__ or "", "sql/sharing.sql")
DEFAULT_STRATEGY = "unified"


async def get_sharing(conn: AsyncConnection[Any], tenant: str, project_id: str) -> dict[str, Any]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q["get_sharing"], {"tenant": tenant, "project_id": project_id})
        row = await cur.fetchone()
    if row is None:
        return {"project_id": project_id, "strategy": DEFAULT_STRATEGY, "updated_at": None}
    return {"project_id": project_id, **row}


async def strategies(
    conn: AsyncConnection[Any], tenant: str, project_ids: Iterable[str]
) -> dict[str, str]:
    """project -> strategy for each of ``project_ids`` (the default for those without a row)."""
    wanted = sorted(set(project_ids))
    found = dict.fromkeys(wanted, DEFAULT_STRATEGY)
    if not wanted:
        return found
    async with conn.cursor() as cur:
        await cur.execute(Q["strategies"], {"tenant": tenant, "project_ids": wanted})
        for project_id, strategy in await cur.fetchall():
            found[project_id] = strategy
    return found


async def separate_projects(conn: AsyncConnection[Any], tenant: str) -> list[str]:
    """The tenant's projects whose strategy is ``separate``."""
    async with conn.cursor() as cur:
        await cur.execute(Q["separate_projects"], {"tenant": tenant})
        return sorted(row[0] for row in await cur.fetchall())


async def put_sharing(
    conn: AsyncConnection[Any], tenant: str, project_id: str, strategy: str
) -> dict[str, Any]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            Q["put_sharing"], {"tenant": tenant, "project_id": project_id, "strategy": strategy}
        )
        row = await cur.fetchone()
    assert row is not None
    return {"project_id": project_id, **row}
