"""Readers of the sessions Codex CLI and Gemini CLI keep on disk, for ``agent-memory import``.

Each reader turns one stored session into the events the hooks post (``agent_memory_hooks``:
``make_event``, ``tool_call_event``, ``tool_result_event``, so large tool payloads are shaped by
``shape.py``), with the session's own timestamps and ids derived from the session id and the
entry's own id (or its line), so importing twice stores each event once. Failed tool calls are
recorded with ``failed`` and their exit status.

**Codex CLI** (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``): one JSON object
a line, ``{"timestamp", "type", "payload"}``, where ``type`` is ``session_meta`` (``id``,
``cwd``...), ``turn_context`` (``cwd``), ``event_msg`` (UI events, skipped: they repeat the
items) or ``response_item``, whose payload is a ``ResponseItem`` of codex-rs
``protocol/src/models.rs``: ``message`` (``role``, ``content`` of ``input_text`` /
``output_text``), ``function_call`` (``name``, ``arguments`` as a JSON string, ``call_id``),
``function_call_output`` (``call_id``, ``output``: a string, or content items),
``custom_tool_call`` / ``custom_tool_call_output`` (``apply_patch``: ``input`` is the patch),
``local_shell_call`` (``action.command``), ``reasoning`` (skipped). Releases before the
wrapper wrote the meta object (``id``, ``timestamp``) as the first line and bare items after it,
without times: those items take the session's start time plus their line number in ms.

**Gemini CLI** (``~/.gemini/tmp/<project hash>/chats/session-*.json``): one JSON document, the
``ConversationRecord`` of gemini-cli-core ``services/chatRecordingService.ts``: ``sessionId``,
``projectHash`` (SHA-256 of the project root), ``startTime``, ``messages``: ``{id, timestamp,
type: user|gemini|info|error|warning, content, toolCalls?: [{id, name, args, result, status,
timestamp, resultDisplay}]}``. The file does not record the folder, so the project is
``AGENT_MEMORY_PROJECT_ID``, else the current folder's when its hash matches, else
``gemini-<hash[:12]>``.

**OpenCode** (``$XDG_DATA_HOME/opencode/storage``, default ``~/.local/share/opencode/storage``):
one JSON file per object, as ``packages/opencode/src/session/message-v2.ts`` and
``session/index.ts`` of sst/opencode define them: ``session/<projectID>/<sessionID>.json``
(``id``, ``directory``, ``time.created``), ``message/<sessionID>/<messageID>.json`` (``id``,
``role``, ``time.created``), ``part/<messageID>/<partID>.json`` (``type`` ``text`` with
``text`` / ``synthetic``, or ``tool`` with ``callID``, ``tool`` and ``state``: ``status``
``completed`` (``input``, ``output``, ``metadata.exit``, ``time``) or ``error`` (``error``)).
The ids are the hook's (``opencode.py``: prompt / reply by message id, tool by call id), so a
session the plugin captured and then imported is stored once. Releases that keep sessions in
SQLite (``opencode.db``) instead are not read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_memory_hooks import shape
from agent_memory_hooks.events import (
    HookContext,
    make_event,
    now_ms,
    text_of,
    tool_call_event,
    tool_result_event,
    ts_from,
)
from agent_memory_hooks.project import git_root

Events = list[dict[str, Any]]
ProjectOf = Callable[[str | None], str]

CODEX = "codex"
GEMINI = "gemini-cli"
# What Codex puts in a user message that the user did not type.
_CODEX_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<INSTRUCTIONS>")
_CODEX_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "reasoning",
        "web_search_call",
    }
)


def codex_home(env: Mapping[str, str]) -> Path:
    explicit = env.get("CODEX_HOME", "").strip()
    return (Path(explicit).expanduser() if explicit else Path.home() / ".codex") / "sessions"


def gemini_home(env: Mapping[str, str]) -> Path:
    return Path.home() / ".gemini" / "tmp"


def codex_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())


def gemini_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*.json") if p.is_file() and p.parent.name == "chats")


def _context(runtime: str, env: Mapping[str, str], project_of: ProjectOf, cwd: str) -> HookContext:
    return HookContext(
        runtime=runtime,
        now_ms=now_ms(),  # only for an entry without a time
        project_of=project_of,
        user_id=env.get("AGENT_MEMORY_USER_ID", "").strip() or None,
        cwd=cwd,
    )


def _lines(path: Path) -> tuple[list[dict[str, Any]], int]:
    items: list[dict[str, Any]] = []
    skipped = 0
    with path.open("rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            try:
                item = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                skipped += 1
                continue
            if isinstance(item, dict):
                items.append(item)
            else:
                skipped += 1
    return items, skipped


def _epoch_ms(ts: str | int) -> int:
    if isinstance(ts, int):
        return ts
    return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text") for c in content if isinstance(c, dict)]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return ""


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return {"input": raw}
    return raw


def _codex_tool_input(name: str, args: Any) -> Any:
    """Codex's shell tools take ``command`` as argv (``["bash", "-lc", "..."]``): the shaper
    wants the command line."""
    if isinstance(args, dict) and isinstance(args.get("command"), list):
        argv = [str(a) for a in args["command"]]
        line = argv[-1] if len(argv) >= 3 and argv[1] in ("-lc", "-c") else " ".join(argv)
        return {**args, "command": line}
    return args


def _codex_output(output: Any) -> tuple[str, int | None, bool]:
    """A tool output's text, exit status and whether it failed. Shell outputs are a JSON string
    ``{"output", "metadata": {"exit_code"}}`` in some releases and ``Exit code: N`` text in
    others; a failed function call may be ``{"content", "success": false}``."""
    if isinstance(output, dict):
        text = text_of(output.get("content", output))
        return text, None, output.get("success") is False
    if isinstance(output, list):
        return _content_text(output), None, False
    text = output if isinstance(output, str) else ""
    exit_code: int | None = None
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            meta = parsed.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            exit_code = code if isinstance(code, int) else None
            text = parsed["output"]
    if exit_code is None:
        exit_code = shape.exit_code_in(text)
    return text, exit_code, bool(exit_code)


def codex_events(path: Path, env: Mapping[str, str], project_of: ProjectOf) -> tuple[Events, int]:
    """One Codex rollout as the events the hooks would post."""
    items, skipped = _lines(path)
    session = path.stem
    cwd: str | None = None
    start: str | int | None = None
    for item in items:
        payload = item.get("payload")
        meta = payload if item.get("type") == "session_meta" else None
        if meta is None and "payload" not in item and "instructions" in item:
            meta = item  # the older first line
        if isinstance(meta, dict):
            session = str(meta.get("id") or session)
            cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else cwd
            start = meta.get("timestamp") or item.get("timestamp")
            break
    ctx = _context(CODEX, env, project_of, cwd or str(path.parent))
    start_ms = _epoch_ms(ts_from(start, ctx.now_ms))
    pending: dict[str, tuple[str, Any, str | int]] = {}
    events: Events = []
    for line, item in enumerate(items, start=1):
        if item.get("type") == "turn_context" and isinstance(item.get("payload"), dict):
            cwd = item["payload"].get("cwd") or cwd
        if item.get("type") == "response_item":
            entry = item.get("payload")
            ts = ts_from(item.get("timestamp"), ctx.now_ms)
        elif "payload" not in item and item.get("type") in _CODEX_ITEM_TYPES:
            entry = item  # older rollouts: bare items, no times
            ts = start_ms + line
        else:
            continue
        if not isinstance(entry, dict):
            continue
        events += _codex_item(ctx, session, cwd, line, ts, entry, pending)
    for call_id, (name, args, ts) in pending.items():  # asked, never answered (interrupted)
        events.append(
            tool_call_event(
                ctx,
                key=("call", call_id),
                session_id=session,
                cwd=cwd,
                tool_name=name,
                tool_input=args,
                ts=ts,
            )
        )
    for event in events:
        event["metadata"]["imported_from"] = path.name
    return events, skipped


def _codex_item(
    ctx: HookContext,
    session: str,
    cwd: str | None,
    line: int,
    ts: str | int,
    entry: dict[str, Any],
    pending: dict[str, tuple[str, Any, str | int]],
) -> Events:
    kind = entry.get("type")
    if kind == "message":
        role = entry.get("role")
        text = _content_text(entry.get("content")).strip()
        if role not in ("user", "assistant") or not text:
            return []
        if role == "user" and text.startswith(_CODEX_CONTEXT):
            return []
        return [
            make_event(
                ctx,
                key=("line", line),
                session_id=session,
                role=str(role),
                type="message",
                text=text,
                cwd=cwd,
                ts=ts,
                metadata={"line": line},
            )
        ]
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call_id = str(entry.get("call_id") or entry.get("id") or f"line-{line}")
        if kind == "local_shell_call":
            action = entry.get("action")
            name, args = "shell", action if isinstance(action, dict) else {}
        elif kind == "custom_tool_call":
            name, args = str(entry.get("name") or "tool"), {"input": entry.get("input")}
        else:
            name, args = str(entry.get("name") or "tool"), _arguments(entry.get("arguments"))
        pending[call_id] = (name, _codex_tool_input(name, args), ts)
        return []
    if kind in ("function_call_output", "custom_tool_call_output"):
        call_id = str(entry.get("call_id") or f"line-{line}")
        name, args, call_ts = pending.pop(call_id, ("tool", {}, ts))
        text, exit_code, failed = _codex_output(entry.get("output"))
        return [
            tool_call_event(
                ctx,
                key=("call", call_id),
                session_id=session,
                cwd=cwd,
                tool_name=name,
                tool_input=args,
                ts=call_ts,
            ),
            tool_result_event(
                ctx,
                key=("call", call_id),
                session_id=session,
                cwd=cwd,
                tool_name=name,
                tool_input=args,
                output=text,
                ts=ts,
                failed=failed,
                exit_code=exit_code,
            ),
        ]
    return []


def _gemini_project(project_hash: str, env: Mapping[str, str], project_of: ProjectOf) -> str:
    if env.get("AGENT_MEMORY_PROJECT_ID", "").strip():
        return project_of(None)
    here = str(Path.cwd().resolve())
    for folder in (here, git_root(here)):
        if folder and hashlib.sha256(folder.encode()).hexdigest() == project_hash:
            return project_of(folder)
    return f"gemini-{project_hash[:12]}" if project_hash else project_of(None)


def _gemini_result(call: dict[str, Any]) -> str:
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


def gemini_events(path: Path, env: Mapping[str, str], project_of: ProjectOf) -> tuple[Events, int]:
    """One Gemini CLI chat as the events the hooks would post."""
    try:
        record = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return [], 1
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        return [], 1
    session = str(record.get("sessionId") or path.stem)
    project = _gemini_project(str(record.get("projectHash") or ""), env, project_of)
    ctx = _context(GEMINI, env, lambda _cwd: project, str(path.parent))
    events: Events = []
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
            events.append(
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
        elif kind == "error" and text:
            events.append(
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
            events += [
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
                    output=_gemini_result(call),
                    ts=call_ts,
                    failed=status in ("error", "cancelled"),
                    interrupted=status == "cancelled",
                    metadata={"status": status} if status else None,
                ),
            ]
    for event in events:
        event["metadata"]["imported_from"] = path.name
    return events, skipped


OPENCODE = "opencode"


def opencode_home(env: Mapping[str, str]) -> Path:
    data = env.get("XDG_DATA_HOME", "").strip()
    return (Path(data) if data else Path.home() / ".local" / "share") / "opencode" / "storage"


def opencode_files(root: Path) -> list[Path]:
    """Session files: ``root`` itself, or ``session/*/*.json`` below the storage folder."""
    if root.is_file():
        return [root]
    base = root / "session" if (root / "session").is_dir() else root
    return sorted(p for p in base.rglob("*.json") if p.is_file())


def _json_objects(folder: Path) -> tuple[list[dict[str, Any]], int]:
    found: list[dict[str, Any]] = []
    skipped = 0
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            item = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        except ValueError:
            skipped += 1
            continue
        if isinstance(item, dict):
            found.append(item)
        else:
            skipped += 1
    return found, skipped


def _created(item: dict[str, Any], *keys: str) -> Any:
    times = item.get("time")
    if not isinstance(times, dict):
        return None
    return next((times[k] for k in keys if times.get(k) is not None), None)


def opencode_events(
    path: Path, env: Mapping[str, str], project_of: ProjectOf
) -> tuple[Events, int]:
    """One OpenCode session (its session file, messages and parts) as the plugin's events."""
    try:
        info = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return [], 1
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        return [], 1
    storage = path.parents[2]  # storage/session/<projectID>/<sessionID>.json
    session = info["id"]
    cwd = info.get("directory") if isinstance(info.get("directory"), str) else None
    ctx = _context(OPENCODE, env, project_of, cwd or str(path.parent))
    messages, skipped = _json_objects(storage / "message" / session)
    messages.sort(key=lambda m: (_created(m, "created") or 0, str(m.get("id"))))
    events: Events = []
    for message in messages:
        message_id = str(message.get("id") or "")
        parts, bad = _json_objects(storage / "part" / message_id)
        skipped += bad
        parts.sort(key=lambda p: str(p.get("id")))
        created = ts_from(_created(message, "created"), ctx.now_ms)
        texts = [
            p["text"]
            for p in parts
            if p.get("type") == "text"
            and isinstance(p.get("text"), str)
            and not p.get("synthetic")
            and not p.get("ignored")
        ]
        text = "\n\n".join(texts).strip()
        role = message.get("role")
        if text and role in ("user", "assistant"):
            key = ("prompt" if role == "user" else "reply", message_id)
            events.append(
                make_event(
                    ctx,
                    key=key,
                    session_id=session,
                    role=str(role),
                    type="message",
                    text=text,
                    cwd=cwd,
                    ts=created,
                    metadata={"message_id": message_id},
                )
            )
        for part in parts:
            state = part.get("state")
            if part.get("type") != "tool" or not isinstance(state, dict):
                continue
            status = state.get("status")
            if status not in ("completed", "error"):
                continue  # never finished: nothing happened yet
            call_id = str(part.get("callID") or part.get("id"))
            tool = str(part.get("tool") or "tool")
            args = state.get("input") if isinstance(state.get("input"), dict) else {}
            meta = state.get("metadata")
            extra: dict[str, Any] = meta if isinstance(meta, dict) else {}
            exit_code = extra.get("exit") if isinstance(extra.get("exit"), int) else None
            failed = status == "error" or bool(exit_code)
            output = state.get("error") if status == "error" else state.get("output")
            start = ts_from(_created(state, "start"), ctx.now_ms)
            end = ts_from(_created(state, "end", "start"), ctx.now_ms)
            meta = {"call_id": call_id, "title": state.get("title")}
            events += [
                tool_call_event(
                    ctx,
                    key=("tool", call_id),
                    session_id=session,
                    cwd=cwd,
                    tool_name=tool,
                    tool_input=args,
                    ts=start,
                    metadata=meta,
                ),
                tool_result_event(
                    ctx,
                    key=("tool", call_id),
                    session_id=session,
                    cwd=cwd,
                    tool_name=tool,
                    tool_input=args,
                    output=text_of(output),
                    ts=end,
                    metadata=meta,
                    failed=failed,
                    exit_code=exit_code,
                ),
            ]
    for event in events:
        event["metadata"]["imported_from"] = path.name
    return events, skipped
