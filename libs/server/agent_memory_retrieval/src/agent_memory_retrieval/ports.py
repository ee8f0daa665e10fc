"""The ports of retrieval: a text (BM25) index, a vector index, an embedder.

Writers (the bm25-indexer and embedder services, ``admin rebuild-index``) and the query service
depend on these protocols only; ``factory.py`` picks the adapter from the settings. Every
adapter applies the ``SearchFilter`` inside the engine and always filters on the tenant.

Failures: an adapter raises ``IndexUnavailableError`` (a ``TransientError``) when its engine
cannot be reached or is not built yet, so callers can fall back to another tier by type;
``healthy()`` never raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agent_memory_common.core.errors import TransientError
from agent_memory_retrieval.docs import Hit, IndexDoc, SearchFilter

EMBEDDING_DIM = 384


class IndexUnavailableError(TransientError):
    """The index engine is down, unreachable, or has not been created yet."""


@runtime_checkable
class TextIndex(Protocol):
    """Full-text BM25 search over ``IndexDoc.title`` and ``IndexDoc.text``."""

    async def upsert(self, docs: Sequence[IndexDoc]) -> None:
        """Insert or overwrite by ``doc.id``; durable when it returns."""
        ...

    async def delete(self, ids: Sequence[str]) -> None: ...

    async def search(self, query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        """Best first; free text (no query syntax), an empty query returns []."""
        ...

    async def healthy(self) -> bool: ...

    async def count(self, tenant: str) -> int: ...

    async def clear(self) -> None:
        """Drop every document of every tenant (``admin rebuild-index --fresh``)."""
        ...

    async def upgrade(self) -> None:
        """Bring a store written by an earlier version up to this one's layout, before the
        writer's first batch (the bm25-indexer at start); nothing when it is up to date."""
        ...

    async def expunge_deletes(self) -> int:
        """Remove the stored bytes of deleted documents from the engine's files (a delete only
        marks them until segments are merged), before an erasure is verified; returns how many
        live documents were rewritten for it (0 where the engine merges by itself)."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest neighbours by cosine similarity; ``Hit.score`` is the similarity (1 = same)."""

    async def upsert(self, docs: Sequence[IndexDoc], vectors: Sequence[Sequence[float]]) -> None:
        """``vectors[i]`` belongs to ``docs[i]``; insert or overwrite by ``doc.id``."""
        ...

    async def delete(self, ids: Sequence[str]) -> None: ...

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of those of ``ids`` the index holds (the retention pruner keeps an
        event's before deleting it, so that the descent scores it without embedding it again)."""
        ...

    async def search(self, vector: Sequence[float], flt: SearchFilter, limit: int) -> list[Hit]: ...

    async def healthy(self) -> bool: ...

    async def count(self, tenant: str) -> int: ...

    async def clear(self) -> None:
        """Drop every document of every tenant (``admin rebuild-index --fresh``)."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Text to unit-length vectors; synchronous and CPU-bound (call it from a worker thread).

    One query embedding must be cheap (milliseconds); lists are embedded in batches.
    """

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...
