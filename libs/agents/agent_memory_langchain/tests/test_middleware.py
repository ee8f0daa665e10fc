"""AgentMemoryMiddleware in real LangChain agents (a scripted fake chat model stands in for the
LLM) against the real stack: capture, the session's brief, tools, failure, the constructor's
deprecated recall options. Per-prompt recall (``POST /v1/recall``) needs the vector tier: it is
tested in ``test_recall.py``, on a stack with the sentence model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from pydantic import Field

from agent_memory_client import AgentMemoryClient
from agent_memory_embedded.servers import free_port
from agent_memory_langchain import AgentMemoryMiddleware
from tests import plain_http
from tests.stack import Stack


class ScriptedModel(GenericFakeChatModel):
    """Answers from a script and remembers every prompt it was given (to see the injection)."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)

    def system_texts(self) -> list[str]:
        return [
            m.text if isinstance(m.text, str) else str(m.content)
            for prompt in self.prompts
            for m in prompt
            if isinstance(m, SystemMessage)
        ]


def scripted(*replies: AIMessage | str) -> ScriptedModel:
    return ScriptedModel(messages=iter(replies))


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the team wiki."""
    return f"wiki page about {topic}: deploys go through the blue-green pipeline"


@tool
def broken(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"no such file: {path}")


def middleware(stack: Stack, **kw: Any) -> AgentMemoryMiddleware:
    return AgentMemoryMiddleware(
        gateway_url=stack.gateway_url, query_url=stack.query_url, agent_id="lc-test", **kw
    )


def session_events(stack: Stack, session: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    events: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        events = plain_http.get(
            f"{stack.query_url}/v1/events", params={"session_id": session}, timeout=5
        ).json()["events"]
        if len(events) >= count:
            return events
        time.sleep(0.1)
    raise AssertionError(f"{count} events of {session} not stored in time: {events}")


def test_captures_user_assistant_and_tool_events(lean_stack: Stack) -> None:
    mw = middleware(lean_stack, project_id="cap", injection="off")
    model = scripted(
        AIMessage(
            content="", tool_calls=[{"name": "lookup", "args": {"topic": "deploy"}, "id": "c1"}]
        ),
        "Deploys go through the blue-green pipeline.",
    )
    agent = create_agent(model, tools=[lookup], middleware=[mw])
    question = HumanMessage(content="how do we deploy the api?", id="h-1")
    result = agent.invoke({"messages": [question]}, {"configurable": {"thread_id": "t-cap"}})
    assert result["messages"][-1].text == "Deploys go through the blue-green pipeline."
    assert mw.flush(30)

    events = session_events(lean_stack, "t-cap", 4)
    shape = [(e["role"], e["type"]) for e in events]
    assert shape == [
        ("user", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "message"),
    ]
    assert events[0]["text"] == "how do we deploy the api?"
    assert events[1]["text"].startswith("lookup ") and events[1]["metadata"]["tool"] == "lookup"
    assert "blue-green" in events[2]["text"] and events[2]["metadata"]["tool_call_id"] == "c1"
    assert {e["project_id"] for e in events} == {"cap"}
    assert {e["agent_id"] for e in events} == {"lc-test"}

    # the same conversation seen again (a resumed thread) is not stored twice
    mw._capture(result)
    fresh = middleware(lean_stack, project_id="cap", session_id="t-cap", injection="off")
    fresh._capture(result)
    assert mw.flush(30) and fresh.flush(30)
    time.sleep(1.0)
    assert len(session_events(lean_stack, "t-cap", 4)) == 4


def test_a_session_starts_with_the_projects_brief_asked_once(lean_stack: Stack) -> None:
    """The brief the hooks give Claude Code at a session's start (GET /v1/projects/{id}/brief),
    in the system prompt of every model call of the session, asked for once."""
    turns = [
        ("user", "Port the invoice exporter to the new ledger API"),
        ("assistant", "Done: the exporter now writes ledger v2"),
    ]
    events = [
        {
            "project_id": "briefed",
            "agent_id": "claude-code",
            "session_id": "earlier",
            "role": role,
            "text": text,
            "ts": 1_780_000_000_000 + i * 60_000,
        }
        for i, (role, text) in enumerate(turns)
    ]
    r = plain_http.post(f"{lean_stack.gateway_url}/v1/events", json={"events": events}, timeout=10)
    assert r.status_code == 202, r.text
    session_events(lean_stack, "earlier", len(events))
    calls = {"n": 0}
    original = AgentMemoryClient.brief

    async def counting(self: AgentMemoryClient, project_id: str, **kw: Any) -> Any:
        calls["n"] += 1
        return await original(self, project_id, **kw)

    tool_call = AIMessage(
        content="", tool_calls=[{"name": "lookup", "args": {"topic": "ledger"}, "id": "b1"}]
    )
    AgentMemoryClient.brief = counting  # type: ignore[method-assign]
    try:
        model = scripted(tool_call, "done")
        mw = middleware(lean_stack, project_id="briefed", brief_tokens=300)
        create_agent(model, tools=[lookup], middleware=[mw]).invoke(
            {"messages": [HumanMessage(content="ok")]}
        )
        texts = model.system_texts()
        assert len(texts) == 2 and texts[0] == texts[1], texts  # both calls, the same brief
        assert texts[0].startswith("Project brief from agent-memory (briefed)")
        assert "Port the invoice exporter" in texts[0]  # the last session's goal
        assert "writes ledger v2" in texts[0]  # and where it ended
        assert len(texts[0]) <= 300 * 4
        assert calls["n"] == 1

        for kw in ({"injection": "off"}, {"brief_tokens": 0}):
            quiet = scripted("done")
            mw = middleware(lean_stack, project_id="briefed", **kw)
            create_agent(quiet, middleware=[mw]).invoke({"messages": [HumanMessage(content="ok")]})
            assert quiet.system_texts() == [], kw
    finally:
        AgentMemoryClient.brief = original  # type: ignore[method-assign]


def test_the_search_era_recall_options_are_deprecated() -> None:
    """``token_budget`` became ``recall_tokens``; ``recall_limit`` and ``min_score`` are the
    query service's to decide (``min_match`` is its threshold)."""
    dead = f"http://127.0.0.1:{free_port()}"
    urls: dict[str, Any] = {"gateway_url": dead, "query_url": dead, "project_id": "old"}
    with pytest.warns(DeprecationWarning, match="recall_tokens"):
        mw = AgentMemoryMiddleware(**urls, token_budget=800)
    assert mw.recall_tokens == 800
    with pytest.warns(DeprecationWarning, match="recall_tokens"):
        assert AgentMemoryMiddleware(**urls, token_budget=0).recall_tokens == 0
    for option in ({"recall_limit": 8}, {"min_score": 0.3}):
        with pytest.warns(DeprecationWarning, match="ignored"):
            assert AgentMemoryMiddleware(**urls, **option).recall_tokens == 600
    for bad in ({"recall_tokens": 10}, {"recall_tokens": 9000}, {"min_match": 1.5}):
        with pytest.raises(ValueError):
            AgentMemoryMiddleware(**urls, **bad)
    assert AgentMemoryMiddleware(**urls, recall_tokens=0, min_match=0.5).min_match == 0.5


