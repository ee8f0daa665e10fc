"""Codex CLI: ``notify`` (capture) and ``[mcp_servers.agent-memory]`` (recall) in config.toml.

``--user``: ``$CODEX_HOME/config.toml`` (default ``~/.codex``); ``--project``:
``.codex/config.toml`` (read by Codex for trusted projects only). There is no TOML writer in the
standard library, and rewriting a user's TOML would lose their comments and layout, so we add
two marked blocks of text instead: the ``notify`` key at the very top (a top-level key must come
before the first table) and the MCP table at the end. Uninstall removes the blocks. Codex has a
single ``notify`` program; when one is already set we stop rather than replace it.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from agent_memory_hooks.install.base import Change, InstallError, Plan, Target, read_text

RUNTIME = "codex"
TOP_BEGIN = "# >>> agent-memory notify (managed by `agent-memory install codex`) >>>"
TOP_END = "# <<< agent-memory notify <<<"
MCP_BEGIN = "# >>> agent-memory mcp (managed by `agent-memory install codex`) >>>"
MCP_END = "# <<< agent-memory mcp <<<"


def config_path(target: Target) -> Path:
    if target.scope == "project":
        return target.project / ".codex" / "config.toml"
    explicit = target.env.get("CODEX_HOME", "").strip()
    return (Path(explicit).expanduser() if explicit else target.home / ".codex") / "config.toml"


def _toml_array(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"  # JSON strings are TOML strings


def strip_blocks(text: str) -> str:
    """``text`` without our blocks (and the blank line each added after/before itself)."""
    for begin, end in ((TOP_BEGIN, TOP_END), (MCP_BEGIN, MCP_END)):
        start = text.find(begin)
        if start < 0:
            continue
        stop = text.find(end, start)
        if stop < 0:
            raise InstallError(f"found '{begin}' without its end marker; fix the file by hand")
        stop += len(end)
        if text[stop : stop + 1] == "\n":
            stop += 1
        if begin == TOP_BEGIN and text[stop : stop + 1] == "\n":
            stop += 1  # the separator install put after the top block
        if begin == MCP_BEGIN and start >= 2 and text[start - 2 : start] == "\n\n":
            start -= 1  # the separator install put before the end block
        text = text[:start] + text[stop:]
    return text


def _parse(path: Path, text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(f"{path} is not valid TOML ({exc}); nothing was changed") from None


def plan(target: Target, *, remove: bool = False) -> Plan:
    result = Plan(RUNTIME, target.scope)
    path = config_path(target)
    before = read_text(path)
    original = before or ""
    _parse(path, original)
    base = strip_blocks(original)
    user = _parse(path, base)
    if remove:
        after = base if base.strip() else None
        result.changes.append(Change(path, before, after, backup=after is not None))
        return result

    notify = target.hook_argv_for(RUNTIME)
    if "notify" in user:
        raise InstallError(
            f"{path} already sets notify = {user['notify']!r}; Codex runs a single notify "
            "program. Remove it (or make your program also run "
            f"`{' '.join(notify)} <json>`) and install again"
        )
    text = f"{TOP_BEGIN}\nnotify = {_toml_array(notify)}\n{TOP_END}\n"
    text += "\n" + base if base else ""
    servers = user.get("mcp_servers")
    if target.mcp:
        if isinstance(servers, dict) and "agent-memory" in servers:
            result.notes.append(f"{path} already defines [mcp_servers.agent-memory]; left as is")
        else:
            argv = target.mcp_argv()
            block = (
                f"{MCP_BEGIN}\n[mcp_servers.agent-memory]\ncommand = {json.dumps(argv[0])}\n"
                f"args = {_toml_array(argv[1:])}\n{MCP_END}\n"
            )
            if text and not text.endswith("\n"):
                text += "\n"
            text += "\n" + block
    parsed = _parse(path, text)
    if parsed.get("notify") != notify:
        raise InstallError(f"could not place notify in {path}; nothing was changed")
    result.changes.append(Change(path, before, original if text == original else text))
    return result
