"""Reads and writes of ``/v1/erasures`` and its coordinator; SQL in ``sql/erasures.sql``.

The query service reads every store already (it answers every read route); here it also writes
the audit row, the tombstones and the needles of an erasure, and deletes its own data (episodes
and the playbook) as one participant among the others.
"""

from __future__ import annotations

from typing import Any

import orjson
from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries
from agent_memory_common.redaction.engine import default_redactor

Q = load_queries(__package__ or "", "sql/erasures.sql")
NEEDLES_PER_ERASURE = 25
# From this many tombstones the planner's statistics of erased_events are refreshed in the
# request (sql/erasures.sql, analyze_tombstones); below it they are near enough.
ANALYZE_FROM = 1000


def scope_params(tenant: str, project_id: str, scope: dict[str, Any]) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "project_id": project_id,
        "session_id": scope.get("session_id"),
        "agent_id": scope.get("agent_id"),
        "user_id": scope.get("user_id"),
        "event_ids": scope.get("event_ids"),
        "project": bool(scope.get("project")),
    }


async def _one(conn: AsyncConnection, name: str, params: dict[str, Any]) -> Any:
    cur = await conn.execute(Q[name], params)
    row = await cur.fetchone()
    return row[0] if row else None


async def _rows(conn: AsyncConnection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q[name], params)
        return await cur.fetchall()


async def redactable_ids(
    conn: AsyncConnection, tenant: str, project_id: str, since: str, page: int = 2000
) -> list[str]:
    """Events since ``since`` whose text the current redactor changes: they hold a secret that
    was not caught when they were recorded (a rule added since)."""
    redactor, after = default_redactor(), 0
    found: list[str] = []
    params = {"tenant": tenant, "project_id": project_id, "since": since, "limit": page}
    while True:
        rows = await _rows(conn, "events_since_page", {**params, "after": after})
        if not rows:
            return found
        after = int(rows[-1]["seq"])
        found += [r["event_id"] for r in rows if redactor.redact(r["text"])[0] != r["text"]]


async def resolved(
    conn: AsyncConnection, tenant: str, project_id: str, scope: dict[str, Any]
) -> dict[str, Any]:
    """The parameters of a scope; ``redactable_since`` becomes the event ids it selects now."""
    params = scope_params(tenant, project_id, scope)
    if scope.get("redactable_since"):
        since = scope["redactable_since"]
        params["event_ids"] = await redactable_ids(conn, tenant, project_id, since)
    return params


async def create(
    conn: AsyncConnection,
    erasure_id: str,
    tenant: str,
    project_id: str,
    scope: dict[str, Any],
    requested_by: str,
) -> int:
    """The audit row, the tombstones, the grips to drop and the needles; returns the events."""
    params = {**await resolved(conn, tenant, project_id, scope), "erasure_id": erasure_id}
    await conn.execute(
        Q["insert_erasure"],
        {**params, "scope": orjson.dumps(scope).decode(), "requested_by": requested_by},
    )
    tombstoned = (await conn.execute(Q["tombstone_scope"], params)).rowcount
    await conn.execute(Q["tombstone_duplicates"], params)
    if tombstoned >= ANALYZE_FROM:
        await conn.execute(Q["analyze_tombstones"])
    await conn.execute(Q["snapshot_grips"], params)
    await conn.execute(Q["snapshot_needles"], {**params, "limit": NEEDLES_PER_ERASURE})
    return int(await _one(conn, "set_event_count", params) or 0)


async def preview(
    conn: AsyncConnection, tenant: str, project_id: str, scope: dict[str, Any]
) -> tuple[dict[str, int], list[str]]:
    params = await resolved(conn, tenant, project_id, scope)
    ev = (await _rows(conn, "preview_events", params))[0]
    derived = (await _rows(conn, "preview_derived", params))[0]
    counts = {
        "events": int(ev["events"]),
        "sessions": int(ev["sessions"]),
        **{k: int(v) for k, v in derived.items()},
        "episodes": int(await _one(conn, "preview_episodes", params) or 0),
    }
    return counts, list(ev["some_sessions"] or [])


async def get(conn: AsyncConnection, tenant: str, erasure_id: str) -> dict[str, Any] | None:
    rows = await _rows(conn, "get_erasure", {"tenant": tenant, "erasure_id": erasure_id})
    return await receipt(conn, rows[0]) if rows else None


