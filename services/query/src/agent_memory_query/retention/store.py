"""Reads and writes of ``retention_policies`` (migration 0010), in the caller's transaction."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from agent_memory_common.db.postgres import load_queries
from agent_memory_retrieval.lifecycle.retention import RetentionPolicy

Q = load_queries(__package__ or "", "sql/retention.sql")


async def get(
    conn: AsyncConnection[Any], tenant: str, project_id: str
) -> tuple[dict[str, dict[str, str]], datetime | None]:
    """The project's overrides and when they were set (``{}``, ``None``: the defaults)."""
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(Q["get"], {"tenant": tenant, "project_id": project_id})
    row = await cur.fetchone()
    if row is None:
        return {}, None
    return dict(row["overrides"]), row["updated_at"]


async def put(
    conn: AsyncConnection[Any], tenant: str, project_id: str, overrides: dict[str, dict[str, str]]
) -> tuple[dict[str, dict[str, str]], datetime]:
    cur = conn.cursor(row_factory=dict_row)
    params = {"tenant": tenant, "project_id": project_id, "overrides": Jsonb(overrides)}
    await cur.execute(Q["put"], params)
    row = await cur.fetchone()
    assert row is not None
    return dict(row["overrides"]), row["updated_at"]


async def policies_of(
    conn: AsyncConnection[Any], tenant: str, project_ids: Iterable[str]
) -> dict[str, RetentionPolicy]:
    """project -> its policy, for the projects that override the defaults."""
    ids = sorted(set(project_ids))
    if not ids:
        return {}
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(Q["of_projects"], {"tenant": tenant, "project_ids": ids})
    return {
        r["project_id"]: RetentionPolicy(overrides=dict(r["overrides"]))
        for r in await cur.fetchall()
    }
