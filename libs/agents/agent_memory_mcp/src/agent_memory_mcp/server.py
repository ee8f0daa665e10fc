"""The agent-memory MCP server: its tools over the public API, one implementation for both
transports.

The tools only speak to agent-memory through ``AgentMemoryClient``, so the stdio server (started
by a coding agent as ``agent-memory mcp``) and the streamable HTTP endpoint mounted on the query
service behave identically. Over HTTP each call forwards the caller's own bearer token, so a tool
sees exactly what that caller may see through the REST API.

Answers are trimmed (long texts cut, at most ``limit`` items) because they land in a model's
context window; every item keeps its id so that the model can ``memory_expand`` it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from agent_memory_client import AgentMemoryClient, ApiError, UnavailableError, new_id

SERVER_NAME = "agent-memory"
INSTRUCTIONS = (
    "Long-term memory of past agent sessions for this project. When starting work, read "
    "memory_brief (the decisions and constraints in force, where the last session left off). "
    "Use memory_search first for "
    "anything that may have been discussed or decided before; browse with memory_toc (years, "
    "months, weeks, days, segments); open any id with memory_expand; list what happened in a "
    "period with memory_timeline; see the themes worked on (and related ones) with "
    "memory_topics; record decisions and facts worth keeping with memory_note."
)
TEXT_LIMIT = 600

# The caller's ``Authorization`` header during one tool call (HTTP transport only).
_caller_auth: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "agent_memory_mcp_caller_auth", default=None
)


@dataclass
class ServerDefaults:
    """What a tool uses when the model does not say: this process's project and identity."""

    project_id: str | None = None
    agent_id: str = "mcp"
    session_id: str = field(default_factory=lambda: "mcp-" + new_id())


def caller_token(fallback: str | None) -> str | None:
    """The bearer token of the current HTTP caller, else ``fallback`` (stdio: configured)."""
    header = _caller_auth.get()
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    return fallback


@contextlib.contextmanager
def _as_caller(ctx: Context | None) -> Iterator[None]:
    headers = None
    with contextlib.suppress(ValueError):  # no request context: called outside a request
        headers = ctx.headers if ctx is not None else None
    auth = headers.get("authorization") if headers else None
    token = _caller_auth.set(auth)
    try:
        yield
    finally:
        _caller_auth.reset(token)


def _cut(text: Any, limit: int = TEXT_LIMIT) -> Any:
    if isinstance(text, str) and len(text) > limit:
        return text[:limit] + f"... [{len(text) - limit} more chars: memory_expand for all]"
    return text


def _brief_event(event: dict[str, Any]) -> dict[str, Any]:
    keys = ("event_id", "ts", "project_id", "agent_id", "session_id", "role", "type", "text")
    out = {k: event.get(k) for k in keys}
    out["text"] = _cut(out["text"])
    if event.get("metadata"):
        out["metadata"] = event["metadata"]
    return out


def _fail(what: str, exc: Exception) -> ToolError:
    if isinstance(exc, UnavailableError):
        return ToolError(f"{what}: agent-memory is unavailable, try again shortly ({exc})")
    if isinstance(exc, ApiError):
        where = f" (field {exc.field})" if exc.field else ""
        return ToolError(f"{what}: {exc.message}{where}")
    return ToolError(f"{what}: {exc}")


def split_doc_id(memory_id: str) -> tuple[str | None, str]:
    """Search hits may carry index ids (``event:<tenant>:<id>``); return (kind, plain id)."""
    kind, sep, rest = memory_id.partition(":")
    if sep and kind in ("event", "grip", "node") and ":" in rest:
        return kind, rest.split(":", 1)[1]
    return None, memory_id


