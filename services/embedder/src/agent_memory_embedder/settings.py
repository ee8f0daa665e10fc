"""Embedder settings: ``AGENT_MEMORY_EMBEDDER__*`` plus the common and retrieval ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_retrieval.settings import RetrievalSettings


class EmbedderOptions(BaseModel):
    batch_size: int = Field(default=128, ge=1, le=2000, description="Events per fetch.")
    toc_batch_size: int = Field(default=64, ge=1, le=2000, description="TOC versions per fetch.")
    workers: int = Field(
        default=2,
        ge=1,
        le=8,
        description=(
            "Batches in flight at once, of events and of TOC versions each: while one batch's"
            " vectors are written (Postgres works, the model waits), the next one is embedded."
        ),
    )
    # each batch in flight holds one connection for its transaction and pgvector writes on
    # another: the workers of both consumers and an erasure's part (``pool_size_needed``)
    pool_size: int = Field(default=10, ge=2)

    def pool_size_needed(self) -> int:
        """At least two connections for each batch that can be in flight at once, so that
        no batch waits for a connection another one holds while waiting for one too."""
        return max(self.pool_size, 2 * (2 * self.workers + 1))


class Settings(RetrievalSettings):
    embedder: EmbedderOptions = EmbedderOptions()
