"""``/v1/episodes`` and ``/v1/playbooks``: what agents tried, how it went, what they learnt.

An episode is a memory of kind ``episode``: a task, the actions taken, an outcome
(success | failure | partial), lessons and a value score in [0, 1] (how worth recalling it is).
``GET /v1/episodes/similar`` finds past episodes like a new task, so an agent starts from what
worked (or did not) last time.

The playbook is the ACE (Agentic Context Engineering) playbook of a project: lesson entries with
helpful / harmful / neutral counts, curated here (merged by meaning, see ``playbook.py``) so that
every agent of the project shares one playbook that survives restarts.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel, Field

from agent_memory_common.auth.access import READ, WRITE, Principal
from agent_memory_common.contracts.event import parse_ts
from agent_memory_common.contracts.ulid import new_ulid
from agent_memory_common.core.settings import CommonSettings
from agent_memory_common.web.http import ApiError, error_responses
from agent_memory_query.context import Caller, Ctx, QueryContext
from agent_memory_query.episodes import store
from agent_memory_query.episodes.playbook import EmbedderChoice, choose_embedder
from agent_memory_query.episodes.schemas import (
    ActionsAdded,
    ActionsIn,
    CurateAnswer,
    CurateIn,
    Episode,
    EpisodeComplete,
    EpisodeStart,
    PlaybookAnswer,
    SimilarEpisodes,
)
from agent_memory_query.inputs import ID_PATTERN
from agent_memory_query.sharing.policy import scoped_project, visible

router = APIRouter(tags=["episodes"])

IdStr = Annotated[str, Field(min_length=1, max_length=200, pattern=ID_PATTERN)]


class PlaybookOptions(BaseModel):
    embedder: Literal["auto", "hashing"] = Field(
        default="auto",
        description="auto: the search embedder once loaded, else hashing; hashing: always.",
    )
    hashing_merge_threshold: float = Field(default=0.6, gt=0, le=1)
    model_merge_threshold: float = Field(default=0.8, gt=0, le=1)


class PlaybookSettings(CommonSettings):
    """``AGENT_MEMORY_PLAYBOOK__*``; kept apart from the service settings it does not need."""

    playbook: PlaybookOptions = PlaybookOptions()


@functools.cache
def playbook_options() -> PlaybookOptions:
    return PlaybookSettings().playbook


def embedder_choice(ctx: QueryContext) -> EmbedderChoice:
    search = getattr(ctx, "search", None)
    model = getattr(getattr(search, "brainstem", None), "embedder", None)
    opts = playbook_options()
    return choose_embedder(
        model,
        mode=opts.embedder,
        hashing_threshold=opts.hashing_merge_threshold,
        model_threshold=opts.model_merge_threshold,
    )


# -- episodes ---------------------------------------------------------------------------------


def _action_json(row: dict[str, Any]) -> dict[str, Any]:
    return dict(row)


async def _visible_episode(conn: Any, caller: Principal, episode_id: str) -> dict[str, Any]:
    """The episode, or a 404 (as for an unknown id) when it lies outside the caller's bounds."""
    row = await store.get_episode(conn, caller.tenant, episode_id)
    if row is None or not await visible(conn, caller, row["project_id"], row["agent_id"]):
        raise ApiError(404, "not_found", f"no episode {episode_id!r}", field="episode_id")
    return row


@router.post(
    "/v1/episodes",
    dependencies=[WRITE],
    response_model=Episode,
    status_code=201,
    summary="Start an episode (a task an agent takes on)",
    responses=error_responses(401, 403, 409, 422),
)
async def start_episode(
    ctx: Ctx, caller: Caller, body: EpisodeStart, response: Response
) -> dict[str, Any]:
    caller.require_project(body.project_id)
    tenant = caller.tenant
    data = body.model_dump()
    data["episode_id"] = body.episode_id or new_ulid()
    async with ctx.pool.connection() as conn, conn.transaction():
        row, created = await store.start_episode(conn, tenant, data)
    if not created:
        response.status_code = 200
    return store.episode_json(row)


@router.get(
    "/v1/episodes/similar",
    dependencies=[READ],
    response_model=SimilarEpisodes,
    summary="Completed episodes like a task, best first",
    responses=error_responses(401, 403, 422),
)
async def similar_episodes(
    ctx: Ctx,
    caller: Caller,
    q: Annotated[str, Query(min_length=1, max_length=4000, description="The new task")],
    project_id: str | None = None,
    outcome: Literal["success", "failure", "partial"] | None = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 5,
) -> dict[str, Any]:
    project_id = scoped_project(caller, project_id)
    async with ctx.pool.connection() as conn:
        rows = await store.similar_episodes(
            conn, caller.tenant, q, project_id=project_id, outcome=outcome, limit=limit
        )
        rows = [r for r in rows if await visible(conn, caller, r["project_id"], r["agent_id"])]
    return {"results": [store.episode_json(r) for r in rows]}


