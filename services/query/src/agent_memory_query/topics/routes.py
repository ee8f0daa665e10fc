"""``/v1/topics``, ``/v1/topics/{topic_id}``, ``/v1/topics/search``: the themes of a project.

"What themes have I worked on this month?" (the list, ranked by importance as of ``until``),
"what is related to the billing work?" (a topic with its related topics) and "topics about X"
(by meaning). Plain Postgres reads of what the topics service wrote; importance is computed
at read time with the half-life ``AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS``.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from agent_memory_common.auth.access import READ
from agent_memory_common.web.http import ApiError, error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.inputs import ID_PATTERN, ProjectParam
from agent_memory_query.sharing.policy import scoped_project, visible
from agent_memory_query.timeparam import parse_time_param
from agent_memory_query.topics import store
from agent_memory_query.topics.schemas import (
    TopicDetail,
    TopicList,
    TopicSearch,
    TopicSearchAnswer,
)

router = APIRouter(tags=["topics"])

TopicId = Annotated[str, Path(min_length=1, max_length=300, pattern=ID_PATTERN)]
UserParam = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=200,
        pattern=ID_PATTERN,
        description="Only topics with a member segment holding an event of this user",
    ),
]
TimeParam = Annotated[str | None, Query(min_length=1, description="RFC 3339 or epoch ms")]


@router.get(
    "/v1/topics",
    response_model=TopicList,
    summary="Topics by importance; since/until: topics active in the window, ranked as of until",
    responses=error_responses(401, 403, 422),
    dependencies=[READ],
)
async def list_topics(
    ctx: Ctx,
    caller: Caller,
    project_id: ProjectParam = None,
    since: TimeParam = None,
    until: TimeParam = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
    user_id: UserParam = None,
) -> dict[str, Any]:
    start = parse_time_param("since", since)
    end = parse_time_param("until", until)
    if start and end and start >= end:
        raise ApiError(422, "validation_error", "until: must be after since", field="until")
    project_id = scoped_project(caller, project_id)
    async with ctx.pool.connection() as conn:
        topics = await store.list_topics(
            conn,
            caller.tenant,
            project_id=project_id,
            since=start,
            until=end,
            limit=limit,
            half_life_days=ctx.settings.topic_half_life_days,
            user_id=user_id,
        )
    return {"topics": topics}


@router.post(
    "/v1/topics/search",
    response_model=TopicSearchAnswer,
    summary="Topics by meaning: the query's embedding against each topic's centroid",
    responses=error_responses(401, 403, 422),
    dependencies=[READ],
)
async def search_topics(ctx: Ctx, caller: Caller, body: TopicSearch) -> dict[str, Any]:
    project_id = scoped_project(caller, body.project_id)
    if not body.query.strip():
        raise ApiError(422, "validation_error", "query: no word in it", field="query")
    vector = await embed(ctx, body.query)
    async with ctx.pool.connection() as conn:
        topics = await store.search(
            conn,
            caller.tenant,
            project_id,
            body.query,
            vector,
            body.limit,
            ctx.settings.topic_half_life_days,
            user_id=body.user_id,
        )
    return {"query": body.query, "topics": topics}


async def embed(ctx: Any, text: str) -> list[float] | None:
    """The query's vector with the search runtime's embedder; None while it is not loaded."""
    embedder = ctx.search.brainstem.embedder if ctx.search is not None else None
    if embedder is None:
        return None
    vectors = await asyncio.to_thread(embedder.embed, [text])
    return list(vectors[0])


@router.get(
    "/v1/topics/{topic_id}",
    response_model=TopicDetail,
    summary="A topic: its members (segments and their events) and its related topics",
    responses=error_responses(401, 403, 404, 422),
    dependencies=[READ],
)
async def get_topic(
    ctx: Ctx,
    caller: Caller,
    topic_id: TopicId,
    members: Annotated[int, Query(ge=1, le=1000, description="At most this many members")] = 100,
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        found = await store.topic(
            conn, caller.tenant, topic_id, ctx.settings.topic_half_life_days, members
        )
        if found is not None and not await visible(conn, caller, found["project_id"]):
            found = None  # outside the key's projects: as if it did not exist
    if found is None:
        raise ApiError(404, "not_found", f"no topic {topic_id!r}", field="topic_id")
    return found
