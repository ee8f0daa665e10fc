"""The same tools over streamable HTTP at ``/mcp`` on the query service, with the SDK's client;
with tokens configured, the caller's token decides what the tools see."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

from agent_memory_embedded.servers import NatsServer
from tests.stack import LEAN, Stack, running_stack


def data_of(result: CallToolResult) -> dict[str, Any]:
    text = "".join(c.text for c in result.content if isinstance(c, TextContent))
    assert not result.is_error, text
    if isinstance(result.structured_content, dict):
        return result.structured_content
    loaded = json.loads(text)
    assert isinstance(loaded, dict)
    return loaded


async def stored(stack: Stack, count: int, headers: dict[str, str] | None = None) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(base_url=stack.query_url, headers=headers) as http:
        while time.monotonic() < deadline:
            if (await http.get("/v1/status")).json()["events_stored"] >= count:
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"{count} events not stored in time")


@contextlib.asynccontextmanager
async def mcp_client(stack: Stack, token: str | None = None) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP; the SDK leaves a client-supplied HTTP client open,
    so it is closed here."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(f"{stack.query_url}/mcp", http_client=http)
        async with Client(transport, read_timeout_seconds=30) as client:
            yield client


async def test_http_endpoint_serves_the_tools(lean_stack: Stack) -> None:
    stack = lean_stack
    async with mcp_client(stack) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert "memory_note" in names and "memory_search" in names
        note = data_of(
            await c.call_tool("memory_note", {"text": "use uv for installs", "project_id": "web"})
        )
        await stored(stack, 1)
        since = "2020-01-01T00:00:00Z"
        page = data_of(await c.call_tool("memory_timeline", {"since": since, "project_id": "web"}))
        assert [e["event_id"] for e in page["events"]] == [note["event_id"]]
        assert page["events"][0]["agent_id"] == "mcp-http"
        # no current project over HTTP: a note must name one
        nameless = await c.call_tool("memory_note", {"text": "where does this go?"})
        assert nameless.is_error


async def test_http_endpoint_forwards_the_callers_token(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    tokens = "ta:acme,tb:bolt"  # notes and timelines only: no sentence model (LEAN)
    with running_stack(nats_server, pg_dsn, tmp_path, AGENT_MEMORY_TOKENS=tokens, **LEAN) as s:
        async with httpx.AsyncClient() as http:
            refused = await http.post(f"{s.query_url}/mcp", json={})
            assert refused.status_code == 401
            assert refused.json()["error"] == "unauthorized"
        with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own error
            async with mcp_client(s, "wrong") as c:
                await c.list_tools()
        async with mcp_client(s, "ta") as a:
            await a.call_tool("memory_note", {"text": "acme secret", "project_id": "p"})
        await stored(s, 1, {"authorization": "Bearer ta"})
        since = "2020-01-01T00:00:00Z"
        async with mcp_client(s, "ta") as a:
            mine = data_of(
                await a.call_tool("memory_timeline", {"since": since, "project_id": "p"})
            )
        async with mcp_client(s, "tb") as b:
            theirs = data_of(
                await b.call_tool("memory_timeline", {"since": since, "project_id": "p"})
            )
        assert [e["text"] for e in mine["events"]] == ["acme secret"]
        assert theirs["events"] == []
