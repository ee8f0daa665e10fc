"""``/v1/projects``, ``/v1/projects/{id}/sessions``, ``/v1/agents``: what a tenant has stored.

Listed from the event log itself, so a project shows up with its first stored event, not ten
minutes later when its first segment closes and the table of contents learns about it.
"""

from __future__ import annotations

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED, Timestamp


@with_config(CLOSED)
class ProjectListing(TypedDict):
    """A project: how much is stored, who wrote it, when, and how much is still in flight
    (``open_segments``: sessions whose last segment has not closed, so not yet summarised)."""

    project_id: str
    events: int
    sessions: int
    agents: int
    agent_ids: list[str]
    first_ts: Timestamp
    last_ts: Timestamp
    last_recorded_at: Timestamp
    open_segments: int
    closed_segments: int


@with_config(CLOSED)
class Projects(TypedDict):
    projects: list[ProjectListing]


@with_config(CLOSED)
class SessionListing(TypedDict):
    """A session of a project: agents and users that wrote it, its time span, its size, and the
    title of its latest summarised segment (null until one has closed)."""

    session_id: str
    project_id: str
    agent_ids: list[str]
    user_ids: list[str]
    first_ts: Timestamp
    last_ts: Timestamp
    events: int
    open: bool
    latest_title: str | None
    latest_node_id: str | None


@with_config(CLOSED)
class Sessions(TypedDict):
    project_id: str
    sessions: list[SessionListing]


@with_config(CLOSED)
class AgentListing(TypedDict):
    agent_id: str
    events: int
    sessions: int
    project_ids: list[str]
    first_ts: Timestamp
    last_ts: Timestamp


@with_config(CLOSED)
class Agents(TypedDict):
    agents: list[AgentListing]
