"""Bodies and answers of ``/v1/erasures``: ids and counts only, never erased content."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_memory_query.inputs import ID_PATTERN

MAX_EVENT_IDS = 10_000
EventId = Annotated[str, Field(min_length=1, max_length=300, pattern=ID_PATTERN)]


class ErasureScope(BaseModel):
    """Exactly one of: the listed events, a session, an agent, a user, the whole project."""

    model_config = ConfigDict(extra="forbid")

    event_ids: list[EventId] | None = Field(
        default=None, min_length=1, max_length=MAX_EVENT_IDS, description="These events."
    )
    session_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=ID_PATTERN)
    agent_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=ID_PATTERN)
    user_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=ID_PATTERN)
    project: Literal[True] | None = Field(default=None, description="Everything of the project.")
    redactable_since: datetime | None = Field(
        default=None,
        description="The events since this time whose stored text holds a secret the current "
        "redactor finds (issue 16's `admin redact --since`: see docs/lifecycle.md (erasure)).",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> ErasureScope:
        given = [k for k, v in self.model_dump().items() if v is not None]
        if len(given) != 1:
            raise ValueError(
                "scope takes exactly one of event_ids, session_id, agent_id, user_id, project,"
                " redactable_since"
                f" (got {', '.join(given) or 'none'})"
            )
        return self

    def wire(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump(mode="json").items() if v is not None}


class ErasureCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project_id: str = Field(min_length=1, max_length=200, pattern=ID_PATTERN)
    scope: ErasureScope


class ErasureAccepted(BaseModel):
    erasure_id: str
    status: str
    events: int = Field(description="Events the erasure covers (tombstoned now).")


class ErasurePreview(BaseModel):
    """What an erasure of this scope would remove now (dry run: nothing is changed)."""

    project_id: str
    scope: dict[str, Any]
    counts: dict[str, int]
    sessions: list[str] = Field(description="Up to 20 of the sessions it touches.")


class ErasureReceipt(BaseModel):
    """An erasure's status and receipt: counts per store; ``verified`` once every store was
    searched for the erased ids and text and none held them."""

    erasure_id: str
    project_id: str
    scope: dict[str, Any]
    requested_by: str
    requested_at: datetime
    status: Literal["erasing", "verifying", "verified"]
    verified: bool
    verified_at: datetime | None
    events: int
    counts: dict[str, int] = Field(description="Removed or rewritten, per store.")
    participants: dict[str, dict[str, int]] = Field(
        description="Each participant's report (missing: not reported yet)."
    )
    waiting_for: list[str] = Field(description="Participants that have not reported yet.")
    findings: dict[str, int] = Field(
        description="What the last verification still found, per store (empty once verified)."
    )


class ErasureList(BaseModel):
    erasures: list[ErasureReceipt]
