"""Recorder settings: ``AGENT_MEMORY_RECORDER__*`` plus the common ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_common.settings import CommonSettings


class RecorderOptions(BaseModel):
    batch_size: int = Field(default=500, ge=1, le=5000)
    pool_size: int = Field(default=2, ge=1)


class Settings(CommonSettings):
    recorder: RecorderOptions = RecorderOptions()
