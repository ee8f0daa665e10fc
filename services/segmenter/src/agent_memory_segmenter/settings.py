"""Segmenter settings: ``AGENT_MEMORY_SEGMENTER__*`` plus the common ones."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from agent_memory_common.core.settings import CommonSettings
from agent_memory_segmenter.logic import Thresholds


class SegmenterOptions(BaseModel):
    gap_s: float = Field(
        default=1800.0, gt=0, description="Event-time gap (seconds) that closes a segment."
    )
    token_budget: int = Field(
        default=4000, ge=1, description="Estimated tokens at which a segment is closed."
    )
    overlap_tokens: int = Field(
        default=500, ge=0, description="Tokens of a budget-closed segment carried into the next."
    )
    idle_flush_s: float = Field(
        default=600.0,
        gt=0,
        description="Wall-clock seconds without a new event after which a session's open "
        "segment is closed and published.",
    )
    historical_quiet_s: float = Field(
        default=5.0,
        ge=0,
        description="Wall-clock seconds without a new event after which the open segment of a "
        "historical session (its last event older than idle_flush_s in event time, as in an "
        "import) is closed and published. 0: off, such a session waits idle_flush_s too.",
    )
    idle_check_interval_s: float = Field(
        default=5.0, gt=0, description="How often the idle flush and outbox sweep run."
    )
    batch_size: int = Field(default=256, ge=1, le=5000)
    pool_size: int = Field(default=3, ge=2, description="One connection is the idle flush's.")

    @model_validator(mode="after")
    def _overlap_below_budget(self) -> SegmenterOptions:
        if self.overlap_tokens >= self.token_budget:
            raise ValueError("overlap_tokens must be smaller than token_budget")
        return self

    @property
    def historical_after_s(self) -> float | None:
        """Event-time age of a tail's last event from which its session is historical (None:
        the historical rule is off)."""
        return self.idle_flush_s if self.historical_quiet_s > 0 else None

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(
            gap_s=self.gap_s, token_budget=self.token_budget, overlap_tokens=self.overlap_tokens
        )


class Settings(CommonSettings):
    segmenter: SegmenterOptions = SegmenterOptions()
