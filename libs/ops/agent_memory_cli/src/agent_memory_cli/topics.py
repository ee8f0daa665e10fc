"""``agent-memory topics``: the themes you have worked on, from the query service's API.

The listing is ranked by importance (the members' salience, halved every 30 days of age, as of
``--until``, else of the project's latest activity); ids printed can be pasted into
``topics show``. ``DESCRIPTION`` is what ``agent-memory topics --help`` prints (plain text: a
terminal shows no markup).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from agent_memory_cli.api import CommandFailed, run_with_client

if TYPE_CHECKING:
    from agent_memory_cli.settings import Settings
    from agent_memory_client import AgentMemoryClient

DESCRIPTION = """\
The themes you have worked on, from the query service's API.

    agent-memory topics --project my-project --since 2026-11-01      themes this month
    agent-memory topics search "billing" --project my-project         topics about X
    agent-memory topics --project my-project --user dana               themes Dana worked on
    agent-memory topics show topic:4f1c...                            a topic, members, related
    agent-memory admin rebuild-topics [--project P]                   the graph again from the TOC

The listing is ranked by importance (the members' salience, halved every 30 days of age, as of
--until, else of the project's latest activity); ids printed can be pasted into
"topics show".
"""


def _when(ts: str | None) -> str:
    return (ts or "")[:10]


def topic_line(t: dict[str, Any]) -> str:
    return (
        f"{t['topic_id']}  {t['label']}  [importance {t['importance']:.2f}, {t['size']} segments,"
        f" {len(t['session_ids'])} sessions, {_when(t['first_ts'])} → {_when(t['last_ts'])}]"
    )


def render_list(topics: list[dict[str, Any]], scope: str) -> list[str]:
    if not topics:
        return [f"no topics yet for {scope} (the topics service clusters as segments arrive)"]
    lines = []
    for t in topics:
        lines.append(topic_line(t))
        if t["keywords"]:
            lines.append("    " + ", ".join(t["keywords"][:8]))
    lines += ["", "open one: agent-memory topics show <id>"]
    return lines


def render_topic(t: dict[str, Any]) -> list[str]:
    lines = [topic_line(t)]
    if t["keywords"]:
        lines.append("  keywords: " + ", ".join(t["keywords"]))
    if t.get("parent_ids"):
        lines.append("  split or merged from: " + ", ".join(t["parent_ids"]))
    lines.append(f"  members ({len(t['members'])}):")
    for m in t["members"]:
        lines.append(
            f"    {m['node_id']}  {_when(m['start_ts'])}  {m['title']}"
            f"  (session {m['session_id']}, {len(m['event_ids'])} events)"
        )
    if t["related"]:
        lines.append("  related:")
        for r in t["related"]:
            lines.append(f"    {r['topic_id']}  {r['label']}  (weight {r['weight']:.2f})")
    return lines


async def _output(client: AgentMemoryClient, args: argparse.Namespace) -> str:
    data: Any
    if args.topic_command == "show":
        data = await client.topic(args.topic_id)
        lines = render_topic(dict(data))
    elif args.topic_command == "search":
        data = await client.search_topics(
            args.query, project_id=args.project, limit=args.limit, user_id=args.user
        )
        lines = render_list([dict(t) for t in data["topics"]], f"{args.query!r}")
    else:
        data = await client.topics(
            project_id=args.project,
            since=args.since,
            until=args.until,
            limit=args.limit,
            user_id=args.user,
        )
        scope = f"project {args.project!r}" if args.project else "any project"
        lines = render_list([dict(t) for t in data["topics"]], scope)
    if args.json:
        return json.dumps(data, indent=2)
    return "\n".join(lines)


def _run(settings: Settings, args: argparse.Namespace) -> int:
    try:
        output = run_with_client(settings, args.token, lambda c: _output(c, args))
    except CommandFailed as exc:
        print(f"agent-memory: {exc}")
        return exc.code
    print(output)
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="the raw JSON of the API")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "topics",
        help="the themes you have worked on: list, search, show",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--project", help="one project (every project if omitted)")
    parser.add_argument("--since", help="only topics active since (RFC 3339 or epoch ms)")
    parser.add_argument("--until", help="window end; importance is ranked as of it")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--user", help="only topics this user worked on (team projects)")
    _common(parser)
    parser.set_defaults(run=_run, topic_command=None)
    sub = parser.add_subparsers(dest="topic_command")
    show = sub.add_parser("show", help="a topic: members and related topics")
    show.add_argument("topic_id")
    _common(show)
    search = sub.add_parser("search", help="topics by meaning")
    search.add_argument("query")
    search.add_argument("--project", help="one project")
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--user", help="only topics this user worked on (team projects)")
    _common(search)


def _cmd_rebuild(settings: Settings, args: argparse.Namespace) -> int:
    """Run the topics service's rebuild as a process (nothing imports a service); its progress
    bar and answer go straight to this terminal."""
    cmd = [sys.executable, "-m", "agent_memory_topics", "rebuild"]
    if args.tenant:
        cmd += ["--tenant", args.tenant]
    if args.project:
        cmd += ["--project", args.project]
    env = {**os.environ, "AGENT_MEMORY_PG_DSN": settings.pg_dsn}
    return subprocess.run(cmd, env=env, check=False).returncode


def register_admin(admin_sub: Any) -> None:
    """``agent-memory admin rebuild-topics`` (called by ``admin.register``)."""
    rebuild = admin_sub.add_parser(
        "rebuild-topics",
        help="rebuild the topic graph from the table of contents (ids are kept), with progress",
    )
    rebuild.add_argument("--tenant", help="one tenant (all if omitted)")
    rebuild.add_argument("--project", help="one project (all if omitted)")
    rebuild.set_defaults(run=_cmd_rebuild)
