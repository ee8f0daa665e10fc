"""The project's own exception family.

Adapters wrap driver errors into these so that callers decide on retry versus give-up by type,
not by inspecting messages of third-party exceptions.
"""

from __future__ import annotations


class AgentMemoryError(Exception):
    """Base of every error raised on purpose by agent-memory code."""


class TransientError(AgentMemoryError):
    """Worth retrying later: a server is down or overloaded."""


class PoisonMessageError(AgentMemoryError):
    """A message that can never be processed; it goes to the dead-letter subject."""


class ConfigurationError(AgentMemoryError):
    """Settings that cannot work; raised at start, never mid-flight."""
