"""Reads of the topic graph; SQL in ``sql/topics.sql``. Importance is computed here, at read
time, from the members' salience and end times (never stored, so it never goes stale), as of
the time the request names (``until``, a search's ``now``) or else of the project's own latest
activity: never the wall clock, which made every topic of sessions imported months later worth
nothing (issue 53, point 5).

By user (team mode, docs/team.md): with ``user_id``, only topics with a member segment holding
an event of that user (``events.user_id``, the notion search's filter uses). An ``EXISTS`` per
topic: the member segments' ``event_ids`` probed in ``events`` by its ``(tenant, event_id)`` key,
stopping at the first event of the user, so a topic the user worked on costs a few probes and
one they did not costs one per event of its members. The topic itself (importance, size,
sessions) is shown whole: the filter chooses topics, it does not split them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from psycopg import AsyncConnection

from agent_memory_query.topics.centroids import CentroidCache
from agent_memory_query.topics.queries import rows as _all

_WORD = re.compile(r"[a-z0-9]+")
CENTROIDS = CentroidCache()  # one per process: every search of a scope shares its centroids


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "topic_id": row["topic_id"],
        "project_id": row["project_id"],
        "label": row["label"],
        "keywords": list(row["keywords"]),
        "importance": round(float(row["importance"]), 4),
        "size": int(row["size"]),
        "first_ts": row["first_ts"],
        "last_ts": row["last_ts"],
        "session_ids": [s for s in row["session_ids"] if s],
    }


async def list_topics(
    conn: AsyncConnection,
    tenant: str,
    *,
    project_id: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    half_life_days: float,
    topic_ids: Sequence[str] | None = None,
    user_id: str | None = None,
) -> list[dict[str, Any]]:
    found = await _all(
        conn,
        "list_topics",
        tenant=tenant,
        project_id=project_id,
        since=since,
        asof=until,  # None: each topic as of its project's latest activity (topics.sql)
        limit=limit,
        half_life_days=half_life_days,
        topic_ids=list(topic_ids) if topic_ids is not None else None,
        user_id=user_id,
    )
    return [_summary(r) for r in found]


async def topic(
    conn: AsyncConnection, tenant: str, topic_id: str, half_life_days: float, members: int
) -> dict[str, Any] | None:
    head = await _all(conn, "topic", tenant=tenant, topic_id=topic_id)
    if not head:
        return None
    listed = await list_topics(
        conn,
        tenant,
        project_id=head[0]["project_id"],
        since=None,
        until=None,
        limit=1,
        half_life_days=half_life_days,
        topic_ids=[topic_id],
    )
    base = listed[0] if listed else _empty(head[0])
    rows = await _all(conn, "members", tenant=tenant, topic_id=topic_id, limit=members)
    related = await _all(conn, "related", tenant=tenant, topic_id=topic_id)
    return base | {
        "members": [
            {
                "node_id": r["node_id"],
                "session_id": r["session_id"],
                "title": r["title"],
                "event_ids": list(r["event_ids"]),
                "start_ts": r["start_ts"],
                "end_ts": r["end_ts"],
            }
            for r in rows
        ],
        "related": [
            {"topic_id": r["topic_id"], "label": r["label"], "weight": float(r["weight"])}
            for r in related
        ],
        "parent_ids": list(head[0]["parent_ids"]),
    }


def _empty(row: dict[str, Any]) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "topic_id": row["topic_id"],
        "project_id": row["project_id"],
        "label": row["label"],
        "keywords": list(row["keywords"]),
        "importance": 0.0,
        "size": 0,
        "first_ts": now,
        "last_ts": now,
        "session_ids": [],
    }


async def search(
    conn: AsyncConnection,
    tenant: str,
    project_id: str | None,
    query: str,
    vector: list[float] | None,
    limit: int,
    half_life_days: float,
    user_id: str | None = None,
    asof: datetime | None = None,
) -> list[dict[str, Any]]:
    """Topics by meaning: cosine of the query vector to each centroid; without a vector (the
    embedder is not loaded), the share of the query's words found in label and keywords. With
    ``user_id``, among the topics of that user only. The centroids come from ``CENTROIDS``,
    which reads only the topics that changed since the last search of the same scope. Their
    importance is as of ``asof`` (a search's ``now``), else of each project's latest activity."""
    scope = await CENTROIDS.scope(conn, tenant, project_id)
    if not scope.topics:
        return []
    ids = scope.ids
    if vector is not None:
        import numpy as np  # here, not at the service's start (see topics.centroids)

        q = np.asarray(vector, dtype=np.float32)
        q /= np.linalg.norm(q) or 1.0
        scores = [float(s) for s in scope.matrix(len(q)) @ q]
    else:
        words = set(_WORD.findall(query.lower()))
        scores = [
            len(words & set(_WORD.findall(" ".join([t.label, *t.keywords]).lower())))
            / max(len(words), 1)
            for t in scope.topics
        ]
    if user_id is not None:
        rows = await _all(
            conn, "user_topic_ids", tenant=tenant, project_id=project_id, user_id=user_id
        )
        theirs = {r["topic_id"] for r in rows}
        scores = [s if t in theirs else 0.0 for s, t in zip(scores, ids, strict=True)]
    ranked = sorted(zip(scores, ids, strict=True), reverse=True)
    ranked = [(s, t) for s, t in ranked if s > 0][:limit]
    if not ranked:
        return []
    listed = await list_topics(
        conn,
        tenant,
        project_id=project_id,
        since=None,
        until=asof,
        limit=len(ranked),
        half_life_days=half_life_days,
        topic_ids=[t for _, t in ranked],
    )
    by_id = {t["topic_id"]: t for t in listed}
    return [by_id[t] | {"score": round(s, 4)} for s, t in ranked if t in by_id]
