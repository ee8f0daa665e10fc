"""Typed async client of the agent-memory public API, shared by every integration."""

from agent_memory_client.client import (
    AgentMemoryClient,
    AgentMemoryError,
    ApiError,
    UnavailableError,
)
from agent_memory_client.ids import new_id
from agent_memory_client.project import resolve_project_id

__all__ = [
    "AgentMemoryClient",
    "AgentMemoryError",
    "ApiError",
    "UnavailableError",
    "new_id",
    "resolve_project_id",
]
