"""Which project a process works on, the same way every integration decides it.

``AGENT_MEMORY_PROJECT_ID`` wins; else the name of the enclosing git repository (found by walking
up to a ``.git`` entry, without running git, so it costs microseconds); else a hash of the
working directory, stable for that folder.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

ENV_PROJECT = "AGENT_MEMORY_PROJECT_ID"


def git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def resolve_project_id(cwd: str | Path | None = None, env: dict[str, str] | None = None) -> str:
    environ = os.environ if env is None else env
    explicit = environ.get(ENV_PROJECT, "").strip()
    if explicit:
        return explicit
    here = Path(cwd or os.getcwd()).resolve()
    root = git_root(here)
    if root is not None and root.name:
        return root.name
    return "dir-" + hashlib.sha256(str(here).encode()).hexdigest()[:12]
