"""``/v1/recall``: what a hook puts in front of an agent for one prompt, and why."""

from __future__ import annotations

from typing import Literal

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED

Silence = Literal["too_short", "no_match", "below_threshold", "nothing_new"]


@with_config(CLOSED)
class RecalledMemory(TypedDict):
    """One line of the context: the memory it quotes (``id``: what ``memory_expand`` opens),
    the events behind it (the ids a hook sends back as ``exclude_ids``) and its cost."""

    id: str
    type: str
    event_ids: list[str]
    score: float
    tokens: int
    line: str


@with_config(CLOSED)
class RecallResponse(TypedDict):
    """``context``: the text to inject ("" for nothing); ``silence``: why nothing (or less)
    was given, null when something was; ``match_score``: the search's best cosine."""

    context: str
    tokens: int
    budget_tokens: int
    memories: list[RecalledMemory]
    match_score: float | None
    threshold: float
    silence: Silence | None


@with_config(CLOSED)
class BriefResponse(TypedDict):
    """``GET /v1/projects/{id}/brief``: ``context`` the text to inject at a session's start
    ("" when the project has nothing to say yet), ``ids`` the memories it cites, in order."""

    project_id: str
    context: str
    tokens: int
    budget_tokens: int
    ids: list[str]
