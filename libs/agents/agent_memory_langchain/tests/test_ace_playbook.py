"""The ACE playbook option end to end (generator injection, reflector, server-side curator), the
reflectors on their own, and the middleware inside a deep agent (``create_deep_agent``)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import Any

from deepagents import create_deep_agent
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import ToolException, tool
from pydantic import Field

from agent_memory_langchain import (
    AgentMemoryMiddleware,
    HeuristicReflector,
    Lesson,
    LLMReflector,
    PlaybookConfig,
    RunTrace,
    ToolUse,
)
from agent_memory_langchain.ace import parse_reflection
from tests import plain_http
from tests.stack import Stack


class ScriptedModel(GenericFakeChatModel):
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

    def system_text(self) -> str:
        return "\n".join(
            str(m.content) for p in self.prompts for m in p if isinstance(m, SystemMessage)
        )


class JudgeModel(BaseChatModel):
    """A fake reflector LLM: states a fixed lesson and marks every playbook entry it is shown
    as helpful (ids read from the prompt, as a real model would)."""

    lesson: str

    @property
    def _llm_type(self) -> str:
        return "judge"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = str(messages[-1].content)
        shown = re.findall(r"^\s+\[([0-9A-Z]{26})\]", prompt, re.M)
        reply = {
            "lessons": [{"text": self.lesson, "mark": "+"}],
            "entry_marks": [{"id": i, "mark": "+"} for i in shown],
        }
        text = f"Here is my review:\n```json\n{json.dumps(reply)}\n```"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


@tool
def read_config(path: str) -> str:
    """Read a configuration file."""
    raise ToolException(f"Error: no such file {path}")


read_config.handle_tool_error = True


def playbook_of(stack: Stack, project: str) -> list[dict[str, Any]]:
    r = plain_http.get(f"{stack.query_url}/v1/playbooks/{project}/entries", timeout=5)
    assert r.status_code == 200, r.text
    entries: list[dict[str, Any]] = r.json()["entries"]
    return entries


def test_heuristic_reflector_never_claims_success() -> None:
    trace = RunTrace(
        task="Fix the config loader",
        final_answer="All done, it works perfectly!",
        tool_uses=[
            ToolUse("read_config", '{"path": "a.toml"}', "Error: no such file a.toml", True),
            ToolUse("run_tests", "{}", "12 passed"),
        ],
    )
    lessons = HeuristicReflector().reflect(trace)
    assert lessons and {lesson.mark for lesson in lessons} == {"o"}
    assert any("read_config" in (lesson.text or "") for lesson in lessons)
    assert any("error" in (lesson.text or "") for lesson in lessons)
    assert HeuristicReflector().reflect(RunTrace(task="chat", final_answer="hi")) == []


def test_reflection_parsing_is_lenient_and_strict_about_ids() -> None:
    known = ["01ARZ3NDEKTSV4RRFFQ69G5FAV"]
    text = (
        "Sure!\n```json\n"
        '{"lessons": [{"text": "Pin versions", "mark": "+"}, {"text": "", "mark": "+"},'
        ' {"text": "guess", "mark": "!"}],'
        ' "entry_marks": [{"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "mark": "-"},'
        ' {"id": "made-up", "mark": "+"}]}\n```'
    )
    assert parse_reflection(text, known) == [
        Lesson("Pin versions", "+"),
        Lesson(None, "-", entry_id="01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    ]
    assert parse_reflection("no json here", known) == []
    assert parse_reflection("{not json}", known) == []


def test_heuristic_playbook_end_to_end(lean_stack: Stack) -> None:
    def run(model: ScriptedModel, question: str) -> None:
        mw = AgentMemoryMiddleware(
            gateway_url=lean_stack.gateway_url,
            query_url=lean_stack.query_url,
            project_id="ace-h",
            injection="off",
            playbook=True,
        )
        create_agent(model, tools=[read_config], middleware=[mw]).invoke(
            {"messages": [HumanMessage(content=question)]}
        )
        assert mw.flush(30)

    first = ScriptedModel(
        messages=iter(
            [
                AIMessage(
                    content="",
                    tool_calls=[{"name": "read_config", "args": {"path": "app.toml"}, "id": "r1"}],
                ),
                "I could not find the config file.",
            ]
        )
    )
    run(first, "load the app config file and check the port")
    entries = playbook_of(lean_stack, "ace-h")
    assert entries, "the reflector's observations reached the curator"
    assert all(e["helpful"] == 0 and e["harmful"] == 0 and e["neutral"] >= 1 for e in entries)
    assert any("read_config" in e["text"] for e in entries)

    # the next run on a similar task is given the lesson by the generator
    second = ScriptedModel(messages=iter(["Looking at the config file now."]))
    run(second, "check the port in the config file of the app")
    assert "Playbook" in second.system_text() and "read_config" in second.system_text()


def test_llm_reflector_marks_and_the_curator_merges(lean_stack: Stack) -> None:
    def run(question: str, lesson: str) -> ScriptedModel:
        model = ScriptedModel(messages=iter(["Migration written."]))
        mw = AgentMemoryMiddleware(
            gateway_url=lean_stack.gateway_url,
            query_url=lean_stack.query_url,
            project_id="ace-llm",
            injection="off",
            playbook=PlaybookConfig(reflector=LLMReflector(JudgeModel(lesson=lesson))),
        )
        create_agent(model, middleware=[mw]).invoke({"messages": [HumanMessage(content=question)]})
        assert mw.flush(30)
        return model

    run("write a migration for the orders table", "Run database migrations inside a transaction")
    [entry] = playbook_of(lean_stack, "ace-llm")
    assert (entry["helpful"], entry["harmful"]) == (1, 0)

    second = run(
        "write a migration for the users table",
        "Database migrations should run inside one transaction",
    )
    # the generator showed the entry; the reflector marked it helpful and restated it in other
    # words, which the curator merged instead of adding a near-duplicate
    assert entry["text"] in second.system_text()
    [after] = playbook_of(lean_stack, "ace-llm")
    assert after["id"] == entry["id"] and after["helpful"] == 3


def test_deep_agent_records_and_recalls(lean_stack: Stack) -> None:
    r = plain_http.post(
        f"{lean_stack.gateway_url}/v1/events",
        json={
            "project_id": "deep",
            "agent_id": "claude-code",
            "session_id": "earlier",
            "role": "assistant",
            "text": "The billing service retries webhooks three times with backoff",
        },
        timeout=5,
    )
    assert r.status_code == 202
    deadline = time.monotonic() + 30
    while not plain_http.get(
        f"{lean_stack.query_url}/v1/events", params={"project_id": "deep"}
    ).json()["events"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)

    model = ScriptedModel(messages=iter(["Three times, with backoff."]))
    mw = AgentMemoryMiddleware(
        gateway_url=lean_stack.gateway_url,
        query_url=lean_stack.query_url,
        project_id="deep",
        agent_id="deepagents",
    )
    agent = create_deep_agent(model=model, tools=[], middleware=[mw])
    result = agent.invoke(
        {"messages": [HumanMessage(content="how many times does billing retry webhooks?")]},
        {"configurable": {"thread_id": "deep-1"}},
    )
    assert result["messages"][-1].text == "Three times, with backoff."
    assert "billing service retries webhooks" in model.system_text()
    assert mw.flush(30)
    deadline = time.monotonic() + 30
    while True:
        events = plain_http.get(
            f"{lean_stack.query_url}/v1/events", params={"session_id": "deep-1"}
        ).json()["events"]
        if len(events) >= 2:
            break
        assert time.monotonic() < deadline, events
        time.sleep(0.1)
    assert [(e["role"], e["agent_id"]) for e in events] == [
        ("user", "deepagents"),
        ("assistant", "deepagents"),
    ]
