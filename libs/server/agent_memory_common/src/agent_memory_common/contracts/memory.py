"""Memory kinds and salience: the rules every writer and reader of a memory shares.

The summarizer decides a text's kind (``agent_memory_summarizer.salience.classify``) and stores
the salience below on grips and nodes; the indexers give raw events the same salience; the query
service shows a node's salience with the pin bonus. The database holds two of these facts too
(the kinds in the ``CHECK`` constraints of ``migrations/0003_toc.sql``, the pin bonus in the
generated ``toc_grips.salience`` column); a test keeps them equal to the constants here.

Salience = min(len/500, 1) * 0.45 + 0.20 if the kind is not an observation + 0.20 if pinned,
where a raw event's length counts only when a person said it (``event_salience``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

MemoryKind = Literal[
    "decision", "constraint", "definition", "procedure", "preference", "observation", "episode"
]
MEMORY_KINDS: tuple[MemoryKind, ...] = (
    "decision",
    "constraint",
    "definition",
    "procedure",
    "preference",
    "observation",
    "episode",
)
DEFAULT_KIND: MemoryKind = "observation"  # an unclassified moment

LENGTH_WEIGHT = 0.45
LENGTH_SCALE = 500
KIND_BONUS = 0.20
PIN_BONUS = 0.20


def salience(length: int, kind: str, pinned: bool = False) -> float:
    """The write-time importance of a memory of ``length`` characters, in [0, 0.85]."""
    value = min(max(length, 0) / LENGTH_SCALE, 1.0) * LENGTH_WEIGHT
    if kind != "observation":
        value += KIND_BONUS
    if pinned:
        value += PIN_BONUS
    return round(value, 4)


# What a tool produced, as the capture hooks mark it (``is_tool_event``).
TOOL_ROLES = frozenset({"tool"})
TOOL_TYPES = frozenset({"tool_call", "tool_result", "tool_use", "function_call"})
TOOL_HOOK_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "AfterTool", "BeforeTool"}
)
MARKER_TYPES = frozenset({"session_start", "session_end"})
# What a coding agent's runtime wrote into the conversation, not a person: a compaction prompt
# and its summary, a slash command and its expansion, a system reminder, a hook's or a local
# command's output (the capture hooks type it so, ``metadata.runtime_kind`` says which). It is
# stored like every event, but it is nobody's memory: as a prompt, Claude Code's compaction
# request was a bullet at every TOC level and the first search result for unrelated questions
# (issue 52, point 3). The segmenter, summarizer and indexers leave it out; a search finds it
# only when its ``kinds`` ask for ``RUNTIME_KIND``.
RUNTIME_TYPE = "runtime"
RUNTIME_KIND = "runtime"


def is_runtime_event(type_: str | None) -> bool:
    """True for what the runtime wrote (``RUNTIME_TYPE``)."""
    return type_ == RUNTIME_TYPE


def is_tool_event(
    role: str | None, type_: str | None, metadata: Mapping[str, Any] | None = None
) -> bool:
    """True for what a tool produced (its call or its output), as the hooks mark it."""
    if (role or "") in TOOL_ROLES or (type_ or "") in TOOL_TYPES:
        return True
    meta = metadata or {}
    return meta.get("hook_event") in TOOL_HOOK_EVENTS or bool(meta.get("tool_name"))


def event_salience(
    text: str, kind: str, role: str | None, type_: str | None, metadata: Mapping[str, Any]
) -> float:
    """A raw event's salience: ``salience`` of its length, but a tool's call or output and a
    session marker weigh as if they said nothing. A 2,000-character test log is not more
    important than a 500-character decision, yet by length it outranked every short prompt:
    in ``make bench-coding``'s answers 42% of the events returned were people's words, 51%
    with this rule (a prompt or reply above tool output in 61% -> 83% of pairs), with the same
    answers found (docs/search.md, "People's words")."""
    said = not (
        is_tool_event(role, type_, metadata)
        or (type_ or "") in MARKER_TYPES
        or is_runtime_event(type_)
    )
    return salience(len(text) if said else 0, kind)


def pinned_salience(base: float, pinned: bool) -> float:
    """A stored (unpinned) salience as shown and indexed: with the pin bonus, rounded."""
    return round(float(base) + (PIN_BONUS if pinned else 0.0), 4)
