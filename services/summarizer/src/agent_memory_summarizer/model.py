"""What flows through the summarizer: the segment message in, summaries out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class SegmentMessage(BaseModel):
    """A closed segment as published by the segmenter on ``mem.segments.<tenant>.<project>``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    tenant: str = Field(min_length=1)
    segment_id: str = Field(min_length=1)
    version: int = Field(ge=1)
    project_id: str = Field(min_length=1)
    agent_id: str
    session_id: str
    ordinal: int = 0
    start_ts: datetime
    end_ts: datetime
    event_ids: list[str] = Field(default_factory=list)  # empty: a retraction
    overlap_count: int = Field(default=0, ge=0)
    token_count: int = 0
    close_reason: str = ""

    @property
    def cause(self) -> str:
        """What every node version made for this message is tagged with (idempotency key)."""
        return f"{self.segment_id}/v{self.version}"

    @property
    def own_event_ids(self) -> list[str]:
        """The events this segment adds; the leading overlap was summarized by its predecessor.

        A segment made of overlap only (never expected) is summarized whole rather than empty.
        """
        own = self.event_ids[self.overlap_count :]
        return own or list(self.event_ids)


@dataclass(frozen=True)
class SourceEvent:
    event_id: str
    ts: datetime
    role: str
    type: str
    text: str


@dataclass(frozen=True)
class GripDraft:
    """Where a bullet came from: the events and the words in them."""

    event_ids: tuple[str, ...]
    excerpt: str
    kind: str
    salience: float


@dataclass(frozen=True)
class Bullet:
    """One summary line. Segment bullets carry new grips; rollup bullets cite existing ones."""

    text: str
    kind: str
    salience: float
    grips: tuple[GripDraft, ...] = ()
    grip_ids: tuple[str, ...] = ()
    source_node_id: str | None = None


@dataclass(frozen=True)
class Summary:
    title: str
    bullets: list[Bullet]
    keywords: list[str]
    method: str = "extractive"


@dataclass(frozen=True)
class ChildDigest:
    """A child node as its parent's rollup sees it (its latest version)."""

    node_id: str
    version: int
    title: str
    keywords: list[str]
    bullets: list[Bullet] = field(default_factory=list)
