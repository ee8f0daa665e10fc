"""Pure parts of the embedder: what gets embedded, and what does not."""

from __future__ import annotations

from agent_memory_retrieval.docs import IndexDoc


def embeddable(docs: list[IndexDoc]) -> tuple[list[IndexDoc], list[str]]:
    """Documents worth a vector and the text to embed for each, in the same order.

    Whitespace-only documents are left out: their vector would sit near everything and match
    any query.
    """
    kept = [d for d in docs if d.embedding_text().strip()]
    return kept, [d.embedding_text() for d in kept]
