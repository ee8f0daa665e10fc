"""Which project a process works on: the one rule every integration uses.

The rule is ``agent_memory_hooks.project`` (docs/integrations/README.md, "Which project"): the
hooks decide the project of what they record, so what the client recalls must be decided by
the same code, not a copy that could drift. The hooks import only the standard library, so
depending on them costs this package nothing. This module only accepts a ``Path`` as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agent_memory_hooks.project import ENV_PROJECT
from agent_memory_hooks.project import resolve_project_id as _resolve

__all__ = ["ENV_PROJECT", "resolve_project_id"]


def resolve_project_id(
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    remote: str | None = None,
    branch: str | None = None,
) -> str:
    """The project id of work done in ``cwd`` (default: here); ``remote`` and ``branch`` are
    the repository's remote URL and checked-out branch when a stored session recorded them."""
    return _resolve(None if cwd is None else str(cwd), env, remote, branch)
