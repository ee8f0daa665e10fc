"""Shapes of the public API's JSON, as ``TypedDict`` so that callers get names and types while a
server that adds a field never breaks an older client (nothing is validated at run time)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

Role = Literal["user", "assistant", "tool", "system"]
EventType = Literal["message", "tool_call", "tool_result", "session_start", "session_end", "note"]
Outcome = Literal["success", "failure", "partial"]
Mark = Literal["+", "-", "o"]
# What a memory states (the summarizer decides it; ``episode`` is only set explicitly).
MemoryKind = Literal[
    "decision", "constraint", "definition", "procedure", "preference", "observation", "episode"
]


class EventIn(TypedDict, total=False):
    """What the gateway accepts; ``project_id``, ``agent_id``, ``session_id``, ``role`` and
    ``text`` are required by the server."""

    event_id: str
    ts: str | int
    project_id: str
    agent_id: str
    session_id: str
    user_id: str | None
    role: Role
    type: EventType
    text: str
    metadata: dict[str, Any]


class Event(TypedDict, total=False):
    event_id: str
    ts: str
    tenant: str
    project_id: str
    agent_id: str
    session_id: str
    user_id: str | None
    role: Role
    type: EventType
    text: str
    metadata: dict[str, Any]
    received_at: str
    recorded_at: str


class Accepted(TypedDict):
    accepted: int
    event_ids: list[str]


class EventPage(TypedDict):
    events: list[Event]
    next_cursor: str | None


class SearchResult(TypedDict, total=False):
    id: str
    type: str
    level: str
    title: str
    text: str
    ts: str
    project_id: str
    agent_id: str
    session_id: str
    score: float
    salience: float
    memory_kind: MemoryKind
    event_ids: list[str]


class SearchResponse(TypedDict, total=False):
    intent: str
    time_range: dict[str, Any] | None
    results: list[SearchResult]
    explain: dict[str, Any]


class Episode(TypedDict, total=False):
    episode_id: str
    memory_kind: Literal["episode"]
    project_id: str
    agent_id: str | None
    session_id: str | None
    task: str
    status: Literal["running", "success", "failure", "partial"]
    outcome: Outcome | None
    lessons: list[str]
    summary: str | None
    value: float | None
    actions_count: int
    started_at: str
    completed_at: str | None
    metadata: dict[str, Any]
    actions: list[dict[str, Any]]
    score: float


class EpisodeAction(TypedDict, total=False):
    action_id: str
    action: str
    result: str | None
    ok: bool | None
    ts: str | int
    metadata: dict[str, Any]


class PlaybookEntry(TypedDict, total=False):
    id: str
    project_id: str
    section: str
    text: str
    helpful: int
    harmful: int
    neutral: int
    uses: int
    created_at: str
    updated_at: str
    score: float


class LessonIn(TypedDict, total=False):
    """A reflector's output for the curator: new text, or a mark on an existing entry ``id``."""

    id: str
    text: str
    mark: Mark
    section: str
    source: dict[str, Any]


class CurateResult(TypedDict, total=False):
    id: str
    action: Literal["added", "merged", "marked"]
    similarity: float | None
