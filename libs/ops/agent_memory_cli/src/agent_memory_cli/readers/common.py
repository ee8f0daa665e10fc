"""What every runtime's reader shares: how a session file is found and read, the context the
hooks' event builders take, and the mark an imported event carries.

The event builders themselves are the hooks' (``agent_memory_hooks.events``): a reader maps a
runtime's stored entries onto them, so an imported event is the event the hook posts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent_memory_hooks.events import HookContext, now_ms

Events = list[dict[str, Any]]


class ProjectOf(Protocol):
    """A session's folder (or None), and the git remote and branch when the session recorded
    them -> its project id (``agent_memory_hooks.project.resolve_project_id``)."""

    def __call__(
        self, cwd: str | None, remote: str | None = None, branch: str | None = None, /
    ) -> str: ...


Reader = Callable[[Path, Mapping[str, str], ProjectOf], tuple[Events, int]]
"""One session file -> its events and how many entries could not be read."""


@dataclass(frozen=True)
class Source:
    """A runtime's stored sessions: the default folder (from the environment), the session
    files below a PATH, and the reader of one file."""

    home: Callable[[Mapping[str, str]], Path]
    files: Callable[[Path], list[Path]]
    events: Reader


def files_below(
    root: Path, pattern: str, keep: Callable[[Path], bool] = lambda _: True
) -> list[Path]:
    """``root`` itself when it is a file (one session named on the command line), else every
    file below it matching ``pattern`` and ``keep``, in name order (a stable import order)."""
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob(pattern) if p.is_file() and keep(p))


def json_lines(path: Path) -> tuple[list[tuple[dict[str, Any], int]], int]:
    """A JSON Lines file's objects with the byte offset each starts at (Claude Code's hook
    keeps its cursor in bytes), and how many lines were not JSON objects. Blank lines are not
    counted: runtimes write them."""
    lines: list[tuple[dict[str, Any], int]] = []
    skipped = 0
    offset = 0
    with path.open("rb") as f:
        for raw in f:
            start = offset
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                item = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                skipped += 1
                continue
            if isinstance(item, dict):
                lines.append((item, start))
            else:
                skipped += 1
    return lines, skipped


def json_document(path: Path) -> Any:
    """A whole-file JSON document, or None when the file is not JSON (a half-written session
    is counted as skipped by its reader, not fatal to the import)."""
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return None


def context(runtime: str, env: Mapping[str, str], project: str, cwd: str) -> HookContext:
    """The context the hooks' event builders take, as the runtime's hook would build it, with
    one ``project`` for the whole session: a session is one project even where it moved to
    another folder (on a machine where its folders do not exist, a subfolder would otherwise
    name a project of its own); ``now_ms`` only stands in for an entry that carries no time."""
    return HookContext(
        runtime=runtime,
        now_ms=now_ms(),
        project_of=lambda _cwd: project,
        user_id=env.get("AGENT_MEMORY_USER_ID", "").strip() or None,
        cwd=cwd,
    )


def mark_imported(events: Events, path: Path) -> Events:
    """Each event names the file it was imported from (``metadata.imported_from``), which is
    all that tells an imported event from a captured one."""
    for event in events:
        event["metadata"]["imported_from"] = path.name
    return events
