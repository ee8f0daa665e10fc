"""Claude Code: hook JSON on stdin; the session transcript is the record of what happened.

Documented input (code.claude.com/docs/en/hooks): every event carries ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` (and ``permission_mode``, ``prompt_id``...);
``SessionStart`` adds ``source``, ``UserPromptSubmit`` ``prompt``, ``PostToolUse``
``tool_name``/``tool_input``/``tool_response``/``tool_use_id``, ``PostToolUseFailure`` the same
with ``error`` (and ``is_interrupt``) instead of a response, ``SessionEnd`` ``reason``,
``PreCompact`` ``trigger``/``custom_instructions``, ``Stop`` ``stop_hook_active``.

The transcript (``~/.claude/projects/<dir>/<session>.jsonl``, one JSON object per line, each
with a ``uuid`` and a ``timestamp``) holds every prompt, reply, tool call and tool result, failed
ones included (``tool_result`` blocks with ``is_error``; Claude Code fires no hook at all for
some failures, such as an Edit whose ``old_string`` is not found). So every hook reads what was
appended to it since the previous hook and turns each line into events (``entry_events``), with
the line's own time and ids from the session and the line's ``uuid`` or the ``tool_use_id``;
``agent-memory import claude-code`` runs the same function over whole transcripts, so capturing
a session twice (hook, then import) stores it once. The prompt and tool hooks only add events
of their own when there is no transcript to read. A hook prints nothing: for ``SessionStart``
and ``UserPromptSubmit`` Claude Code would add stdout to the model's context.
"""

from __future__ import annotations

import os

from agent_memory_hooks import shape
from agent_memory_hooks.events import (
    RUNTIME_TYPE,
    HookContext,
    make_event,
    runtime_event,
    str_field,
    tool_call_event,
    tool_events,
    tool_result_event,
    ts_from,
)

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

    from agent_memory_hooks.events import Event, Payload

RUNTIME = "claude-code"
STDOUT = ""
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SessionEnd",
    "PreCompact",
)
MAX_PENDING_CALLS = 64  # tool calls whose result has not been read yet, kept between hooks
_BRIEF_KEYS = (
    "command",
    "description",
    "file_path",
    "filePath",
    "path",
    "absolute_path",
    "notebook_path",
    "pattern",
    "url",
)


def session_of(payload: Payload) -> str | None:
    return str_field(payload, "session_id")


def transcript_path(payload: Payload) -> str | None:
    return str_field(payload, "transcript_path")


def _has_transcript(payload: Payload) -> bool:
    path = transcript_path(payload)
    return bool(path) and os.path.isfile(str(path))


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
    # where the session's transcript had got to: a position in the session, not a clock
    at = ctx.transcript_pos if ctx.transcript_pos is not None else ""
    # no time in the payload: the time of the transcript's latest entry, else the clock
    latest = ts_from(ctx.transcript_ts, ctx.now_ms) if ctx.transcript_ts else ctx.now_ms
    if name == "SessionStart":
        source = str_field(payload, "source") or "startup"
        return [
            make_event(
                ctx,
                key=("session_start", source, at),
                session_id=session,
                role="system",
                type="session_start",
                text=f"Claude Code session started ({source})",
                cwd=cwd,
                ts=ctx.now_ms,  # nothing in the transcript yet says when
                metadata={**common, "source": source, "model": payload.get("model")},
            )
        ]
    if name == "UserPromptSubmit":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip() or _has_transcript(payload):
            return []  # the transcript line of the prompt is read by the next hook
        prompt_id = str_field(payload, "prompt_id")
        return [
            make_event(
                ctx,
                key=("prompt", prompt_id or prompt),
                session_id=session,
                role="user",
                type="message",
                text=_typed(prompt),
                cwd=cwd,
                metadata={**common, "prompt_id": prompt_id},
            )
        ]
    if name in ("PostToolUse", "PostToolUseFailure"):
        if _has_transcript(payload):
            return []  # the tool_use and tool_result lines carry the same ids, and the time
        tool = str_field(payload, "tool_name") or "tool"
        use_id = str_field(payload, "tool_use_id")
        tool_input = payload.get("tool_input")
        failed = name == "PostToolUseFailure"
        response = payload.get("tool_response")
        output = payload.get("error") if failed else response
        interrupted = bool(payload.get("is_interrupt")) or (
            isinstance(response, dict) and response.get("interrupted") is True
        )
        return tool_events(
            ctx,
            key=("tool", use_id or f"{tool}:{shape.summary(tool_input)}"),
            session_id=session,
            cwd=cwd,
            tool_name=tool,
            tool_input=tool_input,
            output=output,
            metadata={**common, "tool_use_id": use_id},
            failed=failed,
            exit_code=0 if _is_shell(tool) and not failed and not interrupted else None,
            interrupted=interrupted,
        )
    if name == "SessionEnd":
        reason = str_field(payload, "reason") or "other"
        return [
            make_event(
                ctx,
                key=("session_end", reason, at),
                session_id=session,
                role="system",
                type="session_end",
                text=f"Claude Code session ended ({reason})",
                cwd=cwd,
                ts=latest,
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
                key=("compact", trigger, at),
                session_id=session,
                role="system",
                type="note",
                text=text,
                cwd=cwd,
                ts=latest,
                metadata={**common, "trigger": trigger},
            )
        ]
    return []  # Stop and the rest: nothing of their own, the transcript tail says it all


