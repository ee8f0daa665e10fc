"""``AgentMemoryMiddleware``: agent-memory for LangChain v1 agents (``create_agent``) and deep
agents (``create_deep_agent``).

- **Capture**: every user, assistant and tool message (and each tool call) becomes an event,
  sent in the background (``runner.BackgroundRecorder``); the agent never waits on the network
  and no failure of agent-memory ever raises into it.
- **Brief**: a session's model calls get the project's brief in the system prompt (fetched once
  per session: the decisions and constraints in force, where the last session left off), the
  same text the hooks give Claude Code at a session's start (``GET /v1/projects/{id}/brief``,
  within ``brief_tokens``; 0 turns it off, as does ``injection="off"``).
- **Recall**: before a model call, the memories the latest user message needs are put into the
  system prompt (after the brief), as the query service's ``POST /v1/recall`` gives them: the
  same implementation, and the same text, as the hooks give Claude Code on a prompt. The
  service decides what is worth giving within ``recall_tokens`` (nothing for a short or
  unmatched prompt, never the session's own events); the middleware remembers per session the
  ids it was given (the brief's and the recalled memories' with their events) and sends them as
  ``exclude_ids``, so that a later turn is never given the same memory again. ``injection``:
  ``off`` (never; the agent can still use the tools), ``auto`` (once per user turn, the answer
  reused for the tool-loop calls of that turn), ``always`` (fresh recall at every model call,
  the latest tool output included in the prompt; the calls of one turn may be given the same
  memories, a later turn not). ``recall_tokens=0`` turns per-prompt recall off (the brief
  stays). Brief and recall share one deadline, ``recall_timeout``; a failure or a timeout means
  the model call goes on without them.
- **Tools**: ``memory_search``, ``memory_expand``, ``memory_note`` for agent-driven recall.
- **Playbook** (ACE, optional): the most relevant lessons of the project are injected, and at the
  end of each run the reflector's lessons go to the server's curator (see ``ace.py``).

Event ids are derived from (session, message id), so a message seen again (a resumed thread, a
retried post) is stored once.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import hashlib
import json
import logging
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime

from agent_memory_client import (
    AgentMemoryClient,
    AgentMemoryError,
    UnavailableError,
    new_id,
    resolve_project_id,
)
from agent_memory_client.types import EventIn, PlaybookEntry
from agent_memory_langchain.ace import (
    HeuristicReflector,
    Reflector,
    RunTrace,
    ToolUse,
    format_playbook,
)
from agent_memory_langchain.runner import BackgroundRecorder, LoopThread, RecorderStats
from agent_memory_langchain.tools import memory_tools

log = logging.getLogger("agent_memory_langchain")
InjectionMode = Literal["off", "auto", "always"]
CHARS_PER_TOKEN = 4  # a conservative estimate that needs no tokenizer
_MAX_TEXT = 20_000
RECALL_PROMPT_CHARS = 4000  # what /v1/recall takes; a longer message is asked by its opening
TOOL_TAIL_CHARS = 500  # of the latest tool output, added to the prompt in ``always``
MAX_GIVEN = 2000  # ids remembered per session (what /v1/recall takes as exclude_ids)
RECALL_TOKENS_RANGE = (50, 8000)  # what /v1/recall takes as budget_tokens

_shared_loop: LoopThread | None = None
_shared_lock = threading.Lock()


def shared_loop() -> LoopThread:
    """One background loop per process, whatever the number of middleware instances."""
    global _shared_loop
    with _shared_lock:
        if _shared_loop is None:
            _shared_loop = LoopThread()
        return _shared_loop


@dataclass
class PlaybookConfig:
    """ACE options: who reflects, how many entries to inject and in how many tokens."""

    reflector: Reflector = field(default_factory=HeuristicReflector)
    max_entries: int = 8
    token_budget: int = 400
    section: str | None = None


class _Lru:
    """A bounded set/map: enough memory of what was seen, never unbounded growth."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: collections.OrderedDict[Any, Any] = collections.OrderedDict()

    def get(self, key: Any) -> Any:
        if key in self.data:
            self.data.move_to_end(key)
            return self.data[key]
        return None

    def put(self, key: Any, value: Any = True) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)

    def __contains__(self, key: Any) -> bool:
        return key in self.data


def message_text(message: BaseMessage) -> str:
    text = message.text
    return text if isinstance(text, str) else str(message.content)


def _event_id(session: str, message_id: str, suffix: str = "") -> str:
    digest = hashlib.sha256(f"{session}|{message_id}|{suffix}".encode()).hexdigest()
    return f"lc-{digest[:32]}"


