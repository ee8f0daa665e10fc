"""``/mcp``: the MCP tools over streamable HTTP, served by the query service.

The tools are the same code as the stdio server (``agent_memory_mcp.server``) and reach the data
through the public API, never through this service's store functions: the query service calls
its *own* routes in-process through ``httpx.ASGITransport`` (no socket, no second hop over the
network) and the gateway over HTTP for notes. That keeps one implementation of every tool, the
exact validation, tenancy and limits of the REST API, and no coupling to how the search and
table-of-contents routes are built inside. Each call forwards the caller's bearer token, so an
MCP client sees exactly what the same token sees over REST.

Stateless JSON mode: any replica of the query service can answer any request (team mode runs
several behind a load balancer), and no session state survives in memory between calls.

Loaded on first use: the MCP SDK costs about 0.75 s of CPU to import, a fifth of the service's
start, paid by every start (each replica, each restart) whether or not a client ever speaks MCP.
The route is there from the start and checks the token first; the first authenticated request
imports the SDK (in a thread, the event loop keeps serving), builds the server and starts its
session manager, and waits for it; later requests go straight through.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from fastapi import FastAPI
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_memory_common.auth.access import Authenticator
from agent_memory_common.web.http import ApiError, JSONBytesResponse
from agent_memory_query.settings import Settings

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from agent_memory_client import AgentMemoryClient

MCP_PATH = "/mcp"
# never resolved (the ASGI transport answers in-process); a loopback name, which the Host
# allowlist of CrossOriginGuard always accepts
_SELF_URL = "http://localhost"


class _RequireTenant:
    """Refuse a bad bearer token with the API's own 401 before the MCP layer sees the request.

    Any valid key may list and call tools: each tool calls a REST route with the caller's key,
    so that route's declared role decides (a reader calling ``memory_pin`` gets the route's 403).
    """

    def __init__(self, app: ASGIApp, owner: FastAPI) -> None:
        self.app = app
        self.owner = owner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            try:
                auth = self.owner.state.auth
                assert isinstance(auth, Authenticator)
                await auth.principal(headers.get("authorization"))
            except ApiError as exc:
                response = JSONBytesResponse(
                    exc.body(), status_code=exc.status, headers=exc.headers
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _OnFirstUse:
    """The MCP app, built by the endpoint when the first request reaches it."""

    def __init__(self, endpoint: McpEndpoint) -> None:
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = await self.endpoint.app()
        await app(scope, receive, send)


class McpEndpoint:
    """Owns the MCP server, its client of this very service, and the session manager."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.client: AgentMemoryClient | None = None
        self.owner: FastAPI | None = None
        self._inner: ASGIApp | None = None
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._serving: asyncio.Task[None] | None = None

    def install(self, app: FastAPI) -> None:
        self.owner = app
        app.router.routes.append(Route(MCP_PATH, endpoint=_RequireTenant(_OnFirstUse(self), app)))

    async def app(self) -> ASGIApp:
        """The MCP app, its session manager running: built by the first caller."""
        async with self._lock:
            if self._inner is None:
                server, inner = await asyncio.to_thread(self._build)
                started = asyncio.Event()
                self._serving = asyncio.create_task(self._serve(server, started))
                waiting = asyncio.create_task(started.wait())
                await asyncio.wait({waiting, self._serving}, return_when=asyncio.FIRST_COMPLETED)
                if not started.is_set():  # the session manager failed to start: say why
                    waiting.cancel()
                    await self._serving
                self._inner = inner
            return self._inner

    def _build(self) -> tuple[MCPServer, ASGIApp]:
        import httpx
        from mcp.server.transport_security import TransportSecuritySettings

        from agent_memory_client import AgentMemoryClient
        from agent_memory_mcp.server import ServerDefaults, build_server, caller_token

        assert self.owner is not None, "install() first"
        self.client = AgentMemoryClient.from_env(
            query_url=_SELF_URL,
            query_transport=httpx.ASGITransport(app=self.owner),
            token_provider=lambda: caller_token(None),
            token=None,
        )
        server = build_server(self.client, ServerDefaults(agent_id="mcp-http"))
        inner = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            host=self.settings.query.host,
            # the Host allowlist (DNS rebinding, 421) is CrossOriginGuard's, in front of every
            # route of this service: one implementation, configured by AGENT_MEMORY_ALLOWED_HOSTS
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        return server, inner

    async def _serve(self, server: MCPServer, started: asyncio.Event) -> None:
        """The session manager's task group, from the first request to the service's end."""
        async with server.session_manager.run():
            started.set()
            await self._stop.wait()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the lifetime of the service: stop the session manager (if a request started
        it) and close the client at the end."""
        try:
            yield
        finally:
            self._stop.set()
            if self._serving is not None:
                with contextlib.suppress(Exception):
                    await self._serving
            if self.client is not None:
                await self.client.aclose()
