"""``/v1/toc``, ``/v1/grips``, ``/v1/memories/{id}/pin``: navigating the table of contents.

The TOC is the layer that always answers: plain Postgres reads of what the summarizer wrote,
no index involved, so an agent can find its way (year -> month -> week -> day -> segment ->
events) and check any bullet against its grips while every search index is down.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from psycopg import AsyncConnection

from agent_memory_common.auth.access import READ, WRITE, Principal
from agent_memory_common.bus.publisher import Outgoing
from agent_memory_common.contracts.event import parse_ts
from agent_memory_common.contracts.subjects import toc_subject
from agent_memory_common.contracts.ulid import new_ulid
from agent_memory_common.core.logs import get_logger
from agent_memory_common.web.http import ApiError, error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.inputs import ID_PATTERN, ProjectParam
from agent_memory_query.search.usage import used_grip, used_node
from agent_memory_query.sharing.policy import scoped_project, visible
from agent_memory_query.timeparam import parse_time_param
from agent_memory_query.toc import store
from agent_memory_query.toc.schemas import (
    GripAnswer,
    NodeAnswer,
    PinAnswer,
    TocAt,
    TocChildren,
    TocSearch,
    TocSearchAnswer,
    TocYears,
)
from agent_memory_retrieval.indexing.sources import node_version_message

router = APIRouter(tags=["toc"])
log = get_logger(__name__)
PUBLISH_TIMEOUT_S = 2.0

MAX_QUERY_CHARS = 1000
NodeId = Annotated[str, Path(min_length=1, max_length=300, pattern=ID_PATTERN)]
UserParam = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=200,
        pattern=ID_PATTERN,
        description="Only nodes holding an event of this user (team projects)",
    ),
]


def _not_found(what: str, value: str, field: str) -> ApiError:
    return ApiError(404, "not_found", f"no {what} {value!r}", field=field)


@router.get(
    "/v1/toc",
    dependencies=[READ],
    response_model=TocYears,
    summary="The years of a project's table of contents (of every project if none is given)",
    responses=error_responses(401, 403, 422),
)
async def toc_years(
    ctx: Ctx,
    caller: Caller,
    project_id: ProjectParam = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    user_id: UserParam = None,
) -> dict[str, Any]:
    project_id = scoped_project(caller, project_id)
    async with ctx.pool.connection() as conn:
        years = await store.years(conn, caller.tenant, project_id, limit, user_id)
    return {"project_id": project_id, "years": years}


@router.get(
    "/v1/toc/nodes/{node_id}",
    dependencies=[READ],
    response_model=NodeAnswer,
    summary="A node: title, bullets with their grips, key phrases, salience, kind, children",
    responses=error_responses(401, 404, 422),
)
async def toc_node(
    ctx: Ctx,
    caller: Caller,
    node_id: NodeId,
    version: Annotated[
        int | None, Query(ge=1, description="An older version; default latest")
    ] = None,
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        node = await _visible_node(conn, caller, node_id, version)
    used_node(ctx, caller.tenant, node_id)  # opened by id: used (the usage factor)
    return node


async def _visible_node(
    conn: Any, caller: Principal, node_id: str, version: int | None, *, full: bool = True
) -> dict[str, Any]:
    """The node, or the 404 of an unknown one when it lies outside the caller's bounds; not
    ``full``: its stored row only (``store.node_head``), for routes that show no bullets."""
    read = store.node if full else store.node_head
    found = await read(conn, caller.tenant, node_id, version)
    if found is not None and await _shown(conn, caller, found):
        return found
    if found is None and version is not None and await _node_visible(conn, caller, node_id):
        raise _not_found(f"version {version} of node", node_id, "version")
    raise _not_found("node", node_id, "node_id")


async def _node_visible(conn: Any, caller: Principal, node_id: str) -> bool:
    latest = await store.node_head(conn, caller.tenant, node_id, None)
    return latest is not None and await _shown(conn, caller, latest)


async def _shown(conn: Any, caller: Principal, node: dict[str, Any]) -> bool:
    """A segment is its agent's; a rollup node spans the agents of its project."""
    return await visible(conn, caller, node["project_id"], node.get("agent_id"))