async def listing(
    conn: AsyncConnection, tenant: str, project_id: str | None, limit: int
) -> list[dict[str, Any]]:
    params = {"tenant": tenant, "project_id": project_id, "limit": limit}
    return [await receipt(conn, row) for row in await _rows(conn, "list_erasures", params)]


async def reports(conn: AsyncConnection, erasure_id: str) -> dict[str, dict[str, int]]:
    rows = await _rows(conn, "reports", {"erasure_id": erasure_id})
    return {r["participant"]: dict(r["counts"]) for r in rows}


async def participants(conn: AsyncConnection) -> list[str]:
    return [r["name"] for r in await _rows(conn, "participants", {})]


async def receipt(conn: AsyncConnection, row: dict[str, Any]) -> dict[str, Any]:
    """The receipt: counts summed over the participants' reports and the stream purge."""
    reported = await reports(conn, row["erasure_id"])
    counts: dict[str, int] = {}
    for part in reported.values():
        for store, n in part.items():
            counts[store] = counts.get(store, 0) + int(n)
    for stream, n in (row["streams"] or {}).items():
        counts[f"stream_{stream.lower()}"] = int(n)
    waiting = [p for p in await participants(conn) if p not in reported]
    return {
        "erasure_id": row["erasure_id"],
        "project_id": row["project_id"],
        "scope": row["scope"],
        "requested_by": row["requested_by"],
        "requested_at": row["requested_at"],
        "status": row["status"],
        "verified": row["status"] == "verified",
        "verified_at": row["verified_at"],
        "events": row["event_count"],
        "counts": counts,
        "participants": reported,
        "waiting_for": waiting,
        "findings": dict(row["findings"] or {}),
    }


# --- the coordinator's steps ---------------------------------------------------------------------


async def open_erasures(conn: AsyncConnection) -> list[dict[str, Any]]:
    return await _rows(conn, "open_erasures", {})


async def mark(conn: AsyncConnection, name: str, erasure_id: str, **values: Any) -> None:
    await conn.execute(Q[name], {"erasure_id": erasure_id, **values})


async def erased_ids(conn: AsyncConnection, erasure_id: str) -> set[str]:
    return {r["event_id"] for r in await _rows(conn, "erased_ids", {"erasure_id": erasure_id})}


async def needles(conn: AsyncConnection, erasure_id: str) -> list[str]:
    return [r["needle"] for r in await _rows(conn, "needles", {"erasure_id": erasure_id})]


async def toc_version_keys(
    conn: AsyncConnection, tenant: str, project_id: str
) -> set[tuple[str, int]]:
    rows = await _rows(conn, "toc_version_keys", {"tenant": tenant, "project_id": project_id})
    return {(r["node_id"], int(r["version"])) for r in rows}


CHECKS = {
    "events": "check_events",
    "segments": "check_segments",
    "segment_versions": "check_segment_versions",
    "toc_versions": "check_toc",
    "grips": "check_grips",
    "episodes": "check_episodes",
    "supersession": "check_supersession",
    "topic_segments": "check_topic_segments",
}


async def check_postgres(
    conn: AsyncConnection, erasure_id: str, tenant: str, project_id: str, scope: dict[str, Any]
) -> dict[str, int]:
    """What each Postgres store still holds of the erasure (ids or needles)."""
    params = {**scope_params(tenant, project_id, scope), "erasure_id": erasure_id}
    found = {store: int(await _one(conn, q, params) or 0) for store, q in CHECKS.items()}
    if await _one(conn, "vectors_present", {}):
        found["vector_entries"] = int(await _one(conn, "check_vectors", params) or 0)
    return found


async def erase_owned(
    conn: AsyncConnection, tenant: str, project_id: str, scope: dict[str, Any]
) -> dict[str, int]:
    """The query service's own data: episodes (with their actions), playbook lessons, and
    what recall injected into the project or session (``recall_usage``)."""
    params = scope_params(tenant, project_id, scope)
    actions = (await conn.execute(Q["erase_episode_actions"], params)).rowcount
    episodes = (await conn.execute(Q["erase_episodes"], params)).rowcount
    playbook = (await conn.execute(Q["erase_playbook"], params)).rowcount
    await conn.execute(Q["erase_playbook_submissions"], params)
    usage = (await conn.execute(Q["erase_recall_usage"], params)).rowcount
    return {
        "episodes": episodes,
        "episode_actions": actions,
        "playbook_entries": playbook,
        "recall_usage": usage,
    }
