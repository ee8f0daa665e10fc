"""Claude Code's stored sessions: ``~/.claude/projects/<escaped cwd>/<session>.jsonl``
(``$CLAUDE_CONFIG_DIR/projects`` when set), and its subagents' transcripts beside them
(``<session>/subagents/agent-*.jsonl``, or ``agent-*.jsonl`` in the project folder in older
releases). PATH is one transcript, one project's folder or the whole ``projects`` folder: every
``*.jsonl`` below it is read.

Each transcript goes through the hook's own parser (``agent_memory_hooks.claude_code.
transcript_events``), so an imported event has the id and the time the hook gives it: session +
line ``uuid`` (or ``tool_use_id``), the line's ``timestamp``. The project is the one the hook
would name for the session's first ``cwd`` (one project per session; where that folder does not
exist on this machine, the path's worktree conventions or its name less the ``gitBranch`` the
transcript records), or ``AGENT_MEMORY_PROJECT_ID`` (``--project``) when set.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agent_memory_cli.readers.common import (
    Events,
    ProjectOf,
    Source,
    context,
    files_below,
    json_lines,
    mark_imported,
)
from agent_memory_hooks import claude_code


def home(env: Mapping[str, str]) -> Path:
    explicit = env.get("CLAUDE_CONFIG_DIR", "").strip()
    return (Path(explicit).expanduser() if explicit else Path.home() / ".claude") / "projects"


def files(root: Path) -> list[Path]:
    """Every transcript below ``root``, subagents' too."""
    return files_below(root, "*.jsonl")


def events(path: Path, env: Mapping[str, str], project_of: ProjectOf) -> tuple[Events, int]:
    """One transcript as events, exactly as the hook would have posted them."""
    lines, skipped = json_lines(path)
    first_cwd = next((i["cwd"] for i, _ in lines if isinstance(i.get("cwd"), str)), None)
    branches = (i.get("gitBranch") for i, _ in lines)
    branch = next((b for b in branches if isinstance(b, str) and b), None)
    folder = first_cwd or str(path.parent)
    ctx = context(claude_code.RUNTIME, env, project_of(folder, None, branch), folder)
    session = next((i["sessionId"] for i, _ in lines if isinstance(i.get("sessionId"), str)), "")
    payload = {"session_id": session or path.stem}
    return mark_imported(claude_code.transcript_events(lines, payload, ctx, {}), path), skipped


SOURCE = Source(home=home, files=files, events=events)
