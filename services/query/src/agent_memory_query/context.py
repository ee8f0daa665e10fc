"""What every route needs, built once in the lifespan and reached through dependencies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.auth.access import Authenticator, Principal, caller
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_query.settings import Settings

if TYPE_CHECKING:
    from agent_memory_query.injection.switch import InjectionSwitch
    from agent_memory_query.injection.usage import UsageRecorder
    from agent_memory_query.search.runtime import SearchRuntime


@dataclass
class QueryContext:
    settings: Settings
    pool: AsyncConnectionPool
    link: NatsLink
    auth: Authenticator
    injection: InjectionSwitch  # whether a project turned recall injection off (injection/)
    usage: UsageRecorder  # what recall and briefs injected, per project and session (injection/)
    search: SearchRuntime | None = None  # indexes, embedder and brainstem (search/)


async def get_context(request: Request) -> QueryContext:
    """Async on purpose: FastAPI runs a plain ``def`` dependency in its thread pool, and that
    hop (a thread wake-up and the GIL back) cost every query route ~1 ms under load."""
    ctx = request.app.state.ctx
    assert isinstance(ctx, QueryContext)
    return ctx


async def get_tenant(request: Request) -> str:
    """The caller's tenant from its key (``default`` in local mode).

    Authentication only: the role is checked by the route's declared ``Access``
    (``agent_memory_common.auth.access``: ``dependencies=[READ]``).
    """
    return (await caller(request)).tenant


Ctx = Annotated[QueryContext, Depends(get_context)]
Tenant = Annotated[str, Depends(get_tenant)]
Caller = Annotated[Principal, Depends(caller)]
