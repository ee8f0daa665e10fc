"""``GET/PUT /v1/projects/{project_id}/recall``: a project's switch for recall injection and
what injection has cost it; ``GET /v1/recall/projects``: the same for every project at once.

``injection: "off"`` stops what agents are given unasked (the brief at a session's start, the
recall on each prompt) on every runtime and machine at once: ``POST /v1/recall`` answers
``silence: "off"`` and the brief an empty context. Capture, search and every read an agent asks
for go on. How the recall and brief routes read it cheaply: ``switch.py``. The cost is each
answer's ``tokens``, counted per project, session and UTC day (``usage.py``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from agent_memory_common.auth.access import ADMIN, READ
from agent_memory_common.db.postgres import reading
from agent_memory_common.web.http import error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.injection import cost, store
from agent_memory_query.injection.schemas import InjectionUpdate, ProjectRecall, RecallProjects
from agent_memory_query.inputs import ID_PATTERN
from agent_memory_query.sharing.policy import read_bounds

router = APIRouter(tags=["recall"])
ProjectId = Annotated[str, Path(min_length=1, max_length=200, pattern=ID_PATTERN)]
Sessions = Annotated[
    int, Query(ge=0, le=100, description="Sessions listed, the most tokens over 30 days first")
]


async def _project(ctx: Ctx, caller: Caller, project_id: str, sessions: int) -> dict[str, Any]:
    day = cost.today()
    first = cost.since(day)
    async with reading(ctx.pool) as conn:
        injection, updated_at = await store.switch(conn, caller.tenant, project_id)
        days = await store.project_days(conn, caller.tenant, project_id, first)
        top: list[dict[str, Any]] = []
        if sessions:
            bounds = await read_bounds(conn, caller)
            top = await store.top_sessions(conn, caller.tenant, project_id, first, bounds, sessions)
    return {
        "project_id": project_id,
        "injection": injection,
        "updated_at": updated_at,
        "windows": cost.windows(days, day),
        "sessions": [
            {
                "session_id": row["session_id"] or None,
                "answers": int(row["answers"]),
                "given": int(row["given"]),
                "tokens": int(row["tokens"]),
                "last_at": row["last_at"],
            }
            for row in top
        ],
    }


@router.get(
    "/v1/projects/{project_id}/recall",
    response_model=ProjectRecall,
    summary="A project's recall injection (on or off) and the tokens it gave agents unasked",
    responses=error_responses(401, 403, 422),
    dependencies=[READ],
)
async def get_recall(
    ctx: Ctx, caller: Caller, project_id: ProjectId, sessions: Sessions = 10
) -> dict[str, Any]:
    caller.require_project(project_id)  # like the retention routes: a 403 naming project_id
    return await _project(ctx, caller, project_id, sessions)


@router.put(
    "/v1/projects/{project_id}/recall",
    response_model=ProjectRecall,
    summary="Turn a project's recall injection (brief and per-prompt recall) on or off",
    responses=error_responses(401, 403, 422),
    dependencies=[ADMIN],
)
async def put_recall(
    ctx: Ctx, caller: Caller, project_id: ProjectId, body: InjectionUpdate
) -> dict[str, Any]:
    caller.require_project(project_id)
    async with ctx.pool.connection() as conn:
        await store.set_switch(conn, caller.tenant, project_id, body.injection)
    ctx.injection.was_set(caller.tenant, project_id, body.injection)  # committed: now here
    return await _project(ctx, caller, project_id, 10)


@router.get(
    "/v1/recall/projects",
    response_model=RecallProjects,
    summary="Every project's recall injection and the tokens it gave, the most over 7 days first",
    responses=error_responses(401),
    dependencies=[READ],
)
async def get_recall_projects(ctx: Ctx, caller: Caller) -> dict[str, Any]:
    projects = sorted(caller.projects) if caller.projects is not None else None
    day = cost.today()
    async with reading(ctx.pool) as conn:
        rows = await store.tenant_days(conn, caller.tenant, projects, cost.since(day))
        switches = await store.tenant_switches(conn, caller.tenant, projects)
    by_project: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_project.setdefault(row["project_id"], []).append(row)
    states = {row["project_id"]: row for row in switches}
    answer: list[dict[str, Any]] = []
    for project_id in sorted(set(by_project) | set(states)):
        state = states.get(project_id)
        answer.append(
            {
                "project_id": project_id,
                "injection": state["injection"] if state else "on",
                "updated_at": state["updated_at"] if state else None,
                "windows": cost.windows(by_project.get(project_id, []), day),
            }
        )
    week = cost.WINDOWS.index(7)
    answer.sort(key=lambda p: -int(p["windows"][week]["tokens"]))  # stable: by id within a tie
    return {"projects": answer}
