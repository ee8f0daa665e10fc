"""Reads and writes of supersession (``sql/supersession.sql``), in the caller's transaction.

``record_segment`` is the one call the handler makes per newly summarized segment: it stores
the segment's rule statements and the links they make with the project's others. Everything
is keyed by event ids and inserted with ``ON CONFLICT DO NOTHING``, so a redelivery is a no-op.
A newer statement keeps its ``MAX_PREDECESSORS`` best detected links over all segments (the
rest are pruned as better ones arrive), whatever order its segments were summarized in.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db import load_queries
from agent_memory_summarizer.supersession import (
    MAX_PREDECESSORS,
    Link,
    Statement,
    detect,
    explicit_links,
    statement_of,
)

QUERIES = load_queries(__package__ or "", "sql/supersession.sql")


async def record_segment(
    conn: AsyncConnection, tenant: str, project_id: str, event_ids: Sequence[str]
) -> list[Link]:
    """Store the statements of a segment's events and the links they make; returns the links."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["events_full"], {"tenant": tenant, "event_ids": list(event_ids)})
        events = await cur.fetchall()
    links = explicit_links(events)
    new = [s for e in events if (s := statement_of(e)) is not None]
    if new:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                QUERIES["project_statements"],
                {
                    "tenant": tenant,
                    "project_id": project_id,
                    "words": sorted({w for s in new for w in s.subject}),
                },
            )
            rows = await cur.fetchall()
        known = [Statement(**{**r, "subject": tuple(r["subject"])}) for r in rows]
        links.extend(detect(new, known))
        for s in new:
            await conn.execute(
                QUERIES["insert_statement"],
                {
                    "tenant": tenant,
                    "event_id": s.event_id,
                    "project_id": s.project_id,
                    "session_id": s.session_id,
                    "ts": s.ts,
                    "kind": s.kind,
                    "subject": list(s.subject),
                    "text": s.text,
                    "cue": s.cue,
                },
            )
    for link in links:
        await conn.execute(
            QUERIES["insert_link"],
            {
                "tenant": tenant,
                "older": link.older_event_id,
                "newer": link.newer_event_id,
                "project_id": link.project_id,
                "source": link.source,
                "score": link.score,
                "note": link.note,
            },
        )
    newer = sorted({link.newer_event_id for link in links if link.source == "detected"})
    if newer:  # under the project's lock: no other writer adds links to these at once
        await conn.execute(
            QUERIES["prune_predecessors"],
            {"tenant": tenant, "newer": newer, "keep": MAX_PREDECESSORS},
        )
    return links
