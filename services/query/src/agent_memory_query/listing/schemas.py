"""What the listing routes answer (declared in ``agent_memory_api.listing``)."""

from __future__ import annotations

from agent_memory_api.listing import Agents, Projects, Sessions

__all__ = ["Agents", "Projects", "Sessions"]
