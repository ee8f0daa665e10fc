"""What ``/v1/search`` takes (``SearchRequest``) and answers (``agent_memory_api.search``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_memory_api.search import SearchResponse
from agent_memory_common.contracts.event import parse_ts
from agent_memory_common.contracts.limits import clamp_ts
from agent_memory_common.contracts.memory import MemoryKind
from agent_memory_common.web.http import ApiError
from agent_memory_query.inputs import ID_PATTERN
from agent_memory_search.brainstem.query import SearchQuery

__all__ = ["IntentName", "MemoryKind", "SearchRequest", "SearchResponse", "TierName"]

IntentName = Literal["auto", "explore", "answer", "locate", "time-boxed"]
TierName = Literal["vector", "bm25", "toc", "scan"]


class SearchRequest(BaseModel):
    """The body of ``POST /v1/search``; unknown fields are refused (a typo is an error)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=4000, description="Plain words.")
    limit: int = Field(default=10, ge=1, le=100)
    project_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=ID_PATTERN)
    agent_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=ID_PATTERN)
    session_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=ID_PATTERN)
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=ID_PATTERN,
        description="Only memories written by this user (team projects)",
    )
    since: str | int | None = Field(default=None, description="RFC 3339 or epoch ms, inclusive")
    until: str | int | None = Field(default=None, description="RFC 3339 or epoch ms, exclusive")
    kinds: list[MemoryKind | Literal["runtime"]] | None = Field(
        default=None,
        min_length=1,
        description="Only memories of these kinds; 'runtime' finds what the coding agent's"
        " runtime wrote (compaction prompts, command expansions, reminders), which no other"
        " search returns",
    )
    intent: IntentName = "auto"
    now: str | int | None = Field(
        default=None, description="Reference time for relative dates; default: current time"
    )
    tiers: list[TierName] | None = Field(
        default=None, min_length=1, description="Restrict to these tiers (ablations)"
    )

    @field_validator("query")
    @classmethod
    def _has_words(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must contain some words")
        return value

    @field_validator("since", "until", "now", mode="before")
    @classmethod
    def _valid_ts(cls, value: object) -> object:
        if value is not None:
            parse_ts(value)
        return value

    @model_validator(mode="after")
    def _ordered(self) -> SearchRequest:
        both = self.since is not None and self.until is not None
        if both and parse_ts(self.since) >= parse_ts(self.until):
            raise ApiError(422, "validation_error", "until: must be after since", field="until")
        return self

    def to_query(self, tenant: str) -> SearchQuery:
        def ts(value: str | int | None) -> datetime | None:
            return clamp_ts(parse_ts(value)) if value is not None else None

        return SearchQuery(
            query=self.query,
            tenant=tenant,
            limit=self.limit,
            project_id=self.project_id,
            agent_id=self.agent_id,
            session_id=self.session_id,
            since=ts(self.since),
            until=ts(self.until),
            kinds=tuple(self.kinds) if self.kinds else None,
            intent=None if self.intent == "auto" else self.intent,
            now=ts(self.now),
            tiers=tuple(dict.fromkeys(self.tiers)) if self.tiers else None,
        )
