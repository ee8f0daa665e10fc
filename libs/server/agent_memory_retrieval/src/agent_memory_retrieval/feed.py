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

import orjson
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


async def _hold_tenants(conn: AsyncConnection, tenants: set[str], *, exclusive: bool) -> None:
    """Serialise index writes with erasures, per tenant, until the transaction ends.

    A batch takes the lock shared before it reads what to index and keeps it until its commit,
    after its index write; an erasure takes it exclusively. So an erasure waits for the batches
    already under way (and then deletes what they wrote), and a batch that starts after it sees
    its tombstones: an erased event can never be indexed again behind an erasure's back.
    """
    fn = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
    for tenant in sorted(tenants):  # one order everywhere: no deadlock between two batches
        await conn.execute(f"SELECT {fn}(hashtextextended('index-erasure:' || %s, 0))", (tenant,))


async def _hold_nodes(conn: AsyncConnection, index: str, nodes: set[tuple[str, str]]) -> None:
    """Serialise the index writes of one TOC node across replicas, until the transaction ends.

    A node's document id is the same for every version, and whether a version is stale is read
    from Postgres before the write. Without this lock, replica A could find version 2 current,
    replica B then write version 3, and A's slower write of version 2 land last: the index
    would keep the old summary for good (seen with two embedders). Under the lock, the check
    and the write of one node happen together: B waits, or A finds version 2 stale. One lock
    per index: the embedder and the bm25-indexer never wait for each other.
    """
    for tenant, node_id in sorted(nodes):  # one order everywhere: no deadlock between batches
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"index-node\x1f{index}\x1f{tenant}\x1f{node_id}",),
        )


def _keys(payloads: Sequence[bytes]) -> list[tuple[str, str | None]]:
    """(tenant, node_id or None) of each well-formed payload; poison is the decoder's to name."""
    out: list[tuple[str, str | None]] = []
    for data in payloads:
        try:
            body = orjson.loads(data)
            tenant, node_id = body.get("tenant"), body.get("node_id")
        except (orjson.JSONDecodeError, AttributeError):
            continue
        if isinstance(tenant, str):
            out.append((tenant, node_id if isinstance(node_id, str) else None))
    return out


def _tenants(payloads: Sequence[bytes]) -> set[str]:
    return {tenant for tenant, _ in _keys(payloads)}


class IndexFeed(ABC):
    """Batch handlers for ``ConsumerRunner``: nothing is published, the index write is all."""

    reads_event_context: ClassVar[bool] = True  # the turn before each event
    reads_segment_text: ClassVar[bool]  # every word of a segment
    erasure_store: ClassVar[str]  # the name of its index in an erasure receipt

    async def recorded(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        payloads = [m.data for m in msgs]
        await _hold_tenants(conn, _tenants(payloads), exclusive=False)
        changes = await recorded_changes(conn, payloads, context=self.reads_event_context)
        await self.apply(changes)
        return []

    async def toc(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        payloads = [m.data for m in msgs]
        keys = _keys(payloads)
        await _hold_tenants(conn, {tenant for tenant, _ in keys}, exclusive=False)
        await _hold_nodes(conn, self.erasure_store, {(t, n) for t, n in keys if n is not None})
        await self.apply(await toc_changes(conn, payloads, context=self.reads_segment_text))
        return []

    async def erase(self, conn: AsyncConnection, request: ErasureRequest) -> ErasureResult:
        """This index's part of an erasure (``agent_memory_common.erasure``): the documents of
        the erased events and grips, and the neighbours whose context was erased."""
        await _hold_tenants(conn, {request.tenant}, exclusive=True)
        grips = await erased_items(conn, request.erasure_id, "grip")
        changes = await erasure_changes(conn, request.tenant, request.erasure_id, grips)
        await self.apply(changes)
        return ErasureResult(
            {self.erasure_store: len(changes.deletes), "reindexed": len(changes.upserts)}
        )

    @abstractmethod
    async def apply(self, changes: DocChanges) -> None:
        """Write one batch's changes; raising leaves the batch unacked (it comes again)."""
