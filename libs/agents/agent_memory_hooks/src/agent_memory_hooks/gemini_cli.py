"""Gemini CLI: hook JSON on stdin (geminicli.com/docs/hooks/reference).

Every event carries ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and an ISO
``timestamp``. We use ``SessionStart`` (``source``), ``SessionEnd`` (``reason``),
``BeforeAgent`` (``prompt``: the user's message), ``AfterAgent`` (``prompt_response``: the
agent's final reply of the turn), ``AfterTool`` (``tool_name``, ``tool_input``,
``tool_response`` with ``llmContent``/``returnDisplay``/``error``) and ``PreCompress``
(``trigger``). ``AfterModel`` fires per streamed chunk and is deliberately not used.

Gemini parses a hook's stdout as JSON on exit code 0, so the hook prints ``{}``.
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

RUNTIME = "gemini-cli"
STDOUT = "{}"
EVENTS = ("SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "AfterTool", "PreCompress")


def normalize(payload: Payload, ctx: HookContext) -> list[Event]:
    name = ctx.event_name or str_field(payload, "hook_event_name") or ""
    session = str_field(payload, "session_id")
    if not session:
        return []
    cwd = str_field(payload, "cwd")
    stamp = payload.get("timestamp")
    ts = ts_from(stamp, ctx.now_ms)
    moment = stamp if isinstance(stamp, str) and stamp else ctx.now_ms
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

    if name == "SessionStart":
        source = str_field(payload, "source", "trigger") or "startup"
        return one(
            "session_start",
            "system",
            "session_start",
            f"Gemini CLI session started ({source})",
            source=source,
        )
    if name == "SessionEnd":
        reason = str_field(payload, "reason", "trigger") or "exit"
        return one(
            "session_end",
            "system",
            "session_end",
            f"Gemini CLI session ended ({reason})",
            reason=reason,
        )
    if name == "BeforeAgent":
        prompt = str_field(payload, "prompt")
        return one("prompt", "user", "message", prompt) if prompt else []
    if name == "AfterAgent":
        reply = str_field(payload, "prompt_response")
        retry = True if payload.get("stop_hook_active") else None
        return one("reply", "assistant", "message", reply, retry=retry) if reply else []
    if name == "AfterTool":
        tool = str_field(payload, "tool_name") or "tool"
        response = payload.get("tool_response")
        error = response.get("error") if isinstance(response, dict) else None
        output = text_of(response.get("llmContent") if isinstance(response, dict) else response)
        if error and not output:
            output = text_of(error)
        mcp = payload.get("mcp_context")
        return tool_events(
            ctx,
            key=("tool", moment, tool),
            session_id=session,
            cwd=cwd,
            tool_name=tool,
            tool_input=payload.get("tool_input"),
            output=output,
            ts=ts,
            metadata={
                **meta,
                "mcp_server": mcp.get("server_name") if isinstance(mcp, dict) else None,
            },
            failed=bool(error),
        )
    if name == "PreCompress":
        trigger = str_field(payload, "trigger") or "auto"
        return one(
            "compress", "system", "note", f"Context compression ({trigger})", trigger=trigger
        )
    return []
