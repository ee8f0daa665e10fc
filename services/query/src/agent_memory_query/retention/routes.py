"""``GET/PUT /v1/projects/{project_id}/retention``: how long each index keeps each level.

The pruner service applies it (hourly, or ``POST /v1/admin/cleanup`` on the pruner); events and
TOC nodes are kept whatever it says. Durations are ``<n>d``, ``<n>w``, ``<n>y`` or ``forever``;
anything else is a 422 naming the cell (``vector.segment``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path

from agent_memory_common.auth.access import ADMIN, READ
from agent_memory_common.web.http import ApiError, error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.inputs import ID_PATTERN
from agent_memory_query.retention import store
from agent_memory_query.retention.schemas import RetentionAnswer, RetentionUpdate
from agent_memory_retrieval.lifecycle.retention import (
    DEFAULT_MATRIX,
    RetentionPolicy,
    check_overrides,
)

router = APIRouter(tags=["retention"])
ProjectId = Annotated[str, Path(min_length=1, max_length=200, pattern=ID_PATTERN)]


def _answer(
    project_id: str, overrides: dict[str, dict[str, str]], updated_at: datetime | None
) -> RetentionAnswer:
    return RetentionAnswer(
        project_id=project_id,
        matrix=RetentionPolicy(overrides=overrides).matrix,
        overrides=overrides,
        defaults={index: dict(cells) for index, cells in DEFAULT_MATRIX.items()},
        updated_at=updated_at,
    )


@router.get(
    "/v1/projects/{project_id}/retention",
    response_model=RetentionAnswer,
    summary="The retention matrix in effect for a project (defaults and its overrides)",
    responses=error_responses(401, 403, 422),
    dependencies=[READ],
)
async def get_retention(ctx: Ctx, caller: Caller, project_id: ProjectId) -> RetentionAnswer:
    caller.require_project(project_id)  # like the sharing routes: a 403 naming project_id
    async with ctx.pool.connection() as conn:
        overrides, updated_at = await store.get(conn, caller.tenant, project_id)
    return _answer(project_id, overrides, updated_at)


@router.put(
    "/v1/projects/{project_id}/retention",
    response_model=RetentionAnswer,
    summary="Set a project's retention overrides (replacing its earlier ones)",
    responses=error_responses(401, 403, 422),
    dependencies=[ADMIN],
)
async def put_retention(
    ctx: Ctx, caller: Caller, project_id: ProjectId, body: RetentionUpdate
) -> RetentionAnswer:
    caller.require_project(project_id)
    raw = {k: v for k, v in body.model_dump().items() if v is not None}
    try:
        overrides = check_overrides(raw)
    except ValueError as exc:
        field = str(exc).partition(":")[0]
        raise ApiError(422, "validation_error", str(exc), field=field) from None
    async with ctx.pool.connection() as conn:
        saved, updated_at = await store.put(conn, caller.tenant, project_id, overrides)
    return _answer(project_id, saved, updated_at)
