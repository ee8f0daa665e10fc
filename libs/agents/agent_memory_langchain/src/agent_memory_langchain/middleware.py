"""``AgentMemoryMiddleware``: agent-memory for LangChain v1 agents (``create_agent``) and deep
agents (``create_deep_agent``).

- **Capture**: every user, assistant and tool message (and each tool call) becomes an event,
  sent in the background (``runner.BackgroundRecorder``); the agent never waits on the network
  and no failure of agent-memory ever raises into it.
- **Brief**: a session's model calls get the project's brief in the system prompt (fetched once
  per session: the decisions and constraints in force, where the last session left off), the
  same text the hooks give Claude Code at a session's start (``GET /v1/projects/{id}/brief``,
  within ``brief_tokens``; 0 turns it off, as does ``injection="off"``).
- **Recall**: before a model call, memories relevant to the latest user message are put into the
  system prompt, within a token budget. ``injection``: ``off`` (never; the agent can still use the
  tools), ``auto`` (once per user turn, reused for the tool-loop calls of that turn, hits under
  ``min_score`` left out, trivial messages skipped), ``always`` (fresh recall at every model call,
  the latest tool output included in the query).
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
from agent_memory_client.types import EventIn, PlaybookEntry, SearchResult
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


def format_memories(
    hits: Sequence[SearchResult], max_chars: int, *, per_hit: int = 400
) -> tuple[str, int]:
    """The recall block: one line per hit (date, kind, title, text, id) within ``max_chars``."""
    if not hits:
        return "", 0
    lines = [
        "## Relevant memory (agent-memory)",
        "From earlier sessions; may be outdated. Open an id with memory_expand for details.",
    ]
    used = sum(len(x) + 1 for x in lines)
    count = 0
    for hit in hits:
        date = str(hit.get("ts") or "")[:10]
        kind = hit.get("level") or hit.get("type") or "memory"
        title = (hit.get("title") or "").strip()
        body = " ".join(str(hit.get("text") or "").split())
        text = (
            f"{title}: {body}" if title and body and not body.startswith(title) else body or title
        )
        if len(text) > per_hit:
            text = text[: per_hit - 3] + "..."
        line = f"- {date} [{kind}] {text} (id: {hit.get('id')})"
        room = max_chars - used - 1
        if len(line) > room:
            overflow = len(line) - room + 3
            if len(text) - overflow < 40:  # too little left to say anything useful
                break
            text = text[: len(text) - overflow] + "..."
            line = f"- {date} [{kind}] {text} (id: {hit.get('id')})"
        lines.append(line)
        used += len(line) + 1
        count += 1
    return ("\n".join(lines), count) if count else ("", 0)


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
        token_budget: int = 800,
        recall_limit: int = 8,
        min_score: float = 0.0,
        recall_timeout: float = 3.0,
        brief_tokens: int = 1500,
        record: bool = True,
        tools: bool = True,
        playbook: bool | PlaybookConfig = False,
        max_buffer: int = 1000,
    ) -> None:
        super().__init__()
        if injection not in ("off", "auto", "always"):
            raise ValueError("injection must be 'off', 'auto' or 'always'")
        self.project_id = project_id or resolve_project_id()
        self.agent_id = agent_id
        self.user_id = user_id
        self._session_id = session_id
        self._default_session = f"lc-{new_id()}"
        self.injection: InjectionMode = injection
        self.token_budget = token_budget
        self.recall_limit = recall_limit
        self.min_score = min_score
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
        self._recall_cache = _Lru(256)
        self._briefs = _Lru(256)  # session -> its brief ("" when none could be had)
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

    def _recall_plan(self, messages: Sequence[AnyMessage]) -> tuple[str, Any] | None:
        """(query, cache key) for this model call, or None when nothing is to be recalled."""
        index, human = _latest_human(messages)
        if human is None:
            return None
        query = message_text(human).strip()
        if self.injection == "always":
            tail = [message_text(m) for m in messages[index + 1 :] if isinstance(m, ToolMessage)]
            if tail:
                query = f"{query}\n{tail[-1][:500]}"
            return (query[:2000], None) if query else None
        if len([w for w in query.split() if len(w) > 2]) < 2:
            return None  # "hi", "ok thanks": nothing to look up
        return query[:2000], (self.session_id(), human.id)

    async def _context(self, query: str, session: str) -> tuple[str, list[PlaybookEntry]]:
        parts: list[str] = []
        entries: list[PlaybookEntry] = []
        client = self._recorder.client
        if self.injection != "off":
            try:
                found = await client.search(
                    query, limit=self.recall_limit, project_id=self.project_id
                )
                hits = [
                    h
                    for h in found.get("results", [])
                    if not (h.get("type") == "event" and h.get("session_id") == session)
                    and (self.injection == "always" or float(h.get("score", 0)) >= self.min_score)
                ]
                block, _ = format_memories(hits, self.token_budget * CHARS_PER_TOKEN)
                if block:
                    parts.append(block)
            except Exception as exc:
                log.warning("agent-memory: recall failed: %s", exc)
        if self.playbook is not None:
            try:
                ranked = await client.playbook(
                    self.project_id, q=query, limit=self.playbook.max_entries
                )
                block, count = format_playbook(ranked, self.playbook.token_budget * CHARS_PER_TOKEN)
                if block:
                    parts.append(block)
                    entries = list(ranked[:count])
            except Exception as exc:
                log.warning("agent-memory: playbook unavailable: %s", exc)
        return "\n\n".join(parts), entries

    async def _cached_context(self, query: str, key: Any, session: str) -> str:
        if key is not None:
            cached = self._recall_cache.get(key)
            if cached is not None:
                return str(cached)
        block, entries = await self._context(query, session)
        if key is not None:
            self._recall_cache.put(key, block)
        if self.playbook is not None:
            self._injected.put(session, entries)
        return block

    def _wants_context(self) -> bool:
        return self.injection != "off" or self.playbook is not None

    async def _brief(self, session: str) -> str:
        """The project's brief for ``session``, asked once: a session's calls all see the same
        one, and a service that failed to give it is not asked again at every call."""
        cached = self._briefs.get(session)
        if cached is not None:
            return str(cached)
        text = ""
        try:
            brief = await self._recorder.client.brief(
                self.project_id, budget_tokens=self.brief_tokens, session_id=session
            )
            text = brief["context"]
        except Exception as exc:
            log.warning("agent-memory: no brief for this session: %s", exc)
        self._briefs.put(session, text)
        return text

    async def _system_block(self, plan: tuple[str, Any] | None, session: str) -> str:
        """What this model call gets in its system prompt: the brief, then the recall."""
        wants_brief = self.injection != "off" and self.brief_tokens > 0
        brief, recalled = await asyncio.gather(
            self._brief(session) if wants_brief else _nothing(),
            self._cached_context(plan[0], plan[1], session) if plan is not None else _nothing(),
        )
        return "\n\n".join(part for part in (brief, recalled) if part)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        block = ""
        if self._wants_context():
            try:
                plan = self._recall_plan(request.messages)
                block = self._loop.call(
                    self._system_block(plan, self.session_id()), self.recall_timeout
                )
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
                plan = self._recall_plan(request.messages)
                block = await self._loop.acall(
                    self._system_block(plan, self.session_id()), self.recall_timeout
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
