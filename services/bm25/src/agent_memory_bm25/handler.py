"""bm25-indexer: decode -> map to index documents -> one upsert (one commit) per batch.

The text index writes are upserts under deterministic ids, so a redelivered batch overwrites
what it wrote before; the durable consumer, acked only after the commit, is the checkpoint.
"""

from __future__ import annotations

from psycopg import AsyncConnection

from agent_memory_bm25.logic import searchable
from agent_memory_common.core.logs import get_logger
from agent_memory_retrieval.docs import DocChanges
from agent_memory_retrieval.indexing.feed import IndexFeed
from agent_memory_retrieval.ports import TextIndex

log = get_logger(__name__)


class IndexHandler(IndexFeed[DocChanges]):
    reads_segment_text = True  # BM25 matches a segment by every word said in it
    retention_index = "bm25"
    erasure_store = "bm25_documents"

    def __init__(self, index: TextIndex) -> None:
        self._index = index

    async def prepare(
        self, conn: AsyncConnection, changes: DocChanges, earlier: DocChanges | None
    ) -> DocChanges:
        return changes  # nothing to compute: the engine analyses the text itself

    async def write(self, changes: DocChanges) -> None:
        if changes.deletes:
            await self._index.delete(changes.deletes)
        docs = searchable(changes.upserts)
        if docs:
            await self._index.upsert(docs)
        log.debug("bm25.batch", docs=len(docs), deletes=len(changes.deletes))
