"""Query service settings: ``AGENT_MEMORY_QUERY__*`` plus the common ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_common.settings import CommonSettings


class QueryOptions(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8701, ge=1, le=65535)
    pool_size: int = Field(default=4, ge=1)


class Settings(CommonSettings):
    query: QueryOptions = QueryOptions()
