"""The pipeline side of an index writer, shared by the bm25-indexer and the embedder.

Both consume recorded events and TOC node versions and turn each batch into ``DocChanges``
through ``sources``; they differ only in how the changes are written, and in which
``context`` their index reads. BM25 matches an event's previous turn and a segment's whole
text; vectors embed an event's previous turn but only a segment's summary, so the embedder is
spared the Postgres reads of segment text.

Both keep to the retention matrix at write time (``cleanup.RetentionGate``): in a project the
pruner has pruned under its current matrix, an entry the matrix prunes is deleted, not written,
whether it is an old event imported late, a new version of an old node, or an entry the pruner
recorded before the indexer reached it (issue 58).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar, Generic, TypeVar

import orjson
from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.bus.consumer import Publication
from agent_memory_common.bus.erasure import ErasureResult, erased_items
from agent_memory_common.contracts.messages import ErasureRequest
from agent_memory_common.db.locks import hold_xact_locks, lock_name
from agent_memory_retrieval.docs import DocChanges
from agent_memory_retrieval.indexing.sources import (
    erasure_changes,
    recorded_changes,
    toc_changes,
)
from agent_memory_retrieval.lifecycle.cleanup import RetentionGate, hold_index_writes

P = TypeVar("P")


def _node_locks(index: str, keys: list[tuple[str, str | None, str | None]]) -> list[str]:
    """Serialise the index writes of one TOC node across replicas, until the transaction ends.

    A node's document id is the same for every version, and whether a version is stale is read
    from Postgres before the write. Without this lock, replica A could find version 2 current,
    replica B then write version 3, and A's slower write of version 2 land last: the index
    would keep the old summary for good (seen with two embedders). Under the lock, the check
    and the write of one node happen together: B waits, or A finds version 2 stale. One lock
    per index: the embedder and the bm25-indexer never wait for each other.
    """
    return [lock_name("index-node", index, t, n) for t, n, _ in keys if n is not None]


def _session_locks(index: str, keys: list[tuple[str, str | None, str | None]]) -> list[str]:
    """The same for events, per session: an event's document holds its previous turn, read
    before the write, and a turn stored late makes its next turn be indexed again
    (``sources.stored_before_successors``); the two writes of that next turn must not cross."""
    return [lock_name("index-session", index, t, s) for t, _, s in keys if s]


def _keys(payloads: Sequence[bytes]) -> list[tuple[str, str | None, str | None]]:
    """(tenant, node_id, session_id) of each well-formed payload (None where it has none);
    poison is the decoder's to name."""
    out: list[tuple[str, str | None, str | None]] = []
    for data in payloads:
        try:
            body = orjson.loads(data)
            tenant, node_id, session = (
                body.get("tenant"),
                body.get("node_id"),
                body.get("session_id"),
            )
        except (orjson.JSONDecodeError, AttributeError):
            continue
        if isinstance(tenant, str):
            out.append(
                (
                    tenant,
                    node_id if isinstance(node_id, str) else None,
                    session if isinstance(session, str) else None,
                )
            )
    return out


def _tenants(keys: list[tuple[str, str | None, str | None]]) -> set[str]:
    return {tenant for tenant, _, _ in keys}


class IndexFeed(ABC, Generic[P]):
    """Batch handlers for ``ConsumerRunner``: nothing is published, the index write is all.

    A batch is written in two steps: ``prepare`` (the embedder's model runs here) and ``write``.
    A slow ``prepare`` runs before the per-document locks are taken, so replicas working on the
    same session or TOC node wait for each other's writes only, not for each other's model;
    under the locks the changes are read again and whatever changed meanwhile is prepared again
    (``earlier`` lets the embedder keep the vectors of unchanged texts).
    """

    reads_event_context: ClassVar[bool] = True  # the turn before each event
    reads_segment_text: ClassVar[bool]  # every word of a segment
    retention_index: ClassVar[str]  # its column of the retention matrix: "vector" or "bm25"
    erasure_store: ClassVar[str]  # the name of its index in an erasure receipt
    slow_prepare: ClassVar[bool] = False  # prepare outside the locks, then check again

    async def recorded(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        payloads = [m.data for m in msgs]
        keys = _keys(payloads)
        await hold_index_writes(conn, _tenants(keys), exclusive=False)
        context = self.reads_event_context
        locks = _session_locks(self.erasure_store, keys) if context else []

        async def read() -> DocChanges:
            return await self._retained(
                conn, await recorded_changes(conn, payloads, context=context)
            )

        await self._read_prepare_write(conn, read, locks)
        return []

    async def toc(self, conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        payloads = [m.data for m in msgs]
        keys = _keys(payloads)
        await hold_index_writes(conn, _tenants(keys), exclusive=False)
        text = self.reads_segment_text
        locks = _node_locks(self.erasure_store, keys)

        async def read() -> DocChanges:
            return await self._retained(conn, await toc_changes(conn, payloads, context=text))

        await self._read_prepare_write(conn, read, locks)
        return []

    async def _retained(self, conn: AsyncConnection, changes: DocChanges) -> DocChanges:
        """``changes`` as this index may write them under the current retention matrix: read
        under the tenant lock, so that no pruning page falls between this and the write."""
        tenants = {d.tenant for d in changes.upserts}
        if not tenants:
            return changes
        gate = await RetentionGate.load(conn, tenants=tenants)
        return await gate.changes(conn, self.retention_index, changes)

    async def _read_prepare_write(
        self,
        conn: AsyncConnection,
        read: Callable[[], Awaitable[DocChanges]],
        locks: list[str],
    ) -> None:
        """Read what to write, prepare it, write it: what was read is still true at the write
        (both happen under ``locks``, to the commit), and a slow ``prepare`` holds no lock."""
        if not self.slow_prepare:
            await hold_xact_locks(conn, locks)
            await self.write(await self.prepare(conn, await read(), None))
            return
        changes = await read()
        prepared = await self.prepare(conn, changes, None)
        if locks:
            await hold_xact_locks(conn, locks)
            now = await read()
            if now != changes:  # another replica wrote meanwhile: a newer version, a context
                prepared = await self.prepare(conn, now, prepared)
        await self.write(prepared)

    async def erase(self, conn: AsyncConnection, request: ErasureRequest) -> ErasureResult:
        """This index's part of an erasure (``agent_memory_common.bus.erasure``): the documents of
        the erased events and grips, and the neighbours whose context was erased."""
        await hold_index_writes(conn, {request.tenant}, exclusive=True)
        grips = await erased_items(conn, request.erasure_id, "grip")
        changes = await erasure_changes(conn, request.tenant, request.erasure_id, grips)
        erased = len(changes.deletes)
        changes = await self._retained(conn, changes)  # the neighbours indexed again
        await self.write(await self.prepare(conn, changes, None))
        return ErasureResult({self.erasure_store: erased, "reindexed": len(changes.upserts)})

    @abstractmethod
    async def prepare(self, conn: AsyncConnection, changes: DocChanges, earlier: P | None) -> P:
        """What ``write`` needs for these changes (``earlier``: a preparation of an earlier
        reading of the same batch, whose work may be reused); ``conn`` is in the batch's
        transaction (what it changes commits with the batch, or not at all)."""

    @abstractmethod
    async def write(self, prepared: P) -> None:
        """Write one batch; raising leaves the batch unacked (it comes again)."""
