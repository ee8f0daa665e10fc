"""The middleware's per-prompt recall is the query service's ``POST /v1/recall`` (issue 54: one
implementation behind every runtime), on a real stack with its sentence model (recall's
confidence is the best cosine, so the vector tier must be there); a scripted fake chat model
stands in for the LLM and shows what each model call was given.

What must hold: the block is the service's text (its header line, its cited ids, within
``recall_tokens``), the same the service gives a hook for that prompt; what a session was given
(by the brief or an earlier turn) is not given to it again, while another session still gets
it; ``auto`` asks once per turn and ``always`` at every call, both calls of a turn carrying the
memory; ``injection="off"``, ``recall_tokens=0`` and a short prompt get no recall; the search
endpoint is never asked.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import Field

from agent_memory_client import AgentMemoryClient
from agent_memory_embedded.servers import PostgresServer
from agent_memory_langchain import AgentMemoryMiddleware
from tests import plain_http
from tests.stack import Stack, recall_ready_stack

PROJECT = "lc-recall"
HEADER = "Recalled from agent-memory (past sessions of this project"
BRIEF = f"Project brief from agent-memory ({PROJECT})"
# one session each; the last one is the project's "last session", which the brief quotes
FACTS = [
    "We decided kubernetes deploys use the blue-green strategy with a manual switch.",
    "The staging cluster is called kestrel and runs kubernetes 1.31.",
    "The team wiki lives at wiki.internal and documents how deploys work.",
    "We decided the billing service stores money as integer cents, never floats.",
    "The nightly export job writes gzip JSON lines to the archive bucket.",
    "I prefer pytest fixtures over unittest setUp methods in this repository.",
]
BILLING = "how do we store money amounts in billing?"  # FACTS[3], event e-000003


@pytest.fixture(scope="module")
def recall_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    with recall_ready_stack(pg_server, tmp_path_factory, PROJECT, FACTS) as s:
        yield s


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


def middleware(stack: Stack, **kw: Any) -> AgentMemoryMiddleware:
    """Nothing recorded (a test's prompts would be recalled by the next test) and a deadline
    that a busy machine embedding the prompt on its CPU keeps."""
    options: dict[str, Any] = {"record": False, "recall_timeout": 60.0, **kw}
    return AgentMemoryMiddleware(
        gateway_url=stack.gateway_url,
        query_url=stack.query_url,
        project_id=PROJECT,
        agent_id="lc-test",
        **options,
    )


def recalled(system: str) -> str:
    """The recall block of a system prompt ("" for none): from the service's header on."""
    return system[system.index(HEADER) :] if HEADER in system else ""


class Calls:
    """How often the client asked each endpoint (the real methods run: nothing is mocked)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.recall = 0
        self.search = 0
        recall, search = AgentMemoryClient.recall, AgentMemoryClient.search

        async def counted_recall(client: AgentMemoryClient, prompt: str, **kw: Any) -> Any:
            self.recall += 1
            return await recall(client, prompt, **kw)

        async def counted_search(client: AgentMemoryClient, query: str, **kw: Any) -> Any:
            self.search += 1
            return await search(client, query, **kw)

        monkeypatch.setattr(AgentMemoryClient, "recall", counted_recall)
        monkeypatch.setattr(AgentMemoryClient, "search", counted_search)


def test_a_turn_is_given_the_services_recall_within_budget(
    recall_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch)
    model = scripted("integer cents")
    agent = create_agent(
        model,
        system_prompt="You are terse.",
        middleware=[middleware(recall_stack, recall_tokens=120)],
    )
    agent.invoke(
        {"messages": [HumanMessage(content=BILLING)]}, {"configurable": {"thread_id": "t-budget"}}
    )
    [system] = model.system_texts()
    assert system.startswith("You are terse.")
    assert BRIEF in system and system.index(BRIEF) < system.index(HEADER)
    block = recalled(system)
    assert block.splitlines()[0].startswith(HEADER)
    assert "integer cents" in block and "[e-000003]" in block  # the line cites its memory
    assert len(block) <= 120 * 4
    assert (calls.recall, calls.search) == (1, 0)

    # the very text the service gives a hook for that prompt, with what the brief cited left out
    brief = plain_http.get(
        f"{recall_stack.query_url}/v1/projects/{PROJECT}/brief",
        params={"budget_tokens": 1500, "session_id": "t-budget"},
        timeout=30,
    ).json()
    body = {
        "project_id": PROJECT,
        "session_id": "t-budget",
        "prompt": BILLING,
        "budget_tokens": 120,
        "exclude_ids": brief["ids"],
    }
    answer = plain_http.post(f"{recall_stack.query_url}/v1/recall", json=body, timeout=60).json()
    assert answer["context"] == block


def test_what_a_session_was_given_is_not_given_again(recall_stack: Stack) -> None:
    mw = middleware(recall_stack)
    model = scripted("in integer cents", "still integer cents", "fixtures")
    agent = create_agent(model, middleware=[mw])
    config: RunnableConfig = {"configurable": {"thread_id": "t-again"}}
    first = agent.invoke({"messages": [HumanMessage(content=BILLING)]}, config)
    again = agent.invoke({"messages": [*first["messages"], HumanMessage(content=BILLING)]}, config)
    # the brief's last session (FACTS[5], e-000005) is in every call's brief, never recalled
    preference = "do I prefer pytest fixtures or unittest setUp methods here?"
    agent.invoke({"messages": [*again["messages"], HumanMessage(content=preference)]}, config)
    turn1, turn2, turn3 = model.system_texts()
    assert "[e-000003]" in recalled(turn1) and "integer cents" in recalled(turn1)
    assert "e-000003" not in turn2 and "integer cents" not in turn2
    assert "[e-000005]" in turn3 and turn3.count("e-000005") == 1
    assert "e-000005" not in recalled(turn3)

    # another session has not been given it: it is
    other = scripted("integer cents")
    create_agent(other, middleware=[mw]).invoke(
        {"messages": [HumanMessage(content=BILLING)]}, {"configurable": {"thread_id": "t-other"}}
    )
    [fresh] = other.system_texts()
    assert "[e-000003]" in recalled(fresh)


def test_auto_asks_once_per_turn_and_always_at_every_call(
    recall_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch)
    tool_call = AIMessage(
        content="", tool_calls=[{"name": "lookup", "args": {"topic": "wiki"}, "id": "c9"}]
    )
    question = "where is the team wiki that documents how deploys work?"
    for mode, expected in (("auto", 1), ("always", 2)):
        calls.recall = 0
        model = scripted(tool_call, "at wiki.internal")
        mw = middleware(recall_stack, injection=mode)
        create_agent(model, tools=[lookup], middleware=[mw]).invoke(
            {"messages": [HumanMessage(content=question)]},
            {"configurable": {"thread_id": f"t-{mode}"}},
        )
        assert calls.recall == expected, mode
        # both model calls of the turn got the memory (the same turn: not left out)
        texts = [recalled(t) for t in model.system_texts()]
        assert len(texts) == 2 and all("wiki.internal" in t for t in texts), (mode, texts)
    assert calls.search == 0


def test_off_no_budget_and_short_prompts_get_no_recall(
    recall_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch)
    off = scripted("ok")
    create_agent(
        off, system_prompt="You are terse.", middleware=[middleware(recall_stack, injection="off")]
    ).invoke({"messages": [HumanMessage(content=BILLING)]})
    assert off.system_texts() == ["You are terse."]

    no_budget = scripted("ok")
    create_agent(no_budget, middleware=[middleware(recall_stack, recall_tokens=0)]).invoke(
        {"messages": [HumanMessage(content=BILLING)]}
    )
    [briefed] = no_budget.system_texts()  # the brief stays
    assert briefed.startswith(BRIEF) and HEADER not in briefed
    assert calls.recall == 0

    greeting = scripted("hello!")
    create_agent(greeting, middleware=[middleware(recall_stack)]).invoke(
        {"messages": [HumanMessage(content="hi")]}
    )
    [greeted] = greeting.system_texts()  # the service gives nothing to a greeting
    assert greeted.startswith(BRIEF) and HEADER not in greeted
    assert calls.search == 0
