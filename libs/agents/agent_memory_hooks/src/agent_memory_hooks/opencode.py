"""OpenCode: the payloads our plugin (``assets/opencode-plugin.js``) pipes to this hook.

OpenCode has no command hooks; it loads JS plugins (opencode.ai/docs/plugins) whose hooks get
OpenCode's own objects. The plugin forwards them untouched, wrapped in a small envelope
``{event, session_id, directory, worktree, ts, ...}``, one short-lived ``agent-memory hook
opencode`` process per envelope (spawned and not awaited, so OpenCode never waits):

- ``chat.message`` (the plugin hook of that name): ``message`` (the UserMessage, with ``id``)
  and ``parts`` (its parts; the ``text`` parts are the prompt);
- ``tool.execute.after``: ``tool``, ``call_id``, ``args`` (remembered from
  ``tool.execute.before``), ``title``, ``output``, ``metadata``;
- ``assistant.message``: ``message`` (the AssistantMessage info, with ``id`` and ``time``) and
  ``text`` (its text parts joined), sent once the message is completed (``message.updated``
  with ``time.completed``) or at the latest on ``session.idle``;
- ``session.created`` / ``session.deleted`` (``info``: the Session), ``session.compacted``,
  ``session.error`` (``error``).
"""

from __future__ import annotations

from agent_memory_hooks.events import (
    HookContext,
    make_event,
    runtime_event,
    str_field,
    text_of,
    tool_events,
    ts_from,
)

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

    from agent_memory_hooks.events import Event, Payload

RUNTIME = "opencode"
STDOUT = ""


def synthetic_text(parts: Any) -> str:
    """The text parts OpenCode wrote itself into a message (``synthetic``: a file it read for
    an ``@`` mention, a mode switch's instruction): stored as a ``runtime`` event of their own,
    never as the person's prompt. The memories our plugin recalled into a message (marked
    ``metadata["agent-memory"] == "recall"``) are not stored at all: they are copies of what
    is stored, and would come back as new memories."""
    if not isinstance(parts, list):
        return ""
    texts = [
        p["text"]
        for p in parts
        if isinstance(p, dict)
        and p.get("type") == "text"
        and isinstance(p.get("text"), str)
        and p.get("synthetic")
        and not p.get("ignored")
        and not _recalled(p)
    ]
    return "\n\n".join(texts)


def _recalled(part: dict[str, Any]) -> bool:
    """A part our plugin added: the memories recalled for the prompt (opencode-plugin.js)."""
    metadata = part.get("metadata")
    return isinstance(metadata, dict) and metadata.get("agent-memory") == "recall"


def _parts_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    texts = [
        p["text"]
        for p in parts
        if isinstance(p, dict)
        and p.get("type") == "text"
        and isinstance(p.get("text"), str)
        and not p.get("synthetic")
        and not p.get("ignored")
    ]
    return "\n\n".join(texts)


def normalize(payload: Payload, ctx: HookContext) -> list[Event]:
    name = ctx.event_name or str_field(payload, "event") or ""
    session = str_field(payload, "session_id")
    if not session:
        return []
    cwd = str_field(payload, "directory", "worktree")
    ts = ts_from(payload.get("ts"), ctx.now_ms)
    meta: dict[str, Any] = {"hook_event": name}
    message = payload.get("message") if isinstance(payload.get("message"), dict) else {}
    assert isinstance(message, dict)
    message_id: str | None = str_field(payload, "message_id") or str_field(message, "id")

    if name == "chat.message":
        text = _parts_text(payload.get("parts"))
        wrote = synthetic_text(payload.get("parts"))
        added: list[Event] = []
        if wrote.strip():
            added.append(
                runtime_event(
                    ctx,
                    key=("synthetic", message_id) if message_id else ("synthetic", ctx.now_ms),
                    session_id=session,
                    text=wrote,
                    cwd=cwd,
                    ts=ts,
                    kind="synthetic",
                    metadata={**meta, "message_id": message_id},
                )
            )
        if not text.strip():
            return added
        key = ("prompt", message_id) if message_id else ("prompt", ctx.now_ms, text)
        model = message.get("model")
        return [
            *added,
            make_event(
                ctx,
                key=key,
                session_id=session,
                role="user",
                type="message",
                text=text,
                cwd=cwd,
                ts=ts,
                metadata={
                    **meta,
                    "message_id": message_id,
                    "agent": message.get("agent"),
                    "model": model,
                },
            ),
        ]
    if name == "assistant.message":
        reply = payload.get("text")
        if not isinstance(reply, str) or not reply.strip():
            return []
        key = ("reply", message_id) if message_id else ("reply", ctx.now_ms, reply)
        times = message.get("time")
        created = times.get("created") if isinstance(times, dict) else None
        return [
            make_event(
                ctx,
                key=key,
                session_id=session,
                role="assistant",
                type="message",
                text=reply,
                cwd=cwd,
                ts=ts_from(created, ctx.now_ms) if created else ts,
                metadata={
                    **meta,
                    "message_id": message_id,
                    "model": message.get("modelID"),
                    "provider": message.get("providerID"),
                },
            )
        ]
    if name == "tool.execute.after":
        tool = str_field(payload, "tool") or "tool"
        call_id = str_field(payload, "call_id")
        key = ("tool", call_id) if call_id else ("tool", payload.get("ts") or ctx.now_ms, tool)
        extra = payload.get("metadata")
        exit_code = extra.get("exit") if isinstance(extra, dict) else None
        return tool_events(
            ctx,
            key=key,
            session_id=session,
            cwd=cwd,
            tool_name=tool,
            tool_input=payload.get("args"),
            output=text_of(payload.get("output")),
            ts=ts,
            metadata={**meta, "call_id": call_id, "title": payload.get("title")},
            exit_code=exit_code if isinstance(exit_code, int) else None,
            failed=isinstance(exit_code, int) and exit_code != 0,
        )
    if name in ("session.created", "session.deleted"):
        info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
        assert isinstance(info, dict)
        started = name == "session.created"
        title = info.get("title")
        text = "OpenCode session " + ("started" if started else "deleted")
        return [
            make_event(
                ctx,
                key=(name,),
                session_id=session,
                role="system",
                type="session_start" if started else "session_end",
                text=text + (f": {title}" if isinstance(title, str) and title else ""),
                cwd=cwd,
                ts=ts,
                metadata={**meta, "title": title, "parent_session": info.get("parentID")},
            )
        ]
    if name == "session.compacted":
        return [
            make_event(
                ctx,
                key=("compacted", payload.get("ts") or ctx.now_ms),
                session_id=session,
                role="system",
                type="note",
                text="Context compaction",
                cwd=cwd,
                ts=ts,
                metadata=meta,
            )
        ]
    if name == "session.error":
        return [
            make_event(
                ctx,
                key=("error", payload.get("ts") or ctx.now_ms),
                session_id=session,
                role="system",
                type="note",
                text=f"OpenCode error: {text_of(payload.get('error'))}",
                cwd=cwd,
                ts=ts,
                metadata=meta,
            )
        ]
    return []
