"""What ``/v1/projects/{project_id}/sharing`` takes and answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_memory_api.common import Timestamp

Strategy = Literal["separate", "unified", "team"]


class SharingUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strategy: Strategy = Field(
        description=(
            "separate: a key bound to an agent reads only that agent's memories; unified "
            "(default): every agent of the tenant shares; team: many users, memories "
            "attributed to user_id, reads can filter by user"
        )
    )


class Sharing(BaseModel):
    project_id: str
    strategy: Strategy
    updated_at: Timestamp | None = Field(description="null: never set (the default applies)")
