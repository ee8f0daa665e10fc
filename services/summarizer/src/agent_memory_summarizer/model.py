"""What the summarizer works with: stored events in, summaries out (the segment message it
reads is ``agent_memory_common.contracts.messages.SegmentMessage``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


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
    # a rollup's piece of work (a child segment's "goal — outcome"): the levels above name it
    work: bool = False


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
