"""One way for every command to reach the services: the agent-side client library.

``search``, ``toc`` and ``status`` used to build their own httpx clients with their own error
handling; they now share ``agent_memory_client.AgentMemoryClient`` (the same calls an agent's
code makes), addressed by the CLI's settings and authenticated with ``--token`` or else
``AGENT_MEMORY_TOKEN``, and one mapping of its errors to a line and an exit code.

The client (httpx, the API's pydantic types) is imported by ``run_with_client``, when a command
talks to a service, not when this module is: every command module imports this one, and
``--help`` should not pay for a client it never builds.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from agent_memory_cli.settings import Settings
    from agent_memory_client import AgentMemoryClient

T = TypeVar("T")

UNREACHABLE = 2  # exit code: the service could not be reached
REFUSED = 1  # exit code: the service answered with an error


class CommandFailed(Exception):
    """A one-line message for the terminal and the exit code to return."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def token_from(explicit: str | None) -> str | None:
    """``--token`` wins; otherwise the same variable the hooks and the MCP server read."""
    return explicit or os.environ.get("AGENT_MEMORY_TOKEN") or None


def run_with_client(
    settings: Settings,
    token: str | None,
    work: Callable[[AgentMemoryClient], Awaitable[T]],
    *,
    timeout: float = 30.0,
) -> T:
    """Run ``work`` with a client for this stack; errors become ``CommandFailed``."""
    import asyncio

    from agent_memory_client import AgentMemoryClient, ApiError, UnavailableError

    async def main() -> T:
        async with AgentMemoryClient(
            gateway_url=settings.gateway_url,
            query_url=settings.query_url,
            token=token_from(token),
            timeout=timeout,
        ) as client:
            return await work(client)

    try:
        return asyncio.run(main())
    except UnavailableError as exc:
        raise CommandFailed(
            UNREACHABLE, f"query service unavailable at {settings.query_url}: {exc}"
        ) from None
    except ApiError as exc:
        raise CommandFailed(REFUSED, f"{exc.status}: {exc.message}") from None


def minute(ts: str | None) -> str:
    """An API timestamp (RFC 3339, UTC) to the minute, as the commands print times."""
    return (ts or "")[:16].replace("T", " ")
