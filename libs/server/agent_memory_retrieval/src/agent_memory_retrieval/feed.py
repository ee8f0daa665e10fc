"""The pipeline side of an index writer, shared by the bm25-indexer and the embedder.

Both consume recorded events and TOC node versions and turn each batch into ``DocChanges``
through ``sources``; they differ only in how the changes are written, and in which
``context`` their index reads. BM25 matches an event's previous turn and a segment's whole
text; vectors embed an event's previous turn but only a segment's summary, so the embedder is
spared the Postgres reads of segment text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.consumer import Publication
from agent_memory_common.erasure import ErasureResult, erased_items
from agent_memory_common.messages import ErasureRequest
from agent_memory_retrieval.sources import (
    DocChanges,
    erasure_changes,
    recorded_changes,
    toc_changes,
)


class IndexFeed(ABC):
    """Batch handlers for ``ConsumerRunner``: nothing is published, the index write is all."""

    reads_event_context: ClassVar[bool] = True  # the turn before each event
    reads_segment_text: ClassVar[bool]  # every word of a segment
    erasure_store: ClassVar[str]  # the name of its index in an erasure receipt

    async def recorded(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        payloads = [m.data for m in msgs]
        changes = await recorded_changes(conn, payloads, context=self.reads_event_context)
        await self.apply(changes)
        return []

    async def toc(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        payloads = [m.data for m in msgs]
        await self.apply(await toc_changes(conn, payloads, context=self.reads_segment_text))
        return []

    async def erase(self, conn: AsyncConnection, request: ErasureRequest) -> ErasureResult:
        """This index's part of an erasure (``agent_memory_common.erasure``): the documents of
        the erased events and grips, and the neighbours whose context was erased."""
        grips = await erased_items(conn, request.erasure_id, "grip")
        changes = await erasure_changes(conn, request.tenant, request.erasure_id, grips)
        await self.apply(changes)
        return ErasureResult(
            {self.erasure_store: len(changes.deletes), "reindexed": len(changes.upserts)}
        )

    @abstractmethod
    async def apply(self, changes: DocChanges) -> None:
        """Write one batch's changes; raising leaves the batch unacked (it comes again)."""
