"""What the episode and playbook routes take (the models below) and answer
(``agent_memory_api.episodes``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_memory_api.episodes import (
    ActionsAdded,
    CurateAnswer,
    Episode,
    PlaybookAnswer,
    SimilarEpisodes,
)
from agent_memory_common.contracts.event import parse_ts
from agent_memory_common.contracts.limits import StorableObject, ts_problem
from agent_memory_query.inputs import ID_PATTERN

__all__ = [
    "ActionIn",
    "ActionsAdded",
    "ActionsIn",
    "CurateAnswer",
    "CurateIn",
    "Episode",
    "EpisodeComplete",
    "EpisodeStart",
    "LessonIn",
    "PlaybookAnswer",
    "SimilarEpisodes",
]

IdStr = Annotated[str, Field(min_length=1, max_length=200, pattern=ID_PATTERN)]


class EpisodeStart(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episode_id: IdStr | None = Field(
        default=None, description="Client-chosen id: a retried start returns the same episode."
    )
    task: str = Field(min_length=1, max_length=20000)
    project_id: IdStr
    agent_id: IdStr | None = None
    session_id: IdStr | None = None
    metadata: StorableObject = Field(default_factory=dict)


class ActionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action_id: IdStr | None = Field(default=None, description="Client-chosen idempotency key.")
    action: str = Field(min_length=1, max_length=20000)
    result: str | None = Field(default=None, max_length=100000)
    ok: bool | None = None
    ts: str | int | None = None
    metadata: StorableObject = Field(default_factory=dict)

    @model_validator(mode="after")
    def _valid_ts(self) -> ActionIn:
        if self.ts is not None:
            problem = ts_problem(parse_ts(self.ts))
            if problem:
                raise ValueError(problem)
        return self


class ActionsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    actions: list[ActionIn] = Field(min_length=1, max_length=500)


class EpisodeComplete(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: Literal["success", "failure", "partial"]
    lessons: list[Annotated[str, Field(min_length=1, max_length=4000)]] = Field(
        default_factory=list, max_length=100
    )
    summary: str | None = Field(default=None, max_length=20000)
    value: float | None = Field(default=None, ge=0, le=1, description="Default: from outcome.")


class LessonIn(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    id: IdStr | None = Field(default=None, description="Mark an existing entry instead of text.")
    text: str | None = Field(default=None, min_length=1, max_length=4000)
    mark: Literal["+", "-", "o"] = "o"
    section: str = Field(default="general", min_length=1, max_length=100)
    source: StorableObject = Field(default_factory=dict)

    @model_validator(mode="after")
    def _text_or_id(self) -> LessonIn:
        if (self.id is None) == (self.text is None):
            raise ValueError("give either text (a lesson) or id (an entry to mark), not both")
        return self


class CurateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entries: list[LessonIn] = Field(min_length=1, max_length=200)
    agent_id: IdStr | None = None
    submission_id: IdStr | None = Field(
        default=None, description="Client-chosen: a retried submission is counted once."
    )
