"""Embedder: decode -> map to index documents -> embed in one batch -> upsert the vectors.

A document whose vector an import staged (``agent_memory_retrieval.indexing.staged``) takes it
instead of running the model, when the text it would embed is the one the vector was made from.

The handler's only Postgres writes are the staged rows it takes (in the batch's transaction):
the vector writes are upserts under deterministic ids, so a redelivered batch overwrites what it
wrote before, and the durable consumer (acked only after ``upsert`` returned) is the checkpoint.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from psycopg import AsyncConnection

from agent_memory_common.core.logs import get_logger
from agent_memory_embedder.logic import embeddable
from agent_memory_retrieval.docs import DocChanges, IndexDoc
from agent_memory_retrieval.indexing import staged
from agent_memory_retrieval.indexing.feed import IndexFeed
from agent_memory_retrieval.ports import Embedder, VectorIndex

log = get_logger(__name__)


@dataclass
class Embedded:
    """One batch's changes with a vector for each document worth one."""

    deletes: list[str]
    docs: list[IndexDoc]
    vectors: list[list[float]]
    by_text: dict[str, list[float]]  # embedded text -> its vector, for a second reading


class EmbedHandler(IndexFeed[Embedded]):
    reads_segment_text = False  # a segment is embedded by its summary, an event with its context
    retention_index = "vector"
    erasure_store = "vector_entries"
    slow_prepare = True  # the model: outside the per-document locks

    def __init__(self, embedder: Embedder, index: VectorIndex, space: str) -> None:
        self._embedder = embedder
        self._index = index
        self._space = space  # RetrievalSettings.vector_space: which staged vectors are ours

    async def prepare(
        self, conn: AsyncConnection, changes: DocChanges, earlier: Embedded | None
    ) -> Embedded:
        docs, texts = embeddable(changes.upserts)
        known = dict(earlier.by_text) if earlier else {}
        await staged.drop(conn, changes.deletes)
        if docs:
            imported = await staged.take(conn, self._space, docs, texts)
            if imported:
                log.debug("embedder.staged", taken=len(imported), docs=len(docs))
            known.update(imported)
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        # CPU-bound (torch releases the GIL): off the event loop, so NATS heartbeats go on
        fresh = await asyncio.to_thread(self._embedder.embed, todo) if todo else []
        by_text = {**known, **dict(zip(todo, fresh, strict=True))}
        return Embedded(changes.deletes, docs, [by_text[t] for t in texts], by_text)

    async def write(self, prepared: Embedded) -> None:
        if prepared.deletes:
            await self._index.delete(prepared.deletes)
        if prepared.docs:
            await self._index.upsert(prepared.docs, prepared.vectors)
        log.debug("embedder.batch", docs=len(prepared.docs), deletes=len(prepared.deletes))
