"""Readers of the sessions coding agents keep on disk, for ``agent-memory import``: one module
per runtime, what they share in ``common``.

Each runtime's module declares ``SOURCE`` (``common.Source``): where the runtime keeps its
sessions by default, which files below a PATH are sessions, and how one file becomes the events
the runtime's hook or plugin posts (the same ids and times, so an import after the hook, or a
second import, stores each event once). ``source(runtime)`` imports only the runtime asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_memory_cli.readers.common import Source

MODULES = {
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini-cli": "gemini_cli",
    "opencode": "opencode",
}
"""The runtimes with a reader, by the name ``agent-memory import`` takes."""


def source(runtime: str) -> Source:
    """The reader of ``runtime`` (a key of ``MODULES``)."""
    module = importlib.import_module(f"{__name__}.{MODULES[runtime]}")
    found: Source = module.SOURCE
    return found
