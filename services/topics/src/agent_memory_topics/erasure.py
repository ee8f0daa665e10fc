"""The topics service's part of an erasure: the segments it keeps and the themes built on them.

``topic_segments`` holds a copy of each segment's title, bullets and vector, so the segments
that cite an erased event are deleted. A topic that had such a member is deleted as well (its
label, keywords and centroid were computed from the erased text; members and edges go with
it by cascade), and the rest of its members are marked pending, so the next re-cluster gives
them a theme again, labelled from what is left. The summarizer's new versions of those
segments (without the erased events) arrive on the TOC subject and are taken in as usual.
"""

from __future__ import annotations

from psycopg import AsyncConnection

from agent_memory_common.bus.erasure import ErasureResult
from agent_memory_common.contracts.messages import ErasureRequest

AFFECTED = """
SELECT s.node_id FROM topic_segments s
WHERE s.tenant = %(tenant)s AND s.project_id = %(project_id)s
  AND EXISTS (
      SELECT 1 FROM unnest(s.event_ids) AS u (event_id)
      JOIN erased_events x ON x.tenant = s.tenant AND x.event_id = u.event_id
      WHERE x.erasure_id = %(erasure_id)s
  )
"""
TOPICS_OF = """
SELECT DISTINCT topic_id FROM topic_members
WHERE tenant = %(tenant)s AND node_id = ANY(%(node_ids)s::text[])
"""
REQUEUE = """
UPDATE topic_segments s SET pending = true
FROM topic_members m
WHERE m.tenant = %(tenant)s AND m.topic_id = ANY(%(topic_ids)s::text[])
  AND s.tenant = m.tenant AND s.node_id = m.node_id
"""
DELETE_TOPICS = "DELETE FROM topics WHERE tenant = %(tenant)s AND topic_id = ANY(%(topic_ids)s)"
DELETE_SEGMENTS = (
    "DELETE FROM topic_segments WHERE tenant = %(tenant)s AND node_id = ANY(%(node_ids)s)"
)


async def erase(conn: AsyncConnection, request: ErasureRequest) -> ErasureResult:
    params = {
        "tenant": request.tenant,
        "project_id": request.project_id,
        "erasure_id": request.erasure_id,
    }
    node_ids = [r[0] for r in await (await conn.execute(AFFECTED, params)).fetchall()]
    if not node_ids:
        return ErasureResult({"topic_segments": 0, "topics": 0})
    ids = {**params, "node_ids": node_ids}
    topic_ids = [r[0] for r in await (await conn.execute(TOPICS_OF, ids)).fetchall()]
    both = {**ids, "topic_ids": topic_ids}
    await conn.execute(REQUEUE, both)
    topics = (await conn.execute(DELETE_TOPICS, both)).rowcount
    segments = (await conn.execute(DELETE_SEGMENTS, both)).rowcount
    return ErasureResult({"topic_segments": segments, "topics": topics})
