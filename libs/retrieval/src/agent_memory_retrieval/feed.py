"""The pipeline side of an index writer, shared by the bm25-indexer and the embedder.

Both consume recorded events and TOC node versions and turn each batch into ``DocChanges``
through ``sources``; they differ only in how the changes are written, and in whether their
index reads ``context``. BM25 matches it; vectors embed title and text only, so the embedder
is spared the Postgres reads that make it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.consumer import Publication
from agent_memory_retrieval.sources import DocChanges, recorded_changes, toc_changes


class IndexFeed(ABC):
    """Batch handlers for ``ConsumerRunner``: nothing is published, the index write is all."""

    reads_context: ClassVar[bool]

    async def recorded(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        payloads = [m.data for m in msgs]
        await self.apply(await recorded_changes(conn, payloads, context=self.reads_context))
        return []

    async def toc(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        payloads = [m.data for m in msgs]
        await self.apply(await toc_changes(conn, payloads, context=self.reads_context))
        return []

    @abstractmethod
    async def apply(self, changes: DocChanges) -> None:
        """Write one batch's changes; raising leaves the batch unacked (it comes again)."""
