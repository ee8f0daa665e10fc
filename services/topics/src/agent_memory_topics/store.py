"""Reads and writes of the topic tables, in the caller's transaction; SQL in ``sql/queries.sql``."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries

Q = load_queries(__package__ or "")


async def rows(conn: AsyncConnection, name: str, **params: Any) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q[name], params)
        return await cur.fetchall()


async def one(conn: AsyncConnection, name: str, **params: Any) -> dict[str, Any] | None:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q[name], params)
        return await cur.fetchone()


async def run(conn: AsyncConnection, name: str, **params: Any) -> None:
    await conn.execute(Q[name], params)


async def run_many(conn: AsyncConnection, name: str, params: list[dict[str, Any]]) -> None:
    if params:
        async with conn.cursor() as cur:
            await cur.executemany(Q[name], params)
