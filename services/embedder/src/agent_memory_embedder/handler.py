"""Embedder: decode -> map to index documents -> embed in one batch -> upsert the vectors.

Nothing is written to Postgres by the handler itself: the vector writes are upserts under
deterministic ids, so a redelivered batch overwrites what it wrote before, and the durable
consumer (acked only after ``upsert`` returned) is the checkpoint.
"""

from __future__ import annotations

import asyncio

from agent_memory_common.logs import get_logger
from agent_memory_embedder.logic import embeddable
from agent_memory_retrieval.feed import IndexFeed
from agent_memory_retrieval.ports import Embedder, VectorIndex
from agent_memory_retrieval.sources import DocChanges

log = get_logger(__name__)


class EmbedHandler(IndexFeed):
    reads_segment_text = False  # a segment is embedded by its summary, an event with its context
    erasure_store = "vector_entries"

    def __init__(self, embedder: Embedder, index: VectorIndex) -> None:
        self._embedder = embedder
        self._index = index

    async def apply(self, changes: DocChanges) -> None:
        if changes.deletes:
            await self._index.delete(changes.deletes)
        docs, texts = embeddable(changes.upserts)
        if not docs:
            return
        # CPU-bound (torch releases the GIL): off the event loop, so NATS heartbeats go on
        vectors = await asyncio.to_thread(self._embedder.embed, texts)
        await self._index.upsert(docs, vectors)
        log.debug("embedder.batch", docs=len(docs), deletes=len(changes.deletes))
