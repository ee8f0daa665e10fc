"""``/mcp``: the MCP tools over streamable HTTP (they call this service's own REST routes)."""
