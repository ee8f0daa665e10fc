"""Pure parts of the bm25-indexer."""

from __future__ import annotations

from agent_memory_retrieval.docs import IndexDoc


def searchable(docs: list[IndexDoc]) -> list[IndexDoc]:
    """Documents with some text to match; the rest would only take room in the index."""
    return [d for d in docs if (d.title + d.text).strip()]
