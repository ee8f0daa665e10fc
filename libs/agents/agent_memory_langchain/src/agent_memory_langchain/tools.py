"""Tools for agent-driven recall: search, expand, note, topics.

They answer with short JSON strings (the model reads them) and never raise: when agent-memory is
away the tool says so and the agent carries on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.tools import BaseTool, StructuredTool

from agent_memory_client import AgentMemoryClient, AgentMemoryError, ApiError
from agent_memory_langchain.runner import LoopThread

if TYPE_CHECKING:
    from agent_memory_langchain.middleware import AgentMemoryMiddleware

TIMEOUT_S = 10.0
_TEXT = 600


def _cut(text: Any) -> Any:
    if isinstance(text, str) and len(text) > _TEXT:
        return text[:_TEXT] + "..."
    return text


def memory_tools(
    loop: LoopThread,
    client: Callable[[], AgentMemoryClient],
    owner: AgentMemoryMiddleware,
) -> list[BaseTool]:
    def run_sync(coro: Coroutine[Any, Any, str]) -> str:
        try:
            return loop.call(coro, TIMEOUT_S)
        except TimeoutError:
            return json.dumps({"error": "agent-memory did not answer in time"})

    async def run_async(coro: Coroutine[Any, Any, str]) -> str:
        try:
            return await loop.acall(coro, TIMEOUT_S)
        except TimeoutError:
            return json.dumps({"error": "agent-memory did not answer in time"})

    async def search(query: str, limit: int = 5) -> str:
        try:
            found = await client().search(query, limit=limit, project_id=owner.project_id)
        except AgentMemoryError as exc:
            return json.dumps({"error": f"memory search unavailable: {exc}"})
        hits = [
            {
                "id": h.get("id"),
                "ts": h.get("ts"),
                "kind": h.get("level") or h.get("type"),
                "title": h.get("title"),
                "text": _cut(h.get("text")),
                "session_id": h.get("session_id"),
            }
            for h in found.get("results", [])[:limit]
        ]
        return json.dumps({"results": hits}, ensure_ascii=False, default=str)

    async def expand(id: str, context: int = 3) -> str:
        c = client()
        try:
            try:
                grip = await c.grip(id, context=context)
                return json.dumps({"kind": "grip", **grip}, ensure_ascii=False, default=str)
            except ApiError as exc:
                if exc.status != 404:
                    raise
            event = await c.event(id.split(":", 2)[-1] if id.startswith("event:") else id)
            return json.dumps({"kind": "event", "event": event}, ensure_ascii=False, default=str)
        except ApiError as exc:
            return json.dumps({"error": f"cannot open {id!r}: {exc.message}"})
        except AgentMemoryError as exc:
            return json.dumps({"error": f"memory unavailable: {exc}"})

    async def note(text: str, kind: Literal["note", "decision"], session: str) -> str:
        try:
            event_id = await client().record(
                project_id=owner.project_id,
                agent_id=owner.agent_id,
                session_id=session,
                role="assistant",
                type="note",
                text=text,
                metadata={"note_kind": kind, "source": "langchain-tool"},
            )
        except AgentMemoryError as exc:
            return json.dumps({"error": f"note not recorded: {exc}"})
        return json.dumps({"recorded": event_id})

    async def topics(query: str = "", topic_id: str = "", since: str = "", limit: int = 8) -> str:
        c = client()
        try:
            if topic_id:
                data: Any = await c.topic(topic_id, members=20)
            elif query:
                data = await c.search_topics(query, project_id=owner.project_id, limit=limit)
            else:
                data = await c.topics(project_id=owner.project_id, since=since or None, limit=limit)
        except ApiError as exc:
            return json.dumps({"error": f"topics: {exc.message}"})
        except AgentMemoryError as exc:
            return json.dumps({"error": f"memory topics unavailable: {exc}"})
        return json.dumps(data, ensure_ascii=False, default=str)

    # The tool runs in the graph's context (for the session id) and hands the network part to
    # our loop: the session is read here, before the hop.
    def search_sync(query: str, limit: int = 5) -> str:
        return run_sync(search(query, limit))

    async def search_async(query: str, limit: int = 5) -> str:
        return await run_async(search(query, limit))

    def expand_sync(id: str, context: int = 3) -> str:
        return run_sync(expand(id, context))

    async def expand_async(id: str, context: int = 3) -> str:
        return await run_async(expand(id, context))

    def note_sync(text: str, kind: Literal["note", "decision"] = "note") -> str:
        return run_sync(note(text, kind, owner.session_id()))

    async def note_async(text: str, kind: Literal["note", "decision"] = "note") -> str:
        return await run_async(note(text, kind, owner.session_id()))

    def topics_sync(query: str = "", topic_id: str = "", since: str = "", limit: int = 8) -> str:
        return run_sync(topics(query, topic_id, since, limit))

    async def topics_async(
        query: str = "", topic_id: str = "", since: str = "", limit: int = 8
    ) -> str:
        return await run_async(topics(query, topic_id, since, limit))

    return [
        StructuredTool.from_function(
            func=search_sync,
            coroutine=search_async,
            name="memory_search",
            description=(
                "Search long-term memory of earlier sessions on this project (decisions, "
                "discussions, tool results, summaries). Returns hits with ids."
            ),
        ),
        StructuredTool.from_function(
            func=expand_sync,
            coroutine=expand_async,
            name="memory_expand",
            description="Open a memory id from memory_search: the full text and its context.",
        ),
        StructuredTool.from_function(
            func=note_sync,
            coroutine=note_async,
            name="memory_note",
            description=(
                "Record a note or a decision in long-term memory for future sessions. "
                "kind: 'note' or 'decision'."
            ),
        ),
        StructuredTool.from_function(
            func=topics_sync,
            coroutine=topics_async,
            name="memory_topics",
            description=(
                "The themes worked on in this project, most important (and recent) first. "
                "since (RFC 3339): only themes active since then; query: themes about "
                "something; topic_id: a theme's segments and its related themes."
            ),
        ),
    ]
