"""``/v1/keys``: issue, list and revoke API keys of the caller's tenant (admin only).

The same operations as ``agent-memory admin keys`` (both go through
``agent_memory_common.auth.keys``). A key limited to some projects can only issue keys limited to
those projects, so an admin key of one project cannot mint a key to every project.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from agent_memory_common.auth.access import ADMIN
from agent_memory_common.auth.keys import create_key, list_keys, parse_expiry, revoke_key
from agent_memory_common.web.http import ApiError, JSONBytesResponse, error_responses
from agent_memory_query.context import Caller, Ctx
from agent_memory_query.keys.schemas import Key, KeyCreate, KeyCreated, KeyList

# not the service's redacting response class: the secret it would redact is the answer here
router = APIRouter(tags=["keys"], default_response_class=JSONBytesResponse)


@router.post(
    "/v1/keys",
    dependencies=[ADMIN],
    status_code=201,
    response_model=KeyCreated,
    summary="Issue an API key (its secret is in this answer only)",
    responses=error_responses(401, 403, 422),
)
async def post_key(ctx: Ctx, caller: Caller, body: KeyCreate) -> dict[str, Any]:
    projects = body.projects
    if caller.projects is not None:
        if projects is None:
            projects = sorted(caller.projects)
        for index, project in enumerate(projects):
            caller.require_project(project, field=f"projects[{index}]")
    expires_at = parse_expiry(body.expires)
    async with ctx.pool.connection() as conn:
        return await create_key(
            conn,
            tenant=caller.tenant,
            role=body.role,
            projects=projects,
            agent_id=body.agent_id,
            user_id=body.user_id,
            label=body.label,
            expires_at=expires_at,
        )


@router.get(
    "/v1/keys",
    dependencies=[ADMIN],
    response_model=KeyList,
    summary="The tenant's API keys (never their secrets)",
    responses=error_responses(401, 403),
)
async def get_keys(
    ctx: Ctx,
    caller: Caller,
    include_revoked: Annotated[bool, Query(description="List revoked keys too")] = False,
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        return {"keys": await list_keys(conn, caller.tenant, include_revoked=include_revoked)}


@router.delete(
    "/v1/keys/{key_id}",
    dependencies=[ADMIN],
    response_model=Key,
    summary="Revoke an API key (idempotent); every service refuses it within key_cache_s",
    responses=error_responses(401, 403, 404),
)
async def delete_key(
    ctx: Ctx, caller: Caller, key_id: Annotated[str, Path(min_length=1, max_length=64)]
) -> dict[str, Any]:
    async with ctx.pool.connection() as conn:
        row = await revoke_key(conn, key_id, caller.tenant)
    if row is None:
        raise ApiError(404, "not_found", f"no key {key_id!r} in this tenant", field="key_id")
    ctx.auth.forget()
    return row
