"""bm25-indexer settings: ``AGENT_MEMORY_BM25__*`` plus the common and retrieval ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_retrieval.settings import RetrievalSettings


class Bm25Options(BaseModel):
    # one Tantivy commit per fetched batch: larger batches, fewer segments and fsyncs
    batch_size: int = Field(default=500, ge=1, le=5000, description="Events per fetch.")
    toc_batch_size: int = Field(default=200, ge=1, le=5000, description="TOC versions per fetch.")
    pool_size: int = Field(default=2, ge=1)


class Settings(RetrievalSettings):
    bm25: Bm25Options = Bm25Options()