def _is_shell(tool: str) -> bool:
    return shape.kind_of(tool) == "shell"


def transcript_events(
    lines: list[tuple[dict[str, Any], int]],
    payload: Payload,
    ctx: HookContext,
    state: dict[str, Any] | None = None,
) -> list[Event]:
    """Events of transcript lines (hook: the new ones; import: all of them).

    ``state`` carries what one read leaves for the next: the tool calls whose result has not
    been read yet (their name and input, to describe the result) and the latest entry's time.
    """
    state = {} if state is None else state
    session = session_of(payload) or ""
    cwd = str_field(payload, "cwd")
    events: list[Event] = []
    for item, offset in lines:
        events.extend(entry_events(item, offset, ctx, session, cwd, state))
    calls = state.get("calls")
    if isinstance(calls, dict) and len(calls) > MAX_PENDING_CALLS:
        state["calls"] = dict(list(calls.items())[-MAX_PENDING_CALLS:])
    return events


def entry_events(
    item: dict[str, Any],
    offset: int,
    ctx: HookContext,
    session: str,
    cwd: str | None,
    state: dict[str, Any],
) -> list[Event]:
    """One transcript line as events: a prompt, a reply, tool calls, tool results."""
    kind = item.get("type")
    message = item.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return []
    stamp = item.get("timestamp")
    if isinstance(stamp, str) and stamp > str(state.get("last_ts") or ""):
        state["last_ts"] = stamp
    ts = ts_from(stamp, ctx.now_ms)
    line_id = item.get("uuid") if isinstance(item.get("uuid"), str) else f"offset-{offset}"
    session = str(item.get("sessionId") or session)
    cwd = item.get("cwd") if isinstance(item.get("cwd"), str) else cwd
    common: dict[str, Any] = {"hook_event": "transcript", "transcript_uuid": line_id}
    if item.get("isSidechain"):
        common["sidechain"] = True
        common["subagent_id"] = item.get("agentId")
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    calls = state.setdefault("calls", {})
    events: list[Event] = []
    text, reminders = _text_blocks(content), ""
    if kind == "user":
        text, reminders = _split_reminders(_typed(text))
    wrote = runtime_kind(item, kind, text)
    if text.strip():
        extra: dict[str, Any] = {}
        if wrote is not None:  # the runtime wrote it: stored, out of bullets, titles, search
            extra = {
                "runtime_kind": wrote,
                "command": _command_line(text) if wrote == "command" else None,
                "compact_summary": True if wrote == "compact_summary" else None,
            }
        events.append(
            make_event(
                ctx,
                key=("transcript", line_id),
                session_id=session,
                role=kind if wrote is None else "system",
                type="message" if wrote is None else RUNTIME_TYPE,
                text=text,
                cwd=cwd,
                ts=ts,
                metadata={
                    **common,
                    "message_id": message.get("id"),
                    "model": message.get("model"),
                    **extra,
                },
            )
        )
    if reminders.strip():
        events.append(
            runtime_event(
                ctx,
                key=("transcript", line_id, "reminder"),
                session_id=session,
                text=reminders,
                cwd=cwd,
                ts=ts,
                kind="reminder",
                metadata=common,
            )
        )
    results = [b for b in blocks if b.get("type") == "tool_result"]
    for block in blocks:
        use_id = block.get("id") if isinstance(block.get("id"), str) else None
        if kind != "assistant" or block.get("type") != "tool_use" or not use_id:
            continue
        name = str(block.get("name") or "tool")
        calls[use_id] = [name, _brief(block.get("input"))]
        events.append(
            tool_call_event(
                ctx,
                key=("tool", use_id),
                session_id=session,
                cwd=cwd,
                tool_name=name,
                tool_input=block.get("input"),
                ts=ts,
                metadata={**common, "tool_use_id": use_id},
            )
        )
    for block in results:
        use_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
        if not use_id:
            continue
        pending = calls.pop(use_id, None)
        name, brief = (pending[0], pending[1]) if isinstance(pending, list) else ("tool", {})
        failed = block.get("is_error") is True
        structured = item.get("toolUseResult") if len(results) == 1 else None
        output: Any = block.get("content")
        interrupted = False
        if isinstance(structured, dict) and isinstance(structured.get("stdout"), str):
            output = structured  # stdout and stderr, as the hook payload has them
            interrupted = structured.get("interrupted") is True
        output = _strip_error_tags(output)
        shell = _is_shell(name)
        events.append(
            tool_result_event(
                ctx,
                key=("tool", use_id),
                session_id=session,
                cwd=cwd,
                tool_name=name,
                tool_input=brief,
                output=output,
                ts=ts,
                metadata={**common, "tool_use_id": use_id},
                failed=failed,
                exit_code=0 if shell and not failed and not interrupted else None,
                interrupted=interrupted,
            )
        )
    return events


