"""Which project a process works on, the same way every integration decides it.

The rule of ``agent_memory_hooks.project`` (docs/integrations/README.md, "Which project"),
copied so that this package does not depend on the hooks: ``AGENT_MEMORY_PROJECT_ID`` wins;
else the enclosing git repository's name (found by walking up to a ``.git`` entry, without
running git), a linked worktree naming its main checkout; else the worktree conventions of the
path (``<repo>/.worktrees/<x>``, ``<repo>/.claude/worktrees/<x>``, ``<repo>-worktrees/<x>``...);
else, for a folder that does not exist here, the remote's or the folder's name; else a hash of
the working directory, stable for that folder.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

ENV_PROJECT = "AGENT_MEMORY_PROJECT_ID"

_MARKERS_BEFORE = ((".worktrees",), (".claude", "worktrees"))
_MARKERS_AFTER = ((".cursor", "worktrees"), ("conductor", "workspaces"))
_SUFFIXES = ("-worktrees", ".worktrees")


def git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _common_dir_name(gitdir: str) -> str | None:
    parts = [p for p in gitdir.replace("\\", "/").split("/") if p]
    if len(parts) < 3 or parts[-2] != "worktrees":
        return None
    common = parts[-3]
    if common in (".git", ".bare") and len(parts) >= 4:
        return parts[-4]
    if common.endswith(".git") and len(common) > 4:
        return common[:-4]
    return common or None


def repository_name(root: Path) -> str:
    """The checkout's folder name, or for a linked worktree the main checkout's."""
    marker = root / ".git"
    if marker.is_file():
        try:
            with marker.open(encoding="utf-8", errors="replace") as f:
                first = f.readline().strip()
        except OSError:
            first = ""
        if first.startswith("gitdir:"):
            gitdir = os.path.normpath(os.path.join(root, first[len("gitdir:") :].strip()))
            name = _common_dir_name(gitdir)
            if name:
                return name
        convention = name_from_conventions(str(root))
        if convention:
            return convention
    return root.name


def name_from_conventions(path: str) -> str | None:
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    for at in range(len(parts) - 1, 0, -1):
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
    if not remote:
        return None
    tail = remote.strip().rstrip("/").replace(":", "/").rsplit("/", 1)[-1]
    if tail.endswith(".git"):
        tail = tail[:-4]
    return tail or None


def resolve_project_id(
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    remote: str | None = None,
    branch: str | None = None,
) -> str:
    environ = os.environ if env is None else env
    explicit = environ.get(ENV_PROJECT, "").strip()
    if explicit:
        return explicit
    here = Path(os.path.realpath(cwd or os.getcwd()))
    exists = here.is_dir()
    convention = name_from_conventions(str(here))
    if convention and not exists:
        return convention
    root = git_root(here)
    if root is not None and root.name:
        return repository_name(root)
    if convention:
        return convention
    if not exists:
        found = remote_name(remote) or without_branch(here.name, branch)
        if found:
            return found
    return "dir-" + hashlib.sha256(str(here).encode()).hexdigest()[:12]
