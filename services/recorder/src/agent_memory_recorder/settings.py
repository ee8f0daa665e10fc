"""Recorder settings: ``AGENT_MEMORY_RECORDER__*`` plus the common ones."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_common.core.settings import CommonSettings
from agent_memory_recorder.dedup import DedupRules


class DedupOptions(BaseModel):
    """Dedup at ingest (docs/lifecycle.md (dedup)): ``AGENT_MEMORY_RECORDER__DEDUP__*``."""

    enabled: bool = True
    window_s: float = Field(
        default=3600.0,
        gt=0,
        description="an event repeats an original only if their times are this close (seconds)",
    )
    cosine: float = Field(
        default=0.85,
        gt=0,
        le=1,
        description="near-duplicate threshold: cosine of the two texts' word-count vectors",
    )
    min_chars: int = Field(
        default=16, ge=1, description="shorter normalised texts are never duplicates"
    )
    near_min_words: int = Field(
        default=24, ge=1, description="texts with fewer words are duplicates only when exact"
    )
    vector_chars: int = Field(
        default=8000, ge=100, description="how much of a text the near-duplicate test reads"
    )
    recent_per_session: int = Field(
        default=16, ge=1, le=1000, description="originals kept per session (exact test)"
    )
    compared: int = Field(
        default=8,
        ge=0,
        le=1000,
        description="originals of the same role and type compared by cosine",
    )
    sessions_cached: int = Field(default=2048, ge=1)

    def rules(self) -> DedupRules:
        return DedupRules(**self.model_dump())


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
    dedup: DedupOptions = DedupOptions()


class Settings(CommonSettings):
    recorder: RecorderOptions = RecorderOptions()
