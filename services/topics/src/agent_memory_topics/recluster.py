"""A full re-cluster of one project, in one transaction: a crash leaves the previous topics.

Reads the project's material, clusters it (``clustering``, in a worker thread), names the
clusters by member overlap with the topics they replace (ids stay stable), labels them
(``labels``), links related ones, and rewrites the project's topics, memberships and edges.
Serialised per project by an advisory lock, so replicas of the service never interleave.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from psycopg import AsyncConnection

from agent_memory_common.core.logs import get_logger
from agent_memory_retrieval.lifecycle.cleanup import CleanupScope
from agent_memory_retrieval.lifecycle.topic_prune import TopicPruneRule, prune_topics
from agent_memory_topics import labels, store
from agent_memory_topics.clustering import (
    UNASSIGNED,
    Named,
    centroids,
    cluster,
    match_ids,
    related_edges,
    unit,
)
from agent_memory_topics.settings import TopicsOptions

log = get_logger(__name__)


@dataclass(frozen=True)
class Plan:
    """What a re-cluster writes (pure result of the CPU part)."""

    topics: list[dict[str, Any]]
    members: list[dict[str, Any]]
    edges: dict[tuple[str, str], float]


def plan(
    tenant: str,
    project_id: str,
    material: list[dict[str, Any]],
    old: dict[str, set[str]],
    opts: TopicsOptions,
) -> Plan:
    """The CPU part: cluster, name, label, link. No I/O (runs in a thread)."""
    if not material:
        return Plan([], [], {})
    node_ids = [r["node_id"] for r in material]
    x = unit(np.asarray([r["embedding"] for r in material], dtype=np.float32))
    found = cluster(x, opts.params())
    ids = sorted(int(c) for c in set(found.tolist()) if c != UNASSIGNED)
    rows_of: dict[int, list[int]] = {c: [] for c in ids}
    for i, c in enumerate(found.tolist()):
        if c != UNASSIGNED:
            rows_of[c].append(i)
    new = {c: {node_ids[i] for i in rows_of[c]} for c in ids}
    named: dict[int, Named] = match_ids(tenant, project_id, new, old)
    cents = centroids(x, found, ids) if ids else np.zeros((0, x.shape[1]), dtype=np.float32)
    words = labels.keywords([[material[i]["text"] for i in rows_of[c]] for c in ids])
    topics = [
        {
            "tenant": tenant,
            "topic_id": named[c].topic_id,
            "project_id": project_id,
            "label": labels.label(words[k]),
            "keywords": words[k],
            "centroid": [round(float(v), 6) for v in cents[k]],
            "parent_ids": list(named[c].parent_ids),
        }
        for k, c in enumerate(ids)
    ]
    index = {c: k for k, c in enumerate(ids)}
    sims = (x * cents[[index.get(int(c), 0) for c in found]]).sum(axis=1) if ids else []
    members = [
        {
            "tenant": tenant,
            "node_id": node_ids[i],
            "topic_id": named[int(c)].topic_id,
            "project_id": project_id,
            "assigned_by": "cluster",
            "similarity": round(float(sims[i]), 4),
        }
        for i, c in enumerate(found)
        if c != UNASSIGNED
    ]
    sessions = [{material[i]["session_id"] for i in rows_of[c]} for c in ids]
    edges = related_edges(
        [named[c].topic_id for c in ids],
        cents,
        sessions,
        min_weight=opts.edge_min_weight,
        per_topic=opts.edges_per_topic,
    )
    return Plan(topics, members, edges)


async def recluster(
    conn: AsyncConnection, tenant: str, project_id: str, opts: TopicsOptions
) -> dict[str, Any]:
    """Re-cluster one project inside the caller's transaction; a summary for the log."""
    started = time.perf_counter()
    await store.run(conn, "lock_project", tenant=tenant, project_id=project_id)
    material = await store.rows(conn, "material", tenant=tenant, project_id=project_id)
    old: dict[str, set[str]] = {}
    for r in await store.rows(conn, "old_members", tenant=tenant, project_id=project_id):
        old.setdefault(r["topic_id"], set()).add(r["node_id"])
    result = await asyncio.to_thread(plan, tenant, project_id, material, old, opts)
    keep = [t["topic_id"] for t in result.topics]
    await store.run(conn, "drop_topics_except", tenant=tenant, project_id=project_id, keep=keep)
    await store.run(conn, "clear_edges", tenant=tenant, project_id=project_id)
    await store.run_many(conn, "upsert_topic", result.topics)
    await store.run(conn, "clear_members", tenant=tenant, project_id=project_id)
    await store.run_many(conn, "insert_member", result.members)
    await store.run_many(
        conn,
        "insert_edge",
        [
            {"tenant": tenant, "topic_id": a, "other_id": b, "weight": w}
            for (a, b), w in sorted(result.edges.items())
        ],
    )
    await store.run(
        conn,
        "mark_clustered",
        tenant=tenant,
        project_id=project_id,
        size=len(material),
        node_ids=[r["node_id"] for r in material],
        read_at=[r["updated_at"] for r in material],
    )
    summary = {
        "tenant": tenant,
        "project_id": project_id,
        "segments": len(material),
        "topics": len(keep),
        "kept_ids": len(set(keep) & set(old)),
        "assigned": len(result.members),
        "seconds": round(time.perf_counter() - started, 3),
    }
    log.info("topics.reclustered", **summary)
    return summary


async def prune(conn: AsyncConnection, rule: TopicPruneRule) -> int:
    """Drop topics whose importance now is below ``rule.below``, every tenant; their members
    stay, unassigned. The same code as the retention pruner's "topics" step
    (``agent_memory_retrieval.lifecycle.topic_prune``)."""
    report = await prune_topics(conn, rule, CleanupScope(), dry_run=False, now=datetime.now(UTC))
    if report.entries:
        log.info("topics.pruned", topics=report.entries)
    return report.entries