def build_server(client: AgentMemoryClient, defaults: ServerDefaults | None = None) -> MCPServer:
    """The MCP server; ``client`` is owned (and closed) by the caller."""
    conf = defaults or ServerDefaults()
    # WARNING: the SDK configures stdlib logging from this; in stdio mode stdout is the protocol
    server: MCPServer = MCPServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING"
    )

    def project(explicit: str | None) -> str | None:
        return explicit or conf.project_id

    @server.tool(
        description=(
            "Search memory (events, segment and period summaries, grips) with a natural-language "
            "query; time phrases like 'last week' narrow the range, and 'where did we leave "
            "off?' answers with the summaries of the last day of work; asking for 'the "
            "command' or 'the diff' that did something returns the command or the edit. Returns "
            "the best hits with ids to open with memory_expand."
        )
    )
    async def memory_search(
        query: Annotated[str, Field(min_length=1, description="What to look for")],
        limit: Annotated[int, Field(ge=1, le=50)] = 8,
        project_id: Annotated[
            str | None, Field(description="Project to search; default: the current one")
        ] = None,
        all_projects: Annotated[bool, Field(description="Search every project")] = False,
        now: Annotated[
            str | None,
            Field(
                description="Reference time for relative dates ('last week', 'yesterday'), "
                "RFC 3339 or epoch ms; default: the current time"
            ),
        ] = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if now:
            extra["now"] = int(now) if now.isdigit() else now
        with _as_caller(ctx):
            try:
                found = await client.search(
                    query,
                    limit=limit,
                    project_id=None if all_projects else project(project_id),
                    **extra,
                )
            except Exception as exc:
                raise _fail("memory_search", exc) from exc
        results = []
        for hit in found.get("results", [])[:limit]:
            item = {k: v for k, v in hit.items() if k not in ("text", "event_ids")}
            item["text"] = _cut(hit.get("text", ""))
            item["event_count"] = len(hit.get("event_ids", []) or [])
            results.append(item)
        return {
            "intent": found.get("intent"),
            "time_range": found.get("time_range"),
            "results": results,
        }

    @server.tool(
        description=(
            "What to know before working on the project: the decisions, constraints, "
            "preferences and procedures in force (never one a later statement replaced) and "
            "the last session's goal and outcome, within budget_tokens. Each line ends with an "
            "id to open with memory_expand. An empty context: nothing recorded yet."
        )
    )
    async def memory_brief(
        project_id: Annotated[str | None, Field(description="Default: the current one")] = None,
        budget_tokens: Annotated[
            int, Field(ge=100, le=8000, description="Most tokens (about 4 characters each)")
        ] = 1500,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        pid = project(project_id)
        if not pid:
            raise ToolError("memory_brief: project_id is required (no current project is known)")
        with _as_caller(ctx):
            try:
                brief = await client.brief(
                    pid, budget_tokens=budget_tokens, session_id=conf.session_id
                )
            except Exception as exc:
                raise _fail("memory_brief", exc) from exc
        return {
            "project_id": brief["project_id"],
            "context": brief["context"],
            "tokens": brief["tokens"],
            "ids": brief["ids"],
        }

    @server.tool(
        description=(
            "Browse the table of contents of memory. Without arguments: the years. With node_id: "
            "that node (year, month, week, day or segment) and its children, to drill down to a "
            "segment. With at (RFC 3339 time): the nodes containing that moment. user_id: only "
            "the nodes (and a segment's events) of that user, in team projects."
        )
    )
    async def memory_toc(
        node_id: Annotated[
            str | None, Field(description="A node id from a previous answer")
        ] = None,
        at: Annotated[
            str | None, Field(description="RFC 3339 time, e.g. 2026-01-31T12:00Z")
        ] = None,
        project_id: Annotated[str | None, Field(description="Default: the current one")] = None,
        user_id: Annotated[
            str | None, Field(description="Only what this user wrote (team projects)")
        ] = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        pid = project(project_id)
        params = {"project_id": pid} if pid else {}
        who = {"user_id": user_id} if user_id else {}
        with _as_caller(ctx):
            try:
                if at:
                    return {"at": at, **(await client.toc_at(at, **params))}
                if node_id:
                    _, plain = split_doc_id(node_id)
                    node = await client.toc_node(plain)
                    children = await client.toc_children(plain, **who)
                    return {"node": node, "children": children}
                return await client.toc(**params, **who)
            except Exception as exc:
                raise _fail("memory_toc", exc) from exc

    @server.tool(
        description=(
            "The themes worked on, by importance (recent work counts more). Without arguments: "
            "the top topics of the project; since/until (RFC 3339) for a window like this month; "
            "query: topics about something; topic_id: that topic's segments (with event ids) "
            "and its related topics. user_id: only the topics that user worked on (team projects)."
        )
    )
    async def memory_topics(
        query: Annotated[str | None, Field(description="Topics about this")] = None,
        topic_id: Annotated[str | None, Field(description="A topic id to open")] = None,
        since: Annotated[str | None, Field(description="Active since (RFC 3339)")] = None,
        until: Annotated[str | None, Field(description="Window end; ranked as of it")] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        project_id: Annotated[str | None, Field(description="Default: the current one")] = None,
        user_id: Annotated[
            str | None, Field(description="Only topics this user worked on (team projects)")
        ] = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        pid = project(project_id)
        with _as_caller(ctx):
            try:
                if topic_id:
                    return dict(await client.topic(topic_id, members=50))
                if query:
                    return dict(
                        await client.search_topics(
                            query, project_id=pid, limit=limit, user_id=user_id
                        )
                    )
                return dict(
                    await client.topics(
                        project_id=pid, since=since, until=until, limit=limit, user_id=user_id
                    )
                )
            except Exception as exc:
                raise _fail("memory_topics", exc) from exc

    @server.tool(
        description=(
            "Open a memory by id: a grip (an excerpt with its surrounding events), an event (with "
            "`context` events before and after in its session) or a table-of-contents node."
        )
    )
    async def memory_expand(
        id: Annotated[str, Field(min_length=1, description="Grip, event or node id")],
        context: Annotated[int, Field(ge=0, le=20, description="Events either side")] = 3,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        kind, plain = split_doc_id(id)
        with _as_caller(ctx):
            try:
                if kind == "node":
                    node = await client.toc_node(plain)
                    return {
                        "kind": "node",
                        "node": node,
                        "children": await client.toc_children(plain),
                    }
                if kind in (None, "grip"):
                    try:
                        return {"kind": "grip", **(await client.grip(plain, context=context))}
                    except ApiError as exc:
                        if exc.status != 404 or kind == "grip":
                            raise
                return await _expand_event(client, plain, context)
            except ApiError as exc:
                if exc.status == 404:
                    raise ToolError(f"memory_expand: no grip, event or node {id!r}") from exc
                raise _fail("memory_expand", exc) from exc
            except Exception as exc:
                raise _fail("memory_expand", exc) from exc

    @server.tool(
        description=(
            "List the events recorded between two times (RFC 3339 or epoch ms), oldest first, "
            "optionally for one session. Use next_cursor to page on."
        )
    )
    async def memory_timeline(
        since: Annotated[str, Field(description="Start, inclusive (RFC 3339 or epoch ms)")],
        until: Annotated[str | None, Field(description="End, exclusive; default: now")] = None,
        project_id: Annotated[str | None, Field(description="Default: the current one")] = None,
        session_id: str | None = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        cursor: str | None = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        with _as_caller(ctx):
            try:
                page = await client.events(
                    project_id=project(project_id),
                    session_id=session_id,
                    since=since,
                    until=until,
                    limit=limit,
                    cursor=cursor,
                )
            except Exception as exc:
                raise _fail("memory_timeline", exc) from exc
        events = [_brief_event(dict(e)) for e in page["events"]]
        return {"events": events, "next_cursor": page.get("next_cursor")}

    @server.tool(
        description=(
            "Record a note or a decision in memory so that future sessions (of any agent on this "
            "project) can find it. pinned=true marks it as always worth recalling. "
            "supersedes=[event ids]: this note replaces those earlier decisions (search then "
            "shows them as history, linked to this one)."
        )
    )
    async def memory_note(
        text: Annotated[str, Field(min_length=1, max_length=20000)],
        kind: Literal["note", "decision"] = "note",
        pinned: bool = False,
        tags: list[str] | None = None,
        project_id: Annotated[str | None, Field(description="Default: the current one")] = None,
        supersedes: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=512)]] | None,
            Field(max_length=20, description="Event ids of the decisions this one replaces"),
        ] = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        pid = project(project_id)
        if not pid:
            raise ToolError("memory_note: project_id is required (no current project is known)")
        metadata: dict[str, Any] = {"note_kind": kind, "pinned": pinned, "source": "mcp"}
        if tags:
            metadata["tags"] = tags
        if supersedes:
            metadata["supersedes"] = list(dict.fromkeys(supersedes))
        with _as_caller(ctx):
            try:
                event_id = await client.record(
                    project_id=pid,
                    agent_id=conf.agent_id,
                    session_id=conf.session_id,
                    role="assistant",
                    type="note",
                    text=text,
                    metadata=metadata,
                )
            except Exception as exc:
                raise _fail("memory_note", exc) from exc
        out: dict[str, Any] = {
            "event_id": event_id,
            "project_id": pid,
            "kind": kind,
            "pinned": pinned,
        }
        if supersedes:
            out["supersedes"] = metadata["supersedes"]
        return out

    return server


async def _expand_event(client: AgentMemoryClient, event_id: str, context: int) -> dict[str, Any]:
    event = await client.event(event_id)
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    if context > 0:
        older = await client.events(
            session_id=event["session_id"],
            project_id=event["project_id"],
            until=event["ts"],
            order="desc",
            limit=context,
        )
        before = [_brief_event(dict(e)) for e in reversed(older["events"])]
        newer = await client.events(
            session_id=event["session_id"],
            project_id=event["project_id"],
            since=event["ts"],
            order="asc",
            limit=context + 1,
        )
        after = [_brief_event(dict(e)) for e in newer["events"] if e["event_id"] != event_id]
        after = after[:context]
    return {"kind": "event", "event": dict(event), "before": before, "after": after}
