"""Shapes of the public API's JSON, as ``TypedDict``: the very declarations the services answer
with (``agent_memory_api``), re-exported under the names this client has always used. Nothing is
validated at run time: the client returns the JSON it receives, typed."""

from __future__ import annotations

from agent_memory_api.episodes import ActionIn, Mark, Outcome
from agent_memory_api.episodes import CurateResult as CurateResult
from agent_memory_api.episodes import Episode as Episode
from agent_memory_api.episodes import LessonIn as LessonIn
from agent_memory_api.episodes import PlaybookEntry as PlaybookEntry
from agent_memory_api.events import Accepted as Accepted
from agent_memory_api.events import Event as Event
from agent_memory_api.events import EventIn as EventIn
from agent_memory_api.events import EventPage as EventPage
from agent_memory_api.events import EventType, Role
from agent_memory_api.search import SearchResponse as SearchResponse
from agent_memory_api.search import SearchResult as SearchResult

EpisodeAction = ActionIn
"""An action to record (the body of ``add_actions``)."""

__all__ = [
    "Accepted",
    "CurateResult",
    "Episode",
    "EpisodeAction",
    "Event",
    "EventIn",
    "EventPage",
    "EventType",
    "LessonIn",
    "Mark",
    "Outcome",
    "PlaybookEntry",
    "Role",
    "SearchResponse",
    "SearchResult",
]
