"""``/v1/recall``: what a hook puts in front of an agent for one prompt, and why; and
``/v1/projects/{id}/recall``: a project's switch for it and what it has cost."""

from __future__ import annotations

from typing import Literal

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED, Timestamp

Silence = Literal["too_short", "no_match", "below_threshold", "nothing_new", "off"]
Injection = Literal["on", "off"]


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
    was given, null when something was (``off``: the project turned injection off, nothing
    was searched); ``match_score``: the search's best cosine."""

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
    ("" when the project has nothing to say yet, or turned injection off: ``injection``),
    ``ids`` the memories it cites, in order."""

    project_id: str
    context: str
    tokens: int
    budget_tokens: int
    ids: list[str]
    injection: Injection


@with_config(CLOSED)
class RecallCount(TypedDict):
    """Answers (silent ones too), those ``given`` a context, and the ``tokens`` of those
    contexts (4 characters each, as each answer's ``tokens``)."""

    answers: int
    given: int
    tokens: int


@with_config(CLOSED)
class RecallWindow(TypedDict):
    """The last ``days`` UTC days, today included (``days: 1`` is today): both kinds together,
    then the brief and the per-prompt recall apart."""

    days: int
    answers: int
    given: int
    tokens: int
    brief: RecallCount
    recall: RecallCount


@with_config(CLOSED)
class RecallSessionCost(TypedDict):
    """One session's answers over the longest window (``session_id`` null: the answers whose
    caller named no session); ``last_at``: its latest answer."""

    session_id: str | None
    answers: int
    given: int
    tokens: int
    last_at: Timestamp


@with_config(CLOSED)
class ProjectRecall(TypedDict):
    """``GET``/``PUT /v1/projects/{id}/recall``: the project's switch (``updated_at`` null:
    never set, so on) and what was injected: windows of 1, 7 and 30 days, and the sessions
    given the most tokens over the 30."""

    project_id: str
    injection: Injection
    updated_at: Timestamp | None
    windows: list[RecallWindow]
    sessions: list[RecallSessionCost]


@with_config(CLOSED)
class ProjectRecallSummary(TypedDict):
    """A project of ``GET /v1/recall/projects``: its switch and its windows."""

    project_id: str
    injection: Injection
    updated_at: Timestamp | None
    windows: list[RecallWindow]


@with_config(CLOSED)
class RecallProjects(TypedDict):
    """Every project this key may read that was given something in the last 30 days or has
    its switch set, the most tokens over 7 days first."""

    projects: list[ProjectRecallSummary]
