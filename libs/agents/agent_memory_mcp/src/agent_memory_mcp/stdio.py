"""The stdio transport: what a coding agent launches as ``agent-memory mcp``.

stdout carries the protocol, so nothing else may write there; the SDK logs to stderr.
"""

from __future__ import annotations

import anyio

from agent_memory_client import AgentMemoryClient
from agent_memory_mcp.server import ServerDefaults, build_server


async def serve_stdio(client: AgentMemoryClient, defaults: ServerDefaults) -> None:
    """Serve until the agent closes stdin; the client is closed on the way out."""
    try:
        await build_server(client, defaults).run_stdio_async()
    finally:
        await client.aclose()


def run_stdio(client: AgentMemoryClient, defaults: ServerDefaults) -> None:
    anyio.run(serve_stdio, client, defaults)
