"""Reads and writes of ``recall_settings`` and ``recall_usage`` (migration 0027); SQL in
``sql/injection.sql``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries
from agent_memory_query.sharing.policy import BOUNDS_SQL, ReadBounds

Q = {
    name: query.replace("{bounds}", BOUNDS_SQL)
    for name, query in load_queries(__package__ or "", "sql/injection.sql").items()
}

UsageKey = tuple[str, str, date, str, str]  # tenant, project, UTC day, kind, session ('' none)


async def _rows(conn: AsyncConnection[Any], name: str, params: dict[str, Any]) -> list[Any]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q[name], params)
        return await cur.fetchall()


async def switch(
    conn: AsyncConnection[Any], tenant: str, project_id: str
) -> tuple[str, datetime | None]:
    """The project's injection (``on`` without a row) and when it was set (``None``: never)."""
    rows = await _rows(conn, "switch", {"tenant": tenant, "project_id": project_id})
    if not rows:
        return "on", None
    return str(rows[0]["injection"]), rows[0]["updated_at"]


async def set_switch(
    conn: AsyncConnection[Any], tenant: str, project_id: str, injection: str
) -> tuple[str, datetime]:
    params = {"tenant": tenant, "project_id": project_id, "injection": injection}
    row = (await _rows(conn, "set_switch", params))[0]
    return str(row["injection"]), row["updated_at"]


async def add_usage(
    conn: AsyncConnection[Any], batch: Sequence[tuple[UsageKey, tuple[int, int, int, datetime]]]
) -> None:
    """Add (answers, given, tokens, last answer) to each key's row, in one statement."""
    rows = sorted(batch, key=lambda item: item[0])
    await conn.execute(
        Q["add_usage"],
        {
            "tenants": [k[0] for k, _ in rows],
            "projects": [k[1] for k, _ in rows],
            "days": [k[2] for k, _ in rows],
            "kinds": [k[3] for k, _ in rows],
            "sessions": [k[4] for k, _ in rows],
            "answers": [v[0] for _, v in rows],
            "given": [v[1] for _, v in rows],
            "tokens": [v[2] for _, v in rows],
            "last_at": [v[3] for _, v in rows],
        },
    )


async def project_days(
    conn: AsyncConnection[Any], tenant: str, project_id: str, since: date
) -> list[dict[str, Any]]:
    """(day, kind, answers, given, tokens) of the project since ``since``."""
    params = {"tenant": tenant, "project_id": project_id, "since": since}
    return await _rows(conn, "project_days", params)


async def top_sessions(
    conn: AsyncConnection[Any],
    tenant: str,
    project_id: str,
    since: date,
    bounds: ReadBounds,
    limit: int,
) -> list[dict[str, Any]]:
    params = {
        "tenant": tenant,
        "project_id": project_id,
        "since": since,
        "limit": limit,
        **bounds.params,
    }
    return await _rows(conn, "top_sessions", params)


async def tenant_days(
    conn: AsyncConnection[Any], tenant: str, projects: list[str] | None, since: date
) -> list[dict[str, Any]]:
    params = {"tenant": tenant, "projects": projects, "since": since}
    return await _rows(conn, "tenant_days", params)


async def tenant_switches(
    conn: AsyncConnection[Any], tenant: str, projects: list[str] | None
) -> list[dict[str, Any]]:
    return await _rows(conn, "tenant_switches", {"tenant": tenant, "projects": projects})