async def test_async_agent_and_memory_tools(lean_stack: Stack) -> None:
    mw = middleware(lean_stack, project_id="tools", injection="off")
    assert {t.name for t in mw.tools} == {
        "memory_search",
        "memory_expand",
        "memory_note",
        "memory_topics",
    }
    model = scripted(
        AIMessage(
            content="",
            tool_calls=[
                {
                    "name": "memory_note",
                    "args": {"text": "Decision: ship on Fridays never", "kind": "decision"},
                    "id": "n1",
                }
            ],
        ),
        AIMessage(
            content="",
            tool_calls=[{"name": "memory_search", "args": {"query": "ship Fridays"}, "id": "s1"}],
        ),
        "noted",
    )
    agent = create_agent(model, tools=[], middleware=[mw])
    result = await agent.ainvoke(
        {"messages": [HumanMessage(content="remember that we never ship on Fridays")]},
        {"configurable": {"thread_id": "t-tools"}},
    )
    assert result["messages"][-1].text == "noted"
    tool_outputs = [m.text for m in result["messages"] if m.type == "tool"]
    assert '"recorded"' in tool_outputs[0]
    assert '"results"' in tool_outputs[1]
    assert await asyncio.to_thread(mw.flush, 30)
    events = await asyncio.to_thread(session_events, lean_stack, "t-tools", 7)
    notes = [e for e in events if e["type"] == "note"]
    assert len(notes) == 1 and notes[0]["metadata"]["note_kind"] == "decision"
    assert notes[0]["session_id"] == "t-tools"


def test_agent_never_fails_when_memory_is_down(lean_stack: Stack) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    mw = AgentMemoryMiddleware(
        gateway_url=dead,
        query_url=dead,
        project_id="down",
        injection="always",
        recall_timeout=1.0,
        max_buffer=1,
        playbook=True,
    )
    model = scripted(
        AIMessage(
            content="",
            tool_calls=[{"name": "memory_search", "args": {"query": "anything"}, "id": "x1"}],
        ),
        "fine anyway",
    )
    agent = create_agent(model, tools=[lookup], middleware=[mw])
    started = time.monotonic()
    result = agent.invoke({"messages": [HumanMessage(content="please look this up for me")]})
    assert result["messages"][-1].text == "fine anyway"
    assert "unavailable" in next(m for m in result["messages"] if m.type == "tool").text
    assert time.monotonic() - started < 15
    # capture kept only the newest events (bounded buffer) and keeps retrying, without raising
    assert not mw.flush(1.0)
    assert mw.stats.dropped_full >= 1 and mw.stats.sent == 0
    # and closing stops the retries (they would go on logging after the test)
    started = time.monotonic()
    mw.close(timeout=0.2)
    assert time.monotonic() - started < 3
