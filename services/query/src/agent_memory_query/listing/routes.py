"""``GET /v1/projects``, ``GET /v1/projects/{project_id}/sessions``, ``GET /v1/agents``.

The first thing a new user (and the dashboard) asks: what is in here? Answered from the event
log, so a project is listed as soon as its first event is stored. A key sees only what it may
read (``sharing/policy.py``): its projects, and under ``separate`` its own agent's events.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from agent_memory_common.auth.access import READ
from agent_memory_common.web.http import ApiError, error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.inputs import ID_PATTERN, ProjectParam
from agent_memory_query.listing import store
from agent_memory_query.listing.schemas import Agents, Projects, Sessions
from agent_memory_query.sharing.policy import read_bounds

router = APIRouter(tags=["listing"])

Limit = Annotated[int, Query(ge=1, le=1000)]


@router.get(
    "/v1/projects",
    response_model=Projects,
    summary="Projects with events, sessions, agents, first/last activity and open segments",
    responses=error_responses(401, 403, 422),
    dependencies=[READ],
)
async def list_projects(ctx: Ctx, caller: Caller, limit: Limit = 100) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        rows = await store.projects(conn, caller.tenant, await read_bounds(conn, caller), limit)
    return {"projects": rows}


@router.get(
    "/v1/projects/{project_id}/sessions",
    response_model=Sessions,
    summary="A project's sessions, latest first: agents, users, time span, events, latest title",
    responses=error_responses(401, 403, 404, 422),
    dependencies=[READ],
)
async def list_sessions(
    ctx: Ctx,
    caller: Caller,
    project_id: Annotated[str, Path(min_length=1, max_length=200, pattern=ID_PATTERN)],
    limit: Limit = 100,
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        bounds = await read_bounds(conn, caller)  # another project of a bound key: a 404
        rows = await store.sessions(conn, caller.tenant, bounds, project_id, limit)
    if not rows:
        raise ApiError(404, "not_found", f"no project {project_id!r}", field="project_id")
    return {"project_id": project_id, "sessions": rows}


@router.get(
    "/v1/agents",
    response_model=Agents,
    summary="Agents that wrote events (in one project if given): events, sessions, projects",
    responses=error_responses(401, 403, 422),
    dependencies=[READ],
)
async def list_agents(
    ctx: Ctx,
    caller: Caller,
    project_id: ProjectParam = None,
    limit: Limit = 100,
) -> dict[str, Any]:
    if project_id is not None:
        caller.require_project(project_id)
    async with ctx.pool.connection() as conn:
        bounds = await read_bounds(conn, caller)
        rows = await store.agents(conn, caller.tenant, bounds, project_id, limit)
    return {"agents": rows}
