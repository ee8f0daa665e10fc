"""Codex CLI's stored sessions: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``
(``CODEX_HOME`` defaults to ``~/.codex``).

One JSON object a line, ``{"timestamp", "type", "payload"}``, where ``type`` is ``session_meta``
(``id``, ``cwd``...), ``turn_context`` (``cwd``), ``event_msg`` (UI events, skipped: they repeat
the items) or ``response_item``, whose payload is a ``ResponseItem`` of codex-rs
``protocol/src/models.rs``: ``message`` (``role``, ``content`` of ``input_text`` /
``output_text``), ``function_call`` (``name``, ``arguments`` as a JSON string, ``call_id``),
``function_call_output`` (``call_id``, ``output``: a string, or content items),
``custom_tool_call`` / ``custom_tool_call_output`` (``apply_patch``: ``input`` is the patch),
``local_shell_call`` (``action.command``), ``reasoning`` (skipped). A user message Codex wrote
itself (its environment, AGENTS.md: ``agent_memory_hooks.codex.runtime_kind``) is a ``runtime``
event. The session's project comes
from its ``session_meta``: ``cwd``, and ``git.repository_url`` / ``git.branch`` where that
folder does not exist on this machine. Releases before the
wrapper wrote the meta object (``id``, ``timestamp``) as the first line and bare items after it,
without times: those items take the session's start time plus their line number in ms.

Ids derive from the session id and the item's line (messages) or its ``call_id`` (tools), so
importing twice stores each event once; a failed tool call is recorded with ``failed`` and its
exit status, and large payloads are shaped by the hooks' ``shape.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_memory_cli.readers.common import (
    Events,
    ProjectOf,
    Source,
    context,
    files_below,
    json_lines,
    mark_imported,
)
from agent_memory_hooks import shape
from agent_memory_hooks.codex import runtime_kind
from agent_memory_hooks.events import (
    RUNTIME_TYPE,
    HookContext,
    make_event,
    text_of,
    tool_call_event,
    tool_result_event,
    ts_from,
)

RUNTIME = "codex"
_ITEM_TYPES = frozenset(
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
_GIT_FIELDS = ("repository_url", "branch")  # of session_meta.git: the remote and the branch
Pending = dict[str, tuple[str, Any, str | int]]
"""Tool calls asked and not answered yet: call id -> (tool, its input, when asked)."""


def home(env: Mapping[str, str]) -> Path:
    explicit = env.get("CODEX_HOME", "").strip()
    return (Path(explicit).expanduser() if explicit else Path.home() / ".codex") / "sessions"


def files(root: Path) -> list[Path]:
    """Every rollout below ``root``."""
    return files_below(root, "*.jsonl")


def events(path: Path, env: Mapping[str, str], project_of: ProjectOf) -> tuple[Events, int]:
    """One Codex rollout as the events the hooks would post."""
    lines, skipped = json_lines(path)
    items = [item for item, _ in lines]
    session = path.stem
    cwd: str | None = None
    git: dict[str, Any] = {}
    start: str | int | None = None
    for item in items:
        payload = item.get("payload")
        meta = payload if item.get("type") == "session_meta" else None
        if meta is None and "payload" not in item and "instructions" in item:
            meta = item  # the older first line
        if isinstance(meta, dict):
            session = str(meta.get("id") or session)
            cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else cwd
            git = meta["git"] if isinstance(meta.get("git"), dict) else {}
            start = meta.get("timestamp") or item.get("timestamp")
            break
    folder = cwd or str(path.parent)
    remote, branch = (git.get(k) if isinstance(git.get(k), str) else None for k in _GIT_FIELDS)
    ctx = context(RUNTIME, env, project_of(folder, remote, branch), folder)
    start_ms = _epoch_ms(ts_from(start, ctx.now_ms))
    pending: Pending = {}
    found: Events = []
    for line, item in enumerate(items, start=1):
        if item.get("type") == "turn_context" and isinstance(item.get("payload"), dict):
            cwd = item["payload"].get("cwd") or cwd
        if item.get("type") == "response_item":
            entry = item.get("payload")
            ts = ts_from(item.get("timestamp"), ctx.now_ms)
        elif "payload" not in item and item.get("type") in _ITEM_TYPES:
            entry = item  # older rollouts: bare items, no times
            ts = start_ms + line
        else:
            continue
        if not isinstance(entry, dict):
            continue
        found += _item(ctx, session, cwd, line, ts, entry, pending)
    for call_id, (name, args, ts) in pending.items():  # asked, never answered (interrupted)
        found.append(
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
    return mark_imported(found, path), skipped


def _item(
    ctx: HookContext,
    session: str,
    cwd: str | None,
    line: int,
    ts: str | int,
    entry: dict[str, Any],
    pending: Pending,
) -> Events:
    """One ``ResponseItem``: a message is an event now, a call waits in ``pending`` for its
    output (a call and its result are posted together, as the hook posts them)."""
    kind = entry.get("type")
    if kind == "message":
        role = entry.get("role")
        text = _content_text(entry.get("content")).strip()
        if role not in ("user", "assistant") or not text:
            return []
        # what Codex wrote into the user's turn (its environment, AGENTS.md): stored as such
        wrote = runtime_kind(text) if role == "user" else None
        return [
            make_event(
                ctx,
                key=("line", line),
                session_id=session,
                role=str(role) if wrote is None else "system",
                type="message" if wrote is None else RUNTIME_TYPE,
                text=text,
                cwd=cwd,
                ts=ts,
                metadata={"line": line, "runtime_kind": wrote},
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
        pending[call_id] = (name, _tool_input(name, args), ts)
        return []
    if kind in ("function_call_output", "custom_tool_call_output"):
        call_id = str(entry.get("call_id") or f"line-{line}")
        name, args, call_ts = pending.pop(call_id, ("tool", {}, ts))
        text, exit_code, failed = _output(entry.get("output"))
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


def _tool_input(name: str, args: Any) -> Any:
    """Codex's shell tools take ``command`` as argv (``["bash", "-lc", "..."]``): the shaper
    wants the command line."""
    if isinstance(args, dict) and isinstance(args.get("command"), list):
        argv = [str(a) for a in args["command"]]
        line = argv[-1] if len(argv) >= 3 and argv[1] in ("-lc", "-c") else " ".join(argv)
        return {**args, "command": line}
    return args


def _output(output: Any) -> tuple[str, int | None, bool]:
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


SOURCE = Source(home=home, files=files, events=events)
