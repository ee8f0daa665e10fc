"""The project an event belongs to, decided exactly as ``agent_memory_client.project`` does.

Capture (these hooks) and recall (the MCP server, the middleware) must agree on the project id,
or an agent would never find what it recorded; so the rule is the same everywhere:
``AGENT_MEMORY_PROJECT_ID``, else the name of the enclosing git repository (found by walking up
to a ``.git`` entry, without running git, which would cost milliseconds per hook), else a hash
of the working directory. Kept as a copy rather than an import because importing the client
package pulls in httpx, which the hook path must not load.
"""

from __future__ import annotations

import os

from agent_memory_hooks.digest import sha256_hex

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Mapping

ENV_PROJECT = "AGENT_MEMORY_PROJECT_ID"


def git_root(start: str) -> str | None:
    folder = start
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def resolve_project_id(cwd: str | None = None, env: Mapping[str, str] | None = None) -> str:
    environ = os.environ if env is None else env
    explicit = environ.get(ENV_PROJECT, "").strip()
    if explicit:
        return explicit
    here = os.path.realpath(cwd or os.getcwd())
    root = git_root(here)
    if root is not None and os.path.basename(root):
        return os.path.basename(root)
    return "dir-" + sha256_hex(here)[:12]
