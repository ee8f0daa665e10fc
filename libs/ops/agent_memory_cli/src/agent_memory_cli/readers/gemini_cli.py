"""Gemini CLI's stored sessions: ``~/.gemini/tmp/<project hash>/chats/session-*.json``.

One JSON document, the ``ConversationRecord`` of gemini-cli-core
``services/chatRecordingService.ts``: ``sessionId``, ``projectHash`` (SHA-256 of the project
root), ``startTime``, ``messages``: ``{id, timestamp, type: user|gemini|info|error|warning,
content, toolCalls?: [{id, name, args, result, status, timestamp, resultDisplay}]}``. The file
does not record the folder, so the project is ``AGENT_MEMORY_PROJECT_ID``, else the current
folder's when its hash matches, else ``gemini-<hash[:12]>``.

Ids derive from the session id and the message's (or tool call's) own id, so importing twice
stores each event once; a tool call that ended in ``error`` or ``cancelled`` is ``failed``. An
``info`` or ``warning`` message is the CLI's own: a ``runtime`` event (issue 52, point 3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_memory_cli.readers.common import (
    Events,
    ProjectOf,
    Source,
    context,
    files_below,
    json_document,
    mark_imported,
)
from agent_memory_hooks.events import (
    make_event,
    runtime_event,
    text_of,
    tool_call_event,
    tool_result_event,
    ts_from,
)
from agent_memory_hooks.project import git_root

RUNTIME = "gemini-cli"


def home(env: Mapping[str, str]) -> Path:
    return Path.home() / ".gemini" / "tmp"


def files(root: Path) -> list[Path]:
    """Every chat below ``root`` (``chats/*.json``; the folder also holds logs and settings)."""
    return files_below(root, "*.json", keep=lambda p: p.parent.name == "chats")


def events(path: Path, env: Mapping[str, str], project_of: ProjectOf) -> tuple[Events, int]:
    """One Gemini CLI chat as the events the hooks would post."""
    record = json_document(path)
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        return [], 1
    session = str(record.get("sessionId") or path.stem)
    project = _project(str(record.get("projectHash") or ""), env, project_of)
    ctx = context(RUNTIME, env, project, str(path.parent))
    found: Events = []
    skipped = 0
    for index, message in enumerate(record["messages"]):
        if not isinstance(message, dict):
            skipped += 1
            continue
        key_id = str(message.get("id") or f"index-{index}")
        ts = ts_from(message.get("timestamp"), ctx.now_ms)
        kind = message.get("type")
        text = text_of(message.get("content")).strip()
        if kind in ("user", "gemini") and text:
            found.append(
                make_event(
                    ctx,
                    key=("message", key_id),
                    session_id=session,
                    role="user" if kind == "user" else "assistant",
                    type="message",
                    text=text,
                    cwd=None,
                    ts=ts,
                    metadata={"message_id": key_id},
                )
            )
        elif kind in ("info", "warning") and text:
            # what the CLI itself wrote into the conversation (a command's output, a notice):
            # stored, typed so that no bullet, title or default search takes it for words
            found.append(
                runtime_event(
                    ctx,
                    key=("message", key_id),
                    session_id=session,
                    text=text,
                    cwd=None,
                    ts=ts,
                    kind=str(kind),
                    metadata={"message_id": key_id},
                )
            )
        elif kind == "error" and text:
            found.append(
                make_event(
                    ctx,
                    key=("message", key_id),
                    session_id=session,
                    role="system",
                    type="note",
                    text=text,
                    cwd=None,
                    ts=ts,
                    metadata={"failed": True},
                )
            )
        for position, call in enumerate(message.get("toolCalls") or []):
            if not isinstance(call, dict):
                continue
            call_id = str(call.get("id") or f"{key_id}-{position}")
            name = str(call.get("name") or "tool")
            args = call.get("args") if isinstance(call.get("args"), dict) else {}
            call_ts = ts_from(call.get("timestamp"), ts if isinstance(ts, int) else ctx.now_ms)
            call_ts = call_ts if call.get("timestamp") else ts
            status = str(call.get("status") or "")
            found += [
                tool_call_event(
                    ctx,
                    key=("tool", call_id),
                    session_id=session,
                    cwd=None,
                    tool_name=name,
                    tool_input=args,
                    ts=call_ts,
                ),
                tool_result_event(
                    ctx,
                    key=("tool", call_id),
                    session_id=session,
                    cwd=None,
                    tool_name=name,
                    tool_input=args,
                    output=_result(call),
                    ts=call_ts,
                    failed=status in ("error", "cancelled"),
                    interrupted=status == "cancelled",
                    metadata={"status": status} if status else None,
                ),
            ]
    return mark_imported(found, path), skipped


def _project(project_hash: str, env: Mapping[str, str], project_of: ProjectOf) -> str:
    if env.get("AGENT_MEMORY_PROJECT_ID", "").strip():
        return project_of(None)
    here = str(Path.cwd().resolve())
    for folder in (here, git_root(here)):
        if folder and hashlib.sha256(folder.encode()).hexdigest() == project_hash:
            return project_of(folder)
    return f"gemini-{project_hash[:12]}" if project_hash else project_of(None)


def _result(call: dict[str, Any]) -> str:
    """What a tool gave back: the text shown to the user, else the model's function response."""
    display = call.get("resultDisplay")
    if isinstance(display, str) and display.strip():
        return display
    parts = call.get("result")
    texts: list[str] = []
    for part in parts if isinstance(parts, list) else [parts]:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict) and isinstance(response.get("response"), dict):
            inner = response["response"]
            texts.append(text_of(inner.get("output", inner.get("error", inner))))
        elif part is not None:
            texts.append(text_of(part))
    return "\n".join(t for t in texts if t)


SOURCE = Source(home=home, files=files, events=events)
