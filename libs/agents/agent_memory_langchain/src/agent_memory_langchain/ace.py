"""ACE (Agentic Context Engineering): generator, reflector, curator around a shared playbook.

- The **generator** is the agent itself, given the playbook entries most relevant to its task
  (``format_playbook``; the server ranks them, ``GET /v1/playbooks/{project}/entries?q=``).
- The **reflector** turns a finished run (``RunTrace``) into lessons marked ``+`` (worked),
  ``-`` (failed, avoid) or ``o`` (observed), and may mark the entries it was given as helpful or
  harmful. ``HeuristicReflector`` (the default) only ever says ``o``: without a judge it cannot
  know whether the run succeeded and must not pretend to. ``LLMReflector`` asks a chat model.
- The **curator** runs on the server (``POST /v1/playbooks/{project}/entries``): it merges a
  lesson into an entry with the same meaning (embedding similarity) and keeps the counts, so the
  playbook is one per project, shared by its agents and kept across restarts.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from agent_memory_client.types import LessonIn, PlaybookEntry

log = logging.getLogger("agent_memory_langchain")
Mark = Literal["+", "-", "o"]
_MARKS: tuple[str, ...] = ("+", "-", "o")


@dataclass(frozen=True)
class ToolUse:
    name: str
    args: str
    result: str | None = None
    error: bool = False


@dataclass
class RunTrace:
    """What a reflector sees of one run: the task, the answer, the tools used and how they
    went, and the playbook entries that were injected."""

    task: str
    final_answer: str
    tool_uses: list[ToolUse] = field(default_factory=list)
    injected: list[PlaybookEntry] = field(default_factory=list)
    run_id: str = ""


@dataclass(frozen=True)
class Lesson:
    text: str | None
    mark: Mark = "o"
    entry_id: str | None = None  # marks an existing entry instead of adding text
    section: str = "general"

    def to_api(self, source: dict[str, Any]) -> LessonIn:
        item: LessonIn = {"mark": self.mark, "section": self.section, "source": source}
        if self.entry_id is not None:
            item["id"] = self.entry_id
        else:
            item["text"] = self.text or ""
        return item


class Reflector(Protocol):
    def reflect(self, trace: RunTrace) -> list[Lesson]: ...

    async def areflect(self, trace: RunTrace) -> list[Lesson]: ...


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


_ERROR_WORDS = re.compile(r"\b(error|exception|traceback|failed|failure|not found|denied)\b", re.I)


def looks_failed(result: str | None) -> bool:
    return bool(result) and bool(_ERROR_WORDS.search(result or ""))


class HeuristicReflector:
    """Observations only (mark ``o``): which tools a task needed, and which tool calls errored.

    It never marks anything ``+`` or ``-``: a run that ended is not a run that succeeded, and a
    wrong "this worked" entry would be repeated by every later run.
    """

    def __init__(self, max_lessons: int = 5) -> None:
        self.max_lessons = max_lessons

    def reflect(self, trace: RunTrace) -> list[Lesson]:
        lessons: list[Lesson] = []
        task = _first_line(trace.task, 120)
        names = list(dict.fromkeys(use.name for use in trace.tool_uses))
        if task and names:
            lessons.append(
                Lesson(f"For tasks like '{task}', the agent used the tools: {', '.join(names)}.")
            )
        for use in trace.tool_uses:
            if use.error or looks_failed(use.result):
                detail = _first_line(use.result or "error")
                lessons.append(
                    Lesson(f"Tool {use.name} returned an error: {detail}", section="tools")
                )
        return lessons[: self.max_lessons]

    async def areflect(self, trace: RunTrace) -> list[Lesson]:
        return self.reflect(trace)


REFLECTOR_PROMPT = """You review one finished run of an AI agent and extract reusable lessons.
Return only JSON: {"lessons": [{"text": "...", "mark": "+|-|o"}],
"entry_marks": [{"id": "...", "mark": "+|-|o"}]}
- mark "+" for an approach that clearly worked, "-" for one that clearly failed (to avoid),
  "o" for a neutral observation. Use "+" or "-" only when the run shows it; else "o".
- lessons: at most 5, each one sentence, general enough to help a future run on a similar task.
- entry_marks: for playbook entries you were shown, whether each helped (+), misled (-) or
  was irrelevant (o) in this run. Omit entries you cannot judge."""


def _trace_text(trace: RunTrace, limit: int = 6000) -> str:
    parts = [f"TASK: {trace.task}"]
    for use in trace.tool_uses:
        status = "ERROR" if use.error else "ok"
        parts.append(f"TOOL {use.name}({use.args[:300]}) -> {status}: {(use.result or '')[:500]}")
    parts.append(f"FINAL ANSWER: {trace.final_answer[:1500]}")
    if trace.injected:
        parts.append("PLAYBOOK ENTRIES SHOWN:")
        parts += [f"  [{e.get('id')}] {e.get('text')}" for e in trace.injected]
    text = "\n".join(parts)
    return text[:limit]


def parse_reflection(text: str, known_ids: Sequence[str]) -> list[Lesson]:
    """Lenient: the JSON object may be wrapped in prose or a code fence; bad items are skipped."""
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        return []
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    lessons: list[Lesson] = []
    for item in data.get("lessons") or []:
        if not isinstance(item, dict):
            continue
        body = str(item.get("text", "")).strip()
        mark = item.get("mark", "o")
        if body and mark in _MARKS:
            lessons.append(Lesson(body[:1000], mark))
    for item in data.get("entry_marks") or []:
        if isinstance(item, dict) and item.get("id") in known_ids and item.get("mark") in _MARKS:
            lessons.append(Lesson(None, item["mark"], entry_id=str(item["id"])))
    return lessons


class LLMReflector:
    """Asks a chat model to judge the run; falls back to no lessons on any failure."""

    def __init__(self, model: BaseChatModel, prompt: str = REFLECTOR_PROMPT) -> None:
        self.model = model
        self.prompt = prompt

    def _messages(self, trace: RunTrace) -> list[Any]:
        return [SystemMessage(content=self.prompt), HumanMessage(content=_trace_text(trace))]

    def _ids(self, trace: RunTrace) -> list[str]:
        return [str(e.get("id")) for e in trace.injected if e.get("id")]

    def reflect(self, trace: RunTrace) -> list[Lesson]:
        try:
            reply = self.model.invoke(self._messages(trace))
        except Exception:
            log.warning("agent-memory: reflector model failed", exc_info=True)
            return []
        return parse_reflection(reply.text, self._ids(trace))

    async def areflect(self, trace: RunTrace) -> list[Lesson]:
        try:
            reply = await self.model.ainvoke(self._messages(trace))
        except Exception:
            log.warning("agent-memory: reflector model failed", exc_info=True)
            return []
        return parse_reflection(reply.text, self._ids(trace))


def format_playbook(entries: Sequence[PlaybookEntry], max_chars: int) -> tuple[str, int]:
    """The generator's block: entries with their record, within ``max_chars``; returns the
    text and how many entries it holds."""
    if not entries:
        return "", 0
    lines = [
        "## Playbook: lessons from earlier runs on this project",
        "[+n] times it helped, [-n] times it misled; weigh them accordingly.",
    ]
    used = sum(len(x) + 1 for x in lines)
    count = 0
    for entry in entries:
        line = f"- [+{entry.get('helpful', 0)} -{entry.get('harmful', 0)}] {entry.get('text', '')}"
        if used + len(line) + 1 > max_chars:
            break
        lines.append(line)
        used += len(line) + 1
        count += 1
    return ("\n".join(lines), count) if count else ("", 0)