@router.get(
    "/v1/toc/nodes/{node_id}/children",
    dependencies=[READ],
    response_model=TocChildren,
    summary="A node's children (latest versions, in time order); a segment's events",
    responses=error_responses(401, 404, 422),
)
async def toc_children(
    ctx: Ctx,
    caller: Caller,
    node_id: NodeId,
    version: Annotated[int | None, Query(ge=1, description="Children of an older version")] = None,
    user_id: UserParam = None,
) -> dict[str, Any]:
    """With ``user_id``: only the children holding an event of that user, only their events."""
    tenant = caller.tenant
    async with ctx.pool.connection() as conn:
        found = await _visible_node(conn, caller, node_id, version, full=False)
        out: dict[str, Any] = {
            "node_id": node_id,
            "level": found["level"],
            "version": found["version"],
        }
        if found["level"] == "segment":
            events = await store.events_by_id(conn, tenant, found["event_ids"])
            overlap = set(found["event_ids"][: found["overlap_count"] or 0])
            out["children"] = []
            out["events"] = [
                store.event_json(e) | {"overlap": e["event_id"] in overlap}
                for e in events
                if user_id is None or e["user_id"] == user_id
            ]
        else:
            out["children"] = await store.latest_summaries(
                conn, tenant, found["child_ids"], user_id
            )
    return out


@router.get(
    "/v1/toc/at",
    dependencies=[READ],
    response_model=TocAt,
    summary="The path year -> month -> week -> day -> segment holding an instant",
    responses=error_responses(401, 403, 404, 422),
)
async def toc_at(
    ctx: Ctx,
    caller: Caller,
    ts: Annotated[str, Query(min_length=1, description="RFC 3339 or epoch ms")],
    project_id: Annotated[str, Query(min_length=1, max_length=200, pattern=ID_PATTERN)],
) -> dict[str, Any]:
    caller.require_project(project_id)
    tenant = caller.tenant
    instant = parse_time_param("ts", ts)
    assert instant is not None
    async with ctx.pool.connection() as conn:
        path, segment = await store.path_at(conn, tenant, project_id, instant)
        if not path:
            raise ApiError(
                404,
                "not_found",
                f"nothing in the table of contents of {project_id!r} at {instant.isoformat()}",
                field="ts",
            )
        nodes = await store.latest_summaries(conn, tenant, path)
    order = {node_id: i for i, node_id in enumerate(path)}
    nodes.sort(key=lambda n: order[n["node_id"]])
    return {"ts": instant, "project_id": project_id, "segment_id": segment, "path": nodes}


