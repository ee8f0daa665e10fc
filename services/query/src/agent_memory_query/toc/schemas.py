"""What the table-of-contents routes take (``TocSearch``) and answer (``agent_memory_api.toc``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_memory_api.toc import (
    GripAnswer,
    NodeAnswer,
    PinAnswer,
    TocAt,
    TocChildren,
    TocSearchAnswer,
    TocYears,
)
from agent_memory_common.contracts.event import parse_ts
from agent_memory_query.inputs import ID_PATTERN

__all__ = [
    "GripAnswer",
    "Level",
    "NodeAnswer",
    "PinAnswer",
    "TocAt",
    "TocChildren",
    "TocSearch",
    "TocSearchAnswer",
    "TocYears",
]

Level = Literal["year", "month", "week", "day", "segment"]


class TocSearch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # its length is checked in the route, with a message that says what to do instead
    query: str = Field(default="", description="Words to look for (at most 1,000 characters)")
    project_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=ID_PATTERN)
    node_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        pattern=ID_PATTERN,
        description="Only this subtree",
    )
    since: str | int | None = Field(default=None, description="RFC 3339 or epoch ms")
    until: str | int | None = Field(default=None, description="RFC 3339 or epoch ms")
    levels: list[Level] | None = Field(default=None, min_length=1)
    limit: int = Field(default=20, ge=1, le=200)
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=ID_PATTERN,
        description="Only nodes holding an event of this user (team projects)",
    )

    @field_validator("since", "until", mode="before")
    @classmethod
    def _valid_time(cls, value: object) -> object:
        if value is not None:
            parse_ts(value)
        return value