def _brief(tool_input: Any) -> dict[str, Any]:
    """What describing a tool's result needs of its input (kept between hooks, so small)."""
    if not isinstance(tool_input, dict):
        return {}
    return {
        k: (v[:500] if isinstance(v, str) else v)
        for k, v in tool_input.items()
        if k in _BRIEF_KEYS and isinstance(v, str | list)
    }


def _strip_error_tags(output: Any) -> Any:
    if isinstance(output, str) and output.startswith("<tool_use_error>"):
        return output.removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")
    return output


# What Claude Code writes into the user's turn itself, by the tag (or bracket) it opens with,
# and what it is: a local command's output, a stopped request's notice, a background task's
# end, a slash command's invocation, a hook's output, the note before a local command. Nobody
# typed them, yet stored as prompts they counted as people's words and titled TOC segments
# (``make bench-real``); they are stored as ``RUNTIME_TYPE`` events instead.
HARNESS_LINES: tuple[tuple[str, str], ...] = (
    ("<local-command-stdout>", "command_output"),
    ("<local-command-stderr>", "command_output"),
    ("<bash-stdout>", "command_output"),
    ("<bash-stderr>", "command_output"),
    ("[Request interrupted by user", "interrupt"),  # "]" or " for tool use]"
    ("<task-notification>", "task_notification"),
    ("<local-command-caveat>", "caveat"),
    ("<user-prompt-submit-hook>", "hook_output"),
    ("<system-reminder>", "reminder"),
)
_OPENERS = tuple(opener for opener, _ in HARNESS_LINES)
# The model name of a reply Claude Code writes itself: a usage limit, an API error, "No response
# requested." after an interrupt.
SYNTHETIC_MODEL = "<synthetic>"
# The agent id of the subagent Claude Code runs to compact a session
# (``<session>/subagents/agent-acompact-<id>.jsonl``): its prompt is the runtime's request for
# a summary, its reply the summary.
COMPACTION_AGENT = "acompact"
_REMINDER = ("<system-reminder>", "</system-reminder>")


def runtime_kind(item: dict[str, Any], kind: object, text: str) -> str | None:
    """What Claude Code wrote of a transcript line (a ``runtime_kind``), None for a person's
    prompt or the model's reply. From the line's own fields first (``isMeta``: a slash
    command's or skill's expansion, ``isCompactSummary``, the compaction subagent, the
    synthetic model), then from the wrapper its text opens with."""
    message = item.get("message")
    model = message.get("model") if isinstance(message, dict) else None
    if item.get("isSidechain") and str(item.get("agentId") or "").startswith(COMPACTION_AGENT):
        return "compaction_prompt" if kind == "user" else "compaction_summary"
    if kind != "user":
        return "synthetic_reply" if model == SYNTHETIC_MODEL else None
    if item.get("isCompactSummary"):
        return "compact_summary"
    stripped = text.strip()
    if item.get("isMeta"):
        return "caveat" if stripped.startswith("<local-command-caveat>") else "expansion"
    if stripped.startswith("<command-") and "<command-name>" in stripped:
        return "command"
    if stripped.startswith("<bash-input>"):
        return "command"
    if stripped.startswith(_OPENERS):
        return next(what for opener, what in HARNESS_LINES if stripped.startswith(opener))
    return None


# Control characters a terminal let through into a prompt (a run of backspaces, ``\x7f``,
# before "i would prefer ..."), deleted; tab and newline stay. ``str.translate``, not ``re``:
# the hook path pays for every import.
_CONTROL = dict.fromkeys([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def _typed(text: str) -> str:
    return text.translate(_CONTROL)


def _command_line(text: str) -> str:
    """A slash command as the user typed it ("/review src/app.py"), from its wrapper."""
    if "<bash-input>" in text:
        return "!" + _between(text, "<bash-input>", "</bash-input>").strip()
    name = _between(text, "<command-name>", "</command-name>")
    args = _between(text, "<command-args>", "</command-args>")
    return f"{name} {args}".strip()


def _split_reminders(text: str) -> tuple[str, str]:
    """A user turn's text without the system reminders Claude Code put into it, and those
    reminders: the prompt stays the person's, the reminders are stored beside it."""
    start, end = _REMINDER
    if start not in text:
        return text, ""
    kept: list[str] = []
    found: list[str] = []
    rest = text
    while start in rest:
        before, _, after = rest.partition(start)
        inside, closed, after = after.partition(end)
        kept.append(before)
        found.append(start + inside + (closed or ""))
        rest = after
    kept.append(rest)
    prompt = "".join(kept).strip()
    if not prompt:
        return text, ""
    return prompt, "\n\n".join(found)


def _between(text: str, start: str, end: str) -> str:
    at = text.find(start)
    if at < 0:
        return ""
    rest = text[at + len(start) :]
    return rest[: rest.find(end)] if end in rest else rest


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
