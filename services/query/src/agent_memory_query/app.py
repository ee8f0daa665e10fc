"""Composition root of the query service."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import psycopg
from fastapi import Depends, FastAPI

from agent_memory_common.auth.access import Authenticator, authorize, install_http_guards
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.core.metrics import HttpMetrics
from agent_memory_common.db.postgres import make_pool, prepare_database
from agent_memory_common.web.apidocs import install_api_docs
from agent_memory_common.web.http import (
    ApiError,
    JSONBytesResponse,
    RedactingJSONResponse,
    install_error_handlers,
    reject_unknown_query_parameters,
)
from agent_memory_query import status
from agent_memory_query.context import QueryContext
from agent_memory_query.episodes import routes as episodes
from agent_memory_query.erasures import routes as erasures
from agent_memory_query.erasures.coordinator import ErasureCoordinator
from agent_memory_query.events import routes as events
from agent_memory_query.injection import routes as injection
from agent_memory_query.injection.switch import InjectionSwitch
from agent_memory_query.injection.usage import UsageRecorder
from agent_memory_query.inputs import guard_inputs
from agent_memory_query.keys import routes as keys
from agent_memory_query.listing import routes as listing
from agent_memory_query.mcp.routes import McpEndpoint
from agent_memory_query.recall import routes as recall
from agent_memory_query.retention import routes as retention
from agent_memory_query.search import routes as search
from agent_memory_query.search.runtime import open_search
from agent_memory_query.settings import Settings
from agent_memory_query.sharing import routes as sharing
from agent_memory_query.toc import routes as toc
from agent_memory_query.topics import routes as topics


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    mcp = McpEndpoint(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        prepare_database(settings.pg_dsn)
        pool = make_pool(settings.pg_dsn, max_size=settings.query.pool_size)
        await pool.open()
        link = NatsLink(settings.nats_servers, name="agent-memory-query")
        await link.start(wait=5)
        search = await open_search(settings, pool)
        auth = app.state.auth = Authenticator(
            settings.tokens,
            pool,
            cache_s=settings.key_cache_s,
            lookup_timeout_s=settings.key_lookup_timeout_s,
            stale_s=settings.key_stale_s,
        )
        usage = UsageRecorder(pool)
        usage.start()
        app.state.ctx = QueryContext(
            settings=settings,
            pool=pool,
            link=link,
            auth=auth,
            injection=InjectionSwitch(),
            usage=usage,
            search=search,
        )
        stop = asyncio.Event()
        coordinator = asyncio.create_task(ErasureCoordinator(app.state.ctx).run(stop))
        try:
            async with mcp.running():
                yield
        finally:
            stop.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(coordinator, 10)
            await usage.close()  # the last answers' counts, before the pool closes
            await search.close()
            await link.close()
            await pool.close()

    app = FastAPI(
        title="agent-memory query service",
        # unknown query parameters, NUL and out-of-range numbers: a 422 naming the field
        # a route that declares no role (agent_memory_common.auth.access) is admin-only: fail closed
        dependencies=[
            Depends(reject_unknown_query_parameters),
            Depends(guard_inputs),
            Depends(authorize),
        ],
        version="0.1.0",
        docs_url=None,  # install_api_docs: /docs and /redoc from local files
        redoc_url=None,
        lifespan=lifespan,
        default_response_class=RedactingJSONResponse,
    )
    install_error_handlers(app)
    install_api_docs(app)
    install_http_guards(app, settings)  # Host, browsers, failed keys, bodies
    app.add_middleware(HttpMetrics, service="query")  # outermost: counts every answer; /metrics

    @app.exception_handler(psycopg.OperationalError)
    async def _pg_down(_: object, exc: psycopg.OperationalError) -> JSONBytesResponse:
        err = ApiError(503, "unavailable", "Postgres unavailable", headers={"Retry-After": "2"})
        return JSONBytesResponse(err.body(), status_code=503, headers=err.headers)

    app.include_router(events.router)
    app.include_router(status.router)
    app.include_router(episodes.router)
    mcp.install(app)  # /mcp: the MCP tools over streamable HTTP
    app.include_router(search.router)
    app.include_router(recall.router)
    app.include_router(injection.router)
    app.include_router(toc.router)
    app.include_router(keys.router)
    app.include_router(sharing.router)
    app.include_router(retention.router)
    app.include_router(erasures.router)
    app.include_router(topics.router)
    app.include_router(listing.router)
    return app
