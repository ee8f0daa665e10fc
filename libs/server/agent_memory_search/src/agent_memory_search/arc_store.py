"""Postgres side of the fix arc: what a session said after a problem was reported.

A question about a fix is asked in the words of the problem ("the dev server stopped reloading
my changes"), and those words match the moment the problem was reported far better than the
moment it was solved ("Fixed: the watcher follows symlinked folders"). The cause and the fix
come later in the same session; ``following_messages`` reads, for each reported moment, the
next events of its session (tool calls and outputs counted, so the window is a stretch of
work) and returns the messages among them that may state a cause or a fix. The brainstem
keeps those that do (``arcs.states_resolution``). Asked for the change itself, a stated fix
leads back to the edit made last before it (``edits_before``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection, sql
from psycopg.rows import dict_row

from agent_memory_common.contracts.event import Event
from agent_memory_retrieval.docs import Hit, SearchFilter
from agent_memory_retrieval.indexing.sources import event_doc
from agent_memory_search.event_scope import event_conditions

# Words without which a message cannot state a cause or a fix: a looser superset of
# ``arcs.RESOLUTION`` (tested), so only those messages leave Postgres, not the pasted logs and
# long replies around them.
_MAY_RESOLVE = (
    r"(fix|cause|solved|resolved|culprit|the\s+(bug|problem|issue)|(works|passes|green)\s+again)"
)


async def following_messages(
    conn: AsyncConnection, flt: SearchFilter, event_ids: Sequence[str], window: int
) -> dict[str, list[Hit]]:
    """Per event id: the messages among the next ``window`` events of its session inside
    ``flt`` that may state a cause or a fix, in the order they were said. Duplicates are left
    out (they are found through their originals); an id not stored maps to nothing."""
    if not event_ids or window <= 0:
        return {}
    if flt.types is not None and "event" not in flt.types:
        return {}
    params: dict[str, Any] = {"ids": list(dict.fromkeys(event_ids)), "window": window}
    params["may_resolve"] = _MAY_RESOLVE
    inner = event_conditions(flt, params)  # unqualified: the inner events (the later ones)
    stmt = sql.SQL(
        "SELECT s.event_id AS source_id, f.tenant, f.event_id, f.ts, f.project_id, f.agent_id,"
        " f.session_id, f.role, f.type, f.text, f.metadata"
        " FROM events AS s CROSS JOIN LATERAL ("
        "  SELECT tenant, event_id, ts, seq, project_id, agent_id, session_id, role, type,"
        "  text, metadata FROM events"
        "  WHERE {inner} AND session_id = s.session_id AND (ts, seq) > (s.ts, s.seq)"
        "  ORDER BY ts, seq LIMIT %(window)s"
        " ) AS f"
        " WHERE s.tenant = %(tenant)s AND s.event_id = ANY(%(ids)s::text[])"
        " AND f.type = 'message' AND f.text ~* %(may_resolve)s"
        " AND NOT EXISTS (SELECT 1 FROM event_duplicates AS d"
        "  WHERE d.tenant = f.tenant AND d.event_id = f.event_id)"
        " ORDER BY s.event_id, f.ts, f.seq"
    ).format(inner=sql.SQL(" AND ").join(inner))
    found: dict[str, list[Hit]] = {}
    for source_id, hit in await _hits(conn, stmt, params):
        found.setdefault(source_id, []).append(hit)
    return found


async def edits_before(
    conn: AsyncConnection, flt: SearchFilter, event_ids: Sequence[str], window: int
) -> dict[str, Hit]:
    """Per event id: the edit made last (a tool's call that edits or writes a file) among the
    ``window`` events of its session before it, inside ``flt``: after a stated fix, the change
    that made it (the edits before it were attempts). An id with no such edit maps to nothing."""
    if not event_ids or window <= 0:
        return {}
    if flt.types is not None and "event" not in flt.types:
        return {}
    params: dict[str, Any] = {"ids": list(dict.fromkeys(event_ids)), "window": window}
    inner = event_conditions(flt, params)
    stmt = sql.SQL(
        "SELECT s.event_id AS source_id, f.tenant, f.event_id, f.ts, f.project_id, f.agent_id,"
        " f.session_id, f.role, f.type, f.text, f.metadata"
        " FROM events AS s CROSS JOIN LATERAL ("
        "  SELECT * FROM ("
        "   SELECT tenant, event_id, ts, seq, project_id, agent_id, session_id, role, type,"
        "   text, metadata FROM events"
        "   WHERE {inner} AND session_id = s.session_id AND (ts, seq) < (s.ts, s.seq)"
        "   ORDER BY ts DESC, seq DESC LIMIT %(window)s"
        "  ) AS w WHERE w.type = 'tool_call' AND w.metadata->>'tool_kind' IN ('edit', 'write')"
        "  AND NOT EXISTS (SELECT 1 FROM event_duplicates AS d"
        "   WHERE d.tenant = w.tenant AND d.event_id = w.event_id)"
        "  ORDER BY w.ts DESC, w.seq DESC LIMIT 1"
        " ) AS f"
        " WHERE s.tenant = %(tenant)s AND s.event_id = ANY(%(ids)s::text[])"
    ).format(inner=sql.SQL(" AND ").join(inner))
    return dict(await _hits(conn, stmt, params))


async def _hits(
    conn: AsyncConnection, stmt: sql.Composed, params: dict[str, Any]
) -> list[tuple[str, Hit]]:
    """Each row as (the event id it was read for, the row's event as a hit)."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(stmt, params)
        rows = await cur.fetchall()
    out: list[tuple[str, Hit]] = []
    for row in rows:
        doc = event_doc(Event.from_row(row))
        out.append((row["source_id"], Hit(id=doc.id, score=0.0, doc=doc)))
    return out
