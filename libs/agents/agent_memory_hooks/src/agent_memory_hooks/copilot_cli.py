"""GitHub Copilot CLI: hook JSON on stdin (docs.github.com, "GitHub Copilot hooks reference").

Hooks configured under camelCase event names (what our installer writes) receive camelCase
payloads without the event's name, so the installed command passes it: ``agent-memory hook
copilot-cli --event postToolUse``. The VS Code compatible form (PascalCase event names,
snake_case fields with ``hook_event_name``) is understood as well. Fields used:
``sessionId``, ``timestamp`` (epoch ms), ``cwd``; ``source`` (sessionStart), ``reason``
(sessionEnd), ``prompt`` (userPromptSubmitted), ``toolName``/``toolArgs``/``toolResult``
(``resultType``, ``textResultForLlm``) for postToolUse, ``error`` for postToolUseFailure and
errorOccurred, ``trigger`` for preCompact, and ``transcriptPath`` for agentStop.

The assistant's replies are in no payload: at ``agentStop`` (end of each turn) the hook reads
what was appended to the session's ``events.jsonl`` (one ``{type, id, timestamp, data}`` per
line) and posts the ``assistant.message`` lines, keyed by their ``id``.
"""

from __future__ import annotations

from agent_memory_hooks import lite
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

RUNTIME = "copilot-cli"
STDOUT = ""
EVENTS = (
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "postToolUse",
    "postToolUseFailure",
    "agentStop",
    "preCompact",
    "errorOccurred",
)
_PASCAL = {
    "SessionStart": "sessionStart",
    "SessionEnd": "sessionEnd",
    "UserPromptSubmit": "userPromptSubmitted",
    "PostToolUse": "postToolUse",
    "PostToolUseFailure": "postToolUseFailure",
    "Stop": "agentStop",
    "PreCompact": "preCompact",
    "ErrorOccurred": "errorOccurred",
}


def event_name(payload: Payload, ctx: HookContext) -> str:
    name = ctx.event_name or str_field(payload, "hook_event_name", "hookEventName") or ""
    return _PASCAL.get(name, name)


def session_of(payload: Payload) -> str | None:
    return str_field(payload, "sessionId", "session_id")


def _args(value: Any) -> Any:
    if isinstance(value, str):  # older releases send the arguments as a JSON string
        try:
            return lite.loads(value)
        except ValueError:
            return value
    return value


def normalize(payload: Payload, ctx: HookContext) -> list[Event]:
    name = event_name(payload, ctx)
    session = session_of(payload)
    if not session:
        return []
    cwd = str_field(payload, "cwd")
    stamp = payload.get("timestamp")
    ts = ts_from(stamp, ctx.now_ms)
    moment = stamp if stamp else ctx.now_ms
    meta: dict[str, Any] = {"hook_event": name}

    def one(kind: str, role: str, type_: str, text: str, **extra: Any) -> list[Event]:
        return [
            make_event(
                ctx,
                key=(kind, moment),
                session_id=session,
                role=role,
                type=type_,
                text=text,
                cwd=cwd,
                ts=ts,
                metadata={**meta, **extra},
            )
        ]

    if name == "sessionStart":
        source = str_field(payload, "source") or "startup"
        initial = str_field(payload, "initialPrompt", "initial_prompt")
        return one(
            "session_start",
            "system",
            "session_start",
            f"Copilot CLI session started ({source})",
            source=source,
            initial_prompt=initial,
        )
    if name == "sessionEnd":
        reason = str_field(payload, "reason") or "complete"
        return one(
            "session_end",
            "system",
            "session_end",
            f"Copilot CLI session ended ({reason})",
            reason=reason,
        )
    if name == "userPromptSubmitted":
        prompt = str_field(payload, "prompt")
        return one("prompt", "user", "message", prompt) if prompt else []
    if name in ("postToolUse", "postToolUseFailure"):
        tool = str_field(payload, "toolName", "tool_name") or "tool"
        args = _args(payload["toolArgs"] if "toolArgs" in payload else payload.get("tool_input"))
        result = payload.get("toolResult", payload.get("tool_result"))
        result_type = None
        if isinstance(result, dict):
            result_type = result.get("resultType", result.get("result_type"))
            output = text_of(result.get("textResultForLlm", result.get("text_result_for_llm")))
        else:
            output = text_of(result)
        failed = name == "postToolUseFailure" or result_type in ("failure", "error", "denied")
        if name == "postToolUseFailure":
            output = text_of(payload.get("error")) or output
        return tool_events(
            ctx,
            key=("tool", moment, tool),
            session_id=session,
            cwd=cwd,
            tool_name=tool,
            tool_input=args,
            output=output,
            ts=ts,
            metadata={**meta, "result_type": result_type},
            failed=failed,
        )
    if name == "preCompact":
        trigger = str_field(payload, "trigger") or "auto"
        return one("compact", "system", "note", f"Context compaction ({trigger})", trigger=trigger)
    if name == "errorOccurred":
        error = payload.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        context = str_field(payload, "errorContext", "error_context")
        return one(
            "error",
            "system",
            "note",
            f"Copilot CLI error ({context or 'unknown'}): {text_of(message)}",
            error_context=context,
            recoverable=payload.get("recoverable"),
        )
    return []  # agentStop: the transcript tail carries the reply


def transcript_path(payload: Payload) -> str | None:
    return str_field(payload, "transcriptPath", "transcript_path")


def transcript_events(
    lines: list[tuple[dict[str, Any], int]],
    payload: Payload,
    ctx: HookContext,
    state: dict[str, Any] | None = None,
) -> list[Event]:
    session = session_of(payload) or ""
    cwd = str_field(payload, "cwd")
    events: list[Event] = []
    for item, offset in lines:
        if item.get("type") != "assistant.message":
            continue
        data = item.get("data")
        if not isinstance(data, dict):
            continue
        text = data.get("content")
        if not isinstance(text, str) or not text.strip():
            continue
        line_id = item.get("id") if isinstance(item.get("id"), str) else f"offset-{offset}"
        events.append(
            make_event(
                ctx,
                key=("transcript", line_id),
                session_id=session,
                role="assistant",
                type="message",
                text=text,
                cwd=cwd,
                ts=ts_from(item.get("timestamp"), ctx.now_ms),
                metadata={
                    "hook_event": "transcript",
                    "transcript_id": line_id,
                    "message_id": data.get("messageId"),
                },
            )
        )
    return events