@router.get(
    "/v1/grips/{grip_id}",
    dependencies=[READ],
    response_model=GripAnswer,
    summary="A grip: its excerpt, the events it points at, and N events of context each side",
    responses=error_responses(401, 404, 422),
)
async def grip(
    ctx: Ctx,
    caller: Caller,
    grip_id: NodeId,
    context: Annotated[int, Query(ge=0, le=50, description="Events before and after")] = 2,
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        found = await store.grip_with_context(conn, caller.tenant, grip_id, context)
        if found is not None:
            agents = {e["agent_id"] for e in found["events"]}
            agent = agents.pop() if len(agents) == 1 else None
            if not await visible(conn, caller, found["project_id"], agent):
                found = None  # outside the key's bounds: as if it did not exist
    if found is None:
        raise _not_found("grip", grip_id, "grip_id")
    used_grip(ctx, caller.tenant, grip_id)  # opened by id: used (the usage factor)
    return found


@router.post(
    "/v1/toc/search",
    dependencies=[READ],
    response_model=TocSearchAnswer,
    summary="Index-free term search over node titles, bullets and key phrases",
    responses=error_responses(401, 403, 404, 422),
)
async def toc_search(ctx: Ctx, caller: Caller, body: TocSearch) -> dict[str, Any]:
    tenant = caller.tenant
    project_id = scoped_project(caller, body.project_id)
    if len(body.query) > MAX_QUERY_CHARS:
        raise ApiError(
            422, "validation_error", f"query: at most {MAX_QUERY_CHARS} characters", field="query"
        )
    terms = store.search_terms(body.query)
    if not terms:
        raise ApiError(422, "validation_error", "query: no searchable word in it", field="query")
    since = parse_ts(body.since) if body.since is not None else None
    until = parse_ts(body.until) if body.until is not None else None
    if since and until and since >= until:
        raise ApiError(422, "validation_error", "until: must be after since", field="until")
    async with ctx.pool.connection() as conn:
        if body.node_id is not None:
            await _visible_node(conn, caller, body.node_id, None, full=False)
        hits = await store.search(
            conn,
            tenant,
            terms,
            project_id=project_id,
            root=body.node_id,
            since=since,
            until=until,
            levels=list(body.levels) if body.levels else None,
            limit=body.limit,
            user_id=body.user_id,
        )
    return {"terms": terms, "hits": hits}


async def _pin(ctx: Ctx, caller: Principal, memory_id: str, pinned: bool) -> dict[str, Any]:
    tenant = caller.tenant
    async with ctx.pool.connection() as conn:
        async with conn.transaction():  # rolled back when the memory is outside the bounds
            result = await store.pin(conn, tenant, memory_id, pinned)
            if result is None or not await visible(conn, caller, result[2]):
                raise _not_found("memory (grip or node)", memory_id, "memory_id")
        answer, (node_id, version), _ = result
        answer["reindexed"] = await _republish(ctx, conn, tenant, node_id, version)
    if pinned and answer["type"] == "grip":  # pinned: used (the usage factor)
        used_grip(ctx, tenant, memory_id)  # a grip id starts with "grip:"
    elif pinned:
        used_node(ctx, tenant, node_id)
    return answer


async def _republish(
    ctx: Ctx, conn: AsyncConnection, tenant: str, node_id: str, version: int
) -> bool:
    """Announce the pinned node version again, so that the indexes take the new salience.

    The pin itself is committed already and stays whatever happens here: with NATS away the
    indexes keep the old salience until the node's next version or ``rebuild-index``, and the
    answer says ``reindexed: false``.
    """
    try:
        message = await node_version_message(conn, tenant, node_id, version)
        if message is None:
            return False
        # a message id of its own: the version's id is taken by its first announcement
        pin_id = f"{message.msg_id}/pin/{new_ulid()}"
        outgoing = Outgoing(toc_subject(tenant, message.project_id), message.to_wire(), pin_id)
        await ctx.link.publish([outgoing], timeout=PUBLISH_TIMEOUT_S)
    except Exception as exc:  # the pin is stored; only the indexes' copy lags
        log.warning("toc.pin_not_reindexed", node_id=node_id, error=repr(exc))
        return False
    return True


@router.post(
    "/v1/memories/{memory_id}/pin",
    dependencies=[WRITE],
    response_model=PinAnswer,
    summary="Pin a grip or a node: +0.20 salience, in the TOC and (republished) in search",
    responses=error_responses(401, 404, 422),
)
async def pin(ctx: Ctx, caller: Caller, memory_id: NodeId) -> dict[str, Any]:
    return await _pin(ctx, caller, memory_id, True)


@router.post(
    "/v1/memories/{memory_id}/unpin",
    dependencies=[WRITE],
    response_model=PinAnswer,
    summary="Unpin a grip or a node",
    responses=error_responses(401, 404, 422),
)
async def unpin(ctx: Ctx, caller: Caller, memory_id: NodeId) -> dict[str, Any]:
    return await _pin(ctx, caller, memory_id, False)
