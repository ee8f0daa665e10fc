"""Composition root of the pruner: the indexes, the schedule, and the on-demand route.

``POST /v1/admin/cleanup {"dry_run": true, "project_id"?}`` answers per index and level how many
entries would go (dry run) or went, with a few examples, for the caller's tenant; admins only
when authentication is on (``admin.py``). The scheduled run covers every tenant.

Every route declares its role like those of the gateway and the query service (``ADMIN``,
``PUBLIC``; a route without one is admin-only and fails ``tests/test_role_matrix.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Annotated

import psycopg
from fastapi import Depends, FastAPI
from pydantic import BaseModel, ConfigDict, Field

from agent_memory_common.auth.access import (
    ADMIN,
    PUBLIC,
    Authenticator,
    Principal,
    authorize,
    install_http_guards,
)
from agent_memory_common.core.metrics import HttpMetrics
from agent_memory_common.db.postgres import make_pool, prepare_database
from agent_memory_common.web.apidocs import install_api_docs
from agent_memory_common.web.http import (
    ApiError,
    JSONBytesResponse,
    error_responses,
    install_error_handlers,
    reject_unknown_query_parameters,
)
from agent_memory_pruner.admin import cleanup_tenant
from agent_memory_pruner.pruner import Pruner
from agent_memory_pruner.settings import Settings
from agent_memory_retrieval.lifecycle.cleanup import CleanupReport, CleanupScope

_ID = r"^[^\x00-\x1f\x7f]+$"


class CleanupRequest(BaseModel):
    """The body of ``POST /v1/admin/cleanup``; unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")

    dry_run: bool = Field(
        default=False, description="Only count what would go; without it, entries are removed."
    )
    project_id: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=_ID, description="One project only."
    )


class Health(BaseModel):
    status: str


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    pruner = Pruner(settings)
    auth = Authenticator(settings.tokens, None, cache_s=settings.key_cache_s)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(prepare_database, settings.pg_dsn)
        await pruner.open()
        auth.pool = make_pool(settings.pg_dsn, max_size=2)  # API keys are looked up here
        await auth.pool.open()
        stop = asyncio.Event()
        scheduled = asyncio.create_task(pruner.schedule(stop))
        try:
            yield
        finally:
            stop.set()
            await scheduled
            await pruner.close()
            await auth.pool.close()

    app = FastAPI(
        title="agent-memory pruner",
        # a route that declares no role (agent_memory_common.auth.access) is admin-only: fail closed
        dependencies=[Depends(reject_unknown_query_parameters), Depends(authorize)],
        version="0.1.0",
        docs_url=None,  # install_api_docs: /docs and /redoc from local files
        redoc_url=None,
        lifespan=lifespan,
        default_response_class=JSONBytesResponse,
    )
    app.state.auth = auth
    install_error_handlers(app)
    install_api_docs(app)
    install_http_guards(app, settings)  # Host, browsers, failed keys, bodies
    app.add_middleware(HttpMetrics, service="pruner")  # outermost: counts every answer; /metrics

    @app.exception_handler(psycopg.OperationalError)
    async def _pg_down(_: object, exc: psycopg.OperationalError) -> JSONBytesResponse:
        err = ApiError(503, "unavailable", "Postgres unavailable", headers={"Retry-After": "2"})
        return JSONBytesResponse(err.body(), status_code=503, headers=err.headers)

    @app.post(
        "/v1/admin/cleanup",
        response_model=CleanupReport,
        summary="Apply the retention matrix now (or, dry_run, say what would go)",
        responses=error_responses(401, 403, 422, 503),
    )
    async def cleanup(body: CleanupRequest, caller: Annotated[Principal, ADMIN]) -> CleanupReport:
        tenant = cleanup_tenant(caller, body.project_id)
        scope = CleanupScope(tenant=tenant, project_id=body.project_id)
        return await pruner.run(scope, dry_run=body.dry_run)

    @app.get(
        "/healthz", dependencies=[PUBLIC], summary="The process is alive", response_model=Health
    )
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz",
        dependencies=[PUBLIC],
        summary="The indexes are open",
        response_model=Health,
        responses=error_responses(503),
    )
    async def readyz() -> dict[str, str]:
        if pruner.text is None or pruner.vectors is None:
            raise ApiError(503, "unavailable", "starting", headers={"Retry-After": "1"})
        return {"status": "ready"}

    return app
