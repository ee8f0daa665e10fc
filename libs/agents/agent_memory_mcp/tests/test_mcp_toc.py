"""Browsing the table of contents over MCP (stdio), from a year down to a segment and its grips,
then the project's brief, on the whole pipeline: gateway, recorder, segmenter, summarizer and
query as real processes."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent

from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.stack import Stack, running_stack

PROJECT = "proj-toc"


@pytest.fixture
def pipeline(nats_server: NatsServer, pg_dsn: str, tmp_path: Path) -> Iterator[Stack]:
    with running_stack(
        nats_server, pg_dsn, tmp_path, AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false"
    ) as s:
        s.start("segmenter")
        s.start("summarizer")
        yield s


def data_of(result: CallToolResult) -> dict[str, Any]:
    text = "".join(c.text for c in result.content if isinstance(c, TextContent))
    assert not result.is_error, text
    if isinstance(result.structured_content, dict):
        return result.structured_content
    loaded = json.loads(text)
    assert isinstance(loaded, dict)
    return loaded


def wait_for_toc(stack: Stack) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        years = plain_http.get(
            f"{stack.query_url}/v1/toc", params={"project_id": PROJECT}, timeout=5
        ).json()
        if years.get("years"):
            return
        time.sleep(0.3)
    raise AssertionError("no table of contents within 90s")


def seed_session(pipeline: Stack) -> None:
    """A short session that ends: the segmenter closes it, the summarizer builds the tree."""
    texts = [
        "We need to choose a queue for the billing events",
        "Kafka is heavy to operate; NATS JetStream gives us durable streams with less work",
        "Decision: use NATS JetStream for billing events, with a dedupe window of ten minutes",
        "I will write the consumer with explicit acks after the database commit",
        "The consumer is idempotent thanks to an inbox table keyed by message id",
        "Tests pass against a real nats-server started by the fixtures",
    ]
    events: list[dict[str, Any]] = [
        {
            "event_id": f"toc-{i}",
            "ts": 1_768_000_000_000 + i * 60_000,
            "project_id": PROJECT,
            "agent_id": "claude-code",
            "session_id": "s-toc",
            "role": "user" if i % 2 == 0 else "assistant",
            "text": text,
        }
        for i, text in enumerate(texts)
    ]
    events.append(
        {
            **events[-1],
            "event_id": "toc-end",
            "type": "session_end",
            "text": "",
            "ts": events[-1]["ts"] + 1000,
        }
    )
    r = plain_http.post(f"{pipeline.gateway_url}/v1/events", json={"events": events}, timeout=10)
    assert r.status_code == 202, r.text
    wait_for_toc(pipeline)


async def test_browse_from_a_year_down_to_a_segment(pipeline: Stack) -> None:
    await asyncio.to_thread(seed_session, pipeline)

    env = {k: v for k, v in pipeline.env.items() if k.startswith(("AGENT_MEMORY_", "PATH", "HOME"))}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agent_memory_cli", "mcp", "--project", PROJECT],
        env=env,
    )
    async with Client(params, read_timeout_seconds=30) as c:
        top = data_of(await c.call_tool("memory_toc", {}))
        assert [y["bucket"] for y in top["years"]] == ["2026"]
        node_id = top["years"][0]["node_id"]
        levels = ["year"]
        opened: dict[str, Any] = {}
        for _ in range(6):  # year -> month -> week -> day -> segment
            opened = data_of(await c.call_tool("memory_toc", {"node_id": node_id}))
            assert opened["node"]["node_id"] == node_id
            if opened["node"]["level"] == "segment":
                break
            children = opened["children"]["children"]
            assert children, opened
            node_id = children[0]["node_id"]
            levels.append(children[0]["level"])
        assert levels == ["year", "month", "week", "day", "segment"]
        segment = opened
        assert [e["event_id"] for e in segment["children"]["events"]][:6] == [
            f"toc-{i}" for i in range(6)
        ]

        grips = [g for b in segment["node"]["bullets"] for g in b["grips"]]
        assert grips, "the summary cites its sources"
        grip = data_of(
            await c.call_tool("memory_expand", {"id": grips[0]["grip_id"], "context": 1})
        )
        assert grip["kind"] == "grip" and grip["grip_id"] == grips[0]["grip_id"]

        at = data_of(await c.call_tool("memory_toc", {"at": "2026-01-09T23:09:00Z"}))
        assert at["segment_id"] == segment["node"]["node_id"]
        by_node = data_of(await c.call_tool("memory_expand", {"id": f"node:default:{node_id}"}))
        assert by_node["kind"] == "node" and by_node["node"]["level"] == "segment"

        # the brief an agent starting on the project reads: where the last session left off,
        # the decision it took, each line citing an id that memory_expand opens
        brief = data_of(await c.call_tool("memory_brief", {}))
        assert brief["project_id"] == PROJECT and 0 < brief["tokens"] <= 1500
        assert "queue for the billing events" in brief["context"], brief  # the session's goal
        assert "real nats-server" in brief["context"], brief  # and its outcome
        assert "decision: Decision: use NATS JetStream" in brief["context"], brief
        assert brief["ids"] and all(i in brief["context"] for i in brief["ids"])
        for memory_id in brief["ids"]:
            assert data_of(await c.call_tool("memory_expand", {"id": memory_id, "context": 0}))
        short = data_of(await c.call_tool("memory_brief", {"budget_tokens": 100}))
        assert short["tokens"] <= 100 and len(short["ids"]) < len(brief["ids"])
        refused = await c.call_tool("memory_brief", {"budget_tokens": 5})
        assert refused.is_error and "budget_tokens" in str(refused.content)
        other = data_of(await c.call_tool("memory_brief", {"project_id": "never-seen"}))
        assert other["context"] == "" and other["ids"] == []
