"""What ``explain`` says about retention: which results are older than a tier still indexes.

A pruned moment is still found through the TOC tier (plain Postgres reads) and the event scan,
not by similarity or by BM25; the note tells the caller that the vector or BM25 tier no longer
indexes that level for that period, so "the vector tier did not find it" is not mistaken for
"it is not there".
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from agent_memory_common.db.postgres import reading
from agent_memory_query.retention import store
from agent_memory_retrieval.docs import IndexDoc, as_utc
from agent_memory_retrieval.lifecycle.retention import DEFAULT_POLICY, INDEXES


async def retention_notes(
    pool: AsyncConnectionPool,
    tenant: str,
    results: list[tuple[IndexDoc, dict[str, int]]],
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """One note per result that a tier no longer indexes; ``results``: (doc, ranks by tier)."""
    now = now or datetime.now(UTC)
    if not results:
        return []
    async with reading(pool) as conn:
        policies = await store.policies_of(conn, tenant, {d.project_id for d, _ in results})
    notes: list[dict[str, Any]] = []
    for doc, ranks in results:
        policy = policies.get(doc.project_id, DEFAULT_POLICY)
        gone = [i for i in INDEXES if policy.beyond(i, doc.level, as_utc(doc.ts), now, doc.kind)]
        if not gone:
            continue
        keeps = ", ".join(f"{i} keeps {policy.matrix[i][doc.level]}" for i in gone)
        found = sorted(ranks) or ["?"]
        notes.append(
            {
                "id": doc.id,
                "level": doc.level,
                "not_indexed_by": gone,
                "found_by": found,
                "note": (
                    f"{doc.level} of {as_utc(doc.ts).date().isoformat()} is beyond retention "
                    f"({keeps} of this level): found through {', '.join(found)}"
                ),
            }
        )
    return notes
