"""Reads and writes of supersession (``sql/supersession.sql``), in the caller's transaction.

``record_segment`` is the one call the handler makes per newly summarized segment: it stores
the segment's rule statements and the links they make with the project's others. Everything
is keyed by event ids and inserted with ``ON CONFLICT DO NOTHING``, so a redelivery is a no-op.
A newer statement keeps its ``MAX_PREDECESSORS`` best detected links over all segments (the
rest are pruned as better ones arrive), whatever order its segments were summarized in.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db.postgres import load_queries
from agent_memory_summarizer.supersession import (
    MAX_PREDECESSORS,
    MIN_SHARED,
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
        words = {w for s in new for w in s.subject}
        async with conn.cursor() as tuples:  # thousands of rows at scale: no dict per row
            await tuples.execute(
                QUERIES["project_statements"],
                {"tenant": tenant, "project_id": project_id, "words": sorted(words)},
            )
            rows = await tuples.fetchall()
        # ``detect`` passes over a statement sharing fewer than MIN_SHARED words with all the
        # new ones together, and most rows do (three in five with the history of a
        # 1,000,000-event store): they are dropped here, before a statement is made of them
        known: list[Statement] = []
        for event_id, project, session, ts, kind, subject, text, cue in rows:
            subject_words = subject.split()
            if len(words.intersection(subject_words)) >= MIN_SHARED:
                known.append(
                    Statement(event_id, project, session, ts, kind, tuple(subject_words), text, cue)
                )
        pool = {s.event_id: s for s in [*known, *new]}
        links.extend(await _among_the_best(conn, tenant, detect(new, known), pool))
        async with conn.cursor() as cur:
            await cur.executemany(
                QUERIES["insert_statement"],
                [
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
                    }
                    for s in new
                ],
            )
    if links:
        async with conn.cursor() as cur:
            await cur.executemany(
                QUERIES["insert_link"],
                [
                    {
                        "tenant": tenant,
                        "older": link.older_event_id,
                        "newer": link.newer_event_id,
                        "project_id": link.project_id,
                        "source": link.source,
                        "score": link.score,
                        "note": link.note,
                    }
                    for link in links
                ],
            )
    newer = sorted({link.newer_event_id for link in links if link.source == "detected"})
    if newer:  # under the project's lock: no other writer adds links to these at once
        await conn.execute(
            QUERIES["prune_predecessors"],
            {"tenant": tenant, "newer": newer, "keep": MAX_PREDECESSORS},
        )
    return links


def _rank(score: float, older_ts: datetime, older_event_id: str) -> tuple[float, float, str]:
    """The order ``prune_predecessors`` keeps: score (as Postgres's ``real`` holds it), then
    the most recent older statement, then its id."""
    stored = struct.unpack("f", struct.pack("f", score))[0]
    return (-stored, -older_ts.timestamp(), older_event_id)


async def _among_the_best(
    conn: AsyncConnection,
    tenant: str,
    candidates: Sequence[Link],
    pool: Mapping[str, Statement],
) -> list[Link]:
    """The detected candidates that would be among their newer statement's
    ``MAX_PREDECESSORS`` best with the links it has now. The rest would be written only to be
    pruned: a statement summarized early is offered candidates by every later segment of
    older statements (on the 1M bench store, hundreds per segment, one insert each)."""
    if not candidates:
        return []
    newer = sorted({c.newer_event_id for c in candidates})
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["kept_predecessors"], {"tenant": tenant, "newer": newer})
        rows = await cur.fetchall()
    ranked: dict[str, list[tuple[tuple[float, float, str], str, Link | None]]] = defaultdict(list)
    for r in rows:  # stored first: a candidate equal to a stored link is not written again
        key = _rank(r["score"], r["older_ts"], r["older_event_id"])
        ranked[r["newer_event_id"]].append((key, r["older_event_id"], None))
    for c in candidates:
        key = _rank(c.score, pool[c.older_event_id].ts, c.older_event_id)
        ranked[c.newer_event_id].append((key, c.older_event_id, c))
    out: list[Link] = []
    for items in ranked.values():
        items.sort(key=lambda item: item[0])  # stable
        seen: set[str] = set()
        for _, older, cand in items:
            if older in seen:
                continue
            seen.add(older)
            if cand is not None:
                out.append(cand)
            if len(seen) == MAX_PREDECESSORS:
                break
    return out
