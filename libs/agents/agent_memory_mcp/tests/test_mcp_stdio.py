"""The MCP server over a real stdio session (``agent-memory mcp`` as a subprocess), driven by the
SDK's own client, against the real stack."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent

from tests.stack import Stack

TOOLS = {
    "memory_search",
    "memory_brief",
    "memory_toc",
    "memory_expand",
    "memory_timeline",
    "memory_note",
    "memory_topics",
}


def stdio_params(stack: Stack, *args: str) -> StdioServerParameters:
    env = {k: v for k, v in stack.env.items() if k.startswith(("AGENT_MEMORY_", "PATH", "HOME"))}
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "agent_memory_cli", "mcp", *args],
        env=env,
        cwd=str(stack.workdir),
    )


def text_of(result: CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


def data_of(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    if isinstance(result.structured_content, dict):
        return result.structured_content
    loaded = json.loads(text_of(result))
    assert isinstance(loaded, dict)
    return loaded


async def wait_events(stack: Stack, project: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 20
    async with httpx.AsyncClient(base_url=stack.query_url) as http:
        while time.monotonic() < deadline:
            events = (await http.get("/v1/events", params={"project_id": project})).json()["events"]
            if len(events) >= count:
                return list(events)
            await asyncio.sleep(0.1)
    raise AssertionError(f"{count} events of {project} not stored in time")


async def seed(stack: Stack, project: str, texts: list[str]) -> None:
    events = [
        {
            "event_id": f"seed-{i}",
            "ts": 1_767_225_600_000 + i * 1000,
            "project_id": project,
            "agent_id": "claude-code",
            "session_id": "s-seed",
            "role": "user" if i % 2 == 0 else "assistant",
            "text": text,
        }
        for i, text in enumerate(texts)
    ]
    async with httpx.AsyncClient() as http:
        response = await http.post(f"{stack.gateway_url}/v1/events", json={"events": events})
        assert response.status_code == 202, response.text


async def test_stdio_session_notes_timeline_and_expand(lean_stack: Stack) -> None:
    stack = lean_stack
    await seed(stack, "proj-mcp", [f"step {i}: we tuned the parser" for i in range(7)])
    await wait_events(stack, "proj-mcp", 7)
    async with Client(stdio_params(stack, "--project", "proj-mcp"), read_timeout_seconds=30) as c:
        listed = await c.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        schemas = {t.name: t.input_schema for t in listed.tools}
        assert schemas["memory_search"]["required"] == ["query"]
        assert "ctx" not in schemas["memory_search"]["properties"]

        note = data_of(
            await c.call_tool(
                "memory_note",
                {"text": "Decision: events stay append-only", "kind": "decision", "pinned": True},
            )
        )
        assert note["project_id"] == "proj-mcp" and note["pinned"] is True
        stored = await wait_events(stack, "proj-mcp", 8)
        recorded = next(e for e in stored if e["event_id"] == note["event_id"])
        assert recorded["type"] == "note" and recorded["text"].startswith("Decision:")
        assert recorded["metadata"]["note_kind"] == "decision"
        assert recorded["metadata"]["pinned"] is True

        timeline = data_of(
            await c.call_tool(
                "memory_timeline",
                {"since": "2026-01-01T00:00:02Z", "until": "2026-01-01T00:00:05Z"},
            )
        )
        assert [e["event_id"] for e in timeline["events"]] == ["seed-2", "seed-3", "seed-4"]

        expanded = data_of(await c.call_tool("memory_expand", {"id": "seed-3", "context": 2}))
        assert expanded["kind"] == "event" and expanded["event"]["event_id"] == "seed-3"
        assert [e["event_id"] for e in expanded["before"]] == ["seed-1", "seed-2"]
        assert [e["event_id"] for e in expanded["after"]] == ["seed-4", "seed-5"]
        # a search hit's index id opens the same event
        again = data_of(await c.call_tool("memory_expand", {"id": "event:default:seed-3"}))
        assert again["event"]["event_id"] == "seed-3"

        found = data_of(await c.call_tool("memory_search", {"query": "tuned the parser"}))
        hits = found["results"]
        assert hits and all(h["project_id"] == "proj-mcp" for h in hits)
        assert any("parser" in h["text"] for h in hits)
        opened = data_of(await c.call_tool("memory_expand", {"id": hits[0]["id"]}))
        assert opened["kind"] in ("event", "grip", "node")
        # relative dates are read against the caller's `now`
        dated = data_of(
            await c.call_tool(
                "memory_search",
                {"query": "what did we tune yesterday", "now": "2026-01-02T12:00:00Z"},
            )
        )
        assert str((dated["time_range"] or {}).get("since", "")).startswith("2026-01-01")

        # errors come back to the model as tool errors that say what is wrong
        missing = await c.call_tool("memory_expand", {"id": "nothing-here"})
        assert missing.is_error and "nothing-here" in text_of(missing)
        bad = await c.call_tool("memory_timeline", {"since": "last tuesday-ish"})
        assert bad.is_error and "since" in text_of(bad)


async def test_legacy_handshake_and_unreachable_service(lean_stack: Stack) -> None:
    """Clients of the pre-2026 protocol (initialize handshake) work; a dead gateway is a tool
    error, not a crash of the server."""
    stack = lean_stack
    params = stdio_params(stack, "--project", "proj-legacy")
    assert params.env is not None
    params.env["AGENT_MEMORY_GATEWAY_URL"] = "http://127.0.0.1:9"
    async with Client(params, mode="legacy", read_timeout_seconds=30) as c:
        assert {t.name for t in (await c.list_tools()).tools} == TOOLS
        failed = await c.call_tool("memory_note", {"text": "lost?"})
        assert failed.is_error and "unavailable" in text_of(failed)
        # the session is still usable after the failure
        page = data_of(await c.call_tool("memory_timeline", {"since": "2026-01-01T00:00:00Z"}))
        assert page["events"] == []
