"""``/v1/episodes`` and ``/v1/playbooks``: episodes with their actions, the ACE playbook."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED, Timestamp

Outcome = Literal["success", "failure", "partial"]
Mark = Literal["+", "-", "o"]


class ActionIn(TypedDict, total=False):
    """An action to record (``POST /v1/episodes/{id}/actions``); ``action`` is required."""

    action_id: str
    action: str
    result: str | None
    ok: bool | None
    ts: str | int
    metadata: dict[str, Any]


class LessonIn(TypedDict, total=False):
    """A reflector's output for the curator: new text, or a mark on an existing entry ``id``."""

    id: str
    text: str
    mark: Mark
    section: str
    source: dict[str, Any]


@with_config(CLOSED)
class RecordedAction(TypedDict):
    """A recorded action (what ``GET /v1/episodes/{id}`` lists)."""

    action_id: str
    ts: Timestamp | None
    action: str
    result: str | None
    ok: bool | None
    metadata: dict[str, Any]


@with_config(CLOSED)
class Episode(TypedDict):
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
    metadata: dict[str, Any]
    actions_count: int
    started_at: Timestamp
    completed_at: Timestamp | None
    score: NotRequired[float]  # similar episodes only
    actions: NotRequired[list[RecordedAction]]  # one episode only


@with_config(CLOSED)
class SimilarEpisodes(TypedDict):
    results: list[Episode]


@with_config(CLOSED)
class ActionsAdded(TypedDict):
    episode_id: str
    action_ids: list[str]
    actions_count: int


@with_config(CLOSED)
class PlaybookEntry(TypedDict):
    id: str
    section: str
    text: str
    helpful: int
    harmful: int
    neutral: int
    uses: int
    created_at: Timestamp
    updated_at: Timestamp
    score: NotRequired[float]  # with q only


@with_config(CLOSED)
class PlaybookAnswer(TypedDict):
    project_id: str
    embedder: str
    entries: list[PlaybookEntry]


@with_config(CLOSED)
class CurateResult(TypedDict):
    id: str
    action: Literal["added", "merged", "marked"]
    similarity: float | None


@with_config(CLOSED)
class CurateAnswer(TypedDict):
    project_id: str
    embedder: str
    results: list[CurateResult]
