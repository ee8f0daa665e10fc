"""What the retention routes take (``RetentionUpdate``) and answer (``RetentionAnswer``)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

Cells = dict[str, str]


class RetentionUpdate(BaseModel):
    """The body of ``PUT``: the cells that differ from the defaults; it replaces the project's
    earlier overrides (a cell left out goes back to its default, ``{}`` resets all)."""

    model_config = ConfigDict(extra="forbid")

    vector: Cells | None = Field(
        default=None,
        description="level -> duration for the vector index, e.g. {'segment': '90d'}.",
        examples=[{"segment": "90d", "day": "2y"}],
    )
    bm25: Cells | None = Field(
        default=None,
        description="level -> duration for the BM25 index ('30d', '26w', '5y', 'forever').",
    )


class RetentionAnswer(BaseModel):
    project_id: str
    matrix: dict[str, Cells] = Field(
        description="In effect: index -> level -> duration (the defaults with the overrides)."
    )
    overrides: dict[str, Cells] = Field(description="What this project set.")
    defaults: dict[str, Cells] = Field(description="The matrix of a project without overrides.")
    updated_at: datetime | None = Field(description="When the overrides were set; null: never.")
