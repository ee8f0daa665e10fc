"""What ``PUT /v1/projects/{project_id}/recall`` takes (``InjectionUpdate``); the answers are
``agent_memory_api.recall.ProjectRecall`` and ``RecallProjects``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_memory_api.recall import ProjectRecall, RecallProjects

__all__ = ["InjectionUpdate", "ProjectRecall", "RecallProjects"]


class InjectionUpdate(BaseModel):
    """The body of ``PUT``; unknown fields are refused (a typo is an error)."""

    model_config = ConfigDict(extra="forbid")

    injection: Literal["on", "off"] = Field(
        description="'off': no brief and no per-prompt recall for this project, whatever the "
        "runtime or machine (capture, search and every asked read go on); 'on': as before.",
        examples=["off"],
    )
