"""Layered retrieval's ports (text index, vector index, embedder) and their adapters."""

from agent_memory_retrieval.adapters.factory import (
    load_embedder,
    open_text_index,
    open_vector_index,
)
from agent_memory_retrieval.docs import (
    Hit,
    IndexDoc,
    SearchFilter,
    event_doc_id,
    grip_doc_id,
    node_doc_id,
)
from agent_memory_retrieval.ports import (
    EMBEDDING_DIM,
    Embedder,
    IndexUnavailableError,
    TextIndex,
    VectorIndex,
)
from agent_memory_retrieval.settings import RetrievalSettings

__all__ = [
    "EMBEDDING_DIM",
    "Embedder",
    "Hit",
    "IndexDoc",
    "IndexUnavailableError",
    "RetrievalSettings",
    "SearchFilter",
    "TextIndex",
    "VectorIndex",
    "event_doc_id",
    "grip_doc_id",
    "load_embedder",
    "node_doc_id",
    "open_text_index",
    "open_vector_index",
]
