"""``agent-memory mcp``: the MCP server over stdio, for a coding agent to launch.

The agent starts it in the project folder, so the project id is resolved from there (see
``agent_memory_client.project``) unless ``--project`` says otherwise.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory_cli.settings import Settings


def _run(settings: Settings, args: argparse.Namespace) -> int:
    # the MCP SDK alone takes a second to import: only this command pays for it
    from agent_memory_client import AgentMemoryClient, resolve_project_id
    from agent_memory_mcp.server import ServerDefaults
    from agent_memory_mcp.stdio import run_stdio

    defaults = ServerDefaults(
        project_id=args.project or resolve_project_id(),
        agent_id=args.agent_id or os.environ.get("AGENT_MEMORY_AGENT_ID", "mcp"),
    )
    client = AgentMemoryClient(
        gateway_url=os.environ.get("AGENT_MEMORY_GATEWAY_URL") or settings.gateway_url,
        query_url=os.environ.get("AGENT_MEMORY_QUERY_URL") or settings.query_url,
        token=args.token or os.environ.get("AGENT_MEMORY_TOKEN") or None,
    )
    run_stdio(client, defaults)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mcp", help="serve the memory tools over MCP on stdin/stdout (for coding agents)"
    )
    parser.add_argument("--project", help="project id (default: AGENT_MEMORY_PROJECT_ID, git root)")
    parser.add_argument("--agent-id", help="agent id recorded on notes (default: mcp)")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    parser.set_defaults(run=_run)
