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
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_memory_client import AgentMemoryClient
from agent_memory_common.auth.access import Authenticator
from agent_memory_common.web.http import ApiError, JSONBytesResponse
from agent_memory_mcp.server import ServerDefaults, build_server, caller_token
from agent_memory_query.settings import Settings

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


class McpEndpoint:
    """Owns the MCP server, its client of this very service, and the session manager."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.client: AgentMemoryClient | None = None

    def install(self, app: FastAPI) -> None:
        self.client = AgentMemoryClient.from_env(
            query_url=_SELF_URL,
            query_transport=httpx.ASGITransport(app=app),
            token_provider=lambda: caller_token(None),
            token=None,
        )
        self.server = build_server(self.client, ServerDefaults(agent_id="mcp-http"))
        inner = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            host=self.settings.query.host,
            # the Host allowlist (DNS rebinding, 421) is CrossOriginGuard's, in front of every
            # route of this service: one implementation, configured by AGENT_MEMORY_ALLOWED_HOSTS
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        app.router.routes.append(Route(MCP_PATH, endpoint=_RequireTenant(inner, app)))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the session manager for the lifetime of the service."""
        async with self.server.session_manager.run():
            try:
                yield
            finally:
                if self.client is not None:
                    await self.client.aclose()
