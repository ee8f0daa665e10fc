"""OpenCode's stored sessions: ``$XDG_DATA_HOME/opencode/storage`` (default
``~/.local/share/opencode/storage``).

One JSON file per object, as ``packages/opencode/src/session/message-v2.ts`` and
``session/index.ts`` of sst/opencode define them: ``session/<projectID>/<sessionID>.json``
(``id``, ``directory``, ``time.created``), ``message/<sessionID>/<messageID>.json`` (``id``,
``role``, ``time.created``), ``part/<messageID>/<partID>.json`` (``type`` ``text`` with
``text`` / ``synthetic``, or ``tool`` with ``callID``, ``tool`` and ``state``: ``status``
``completed`` (``input``, ``output``, ``metadata.exit``, ``time``) or ``error`` (``error``)).
The ids are the plugin's (``agent_memory_hooks.opencode``: prompt / reply by message id, tool by
call id), so a session the plugin captured and then imported is stored once. Releases that keep
sessions in SQLite (``opencode.db``) instead are not read.
"""

from __future__ import annotations

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
from agent_memory_hooks.opencode import synthetic_text

RUNTIME = "opencode"


def home(env: Mapping[str, str]) -> Path:
    data = env.get("XDG_DATA_HOME", "").strip()
    return (Path(data) if data else Path.home() / ".local" / "share") / "opencode" / "storage"


def files(root: Path) -> list[Path]:
    """Session files: ``root`` itself, or ``session/*/*.json`` below the storage folder."""
    base = root / "session" if (root / "session").is_dir() else root
    return files_below(base, "*.json")


def events(path: Path, env: Mapping[str, str], project_of: ProjectOf) -> tuple[Events, int]:
    """One OpenCode session (its session file, messages and parts) as the plugin's events."""
    info = json_document(path)
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        return [], 1
    storage = path.parents[2]  # storage/session/<projectID>/<sessionID>.json
    session = info["id"]
    cwd = info.get("directory") if isinstance(info.get("directory"), str) else None
    folder = cwd or str(path.parent)
    ctx = context(RUNTIME, env, project_of(folder), folder)
    messages, skipped = _objects(storage / "message" / session)
    messages.sort(key=lambda m: (_time(m, "created") or 0, str(m.get("id"))))
    found: Events = []
    for message in messages:
        message_id = str(message.get("id") or "")
        parts, bad = _objects(storage / "part" / message_id)
        skipped += bad
        parts.sort(key=lambda p: str(p.get("id")))
        created = ts_from(_time(message, "created"), ctx.now_ms)
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
        wrote = synthetic_text(parts).strip()
        if wrote:  # what OpenCode wrote into the message itself: stored as such
            found.append(
                runtime_event(
                    ctx,
                    key=("synthetic", message_id),
                    session_id=session,
                    text=wrote,
                    cwd=cwd,
                    ts=created,
                    kind="synthetic",
                    metadata={"message_id": message_id},
                )
            )
        if text and role in ("user", "assistant"):
            key = ("prompt" if role == "user" else "reply", message_id)
            found.append(
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
            start = ts_from(_time(state, "start"), ctx.now_ms)
            end = ts_from(_time(state, "end", "start"), ctx.now_ms)
            meta = {"call_id": call_id, "title": state.get("title")}
            found += [
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
    return mark_imported(found, path), skipped


def _objects(folder: Path) -> tuple[list[dict[str, Any]], int]:
    """The JSON objects of one folder (a session's messages, a message's parts), and how many
    of its files were not."""
    found: list[dict[str, Any]] = []
    skipped = 0
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        item = json_document(path)
        if isinstance(item, dict):
            found.append(item)
        else:
            skipped += 1
    return found, skipped


def _time(item: dict[str, Any], *keys: str) -> Any:
    """The first of ``keys`` set in the item's ``time`` object."""
    times = item.get("time")
    if not isinstance(times, dict):
        return None
    return next((times[k] for k in keys if times.get(k) is not None), None)


SOURCE = Source(home=home, files=files, events=events)
