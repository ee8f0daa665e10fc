"""What the topic routes take (``TopicSearch``) and answer (``agent_memory_api.topics``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_memory_api.topics import TopicDetail, TopicList, TopicSearchAnswer
from agent_memory_query.inputs import ID_PATTERN

__all__ = ["TopicDetail", "TopicList", "TopicSearch", "TopicSearchAnswer"]


class TopicSearch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=1000, description="What the topics are about")
    project_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=ID_PATTERN)
    limit: int = Field(default=10, ge=1, le=100)
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=ID_PATTERN,
        description="Only topics with a member segment holding an event of this user",
    )
