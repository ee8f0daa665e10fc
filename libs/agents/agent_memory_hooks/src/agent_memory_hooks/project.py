"""The project an event belongs to, decided exactly as ``agent_memory_client.project`` does.

Capture (these hooks) and recall (the MCP server, the middleware) must agree on the project id,
or an agent would never find what it recorded; so the rule is the same everywhere
(docs/integrations/README.md, "Which project"):

1. ``AGENT_MEMORY_PROJECT_ID`` when set (``import --project NAME`` sets it for the sessions it
   reads; a hook installed with ``install --project NAME`` is given NAME on its command line);
2. else the repository: walking up from the working directory to a ``.git`` entry (without
   running git, which would cost milliseconds per hook). A ``.git`` *file* is a linked worktree
   (``gitdir: <repo>/.git/worktrees/<name>``): its project is the main checkout's folder name,
   so every worktree of one repository is one project (a submodule's ``.git/modules/...`` is
   its own repository);
3. else the worktree conventions of the path: ``<repo>/.worktrees/<x>``,
   ``<repo>/.claude/worktrees/<x>`` (Claude Code), ``<repo>-worktrees/<x>``,
   ``<repo>.worktrees/<x>``, ``.cursor/worktrees/<repo>/<x>``,
   ``conductor/workspaces/<repo>/<x>`` name ``<repo>``; for a folder that does not exist on this
   machine (a transcript imported from another one) they are read before step 2;
4. else, for a folder that does not exist here, the repository's name from its remote when the
   session recorded one (Codex does), else the folder's own name, less a ``-<branch>`` suffix
   when the session recorded its branch (Claude Code's ``gitBranch``): ``git worktree add
   ../repo-feat`` makes sibling worktrees;
5. else (an existing folder outside any repository) a hash of the folder, stable for it.

Kept as a copy rather than an import because importing the client package pulls in httpx,
which the hook path must not load; a test checks that both agree.
"""

from __future__ import annotations

import os

from agent_memory_hooks.digest import sha256_hex

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Mapping

ENV_PROJECT = "AGENT_MEMORY_PROJECT_ID"

# (folders that hold worktrees, where the repository's name is) for path conventions: "before"
# names the folder above the marker, "after" the folder below it
_MARKERS_BEFORE = ((".worktrees",), (".claude", "worktrees"))
_MARKERS_AFTER = ((".cursor", "worktrees"), ("conductor", "workspaces"))
_SUFFIXES = ("-worktrees", ".worktrees")


def git_root(start: str) -> str | None:
    folder = start
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _common_dir_name(gitdir: str) -> str | None:
    """The repository's name from a linked worktree's git dir (``<repo>/.git/worktrees/<x>``,
    ``<repo>.git/worktrees/<x>`` of a bare clone, ``<repo>/.bare/worktrees/<x>``)."""
    parts = [p for p in gitdir.replace("\\", "/").split("/") if p]
    if len(parts) < 3 or parts[-2] != "worktrees":
        return None
    common = parts[-3]
    if common in (".git", ".bare") and len(parts) >= 4:
        return parts[-4]
    if common.endswith(".git") and len(common) > 4:
        return common[:-4]
    return common or None


def repository_name(root: str) -> str:
    """The project name of the checkout at ``root``: its folder's name, or for a linked
    worktree the main checkout's (read from its ``.git`` file)."""
    marker = os.path.join(root, ".git")
    if os.path.isfile(marker):
        try:
            with open(marker, encoding="utf-8", errors="replace") as f:
                first = f.readline().strip()
        except OSError:
            first = ""
        if first.startswith("gitdir:"):
            gitdir = os.path.join(root, first[len("gitdir:") :].strip())
            name = _common_dir_name(os.path.normpath(gitdir))
            if name:
                return name
        convention = name_from_conventions(root)
        if convention:
            return convention
    return os.path.basename(root)


def name_from_conventions(path: str) -> str | None:
    """The repository named by a worktree folder convention anywhere in ``path``, else None."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    for at in range(len(parts) - 1, 0, -1):  # the innermost convention wins
        for marker in _MARKERS_BEFORE:
            end = at + len(marker)
            if tuple(parts[at:end]) == marker and end < len(parts):
                return parts[at - 1]
        for marker in _MARKERS_AFTER:
            end = at + len(marker)
            if tuple(parts[at:end]) == marker and end + 1 < len(parts):
                return parts[end]
        for suffix in _SUFFIXES:
            name = parts[at - 1]
            if name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
    return None


_TRUNKS = frozenset({"main", "master", "trunk", "develop", "HEAD"})


def without_branch(folder: str, branch: str | None) -> str:
    """``repo`` of a sibling worktree ``repo-<branch>`` (``git worktree add ../repo-feat``),
    with ``/`` of the branch as ``-``; ``folder`` itself otherwise."""
    if not branch or branch in _TRUNKS:
        return folder
    slug = branch.replace("/", "-")
    for sep in ("-", "_", "."):
        if folder.endswith(sep + slug) and len(folder) > len(slug) + 1:
            return folder[: -len(slug) - 1]
    return folder


def remote_name(remote: str | None) -> str | None:
    """``org/repo`` of ``git@host:org/repo.git`` or ``https://host/org/repo``: ``repo``."""
    if not remote:
        return None
    tail = remote.strip().rstrip("/").replace(":", "/").rsplit("/", 1)[-1]
    if tail.endswith(".git"):
        tail = tail[:-4]
    return tail or None


def resolve_project_id(
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    remote: str | None = None,
    branch: str | None = None,
) -> str:
    """The project id of work done in ``cwd`` (default: here); ``remote`` and ``branch`` are
    the repository's remote URL and checked-out branch when a stored session recorded them."""
    environ = os.environ if env is None else env
    explicit = environ.get(ENV_PROJECT, "").strip()
    if explicit:
        return explicit
    here = os.path.realpath(cwd or os.getcwd())
    exists = os.path.isdir(here)
    convention = name_from_conventions(here)
    if convention and not exists:  # a worktree of another machine: its path says whose
        return convention
    root = git_root(here)
    if root is not None and os.path.basename(root):
        return repository_name(root)
    if convention:
        return convention
    if not exists:
        found = remote_name(remote) or without_branch(os.path.basename(here), branch)
        if found:
            return found
    return "dir-" + sha256_hex(here)[:12]
