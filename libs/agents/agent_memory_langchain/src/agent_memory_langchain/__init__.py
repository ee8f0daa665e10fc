"""LangChain v1 middleware for agent-memory: capture, recall injection, recall tools, ACE."""

from agent_memory_langchain.ace import (
    HeuristicReflector,
    Lesson,
    LLMReflector,
    Reflector,
    RunTrace,
    ToolUse,
)
from agent_memory_langchain.middleware import (
    AgentMemoryMiddleware,
    InjectionMode,
    PlaybookConfig,
)

__all__ = [
    "AgentMemoryMiddleware",
    "HeuristicReflector",
    "InjectionMode",
    "LLMReflector",
    "Lesson",
    "PlaybookConfig",
    "Reflector",
    "RunTrace",
    "ToolUse",
]
