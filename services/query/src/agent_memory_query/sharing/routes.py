"""``/v1/projects/{project_id}/sharing``: how the agents and users of a project share it.

Read by any key of the project; changed by an admin. The strategy is applied where memories
are read (``sharing/policy.py``, used by search): the gateway's own rule (a bound key writes
only as its agent and user) holds whatever the strategy.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from agent_memory_common.auth.access import ADMIN, READ
from agent_memory_common.web.http import error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.sharing.schemas import Sharing, SharingUpdate
from agent_memory_query.sharing.store import get_sharing, put_sharing

router = APIRouter(tags=["sharing"])

ProjectId = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]


@router.get(
    "/v1/projects/{project_id}/sharing",
    dependencies=[READ],
    response_model=Sharing,
    summary="The project's sharing strategy (unified when never set)",
    responses=error_responses(401, 403, 422),
)
async def read_sharing(ctx: Ctx, caller: Caller, project_id: ProjectId) -> dict[str, Any]:
    caller.require_project(project_id)
    async with ctx.pool.connection() as conn:
        return await get_sharing(conn, caller.tenant, project_id)


@router.put(
    "/v1/projects/{project_id}/sharing",
    dependencies=[ADMIN],
    response_model=Sharing,
    summary="Set the project's sharing strategy: separate, unified or team",
    responses=error_responses(401, 403, 422),
)
async def write_sharing(
    ctx: Ctx, caller: Caller, project_id: ProjectId, body: SharingUpdate
) -> dict[str, Any]:
    caller.require_project(project_id)
    async with ctx.pool.connection() as conn:
        return await put_sharing(conn, caller.tenant, project_id, body.strategy)
