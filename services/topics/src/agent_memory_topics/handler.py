"""One batch of TOC node versions: segment summaries in, vectors stored, nearest topic joined.

Only segment nodes matter (the calendar levels are roll-ups of them). Idempotent on the node:
a version not above the one stored is a redelivery or a pin's republication (only its salience
is taken); a newer version is re-embedded and re-assigned; an empty one (a retracted segment)
leaves the material and its topic. All writes happen in the runner's transaction, so a kill -9
before the ack replays the batch onto the same rows.

A new segment joins the nearest topic of its project at once when its cosine to the centroid
reaches ``assign_similarity``, else it stays unassigned until the next full re-cluster (which
``recluster`` starts when enough new material arrived).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.bus.consumer import Publication
from agent_memory_common.contracts.messages import TocBullet, TocNodeMessage
from agent_memory_common.core.logs import get_logger
from agent_memory_retrieval.ports import Embedder
from agent_memory_topics import store
from agent_memory_topics.clustering import nearest, unit

log = get_logger(__name__)


def segment_text(title: str, bullets: Sequence[TocBullet] | Sequence[dict[str, Any]]) -> str:
    """What a segment is clustered and labelled by: its title and bullets, one per line."""
    lines = [title]
    for b in bullets:
        lines.append(b.text if isinstance(b, TocBullet) else str(b.get("text", "")))
    return "\n".join(line for line in lines if line.strip())


def material(m: TocNodeMessage, vector: list[float]) -> dict[str, Any]:
    return {
        "tenant": m.tenant,
        "node_id": m.node_id,
        "project_id": m.project_id,
        "node_version": m.version,
        "session_id": m.session_id or "",
        "title": m.title,
        "text": segment_text(m.title, m.bullets),
        "event_ids": list(m.event_ids or ()),
        "salience": m.salience,
        "start_ts": m.start_ts,
        "end_ts": m.end_ts,
        "embedding": vector,
    }


async def assign(
    conn: AsyncConnection,
    tenant: str,
    project_id: str,
    node_id: str,
    vector: list[float],
    min_similarity: float,
    cache: dict[tuple[str, str], tuple[list[str], np.ndarray[Any, Any]]],
) -> str | None:
    """Join the nearest topic of the project if close enough; the topic id, or None."""
    key = (tenant, project_id)
    if key not in cache:
        found = await store.rows(conn, "project_centroids", tenant=tenant, project_id=project_id)
        ids = [r["topic_id"] for r in found]
        cents = np.asarray([r["centroid"] for r in found], dtype=np.float32)
        cache[key] = (ids, cents)
    ids, cents = cache[key]
    if not ids:
        await store.run(conn, "unassign_member", tenant=tenant, node_id=node_id)
        return None
    x = unit(np.asarray([vector], dtype=np.float32))
    best, sims = nearest(x, cents)
    sim = float(sims[0])
    if sim < min_similarity:
        await store.run(conn, "unassign_member", tenant=tenant, node_id=node_id)
        return None
    topic_id = ids[int(best[0])]
    await store.run(
        conn,
        "assign_member",
        tenant=tenant,
        node_id=node_id,
        topic_id=topic_id,
        project_id=project_id,
        assigned_by="nearest",
        similarity=round(sim, 4),
    )
    return topic_id


class TopicsHandler:
    """Segment node versions into topic material and memberships."""

    def __init__(self, embedder: Embedder, min_similarity: float) -> None:
        self._embedder = embedder
        self._min_similarity = min_similarity

    async def toc(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        latest: dict[tuple[str, str], TocNodeMessage] = {}
        for msg in msgs:
            m = TocNodeMessage.from_wire(msg.data)
            if m.level != "segment":
                continue
            key = (m.tenant, m.node_id)
            if key not in latest or latest[key].version <= m.version:
                latest[key] = m
        todo: list[TocNodeMessage] = []
        for m in latest.values():
            if not m.bullets:
                await store.run(conn, "delete_segment", tenant=m.tenant, node_id=m.node_id)
                continue
            seen = await store.one(conn, "segment_version", tenant=m.tenant, node_id=m.node_id)
            if seen is not None and seen["node_version"] >= m.version:
                if seen["node_version"] == m.version and seen["salience"] != m.salience:
                    await store.run(
                        conn, "set_salience", tenant=m.tenant, node_id=m.node_id,
                        salience=m.salience,
                    )  # fmt: skip
                continue
            todo.append(m)
        if not todo:
            return []
        texts = [segment_text(m.title, m.bullets) for m in todo]
        vectors = await asyncio.to_thread(self._embedder.embed, texts)
        cache: dict[tuple[str, str], tuple[list[str], np.ndarray[Any, Any]]] = {}
        for m, vector in zip(todo, vectors, strict=True):
            await store.run(conn, "touch_project", tenant=m.tenant, project_id=m.project_id)
            await store.run(conn, "upsert_segment", **material(m, vector))
            await assign(
                conn, m.tenant, m.project_id, m.node_id, vector, self._min_similarity, cache
            )
        log.debug("topics.batch", segments=len(todo))
        return []