def _latest_human(messages: Sequence[AnyMessage]) -> tuple[int, HumanMessage | None]:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i, messages[i]  # type: ignore[return-value]
    return -1, None


def _with_system_text(system: SystemMessage | None, extra: str) -> SystemMessage:
    if system is None:
        return SystemMessage(content=extra)
    content = system.content
    if isinstance(content, str):
        return SystemMessage(content=f"{content}\n\n{extra}" if content else extra)
    return SystemMessage(content=[*content, {"type": "text", "text": extra}])


def _substantive(text: str) -> bool:
    """Worth ranking the playbook for: at least two words of three letters or more ("hi",
    "ok thanks" are not)."""
    return len([w for w in text.split() if len(w) > 2]) >= 2


@dataclass(frozen=True)
class _Plan:
    """What one model call asks for: ``prompt`` (recall's and the playbook's query), ``turn``
    (session, user message: the calls of one turn share it) and whether the turn's first
    answer is reused (``auto``) or each call asks afresh (``always``)."""

    prompt: str
    turn: tuple[str, str]
    reuse: bool


@dataclass
class _Session:
    """What a session was given: its brief (None until asked), the ids never to be given again
    (the brief's, and those of the turns before the current one) and the current turn's, which
    the turn's later model calls may be given again (they do not see an earlier call's system
    prompt) but no later turn."""

    brief: str | None = None
    given: list[str] = field(default_factory=list)
    turn: tuple[str, str] | None = None
    turn_given: list[str] = field(default_factory=list)

    def exclude_ids(self, turn: tuple[str, str]) -> list[str]:
        """The ids ``turn`` must not be given; a new turn first files the last turn's."""
        if turn != self.turn:
            self.remember(self.turn_given)
            self.turn, self.turn_given = turn, []
        return self.given

    def remember(self, ids: Sequence[str]) -> None:
        self.given = list(dict.fromkeys([*self.given, *ids]))[-MAX_GIVEN:]


async def _nothing() -> str:
    return ""


class AgentMemoryMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Capture, recall and (optionally) an ACE playbook for a LangChain agent."""

    def __init__(
        self,
        *,
        project_id: str | None = None,
        agent_id: str = "langchain",
        session_id: str | None = None,
        user_id: str | None = None,
        gateway_url: str | None = None,
        query_url: str | None = None,
        token: str | None = None,
        client_factory: Callable[[], AgentMemoryClient] | None = None,
        injection: InjectionMode = "auto",
        recall_tokens: int = 600,
        min_match: float | None = None,
        recall_timeout: float = 3.0,
        brief_tokens: int = 1500,
        record: bool = True,
        tools: bool = True,
        playbook: bool | PlaybookConfig = False,
        max_buffer: int = 1000,
        token_budget: int | None = None,
        recall_limit: int | None = None,
        min_score: float | None = None,
    ) -> None:
        """``recall_tokens``: the budget of one prompt's recall (0: no per-prompt recall);
        ``min_match``: the confidence (best cosine) under which a prompt gets nothing, None for
        the service's setting. ``token_budget`` (now ``recall_tokens``), ``recall_limit`` and
        ``min_score`` are deprecated: the query service chooses and counts what is recalled."""
        super().__init__()
        if injection not in ("off", "auto", "always"):
            raise ValueError("injection must be 'off', 'auto' or 'always'")
        if token_budget is not None:
            warnings.warn(
                "AgentMemoryMiddleware(token_budget=) is deprecated: use recall_tokens=",
                DeprecationWarning,
                stacklevel=2,
            )
            low, high = RECALL_TOKENS_RANGE  # what it meant in range; 0 or less: nothing
            recall_tokens = min(max(token_budget, low), high) if token_budget > 0 else 0
        for name, value in (("recall_limit", recall_limit), ("min_score", min_score)):
            if value is not None:
                warnings.warn(
                    f"AgentMemoryMiddleware({name}=) is ignored: the query service's /v1/recall "
                    "decides what is given (min_match= sets its confidence threshold)",
                    DeprecationWarning,
                    stacklevel=2,
                )
        low, high = RECALL_TOKENS_RANGE
        if recall_tokens != 0 and not low <= recall_tokens <= high:
            raise ValueError(f"recall_tokens must be 0 (off) or between {low} and {high}")
        if min_match is not None and not -1.0 <= min_match <= 1.0:
            raise ValueError("min_match is a cosine: between -1 and 1")
        self.project_id = project_id or resolve_project_id()
        self.agent_id = agent_id
        self.user_id = user_id
        self._session_id = session_id
        self._default_session = f"lc-{new_id()}"
        self.injection: InjectionMode = injection
        self.recall_tokens = recall_tokens
        self.min_match = min_match
        self.recall_timeout = recall_timeout
        self.brief_tokens = brief_tokens
        self.record_events = record
        self.playbook: PlaybookConfig | None = (
            playbook
            if isinstance(playbook, PlaybookConfig)
            else (PlaybookConfig() if playbook else None)
        )

        def default_factory() -> AgentMemoryClient:
            overrides: dict[str, Any] = {}
            if gateway_url:
                overrides["gateway_url"] = gateway_url
            if query_url:
                overrides["query_url"] = query_url
            if token:
                overrides["token"] = token
            return AgentMemoryClient.from_env(**overrides)

        self._loop = shared_loop()
        self._recorder = BackgroundRecorder(
            self._loop, client_factory or default_factory, max_buffer=max_buffer
        )
        self._seen = _Lru(20_000)
        self._recall_cache = _Lru(256)  # (session, user message) -> that turn's block (auto)
        self._sessions = _Lru(256)  # session -> _Session: its brief, the ids it was given
        self._injected = _Lru(256)  # session -> playbook entries shown in its current run
        self._reflections: set[concurrent.futures.Future[Any]] = set()
        self.tools: Sequence[BaseTool] = (
            memory_tools(self._loop, lambda: self._recorder.client, self) if tools else []
        )

    # -- identity ---------------------------------------------------------------------------

    def session_id(self) -> str:
        """Explicit session, else the LangGraph thread id of the current run, else our own."""
        if self._session_id:
            return self._session_id
        try:
            configurable = get_config().get("configurable") or {}
        except RuntimeError:  # outside a graph run
            return self._default_session
        thread = configurable.get("thread_id")
        return str(thread) if thread else self._default_session

    @property
    def client(self) -> AgentMemoryClient:
        return self._recorder.client

    # -- capture ----------------------------------------------------------------------------

    def _event(self, session: str, **fields: Any) -> EventIn:
        event: dict[str, Any] = {
            "project_id": self.project_id,
            "agent_id": self.agent_id,
            "session_id": session,
            "ts": int(time.time() * 1000),
            **fields,
        }
        if self.user_id:
            event["user_id"] = self.user_id
        return event  # type: ignore[return-value]

    def events_for(self, message: BaseMessage, session: str) -> list[EventIn]:
        mid = str(message.id)
        meta = {"source": "langchain", "message_id": mid}
        text = message_text(message)[:_MAX_TEXT]
        if isinstance(message, HumanMessage):
            return [
                self._event(
                    session,
                    event_id=_event_id(session, mid),
                    role="user",
                    type="message",
                    text=text,
                    metadata=meta,
                )
            ]
        if isinstance(message, AIMessage):
            out: list[EventIn] = []
            if text.strip():
                out.append(
                    self._event(
                        session,
                        event_id=_event_id(session, mid),
                        role="assistant",
                        type="message",
                        text=text,
                        metadata=meta,
                    )
                )
            for call in message.tool_calls:
                args = json.dumps(call.get("args", {}), default=str, ensure_ascii=False)
                out.append(
                    self._event(
                        session,
                        event_id=_event_id(session, mid, str(call.get("id") or call["name"])),
                        role="assistant",
                        type="tool_call",
                        text=f"{call['name']} {args}"[:_MAX_TEXT],
                        metadata={**meta, "tool": call["name"], "tool_call_id": call.get("id")},
                    )
                )
            return out
        if isinstance(message, ToolMessage):
            return [
                self._event(
                    session,
                    event_id=_event_id(session, mid),
                    role="tool",
                    type="tool_result",
                    text=text,
                    metadata={
                        **meta,
                        "tool": message.name,
                        "tool_call_id": message.tool_call_id,
                        "status": message.status,
                    },
                )
            ]
        return []

    def _capture(self, state: Mapping[str, Any]) -> None:
        if not self.record_events:
            return
        try:
            session = self.session_id()
            events: list[EventIn] = []
            for message in state.get("messages", []):
                if not message.id or isinstance(message, SystemMessage):
                    continue
                key = (session, message.id)
                if key in self._seen:
                    continue
                self._seen.put(key)
                events += self.events_for(message, session)
            self._recorder.record(events)
        except Exception:
            log.warning("agent-memory: capture failed", exc_info=True)

    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._capture(state)
        return None

    async def abefore_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        self._capture(state)
        return None

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._capture(state)
        return None

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        self._capture(state)
        return None

    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._capture(state)
        return None

    async def aafter_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        self._capture(state)
        return None

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._capture(state)
        self._start_reflection(state)
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        self._capture(state)
        self._start_reflection(state)
        return None

    # -- recall -----------------------------------------------------------------------------

    def _recall_plan(self, messages: Sequence[AnyMessage], session: str) -> _Plan | None:
        """What this model call asks for, or None when there is no user message to ask with."""
        index, human = _latest_human(messages)
        if human is None:
            return None
        prompt = message_text(human).strip()
        turn = (session, str(human.id) if human.id else f"{index}:{prompt[:200]}")
        if self.injection == "always":
            tail = [message_text(m) for m in messages[index + 1 :] if isinstance(m, ToolMessage)]
            if tail and tail[-1].strip():
                room = RECALL_PROMPT_CHARS - TOOL_TAIL_CHARS - 1
                prompt = f"{prompt[:room]}\n{tail[-1].strip()[:TOOL_TAIL_CHARS]}"
        prompt = prompt[:RECALL_PROMPT_CHARS]
        return _Plan(prompt, turn, reuse=self.injection != "always") if prompt else None

    def _session(self, session: str) -> _Session:
        state = self._sessions.get(session)
        if state is None:
            state = _Session()
            self._sessions.put(session, state)
        assert isinstance(state, _Session)
        return state

    async def _recall(self, plan: _Plan, state: _Session) -> str:
        """``POST /v1/recall``'s context for ``plan`` ("" for nothing), the ids it gives filed
        under the turn."""
        exclude = state.exclude_ids(plan.turn)
        try:
            answer = await self._recorder.client.recall(
                plan.prompt,
                project_id=self.project_id,
                session_id=plan.turn[0],
                budget_tokens=self.recall_tokens,
                exclude_ids=exclude,
                min_match=self.min_match,
            )
        except Exception as exc:
            log.warning("agent-memory: recall failed: %s", exc)
            return ""
        context = answer.get("context") or ""
        if context:
            state.turn_given += [
                str(i)
                for memory in answer.get("memories") or []
                for i in (memory.get("id"), *(memory.get("event_ids") or []))
                if i
            ]
        return context

    async def _playbook(self, plan: _Plan, session: str) -> str:
        """The playbook entries most relevant to ``plan`` (those shown kept for the reflector)."""
        if self.playbook is None:
            return ""
        entries: list[PlaybookEntry] = []
        block = ""
        if not plan.reuse or _substantive(plan.prompt):
            try:
                ranked = await self._recorder.client.playbook(
                    self.project_id, q=plan.prompt, limit=self.playbook.max_entries
                )
                block, count = format_playbook(ranked, self.playbook.token_budget * CHARS_PER_TOKEN)
                entries = list(ranked[:count]) if block else []
            except Exception as exc:
                log.warning("agent-memory: playbook unavailable: %s", exc)
        self._injected.put(session, entries)
        return block

    async def _turn_context(self, plan: _Plan, state: _Session) -> str:
        """Recall and playbook for this call: asked once per turn in ``auto`` (a failure too:
        the turn's later calls do not wait for it again), at every call in ``always``."""
        if plan.reuse:
            cached = self._recall_cache.get(plan.turn)
            if cached is not None:
                return str(cached)
        wants_recall = self.injection != "off" and self.recall_tokens > 0
        recalled, lessons = await asyncio.gather(
            self._recall(plan, state) if wants_recall else _nothing(),
            self._playbook(plan, plan.turn[0]),
        )
        block = "\n\n".join(part for part in (recalled, lessons) if part)
        if plan.reuse:
            self._recall_cache.put(plan.turn, block)
        return block

    def _wants_context(self) -> bool:
        return self.injection != "off" or self.playbook is not None

    async def _brief(self, session: str, state: _Session) -> str:
        """The project's brief for ``session``, asked once: a session's calls all see the same
        one, and a service that failed to give it is not asked again at every call. The ids it
        cites are never recalled in the session (it has them at every call)."""
        if state.brief is not None:
            return state.brief
        text = ""
        try:
            brief = await self._recorder.client.brief(
                self.project_id, budget_tokens=self.brief_tokens, session_id=session
            )
            text = brief["context"]
            if text:
                state.remember([str(i) for i in brief.get("ids") or []])
        except Exception as exc:
            log.warning("agent-memory: no brief for this session: %s", exc)
        state.brief = text
        return text

    async def _system_block(self, plan: _Plan | None, session: str) -> str:
        """What this model call gets in its system prompt: the brief, then the recall (asked
        after the brief, which it must not repeat) and the playbook."""
        state = self._session(session)
        wants_brief = self.injection != "off" and self.brief_tokens > 0
        brief = await self._brief(session, state) if wants_brief else ""
        turn = await self._turn_context(plan, state) if plan is not None else ""
        return "\n\n".join(part for part in (brief, turn) if part)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        block = ""
        if self._wants_context():
            try:
                session = self.session_id()
                plan = self._recall_plan(request.messages, session)
                block = self._loop.call(self._system_block(plan, session), self.recall_timeout)
            except Exception as exc:  # recall is a bonus; the model call must go on
                log.warning("agent-memory: no recall for this call: %r", exc)
        if block:
            request = request.override(
                system_message=_with_system_text(request.system_message, block)
            )
        return handler(request)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        block = ""
        if self._wants_context():
            try:
                session = self.session_id()
                plan = self._recall_plan(request.messages, session)
                block = await self._loop.acall(
                    self._system_block(plan, session), self.recall_timeout
                )
            except Exception as exc:
                log.warning("agent-memory: no recall for this call: %r", exc)
        if block:
            request = request.override(
                system_message=_with_system_text(request.system_message, block)
            )
        return await handler(request)

    # -- ACE reflection ---------------------------------------------------------------------

    def trace_of(self, messages: Sequence[AnyMessage], session: str) -> RunTrace | None:
        index, human = _latest_human(messages)
        if human is None:
            return None
        run = messages[index + 1 :]
        results = {m.tool_call_id: m for m in run if isinstance(m, ToolMessage)}
        uses: list[ToolUse] = []
        final = ""
        for message in run:
            if isinstance(message, AIMessage):
                if message_text(message).strip():
                    final = message_text(message)
                for call in message.tool_calls:
                    result = results.get(str(call.get("id")))
                    uses.append(
                        ToolUse(
                            name=call["name"],
                            args=json.dumps(call.get("args", {}), default=str)[:1000],
                            result=message_text(result)[:2000] if result is not None else None,
                            error=result is not None and result.status == "error",
                        )
                    )
        injected = self._injected.get(session) or []
        return RunTrace(
            task=message_text(human),
            final_answer=final,
            tool_uses=uses,
            injected=list(injected),
            run_id=str(human.id),
        )

    def _start_reflection(self, state: AgentState[Any]) -> None:
        if self.playbook is None:
            return
        try:
            session = self.session_id()
            trace = self.trace_of(state.get("messages", []), session)
            if trace is None:
                return
            future = asyncio.run_coroutine_threadsafe(
                self._reflect_and_curate(trace, session), self._loop.loop
            )
            self._reflections.add(future)
            future.add_done_callback(self._reflections.discard)
        except Exception:
            log.warning("agent-memory: reflection not started", exc_info=True)

    async def _reflect_and_curate(self, trace: RunTrace, session: str) -> None:
        assert self.playbook is not None
        try:
            lessons = await self.playbook.reflector.areflect(trace)
            if not lessons:
                return
            source = {"session_id": session, "run_id": trace.run_id}
            submission = "run-" + hashlib.sha256(f"{session}|{trace.run_id}".encode()).hexdigest()
            for attempt in range(4):
                try:
                    await self._recorder.client.curate(
                        self.project_id,
                        [lesson.to_api(source) for lesson in lessons],
                        agent_id=self.agent_id,
                        submission_id=submission[:40],
                    )
                    return
                except UnavailableError:
                    if attempt == 3:
                        raise
                    await asyncio.sleep(0.5 * 2**attempt)
        except AgentMemoryError as exc:
            log.warning("agent-memory: lessons not curated: %s", exc)
        except Exception:
            log.warning("agent-memory: reflection or curation failed", exc_info=True)

    # -- lifecycle --------------------------------------------------------------------------

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait for buffered events and running reflections; True when all are done."""
        deadline = time.monotonic() + timeout
        done = self._recorder.flush(timeout)
        for future in list(self._reflections):
            try:
                future.result(max(0.0, deadline - time.monotonic()))
            except Exception:
                done = False
        return done and self._recorder.flush(max(0.1, deadline - time.monotonic()))

    def close(self, timeout: float = 5.0) -> None:
        """Send what is buffered (waiting up to ``timeout`` each for reflections and events),
        then stop the background sender: what the gateway has not taken by then is dropped."""
        self.flush(timeout)
        self._recorder.close(timeout)

    @property
    def stats(self) -> RecorderStats:
        return self._recorder.stats
