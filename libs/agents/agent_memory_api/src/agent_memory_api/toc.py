"""``/v1/toc``, ``/v1/grips`` and the pins: the table of contents as the query service shows it."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED, Timestamp
from agent_memory_api.events import EventType, Role
from agent_memory_api.search import SupersessionRef

Level = Literal["year", "month", "week", "day", "segment"]


@with_config(CLOSED)
class NodeSummary(TypedDict):
    """A node in a listing: enough to decide whether to open it (salience with the pin bonus)."""

    node_id: str
    project_id: str
    level: Level
    bucket: str
    version: int
    title: str
    keywords: list[str]
    memory_kind: str
    salience: float
    pinned: bool
    start_ts: Timestamp
    end_ts: Timestamp
    child_count: int
    event_count: NotRequired[int]  # segments only


@with_config(CLOSED)
class NodeListing(NodeSummary):
    """A node among its siblings: whether its latest version has no content."""

    empty: bool


@with_config(CLOSED)
class Grip(TypedDict):
    """A bullet's anchor: the exact events it was taken from."""

    grip_id: str
    event_ids: list[str]
    excerpt: str
    memory_kind: str
    salience: float
    pinned: bool
    node_id: str
    node_version: int
    bullet_index: int


@with_config(CLOSED)
class Bullet(TypedDict):
    text: str
    kind: str
    salience: float
    source_node_id: str | None
    grips: list[Grip]
    # the decisions this bullet's events replaced / that replaced them (supersession)
    supersedes: NotRequired[list[SupersessionRef]]
    superseded_by: NotRequired[list[SupersessionRef]]


@with_config(CLOSED)
class NodeAnswer(NodeSummary):
    """``GET /v1/toc/nodes/{node_id}``: a node version with its bullets and their grips."""

    latest_version: int
    is_latest: bool
    parent_id: str | None
    bullets: list[Bullet]
    child_ids: list[str]
    summarizer: str
    created_at: Timestamp
    empty: bool
    # who it came from: the distinct agents and users of the events below it, sorted (a segment:
    # its own events; a day, week...: those of every segment under it)
    agent_ids: list[str]
    user_ids: list[str]
    # segments only
    session_id: NotRequired[str | None]
    agent_id: NotRequired[str | None]
    user_id: NotRequired[str | None]  # the one user of its events (null: none or several)
    event_ids: NotRequired[list[str]]
    overlap_count: NotRequired[int | None]
    segment_version: NotRequired[int | None]


@with_config(CLOSED)
class TocYears(TypedDict):
    project_id: str | None
    years: list[NodeSummary]


@with_config(CLOSED)
class ContextEvent(TypedDict):
    """An event as the table of contents shows it (no tenant, no arrival times)."""

    event_id: str
    ts: Timestamp
    project_id: str
    agent_id: str
    session_id: str
    user_id: str | None
    role: Role
    type: EventType
    text: str
    metadata: dict[str, Any]


@with_config(CLOSED)
class SegmentEvent(ContextEvent):
    """An event of a segment; ``overlap``: carried over from the previous segment."""

    overlap: bool


@with_config(CLOSED)
class TocChildren(TypedDict):
    """A node's children; for a segment, no children but its events."""

    node_id: str
    level: Level
    version: int
    children: list[NodeListing]
    events: NotRequired[list[SegmentEvent]]


@with_config(CLOSED)
class TocAt(TypedDict):
    ts: Timestamp
    project_id: str
    segment_id: str | None
    path: list[NodeListing]


@with_config(CLOSED)
class GripAnswer(Grip):
    """``GET /v1/grips/{grip_id}``: the grip, its events and the events around them."""

    project_id: str
    created_at: Timestamp
    events: list[ContextEvent]
    before: list[ContextEvent]
    after: list[ContextEvent]


@with_config(CLOSED)
class MatchedBullet(TypedDict):
    index: int
    text: str
    kind: str
    grip_ids: list[str]


@with_config(CLOSED)
class TocSearchHit(NodeSummary):
    score: float
    matched_terms: list[str]
    bullets: list[MatchedBullet]


@with_config(CLOSED)
class TocSearchAnswer(TypedDict):
    terms: list[str]
    hits: list[TocSearchHit]


@with_config(CLOSED)
class PinAnswer(TypedDict):
    """``reindexed``: false when the pin is stored but the indexes keep the old salience."""

    memory_id: str
    type: Literal["grip", "node"]
    pinned: bool
    salience: float
    reindexed: bool
