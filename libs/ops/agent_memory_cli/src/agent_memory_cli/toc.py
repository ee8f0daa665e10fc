"""``agent-memory toc``: browse the table of contents from a year down to a segment's events.

Everything goes through the query service's HTTP API, so the CLI shows exactly what an agent
sees; ids printed can be pasted back as the next argument. ``DESCRIPTION`` is what
``agent-memory toc --help`` prints (plain text: a terminal shows no markup).
"""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from typing import TYPE_CHECKING, Any

from agent_memory_cli.api import REFUSED, CommandFailed, minute, run_with_client

if TYPE_CHECKING:
    from agent_memory_cli.settings import Settings
    from agent_memory_client import AgentMemoryClient

DESCRIPTION = """\
Browse the table of contents from a year down to a segment's events.

    agent-memory toc --project my-project            years (and their months)
    agent-memory toc month:2026-03@my-project        a node: bullets, grips, children
    agent-memory toc segment:sg_...  --events        a segment and the events it holds
    agent-memory toc --project my-project --at 2026-03-31T14:00:00Z   the path to an instant
    agent-memory toc --project my-project --user dana                  only what Dana wrote in

Everything goes through the query service's HTTP API, so this shows exactly what an agent
sees; ids printed can be pasted back as the next argument.
"""
EXCERPT_CHARS = 160
EVENT_CHARS = 300


def _one_line(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line(node: dict[str, Any], indent: str = "") -> str:
    count = node.get("event_count") if node["level"] == "segment" else node.get("child_count")
    unit = "events" if node["level"] == "segment" else "children"
    pin = " pinned" if node.get("pinned") else ""
    return (
        f"{indent}{node['node_id']}  {node['title']}"
        f"  [{node['memory_kind']} {node['salience']:.2f}{pin}] ({count} {unit})"
    )


async def render_years(
    client: AgentMemoryClient, project: str | None, user: str | None = None
) -> list[str]:
    years = (await client.toc(project_id=project, user_id=user))["years"]
    if not years:
        scope = f"project {project!r}" if project else "any project"
        return [f"no table of contents yet for {scope}"]
    lines = []
    for year in years:
        lines.append(_line(year))
        for month in (await client.toc_children(year["node_id"], user_id=user))["children"]:
            lines.append(_line(month, "  "))
    lines.append("")
    lines.append("open one: agent-memory toc <id>")
    return lines


async def render_node(
    client: AgentMemoryClient,
    node_id: str,
    version: int | None,
    events: bool,
    width: int,
    user: str | None = None,
) -> list[str]:
    node = await client.toc_node(node_id, version=version)
    version_note = f"v{node['version']} of {node['latest_version']}"
    lines = [
        f"{node['node_id']}   {node['level']}   {version_note}   "
        f"{minute(node['start_ts'])} → {minute(node['end_ts'])}",
        f"  {node['title']}",
        f"  kind: {node['memory_kind']}   salience: {node['salience']:.2f}"
        + ("   pinned" if node["pinned"] else "")
        + f"   summarizer: {node['summarizer']}",
    ]
    if node["keywords"]:
        lines.append("  key phrases: " + ", ".join(node["keywords"]))
    if node["level"] == "segment":
        lines.append(
            f"  session: {node['session_id']}   agent: {node['agent_id']}   "
            f"events: {len(node['event_ids'])} (overlap {node['overlap_count'] or 0})"
        )
    if node.get("user_ids") or node.get("agent_ids"):
        lines.append(
            f"  agents: {', '.join(node.get('agent_ids') or []) or '-'}   "
            f"users: {', '.join(node.get('user_ids') or []) or '-'}"
        )
    if node["parent_id"]:
        lines.append(f"  up: {node['parent_id']}")
    lines.append("")
    wrap_width = max(width, 50)
    for n, bullet in enumerate(node["bullets"], 1):
        lines.extend(
            textwrap.wrap(
                f"{n}. [{bullet['kind']}] {bullet['text']}",
                width=wrap_width,
                initial_indent="  ",
                subsequent_indent="      ",
            )
        )
        for grip in bullet["grips"]:
            lines.append(
                f"      ↳ {grip['grip_id']}  events {', '.join(grip['event_ids'])}: "
                f"“{_one_line(grip['excerpt'], EXCERPT_CHARS)}”"
            )
    children = await client.toc_children(node_id, version=version, user_id=user)
    if node["level"] == "segment":
        if events:
            lines.append("")
            lines.append("events:")
            for e in children["events"]:
                mark = " (overlap)" if e["overlap"] else ""
                head = f"  {minute(e['ts'])}  {e['role']:<9} {e['type']:<12} {e['event_id']}{mark}"
                lines.append(head)
                text = _one_line(e["text"], EVENT_CHARS)
                if text:
                    lines.extend(
                        textwrap.wrap(
                            text,
                            width=wrap_width,
                            initial_indent="      ",
                            subsequent_indent="      ",
                        )
                    )
        else:
            lines.append("")
            lines.append(f"its events: agent-memory toc {node_id} --events")
    else:
        lines.append("")
        lines.append("children:" if children["children"] else "children: none")
        for child in children["children"]:
            lines.append(_line(child, "  "))
        if events:
            lines.append("(--events lists the events of a segment; open one of its segments)")
    return lines


async def render_at(client: AgentMemoryClient, project: str | None, ts: str) -> list[str]:
    if not project:
        raise CommandFailed(REFUSED, "--at needs --project")
    data = await client.toc_at(ts, project_id=project)
    lines = [f"{ts} in {project}:"]
    for depth, node in enumerate(data["path"]):
        lines.append(_line(node, "  " * (depth + 1)))
    if data["segment_id"] is None:
        lines.append("  (no segment holds that instant)")
    return lines


async def _output(client: AgentMemoryClient, args: argparse.Namespace, width: int) -> str:
    if args.json:
        if args.node_id:
            data: Any = {
                "node": await client.toc_node(args.node_id, version=args.version),
                "children": await client.toc_children(
                    args.node_id, version=args.version, user_id=args.user
                ),
            }
        elif args.at:
            data = await client.toc_at(args.at, project_id=args.project)
        else:
            data = await client.toc(project_id=args.project, user_id=args.user)
        return json.dumps(data, indent=2, ensure_ascii=False)
    if args.node_id:
        lines = await render_node(client, args.node_id, args.version, args.events, width, args.user)
    elif args.at:
        lines = await render_at(client, args.project, args.at)
    else:
        lines = await render_years(client, args.project, args.user)
    return "\n".join(lines)


def _run(settings: Settings, args: argparse.Namespace) -> int:
    width = shutil.get_terminal_size((100, 20)).columns - 1
    try:
        output = run_with_client(settings, args.token, lambda c: _output(c, args, width))
    except CommandFailed as exc:
        print(f"agent-memory: {exc}")
        return exc.code
    print(output)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "toc",
        help="browse the table of contents: years, months, weeks, days, segments, events",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("node_id", nargs="?", help="a node id printed by a previous call")
    parser.add_argument("--project", help="the project (years of every project if omitted)")
    parser.add_argument("--events", action="store_true", help="a segment's events")
    parser.add_argument("--version", type=int, help="an older version of the node")
    parser.add_argument("--at", help="the path to this instant (RFC 3339 or epoch ms)")
    parser.add_argument(
        "--user", help="only nodes and events of this user (team projects; not with --at)"
    )
    parser.add_argument("--json", action="store_true", help="the raw JSON of the API")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    parser.set_defaults(run=_run)