@router.get(
    "/v1/episodes/{episode_id}",
    dependencies=[READ],
    response_model=Episode,
    summary="One episode with its actions",
    responses=error_responses(401, 404, 422),
)
async def get_episode(
    ctx: Ctx, caller: Caller, episode_id: Annotated[str, Path(min_length=1)]
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        row = await _visible_episode(conn, caller, episode_id)
        actions = await store.list_actions(conn, caller.tenant, episode_id)
    return store.episode_json(row, [_action_json(a) for a in actions])


@router.post(
    "/v1/episodes/{episode_id}/actions",
    dependencies=[WRITE],
    response_model=ActionsAdded,
    status_code=201,
    summary="Record actions of a running episode (idempotent by action_id)",
    responses=error_responses(401, 404, 409, 422),
)
async def add_actions(
    ctx: Ctx,
    caller: Caller,
    body: ActionsIn,
    episode_id: Annotated[str, Path(min_length=1)],
) -> dict[str, Any]:
    actions = []
    for item in body.actions:
        action = item.model_dump()
        action["action_id"] = item.action_id or new_ulid()
        action["ts"] = parse_ts(item.ts) if item.ts is not None else None
        actions.append(action)
    async with ctx.pool.connection() as conn, conn.transaction():
        await _visible_episode(conn, caller, episode_id)
        total = await store.add_actions(conn, caller.tenant, episode_id, actions)
    return {
        "episode_id": episode_id,
        "action_ids": [a["action_id"] for a in actions],
        "actions_count": total,
    }


@router.post(
    "/v1/episodes/{episode_id}/complete",
    dependencies=[WRITE],
    response_model=Episode,
    summary="Complete an episode with its outcome and lessons",
    responses=error_responses(401, 404, 409, 422),
)
async def complete_episode(
    ctx: Ctx,
    caller: Caller,
    body: EpisodeComplete,
    episode_id: Annotated[str, Path(min_length=1)],
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn, conn.transaction():
        await _visible_episode(conn, caller, episode_id)
        row = await store.complete_episode(
            conn,
            caller.tenant,
            episode_id,
            outcome=body.outcome,
            lessons=list(body.lessons),
            summary=body.summary,
            value=body.value,
        )
    return store.episode_json(row)


# -- playbook ---------------------------------------------------------------------------------


@router.get(
    "/v1/playbooks/{project_id}/entries",
    dependencies=[READ],
    response_model=PlaybookAnswer,
    summary="The project's playbook; with q, the entries most relevant to q first",
    responses=error_responses(401, 403, 422),
)
async def get_playbook(
    ctx: Ctx,
    caller: Caller,
    project_id: Annotated[str, Path(min_length=1, max_length=200)],
    q: Annotated[str | None, Query(min_length=1, max_length=4000)] = None,
    section: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> dict[str, Any]:
    caller.require_project(project_id)
    choice = embedder_choice(ctx)
    async with ctx.pool.connection() as conn:
        entries = await store.read_playbook(
            conn, caller.tenant, project_id, choice, q=q, section=section, limit=limit
        )
    return {"project_id": project_id, "embedder": choice.name, "entries": entries}


@router.post(
    "/v1/playbooks/{project_id}/entries",
    dependencies=[WRITE],
    response_model=CurateAnswer,
    summary="Curate lessons into the playbook: merge by meaning, count +/-/o marks",
    responses=error_responses(401, 403, 404, 422),
)
async def post_playbook(
    ctx: Ctx,
    caller: Caller,
    body: CurateIn,
    project_id: Annotated[str, Path(min_length=1, max_length=200)],
) -> dict[str, Any]:
    caller.require_project(project_id)
    tenant = caller.tenant
    choice = embedder_choice(ctx)
    stamp = datetime.now().astimezone().isoformat()
    lessons = [
        store.Lesson(
            mark=item.mark,
            text=item.text,
            entry_id=item.id,
            section=item.section,
            source={**item.source, "agent_id": body.agent_id, "at": stamp}
            if body.agent_id or item.source
            else {},
        )
        for item in body.entries
    ]
    async with ctx.pool.connection() as conn, conn.transaction():
        results = await store.curate(
            conn, tenant, project_id, lessons, choice, submission_id=body.submission_id
        )
    return {"project_id": project_id, "embedder": choice.name, "results": results}
