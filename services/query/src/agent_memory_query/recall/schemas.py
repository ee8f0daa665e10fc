"""What ``/v1/recall`` takes (``RecallRequest``) and answers (``agent_memory_api.recall``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_memory_api.recall import BriefResponse, RecallResponse
from agent_memory_query.inputs import ID_PATTERN

__all__ = ["BriefResponse", "RecallRequest", "RecallResponse"]


class RecallRequest(BaseModel):
    """The body of ``POST /v1/recall``; unknown fields are refused (a typo is an error)."""

    model_config = ConfigDict(extra="forbid")

    project_id: str = Field(min_length=1, max_length=200, pattern=ID_PATTERN)
    session_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=ID_PATTERN,
        description="The asking session: its own events are never recalled (it has them).",
    )
    prompt: str = Field(min_length=1, max_length=4000, description="The user's prompt.")
    budget_tokens: int = Field(
        default=600, ge=50, le=8000, description="Most tokens of context (4 characters each)."
    )
    exclude_ids: list[str] = Field(
        default_factory=list,
        max_length=2000,
        description="Ids already given to this session (memory or event ids): never again.",
    )
    min_match: float | None = Field(
        default=None,
        ge=-1,
        le=1,
        description="Confidence threshold (best cosine); default: the service's setting.",
    )
