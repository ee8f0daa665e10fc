"""``agent-memory search "..."``: the search API from a terminal, readable or as JSON.

Filters are passed through as written (the query service validates them and names the field
at fault), so the CLI accepts exactly what the API accepts: RFC 3339 or epoch milliseconds for
times, the memory kinds and tier names of ``POST /v1/search``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from typing import TYPE_CHECKING, Any

from agent_memory_cli.api import CommandFailed, minute, run_with_client

if TYPE_CHECKING:
    from agent_memory_cli.settings import Settings

TEXT_CHARS = 400


def build_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"query": args.query, "limit": args.limit}
    for name in ("project_id", "agent_id", "session_id", "since", "until", "now"):
        value = getattr(args, name)
        if value is not None:
            body[name] = int(value) if value.isdigit() else value
    if args.kinds:
        body["kinds"] = _split(args.kinds)
    if args.tiers:
        body["tiers"] = _split(args.tiers)
    if args.intent != "auto":
        body["intent"] = args.intent
    return body


def _split(values: list[str]) -> list[str]:
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def render(answer: dict[str, Any], *, width: int, explain: bool = False) -> str:
    """The answer as a person reads it: best first, where it came from, then how it was found."""
    lines: list[str] = []
    head = [f"intent: {answer.get('intent')}"]
    time_range = answer.get("time_range")
    if time_range:
        span = (
            f"{minute(time_range.get('since')) or '…'} → {minute(time_range.get('until')) or 'now'}"
        )
        label = time_range.get("expression") or "filter"
        relaxed = " (matched nothing: searched all time)" if time_range.get("relaxed") else ""
        head.append(f"time: {label} [{span}]{relaxed}")
    info = answer.get("explain") or {}
    used = [t for t, v in (info.get("tiers") or {}).items() if v.get("status") == "used"]
    head.append(f"tiers: {', '.join(used) or 'none'}")
    total = (info.get("timings_ms") or {}).get("total")
    if total is not None:
        head.append(f"{total:.1f} ms")
    lines.append("   ".join(head))
    results = answer.get("results") or []
    if not results:
        lines.append("no results")
    indent = " " * 7
    for n, r in enumerate(results, 1):
        where = r.get("project_id") or ""
        if r.get("session_id"):
            where += f" / {r['session_id']}"
        lines.append(
            f"{n:>3}. {r.get('score', 0):.3f}  {minute(r.get('ts'))}  {where}  "
            f"{r.get('type')}:{r.get('level')}  [{r.get('memory_kind')}]"
        )
        if r.get("title"):
            lines.append(indent + str(r["title"]))
        text = " ".join(str(r.get("text") or "").split())
        if len(text) > TEXT_CHARS:
            text = text[: TEXT_CHARS - 1] + "…"
        lines.extend(
            textwrap.wrap(
                text, width=max(width, 40), initial_indent=indent, subsequent_indent=indent
            )
        )
        event_ids = r.get("event_ids") or []
        if event_ids:
            shown = ", ".join(event_ids[:5]) + (
                f" (+{len(event_ids) - 5})" if len(event_ids) > 5 else ""
            )
            lines.append(f"{indent}events: {shown}")
    for note in info.get("fallbacks") or []:
        lines.append(f"note: {note}")
    if explain:
        lines.append(json.dumps(info, indent=2, ensure_ascii=False))
    return "\n".join(lines)


def _run(settings: Settings, args: argparse.Namespace) -> int:
    body = build_body(args)
    query = body.pop("query")
    try:
        answer: dict[str, Any] = dict(
            run_with_client(settings, args.token, lambda c: c.search(query, **body))
        )
    except CommandFailed as exc:
        print(f"agent-memory: search failed: {exc}")
        return exc.code
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
    else:
        width = shutil.get_terminal_size((100, 20)).columns - 1
        print(render(answer, width=width, explain=args.explain))
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "search",
        help="search memory in plain words",
        description='Search memory: agent-memory search "what did we decide about auth last week"',
    )
    parser.add_argument("query", help="plain words; time words like 'yesterday' filter by time")
    parser.add_argument("--project", dest="project_id", help="only this project")
    parser.add_argument("--agent", dest="agent_id", help="only this agent")
    parser.add_argument("--session", dest="session_id", help="only this session")
    parser.add_argument("--since", help="RFC 3339 or epoch ms, inclusive")
    parser.add_argument("--until", help="RFC 3339 or epoch ms, exclusive")
    parser.add_argument(
        "--kind",
        dest="kinds",
        action="append",
        help="memory kind (decision, constraint, definition, procedure, preference, observation,"
        " episode); repeat or comma-separate",
    )
    parser.add_argument("--limit", type=int, default=10, help="results (default 10)")
    parser.add_argument(
        "--intent",
        default="auto",
        choices=["auto", "explore", "answer", "locate", "time-boxed"],
        help="default: classified from the query",
    )
    parser.add_argument("--now", help="reference time for relative dates (default: now)")
    parser.add_argument(
        "--tiers", action="append", help="restrict to tiers: vector, bm25, toc, scan (ablations)"
    )
    parser.add_argument("--json", action="store_true", help="print the raw JSON answer")
    parser.add_argument("--explain", action="store_true", help="also print the explain block")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    parser.set_defaults(run=_run)
