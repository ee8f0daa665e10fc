"""``agent-memory projects`` and ``agent-memory sessions PROJECT``: what is stored, from a
terminal.

The first question after an import or a week of hooks is "what is in here?": the projects the
caller's key may read (``GET /v1/projects``) and a project's sessions, newest first
(``GET /v1/projects/{project_id}/sessions``), both answered by the query service from the event
log, so a project shows up with its first stored event. Each line ends in what to paste next
(``agent-memory sessions P``, ``agent-memory toc --project P``).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from agent_memory_cli.api import CommandFailed, minute, run_with_client

if TYPE_CHECKING:
    from agent_memory_api.listing import ProjectListing, SessionListing
    from agent_memory_cli.settings import Settings

TITLE_CHARS = 100


def render_projects(projects: list[ProjectListing]) -> str:
    """One line a project, most recently recorded first, as the API orders them."""
    if not projects:
        return "no projects yet (nothing stored, or nothing this key may read)"
    width = max(len("project"), *(len(p["project_id"]) for p in projects))
    lines = [
        f"{'project':<{width}}  {'events':>8}  {'sessions':>8}  {'agents':>6}  "
        f"{'first activity':<16}  {'last activity':<16}  open"
    ]
    for p in projects:
        lines.append(
            f"{p['project_id']:<{width}}  {p['events']:>8}  {p['sessions']:>8}  "
            f"{p['agents']:>6}  {minute(p['first_ts']):<16}  {minute(p['last_ts']):<16}  "
            f"{p['open_segments']}"
        )
    lines.append(
        "(open: sessions not yet summarised; a project's sessions: agent-memory sessions PROJECT)"
    )
    return "\n".join(lines)


def render_sessions(project_id: str, sessions: list[SessionListing]) -> str:
    """Newest first: when, how many events, who, whether it is still open, its latest title."""
    lines = [f"{len(sessions)} session(s) of {project_id}, newest first:"]
    for s in sessions:
        state = "  open" if s["open"] else ""
        lines.append(
            f"  {s['session_id']}  {minute(s['first_ts'])} → {minute(s['last_ts'])}  "
            f"{s['events']} event(s)  {', '.join(s['agent_ids'])}{state}"
        )
        if s["latest_title"]:
            title = " ".join(s["latest_title"].split())
            if len(title) > TITLE_CHARS:
                title = title[: TITLE_CHARS - 1] + "…"
            lines.append(f"      {title}")
    lines.append(
        f"(browse: agent-memory toc --project {project_id}; one session's events: "
        f'agent-memory search "..." --project {project_id} --session SESSION)'
    )
    return "\n".join(lines)


def _run_projects(settings: Settings, args: argparse.Namespace) -> int:
    try:
        data = run_with_client(settings, args.token, lambda c: c.projects(limit=args.limit))
    except CommandFailed as exc:
        print(f"agent-memory: projects failed: {exc}")
        return exc.code
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(render_projects(data["projects"]))
    return 0


def _run_sessions(settings: Settings, args: argparse.Namespace) -> int:
    try:
        data = run_with_client(
            settings, args.token, lambda c: c.sessions(args.project_id, limit=args.limit)
        )
    except CommandFailed as exc:
        print(f"agent-memory: sessions failed: {exc}")
        return exc.code
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(render_sessions(data["project_id"], data["sessions"]))
    return 0


def _common(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--limit", type=int, default=100, help=f"{what} at most (1-1000, default 100)"
    )
    parser.add_argument("--json", action="store_true", help="the raw JSON of the API")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")


def register(subparsers: Any) -> None:
    projects = subparsers.add_parser(
        "projects",
        help="the projects you can read: events, sessions, agents, first and last activity",
        description="The projects this key may read, from their first stored event: events, "
        "sessions, agents, first and last activity, and sessions still being segmented.",
    )
    _common(projects, "projects")
    projects.set_defaults(run=_run_projects)
    sessions = subparsers.add_parser(
        "sessions",
        help="a project's sessions, newest first",
        description="A project's sessions, newest first: their time span, events, agents, "
        "whether they are still open, and the title of their latest summarised segment.",
    )
    sessions.add_argument(
        "project_id", metavar="PROJECT", help="a project id, as projects prints it"
    )
    _common(sessions, "sessions")
    sessions.set_defaults(run=_run_sessions)
