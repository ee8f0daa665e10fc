"""``agent-memory recall on|off|status``: a project's recall injection, for every runtime.

The hooks put a brief in front of an agent when a session starts and a recall on each prompt
(docs/integrations/README.md, "Recall"). ``AGENT_MEMORY_RECALL=off`` stops that in one
environment; ``agent-memory recall off`` stops it on the server, for the project, whatever the
runtime or the machine (``PUT /v1/projects/{id}/recall``, an admin key's call): recall then
answers ``silence: "off"`` and the brief nothing, while capture and every asked read go on.
``status`` prints the switch and what injection has cost: tokens and answers per UTC day
window, per kind, and the sessions given the most. ``agent-memory status`` ends with one line
per project (``overview_lines``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent_memory_cli.api import CommandFailed, minute, run_with_client

if TYPE_CHECKING:
    from agent_memory_api.recall import ProjectRecall, ProjectRecallSummary, RecallWindow
    from agent_memory_api.status import Status
    from agent_memory_cli.settings import Settings
    from agent_memory_client import AgentMemoryClient

DESCRIPTION = """\
A project's recall injection: the brief a session starts with and the memories recalled for
each prompt, on every runtime and machine at once (capture goes on either way).

    agent-memory recall status                  the switch, tokens injected, the top sessions
    agent-memory recall off --project shop      no brief, no recall for shop (an admin key)
    agent-memory recall on --project shop       as before

PROJECT defaults to the project the hooks record here (AGENT_MEMORY_PROJECT_ID, else the git
repository's name). A token is four characters; days are UTC days, today included.
"""


def _window(windows: Sequence[RecallWindow], days: int) -> Mapping[str, Any]:
    return next((w for w in windows if w["days"] == days), {})


def _label(days: int) -> str:
    return "today" if days == 1 else f"{days} d"


def overview_lines(projects: Sequence[ProjectRecallSummary]) -> list[str]:
    """``agent-memory status``'s section: a line per project, tokens today / 7 d / 30 d."""
    if not projects:
        return ["recall injected: nothing in the last 30 days"]
    width = max(len("project"), *(len(p["project_id"]) for p in projects))
    lines = [
        "recall injected (tokens given unasked; UTC days):",
        f"  {'project':<{width}}  {'today':>9}  {'7 d':>9}  {'30 d':>9}  {'answers 7 d':>11}",
    ]
    for p in projects:
        week = _window(p["windows"], 7)
        cells = "  ".join(f"{_window(p['windows'], d).get('tokens', 0):>9,}" for d in (1, 7, 30))
        given = f"{week.get('given', 0)}/{week.get('answers', 0)}"
        off = "  injection OFF" if p["injection"] == "off" else ""
        lines.append(f"  {p['project_id']:<{width}}  {cells}  {given:>11}{off}")
    lines.append("  (answers given / asked; one project: agent-memory recall status --project P)")
    return lines


def render_project(data: ProjectRecall) -> str:
    """``recall status``: the switch, the windows by kind, the top sessions."""
    project = data["project_id"]
    if data["injection"] == "off":
        state = f"OFF since {minute(data['updated_at'])} (no brief, no per-prompt recall)"
    elif data["updated_at"]:
        state = f"on (set {minute(data['updated_at'])})"
    else:
        state = "on (the default)"
    windows = data["windows"]
    days = [w["days"] for w in windows]
    head = "".join(f"{_label(d):>10}" for d in days)
    lines = [f"recall injection for {project}: {state}", f"{'':<22}{head}"]
    rows = {
        "tokens given": [f"{w['tokens']:,}" for w in windows],
        "  brief": [f"{w['brief']['tokens']:,}" for w in windows],
        "  recall": [f"{w['recall']['tokens']:,}" for w in windows],
        "answers given/asked": [f"{w['given']}/{w['answers']}" for w in windows],
    }
    for title, cells in rows.items():
        lines.append(f"{title:<22}" + "".join(f"{cell:>10}" for cell in cells))
    if data["sessions"]:
        lines.append(f"sessions given the most ({_label(max(days))}):")
        width = max(len(s["session_id"] or "(none)") for s in data["sessions"])
        for s in data["sessions"]:
            lines.append(
                f"  {s['session_id'] or '(none)':<{width}}  {s['tokens']:>9,} tokens  "
                f"{s['given']}/{s['answers']} answers given  last {minute(s['last_at'])}"
            )
    other = "on" if data["injection"] == "off" else "off"
    lines.append(
        f"(turn it {other}, every runtime and machine: agent-memory recall {other} "
        f"--project {project})"
    )
    return "\n".join(lines)


async def status_and_recall(
    client: AgentMemoryClient,
) -> tuple[Status, list[ProjectRecallSummary] | None]:
    """``agent-memory status``'s two calls; the recall part is left out by a server without
    the route (404) or a key that may not read it."""
    from agent_memory_client import ApiError

    status = await client.status()
    try:
        projects = (await client.recall_projects())["projects"]
    except ApiError:
        return status, None
    return status, projects


def _run(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory_client import resolve_project_id

    project = args.project or resolve_project_id()

    async def work(client: AgentMemoryClient) -> ProjectRecall:
        if args.action == "status":
            return await client.recall_settings(project, sessions=args.sessions)
        return await client.set_recall(project, args.action)

    try:
        data = run_with_client(settings, args.token, work)
    except CommandFailed as exc:
        print(f"agent-memory: recall {args.action} failed for project {project}: {exc}")
        return exc.code
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    elif args.action == "status":
        print(render_project(data))
    else:
        print(
            f"recall injection is {data['injection']} for project {project}, on every runtime "
            f"and machine (capture goes on either way)"
        )
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "recall",
        help="turn a project's recall injection on or off, or see what it cost",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "action",
        choices=("status", "on", "off"),
        help="status: the switch and the tokens injected; on, off: set the switch",
    )
    parser.add_argument(
        "--project", help="the project (default: AGENT_MEMORY_PROJECT_ID, else the git root's)"
    )
    parser.add_argument(
        "--sessions", type=int, default=10, help="sessions listed by status (0-100, default 10)"
    )
    parser.add_argument("--json", action="store_true", help="the raw JSON of the API")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    parser.set_defaults(run=_run)
