"""``POST /v1/events`` (gateway) and ``GET /v1/events`` (query service)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED, Timestamp

Role = Literal["user", "assistant", "tool", "system"]
EventType = Literal[
    "message", "tool_call", "tool_result", "session_start", "session_end", "note", "runtime"
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


@with_config(CLOSED)
class Refusal(TypedDict):
    """An event of an accepted request that will never be stored, and why: ``erased``, its id
    was erased (docs/lifecycle.md (erasure)); an erased id is never recorded again."""

    event_id: str
    reason: Literal["erased"]


@with_config(CLOSED)
class Accepted(TypedDict):
    """The gateway's 202: every event of ``event_ids`` is acknowledged by JetStream; the
    ``refused`` others (``refusals``, with their reasons) were not published. A request whose
    events were all refused is a 202 too, with ``accepted`` 0."""

    accepted: int
    event_ids: list[str]
    refused: int
    refusals: list[Refusal]


@with_config(CLOSED)
class Event(TypedDict):
    """A stored event. ``duplicate_of``: the event this one repeats (same session, identical
    after normalisation or a near-duplicate), set at ingest; such an event is kept in the log
    but never indexed or summarised (docs/lifecycle.md (dedup)). None for an original."""

    event_id: str
    ts: Timestamp
    tenant: str
    project_id: str
    agent_id: str
    session_id: str
    user_id: str | None
    role: Role
    type: EventType
    text: str
    metadata: dict[str, Any]
    received_at: Timestamp
    recorded_at: Timestamp
    duplicate_of: str | None


@with_config(CLOSED)
class EventPage(TypedDict):
    events: list[Event]
    next_cursor: str | None
