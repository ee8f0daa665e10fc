"""``/v1/erasures``: erase events and everything derived from them, with a receipt.

``POST`` writes the audit row and the tombstones in one transaction (from then on no service
stores, indexes or summarizes those events again), then publishes the request on
``mem.erasure.<tenant>.<project>``; every service that owns data erases its part and reports.
``GET /v1/erasures/{id}`` is the receipt; ``GET /v1/erasures`` the audit log. Everything is
scoped by the caller's tenant: another tenant's erasure is a 404, another tenant's events are
never in scope.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from agent_memory_common.auth.access import ADMIN
from agent_memory_common.contracts.ulid import new_ulid
from agent_memory_common.core.logs import get_logger
from agent_memory_common.web.http import ApiError, error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.erasures import store
from agent_memory_query.erasures.coordinator import publish_request
from agent_memory_query.erasures.schemas import (
    ErasureAccepted,
    ErasureCreate,
    ErasureList,
    ErasurePreview,
    ErasureReceipt,
)
from agent_memory_query.sharing.policy import scoped_project, visible

router = APIRouter(tags=["erasures"])
log = get_logger(__name__)

ErasureId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[0-9A-Za-z_\-]+$")]


@router.post(
    "/v1/erasures",
    status_code=202,
    response_model=ErasureAccepted,
    summary="Erase events (a session, an agent, a user, a project) and all that derives from them",
    responses=error_responses(401, 403, 422, 503),
    dependencies=[ADMIN],
)
async def create_erasure(ctx: Ctx, caller: Caller, body: ErasureCreate) -> dict[str, Any]:
    caller.require_project(body.project_id)
    tenant = caller.tenant
    erasure_id = "er_" + new_ulid()
    scope = body.scope.wire()
    async with ctx.pool.connection() as conn, conn.transaction():
        who = f"key:{caller.key_id}" if caller.key_id else tenant  # who asked, never content
        events = await store.create(conn, erasure_id, tenant, body.project_id, scope, who)
    log.info("erasure.accepted", erasure_id=erasure_id, events=events, scope=sorted(scope))
    row = {"erasure_id": erasure_id, "tenant": tenant, "project_id": body.project_id}
    try:
        await publish_request(ctx, {**row, "scope": scope})
    except Exception as exc:  # the coordinator publishes it again; the tombstones hold already
        log.warning("erasure.publish_deferred", erasure_id=erasure_id, error=repr(exc))
    return {"erasure_id": erasure_id, "status": "erasing", "events": events}


@router.post(
    "/v1/erasures/dry-run",
    response_model=ErasurePreview,
    summary="What an erasure of this scope would remove now; nothing is changed",
    responses=error_responses(401, 403, 422),
    dependencies=[ADMIN],
)
async def preview_erasure(ctx: Ctx, caller: Caller, body: ErasureCreate) -> dict[str, Any]:
    caller.require_project(body.project_id)
    tenant = caller.tenant
    scope = body.scope.wire()
    async with ctx.pool.connection() as conn:
        counts, sessions = await store.preview(conn, tenant, body.project_id, scope)
    return {"project_id": body.project_id, "scope": scope, "counts": counts, "sessions": sessions}


@router.get(
    "/v1/erasures/{erasure_id}",
    response_model=ErasureReceipt,
    summary="An erasure's status and receipt (counts per store, verified)",
    responses=error_responses(401, 403, 404, 422),
    dependencies=[ADMIN],
)
async def get_erasure(ctx: Ctx, caller: Caller, erasure_id: ErasureId) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        found = await store.get(conn, caller.tenant, erasure_id)
        if found is not None and not await visible(conn, caller, found["project_id"]):
            found = None  # another project's erasure: as if it did not exist
    if found is None:
        raise ApiError(404, "not_found", f"no erasure {erasure_id!r}", field="erasure_id")
    return found


@router.get(
    "/v1/erasures",
    response_model=ErasureList,
    summary="The audit log of erasures: who, when, scope, counts; never content",
    responses=error_responses(401, 403, 422),
    dependencies=[ADMIN],
)
async def list_erasures(
    ctx: Ctx,
    caller: Caller,
    project_id: Annotated[
        str | None, Query(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    project_id = scoped_project(caller, project_id)
    async with ctx.pool.connection() as conn:
        return {"erasures": await store.listing(conn, caller.tenant, project_id, limit)}
