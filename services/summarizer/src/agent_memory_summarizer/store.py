"""Reads and writes of the summarizer; SQL lives in ``sql/queries.sql``.

Every function runs in the caller's transaction (the ConsumerRunner's), so a batch's nodes,
versions, grips and pointers commit together or not at all.
"""

from __future__ import annotations

import hashlib
from datetime import date
from typing import Any

import orjson
from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries
from agent_memory_summarizer.model import SourceEvent

QUERIES = load_queries(__package__ or "")

# First key of the two-key advisory lock: the TOC rollups of a project (others use other ids).
LOCK_CLASS = 0x746F63  # "toc"


def project_lock_key(tenant: str, project_id: str) -> int:
    """Second key: a stable 32-bit signed hash of (tenant, project)."""
    digest = hashlib.blake2b(f"{tenant}\x1f{project_id}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big", signed=True)


async def lock_project(conn: AsyncConnection, tenant: str, project_id: str) -> None:
    await conn.execute(
        QUERIES["lock_project"],
        {"lock_class": LOCK_CLASS, "lock_key": project_lock_key(tenant, project_id)},
    )


async def load_events(
    conn: AsyncConnection, tenant: str, event_ids: list[str]
) -> dict[str, SourceEvent]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["events_by_id"], {"tenant": tenant, "event_ids": event_ids})
        rows = await cur.fetchall()
    return {r["event_id"]: SourceEvent(**r) for r in rows}


async def source_version(conn: AsyncConnection, tenant: str, node_id: str) -> int | None:
    cur = await conn.execute(QUERIES["source_version"], {"tenant": tenant, "node_id": node_id})
    row = await cur.fetchone()
    return int(row[0]) if row and row[0] is not None else None


async def pointer(conn: AsyncConnection, tenant: str, node_id: str) -> dict[str, Any] | None:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["pointer"], {"tenant": tenant, "node_id": node_id})
        return await cur.fetchone()


async def insert_pointers(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    """Pointers of nodes about to get their first version (already present: left alone)."""
    if rows:
        async with conn.cursor() as cur:
            await cur.executemany(QUERIES["insert_pointer"], rows)


async def update_pointer(conn: AsyncConnection, row: dict[str, Any]) -> None:
    await conn.execute(QUERIES["update_pointer"], row)


async def insert_version(conn: AsyncConnection, row: dict[str, Any]) -> None:
    params = dict(row)
    params["bullets"] = orjson.dumps(row["bullets"]).decode()
    await conn.execute(QUERIES["insert_version"], params)


async def insert_grips(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    if rows:
        async with conn.cursor() as cur:
            await cur.executemany(QUERIES["insert_grip"], rows)


async def children_latest(conn: AsyncConnection, tenant: str, node_id: str) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["children_latest"], {"tenant": tenant, "node_id": node_id})
        return await cur.fetchall()


async def versions_by_cause(conn: AsyncConnection, tenant: str, cause: str) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["versions_by_cause"], {"tenant": tenant, "cause": cause})
        return await cur.fetchall()


async def version_row(
    conn: AsyncConnection, tenant: str, node_id: str, version: int
) -> dict[str, Any] | None:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            QUERIES["version_row"], {"tenant": tenant, "node_id": node_id, "version": version}
        )
        return await cur.fetchone()


async def grips_by_id(
    conn: AsyncConnection, tenant: str, grip_ids: list[str]
) -> dict[str, dict[str, Any]]:
    if not grip_ids:
        return {}
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["grips_by_id"], {"tenant": tenant, "grip_ids": grip_ids})
        return {r["grip_id"]: r for r in await cur.fetchall()}


async def pinned_nodes(conn: AsyncConnection, tenant: str, node_ids: list[str]) -> set[str]:
    cur = await conn.execute(QUERIES["pinned_nodes"], {"tenant": tenant, "node_ids": node_ids})
    return {row[0] for row in await cur.fetchall()}


async def llm_tokens_used(conn: AsyncConnection, tenant: str, project_id: str, day: date) -> int:
    cur = await conn.execute(
        QUERIES["llm_tokens_used"], {"tenant": tenant, "project_id": project_id, "day": day}
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def llm_tokens_add(
    conn: AsyncConnection, tenant: str, project_id: str, day: date, tokens: int
) -> None:
    await conn.execute(
        QUERIES["llm_tokens_add"],
        {"tenant": tenant, "project_id": project_id, "day": day, "tokens": tokens},
    )
