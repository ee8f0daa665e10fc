"""Claude Code: hook JSON on stdin, assistant messages from the session transcript.

Documented input (code.claude.com/docs/en/hooks): every event carries ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` (and ``permission_mode``, ``prompt_id``...);
``SessionStart`` adds ``source``, ``UserPromptSubmit`` ``prompt``, ``PostToolUse``
``tool_name``/``tool_input``/``tool_response``/``tool_use_id``, ``SessionEnd`` ``reason``,
``PreCompact`` ``trigger``/``custom_instructions``, ``Stop`` ``stop_hook_active``.

No hook carries the assistant's replies, so every hook also reads what was appended to the
transcript (``~/.claude/projects/<dir>/<session>.jsonl``, one JSON object per line, each with a
``uuid``) since the previous hook of the session and posts the assistant text blocks, one event
per line, keyed by the line's uuid. A hook prints nothing: for ``SessionStart`` and
``UserPromptSubmit`` Claude Code would add stdout to the model's context.
"""

from __future__ import annotations

from agent_memory_hooks.events import (
    HookContext,
    make_event,
    str_field,
    text_of,
    tool_events,
    ts_from,
)

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

    from agent_memory_hooks.events import Event, Payload

RUNTIME = "claude-code"
STDOUT = ""
EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd", "PreCompact")


def session_of(payload: Payload) -> str | None:
    return str_field(payload, "session_id")


def normalize(payload: Payload, ctx: HookContext) -> list[Event]:
    name = ctx.event_name or str_field(payload, "hook_event_name") or ""
    session = session_of(payload)
    if not session:
        return []
    cwd = str_field(payload, "cwd")
    common: dict[str, Any] = {"hook_event": name}
    if isinstance(payload.get("agent_id"), str):  # fired inside a subagent
        common["subagent_id"] = payload["agent_id"]
        common["subagent_type"] = payload.get("agent_type")
    if name == "SessionStart":
        source = str_field(payload, "source") or "startup"
        return [
            make_event(
                ctx,
                key=("session_start", source, ctx.now_ms),
                session_id=session,
                role="system",
                type="session_start",
                text=f"Claude Code session started ({source})",
                cwd=cwd,
                metadata={**common, "source": source, "model": payload.get("model")},
            )
        ]
    if name == "UserPromptSubmit":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return []
        prompt_id = str_field(payload, "prompt_id")
        key = ("prompt", prompt_id) if prompt_id else ("prompt", ctx.now_ms, prompt)
        return [
            make_event(
                ctx,
                key=key,
                session_id=session,
                role="user",
                type="message",
                text=prompt,
                cwd=cwd,
                metadata={**common, "prompt_id": prompt_id},
            )
        ]
    if name in ("PostToolUse", "PostToolUseFailure"):
        tool = str_field(payload, "tool_name") or "tool"
        use_id = str_field(payload, "tool_use_id")
        key = ("tool", use_id) if use_id else ("tool", ctx.now_ms, tool)
        failed = name == "PostToolUseFailure"
        output = payload.get("error") if failed else payload.get("tool_response")
        return tool_events(
            ctx,
            key=key,
            session_id=session,
            cwd=cwd,
            tool_name=tool,
            tool_input=payload.get("tool_input"),
            output_text=text_of(output),
            metadata={**common, "tool_use_id": use_id},
            failed=failed,
        )
    if name == "SessionEnd":
        reason = str_field(payload, "reason") or "other"
        return [
            make_event(
                ctx,
                key=("session_end", reason, ctx.now_ms),
                session_id=session,
                role="system",
                type="session_end",
                text=f"Claude Code session ended ({reason})",
                cwd=cwd,
                metadata={**common, "reason": reason},
            )
        ]
    if name == "PreCompact":
        trigger = str_field(payload, "trigger") or "auto"
        instructions = str_field(payload, "custom_instructions")
        text = f"Context compaction ({trigger})" + (f": {instructions}" if instructions else "")
        return [
            make_event(
                ctx,
                key=("compact", trigger, ctx.now_ms),
                session_id=session,
                role="system",
                type="note",
                text=text,
                cwd=cwd,
                metadata={**common, "trigger": trigger},
            )
        ]
    return []  # Stop and the rest: nothing of their own, the transcript tail says it all


def transcript_path(payload: Payload) -> str | None:
    return str_field(payload, "transcript_path")


def transcript_events(
    lines: list[tuple[dict[str, Any], int]], payload: Payload, ctx: HookContext
) -> list[Event]:
    """Assistant text blocks of the transcript lines; tool use and thinking are left out
    (tool calls come from ``PostToolUse``, with their results)."""
    session = session_of(payload) or ""
    events: list[Event] = []
    for item, offset in lines:
        if item.get("type") != "assistant":
            continue
        message = item.get("message")
        if not isinstance(message, dict):
            continue
        text = _text_blocks(message.get("content"))
        if not text.strip():
            continue
        line_id = item.get("uuid") if isinstance(item.get("uuid"), str) else f"offset-{offset}"
        cwd = item.get("cwd") if isinstance(item.get("cwd"), str) else str_field(payload, "cwd")
        events.append(
            make_event(
                ctx,
                key=("transcript", line_id),
                session_id=str(item.get("sessionId") or session),
                role="assistant",
                type="message",
                text=text,
                cwd=cwd,
                ts=ts_from(item.get("timestamp"), ctx.now_ms),
                metadata={
                    "hook_event": "transcript",
                    "transcript_uuid": line_id,
                    "message_id": message.get("id"),
                    "model": message.get("model"),
                    "sidechain": True if item.get("isSidechain") else None,
                },
            )
        )
    return events


def _text_blocks(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n\n".join(texts)
