"""Recorder settings: ``AGENT_MEMORY_RECORDER__*`` plus the common ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_common.settings import CommonSettings


class RecorderOptions(BaseModel):
    batch_size: int = Field(default=500, ge=1, le=5000)
    pool_size: int = Field(default=2, ge=1)
    settle_ms: float = Field(
        default=2.0,
        ge=0,
        le=1000,
        description=(
            "wait for the event stream to pause this long before recording what arrived (at "
            "most 50 ms in all), so that a request's events are recorded after the gateway has "
            "answered it rather than on the cores it needs meanwhile; 0 records at once"
        ),
    )


class Settings(CommonSettings):
    recorder: RecorderOptions = RecorderOptions()
