"""Composition root of the dashboard: the API client, the pages, the ``/api`` pass-through."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from importlib.resources import files
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from agent_memory_common.core.metrics import HttpMetrics
from agent_memory_common.web.browser import CrossOriginGuard
from agent_memory_common.web.http import ApiError, JSONBytesResponse, install_error_handlers
from agent_memory_common.web.limits import BodyLimit, FailedAuthLimiter
from agent_memory_dashboard import api, pages
from agent_memory_dashboard.security import SecurityHeaders, Sessions
from agent_memory_dashboard.settings import Settings
from agent_memory_dashboard.upstream import QueryApi, SignInRequired


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.settings = settings
        app.state.query = QueryApi(settings.dashboard.query_url, settings.dashboard.timeout_s)
        app.state.pruner = QueryApi(settings.dashboard.pruner_url, settings.dashboard.timeout_s)
        try:
            yield
        finally:
            await app.state.query.close()
            await app.state.pruner.close()

    app = FastAPI(
        title="agent-memory dashboard",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.sessions = Sessions(settings.dashboard.session_max_age_s)
    install_error_handlers(app)
    # outermost first: a foreign Host (DNS rebinding: 421), a browser's cross-site write, an
    # address with too many refused sign-ins (429), a body over the limit (413)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(
        FailedAuthLimiter, burst=settings.auth_fail_burst, per_s=settings.auth_fail_per_s
    )
    app.add_middleware(CrossOriginGuard, allowed_origins="", allowed_hosts=settings.host_allowlist)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(HttpMetrics, service="dashboard")  # outermost: counts every answer

    @app.exception_handler(SignInRequired)
    async def _sign_in(request: Request, _: SignInRequired) -> Response:
        if request.url.path.startswith("/api/"):
            err = ApiError(401, "unauthorized", "sign in first: no session, or it ended")
            return JSONBytesResponse(err.body(), status_code=401)
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='/')}", status_code=303)

    static = files("agent_memory_dashboard") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    return app
