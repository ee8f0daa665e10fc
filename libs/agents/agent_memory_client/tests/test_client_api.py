"""The typed client against the real stack: writes through the gateway, reads through the query
service, and errors mapped to the two types callers act on."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from agent_memory_client import (
    AgentMemoryClient,
    ApiError,
    UnavailableError,
    new_id,
    resolve_project_id,
)
from agent_memory_embedded.servers import free_port
from tests.stack import Stack


def client_for(stack: Stack) -> AgentMemoryClient:
    return AgentMemoryClient(gateway_url=stack.gateway_url, query_url=stack.query_url)


async def wait_stored(client: AgentMemoryClient, count: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = await client.status()
        if status["events_stored"] >= count:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{count} events not stored within {timeout}s")


async def test_record_and_read_back(lean_stack: Stack) -> None:
    stack = lean_stack
    async with client_for(stack) as client:
        first = await client.record(
            project_id="p1", agent_id="a", session_id="s", role="user", text="hello memory"
        )
        accepted = await client.post_events(
            [
                {
                    "project_id": "p1",
                    "agent_id": "a",
                    "session_id": "s",
                    "role": "assistant",
                    "text": "second",
                    "type": "message",
                },
            ]
        )
        assert accepted["accepted"] == 1
        # the id is chosen client-side, so a retried post is de-duplicated, not stored twice
        again = await client.record(
            project_id="p1",
            agent_id="a",
            session_id="s",
            role="user",
            text="hello memory",
            event_id=first,
        )
        assert again == first
        await wait_stored(client, 2)
        await asyncio.sleep(0.5)
        page = await client.events(project_id="p1", session_id="s")
        assert [e["text"] for e in page["events"]] == ["hello memory", "second"]
        one = await client.event(first)
        assert one["role"] == "user" and one["project_id"] == "p1"


async def test_errors_name_the_field_and_unreachable_is_retryable(lean_stack: Stack) -> None:
    stack = lean_stack
    async with client_for(stack) as client:
        with pytest.raises(ApiError) as refused:
            await client.post_events(
                [
                    {
                        "project_id": "p",
                        "agent_id": "a",
                        "session_id": "s",
                        "role": "robot",  # type: ignore[typeddict-item]
                        "text": "x",
                    }
                ]
            )
        assert refused.value.status == 422 and refused.value.field is not None
        assert "role" in refused.value.field
        with pytest.raises(ApiError) as missing:
            await client.event("no-such-event")
        assert missing.value.status == 404
    dead = f"http://127.0.0.1:{free_port()}"
    async with AgentMemoryClient(gateway_url=dead, query_url=dead, timeout=2) as client:
        with pytest.raises(UnavailableError):
            await client.record(project_id="p", agent_id="a", session_id="s", role="user", text="x")
        with pytest.raises(UnavailableError):
            await client.status()


def test_from_env_reads_the_services_own_variables() -> None:
    client = AgentMemoryClient.from_env(
        {"AGENT_MEMORY_GATEWAY__PORT": "9100", "AGENT_MEMORY_QUERY_URL": "http://q:1/"}
    )
    assert client.gateway_url == "http://127.0.0.1:9100"
    assert client.query_url == "http://q:1"


def test_ids_sort_by_time_and_project_resolution(tmp_path: Path) -> None:
    assert new_id(1_000) < new_id(2_000) and len(new_id()) == 26
    repo = tmp_path / "my-repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert resolve_project_id(repo / "src", env={}) == "my-repo"
    assert resolve_project_id(repo, env={"AGENT_MEMORY_PROJECT_ID": "explicit"}) == "explicit"
    loose = tmp_path / "loose"
    loose.mkdir()
    pid = resolve_project_id(loose, env={})
    assert pid.startswith("dir-") and pid == resolve_project_id(loose, env={})
