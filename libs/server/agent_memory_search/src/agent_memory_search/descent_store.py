"""Postgres side of the descent (``brainstem.descent``): the events under summaries whose detail
the indexes have forgotten, read from the system of record.

One statement per search: the opened nodes' spans (a segment: its session from its first to its
last event; a calendar node: its project over its bucket), and the period a question names (or
the whole project, ``brainstem.descent.ALL_TIME``, when it names none), and
in them the events whose index entries the pruner removed (``pruned_event_words``, written with
the pruning record): those no tier can find any more. Of those, the ones that hold any of the
query's words, best first by Postgres' own ``ts_rank_cd`` over the words the pruner stored
(tokenizing each event's text here instead was most of the statement's time), and the ones the
nodes' bullets cite (their grips' events), up to ``limit`` each. Nothing is read for a node
whose events are all still indexed, so a store the pruner never touched gets nothing back. Each
read has a statement time limit: the descent has a budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection, sql
from psycopg.rows import dict_row

from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.memory import MARKER_TYPES, RUNTIME_TYPE
from agent_memory_retrieval.docs import Hit, SearchFilter
from agent_memory_retrieval.indexing.sources import event_doc
from agent_memory_search.store import scan_terms

# The opened spans: each node's bucket (a segment: its session, first to last event inclusive),
# then the period asked about (no node).
_OPENED = sql.SQL(
    "SELECT n.node_id, n.project_id, n.start_ts AS since,"
    " CASE WHEN n.level = 'segment' THEN n.end_ts + interval '1 millisecond'"
    " ELSE n.end_ts END AS until,"
    " CASE WHEN n.level = 'segment' THEN v.session_id END AS session_id,"
    " array_position(%(node_ids)s::text[], n.node_id) AS pos"
    " FROM toc_nodes n JOIN toc_node_versions v"
    " ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version"
    " WHERE n.tenant = %(tenant)s AND n.node_id = ANY(%(node_ids)s::text[])"
    " UNION ALL"
    " SELECT '', %(project_id)s::text, %(since)s::timestamptz, %(until)s::timestamptz, NULL,"
    " 1000000 WHERE %(since)s::timestamptz IS NOT NULL"
)
_NAMES = (
    "tenant", "event_id", "ts", "project_id", "agent_id", "session_id", "role", "type", "text",
    "metadata",
)  # fmt: skip
_COLUMNS = sql.SQL(", ").join(sql.SQL("e.") + sql.Identifier(n) for n in _NAMES)
# what each part returns: the event, the node it was found under and the vector the pruner
# kept of it (not its words)
_RETURNED = sql.SQL(", ").join(
    sql.SQL("u.") + sql.Identifier(n) for n in ("opened_id", "pos", *_NAMES, "vector")
)
# Of each event returned, the segment of its session whose span holds it (the latest by
# ordinal: an overlap event opens the next one), through the unique (tenant, project,
# session, ordinal) index; read for the events returned only, not for every one in the spans.
_SEGMENT = sql.SQL(
    "LEFT JOIN LATERAL (SELECT s.segment_id FROM segments s"
    " WHERE s.tenant = p.tenant AND s.project_id = p.project_id"
    " AND s.session_id = p.session_id AND s.start_ts <= p.ts AND s.end_ts >= p.ts"
    " AND s.status = 'closed' ORDER BY s.ordinal DESC LIMIT 1) seg ON true"
)
# An event whose index entries the pruner removed (either index: both keep an event alike), with
# the words it stored then (its first 2,000 characters, tokenized: migration 0025).
_PRUNED = sql.SQL(
    "events e JOIN pruned_event_words w ON w.tenant = e.tenant AND w.event_id = e.event_id"
)
# What the indexes never held (``sources.indexed``, as ``store.scan_events`` leaves out): session
# markers, what the runtime wrote and an edit's "applied"; and a duplicate, found through its
# original only.
_INDEXED = sql.SQL(
    "e.type NOT IN ({markers})"
    " AND NOT (e.type = 'tool_result' AND e.metadata->>'tool_kind' IN ('edit', 'write')"
    " AND rtrim(e.text) LIKE '%%: applied' AND position(E'\\n' IN btrim(e.text)) = 0)"
    " AND NOT EXISTS (SELECT 1 FROM event_duplicates AS d"
    " WHERE d.tenant = e.tenant AND d.event_id = e.event_id)"
).format(markers=sql.SQL(", ").join(sql.Literal(t) for t in sorted(MARKER_TYPES | {RUNTIME_TYPE})))


async def pruned_events(
    conn: AsyncConnection,
    flt: SearchFilter,
    node_ids: Sequence[str],
    period: tuple[datetime, datetime] | None,
    cited: Sequence[str],
    query: str,
    limit: int,
    timeout_ms: int,
) -> list[tuple[str, Hit, bytes | None, str | None]]:
    """(the node id it was found under, '' for the period; the event; the vector the pruner
    kept of it, packed, or None; the id of the segment that holds it, or None) for the pruned
    events under ``node_ids`` (TOC node ids, not
    document ids) and in ``period``: those matching a word of ``query`` (best first) and those
    of ``cited`` (event ids), ``limit`` of each."""
    if not node_ids and period is None:
        return []
    params: dict[str, Any] = {
        "tenant": flt.tenant,
        "node_ids": list(node_ids),
        "project_id": flt.project_id,
        "since": period[0] if period else None,
        "until": period[1] if period else None,
        "cited": list(cited),
        "limit": limit,
    }
    inner = [
        sql.SQL("e.tenant = %(tenant)s"),
        # one pass over the time the opened spans cover (nested ones, a week in its month in
        # its year, were read once each: 876 rows for 292 events on bench-real's aged store)
        sql.SQL("e.ts >= (SELECT min(since) FROM opened)"),
        sql.SQL("e.ts < (SELECT max(until) FROM opened)"),
        _INDEXED,
    ]
    for name in ("project_id", "agent_id", "session_id"):
        if getattr(flt, name) is not None:
            params[f"f_{name}"] = getattr(flt, name)
            inner.append(
                sql.SQL("e.{} = %({})s").format(sql.Identifier(name), sql.SQL(f"f_{name}"))
            )
    # each event once, under the first opened span (by position) that holds it
    under = sql.SQL(
        "WITH opened AS ({opened}),"
        " under AS (SELECT f.opened_id, f.pos, {cols}, w.words, w.vector FROM {pruned}"
        " CROSS JOIN LATERAL (SELECT o.node_id AS opened_id, o.pos FROM opened o"
        " WHERE (o.project_id IS NULL OR e.project_id = o.project_id)"
        " AND e.ts >= o.since AND e.ts < o.until"
        " AND (o.session_id IS NULL OR e.session_id = o.session_id)"
        " ORDER BY o.pos LIMIT 1) f"
        " WHERE {inner})"
    ).format(opened=_OPENED, cols=_COLUMNS, pruned=_PRUNED, inner=sql.SQL(" AND ").join(inner))
    parts = [
        sql.SQL(
            "(SELECT {returned}, 0.0::float8 AS rank FROM under u"
            " WHERE u.event_id = ANY(%(cited)s::text[]) ORDER BY u.pos, u.ts LIMIT %(limit)s)"
        ).format(returned=_RETURNED)
    ]
    terms = scan_terms(query)
    if terms:
        params["tsq"] = " | ".join(terms)
        parts.append(
            sql.SQL(
                "(SELECT {returned}, ts_rank_cd(u.words, q)::float8 AS rank"
                " FROM under u, to_tsquery('english', %(tsq)s) AS q"
                " WHERE u.words @@ q"
                " ORDER BY rank DESC, u.pos, u.ts LIMIT %(limit)s)"
            ).format(returned=_RETURNED)
        )
    stmt = sql.SQL("{under} SELECT p.*, seg.segment_id FROM ({parts}) p {segment}").format(
        under=under, parts=sql.SQL(" UNION ALL ").join(parts), segment=_SEGMENT
    )
    async with conn.transaction():
        await conn.execute(sql.SQL("SET LOCAL statement_timeout = {}").format(max(1, timeout_ms)))
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(stmt, params)
            found = await cur.fetchall()
        firsts: dict[str, dict[str, Any]] = {}
        for row in found:  # an event both cited and matching: its first row
            firsts.setdefault(row["event_id"], row)
        rows = list(firsts.values())
    out: list[tuple[str, Hit, bytes | None, str | None]] = []
    for row in rows:
        doc = event_doc(Event.from_row(row))
        hit = Hit(id=doc.id, score=float(row["rank"]), doc=doc)
        vector = row["vector"]
        segment = row["segment_id"]
        out.append(
            (
                str(row["opened_id"]),
                hit,
                bytes(vector) if vector is not None else None,
                str(segment) if segment is not None else None,
            )
        )
    return out


async def has_pruned(conn: AsyncConnection, tenant: str, project_id: str | None) -> bool:
    """Whether the pruner removed any event's index entry in the tenant (or one project)."""
    cur = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM index_pruned WHERE tenant = %(tenant)s"
        " AND (%(project_id)s::text IS NULL OR project_id = %(project_id)s)"
        " AND index_name IN ('bm25', 'vector') AND level = 'event')",
        {"tenant": tenant, "project_id": project_id},
    )
    row = await cur.fetchone()
    return bool(row and row[0])
