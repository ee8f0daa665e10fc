"""Gemini CLI: hooks (and the MCP server) in ``settings.json``.

``--user``: ``~/.gemini/settings.json``; ``--project``: ``.gemini/settings.json`` (Gemini runs a
project's hooks only in a trusted folder). Hooks are on by default in current releases
(``hooksConfig.enabled`` defaults to true); the installer warns when a settings file turns them
off. Timeouts are in milliseconds.
"""

from __future__ import annotations

from typing import Any

from agent_memory_hooks.gemini_cli import EVENTS
from agent_memory_hooks.install.base import (
    Plan,
    Target,
    is_our_command,
    json_file_change,
    load_json,
    merge_event_hooks,
    merge_mcp_server,
    read_text,
    remove_event_hooks,
    set_or_drop,
)

RUNTIME = "gemini-cli"
HOOK_TIMEOUT_MS = 10_000


def wanted_hooks(command: str) -> dict[str, dict[str, Any]]:
    hook = {
        "name": "agent-memory",
        "type": "command",
        "command": command,
        "timeout": HOOK_TIMEOUT_MS,
    }
    return {event: {"hooks": [hook]} for event in EVENTS}


def _ours(hook: dict[str, Any]) -> bool:
    return is_our_command(hook.get("command"), RUNTIME)


def plan(target: Target, *, remove: bool = False) -> Plan:
    result = Plan(RUNTIME, target.scope)
    base = target.project if target.scope == "project" else target.home
    path = base / ".gemini" / "settings.json"
    before = read_text(path)
    settings = load_json(path, before)
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    assert isinstance(hooks, dict)
    if remove:
        remove_event_hooks(hooks, _ours)
    else:
        merge_event_hooks(hooks, wanted_hooks(target.hook_command(RUNTIME)), _ours)
    set_or_drop(settings, "hooks", hooks)

    if target.mcp:
        argv = target.mcp_argv()
        entry = {"command": argv[0], "args": argv[1:]}
        merge_mcp_server(result, settings, "mcpServers", entry, remove=remove, where=path)

    config = settings.get("hooksConfig")
    if not remove and isinstance(config, dict) and config.get("enabled") is False:
        result.notes.append(f"{path} sets hooksConfig.enabled = false: Gemini will not run hooks")
    result.changes.append(json_file_change(path, before, settings))
    return result
