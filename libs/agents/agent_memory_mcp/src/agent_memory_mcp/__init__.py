"""MCP server of agent-memory: stdio (``agent-memory mcp``) and streamable HTTP (``/mcp``)."""

from agent_memory_mcp.server import ServerDefaults, build_server

__all__ = ["ServerDefaults", "build_server"]
