"""``python -m agent_memory_mcp``: the stdio server configured from the environment only."""

from __future__ import annotations

import os

from agent_memory_client import AgentMemoryClient, resolve_project_id
from agent_memory_mcp.server import ServerDefaults
from agent_memory_mcp.stdio import run_stdio


def main() -> None:
    defaults = ServerDefaults(
        project_id=resolve_project_id(),
        agent_id=os.environ.get("AGENT_MEMORY_AGENT_ID", "mcp"),
    )
    run_stdio(AgentMemoryClient.from_env(), defaults)


if __name__ == "__main__":
    main()
