"""Embedder settings: ``AGENT_MEMORY_EMBEDDER__*`` plus the common and retrieval ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_retrieval.settings import RetrievalSettings


class EmbedderOptions(BaseModel):
    batch_size: int = Field(default=128, ge=1, le=2000, description="Events per fetch.")
    toc_batch_size: int = Field(default=64, ge=1, le=2000, description="TOC versions per fetch.")
    # each runner holds one connection for its transaction and pgvector writes on another
    pool_size: int = Field(default=4, ge=2)


class Settings(RetrievalSettings):
    embedder: EmbedderOptions = EmbedderOptions()
