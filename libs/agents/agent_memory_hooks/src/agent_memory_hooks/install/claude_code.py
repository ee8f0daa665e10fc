"""Claude Code: hooks in ``settings.json``, slash commands and the skill next to them.

- ``--user``: ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR`` when set), commands in
  ``~/.claude/commands/``, the skill in ``~/.claude/skills/agent-memory/``. The MCP server is
  registered per user by ``claude mcp add`` (it lives in ``~/.claude.json``, a state file we do
  not edit); the installer prints that command.
- ``--project``: ``.claude/settings.json``, ``.claude/commands/``, ``.claude/skills/`` and the
  MCP server in ``.mcp.json`` at the project root (all meant to be committed).

The same commands, skill, hooks and MCP entry also ship as a Claude Code plugin
(``assets/claude-plugin``), for users who prefer ``/plugin install``.
"""

from __future__ import annotations

import shlex
from importlib import resources
from pathlib import Path
from typing import Any

from agent_memory_hooks.claude_code import EVENTS
from agent_memory_hooks.install.base import (
    Plan,
    Target,
    is_our_command,
    json_file_change,
    load_json,
    merge_event_hooks,
    merge_mcp_server,
    owned_file,
    read_text,
    remove_event_hooks,
    set_or_drop,
)

RUNTIME = "claude-code"
HOOK_TIMEOUT_S = 10
TOOL_EVENTS = ("PostToolUse", "PostToolUseFailure")
PLUGIN_FILES = (
    "commands/memory-search.md",
    "commands/memory-status.md",
    "skills/agent-memory/SKILL.md",
)


def plugin_root() -> Path:
    return Path(str(resources.files("agent_memory_hooks.install").joinpath("assets/claude-plugin")))


def config_dir(target: Target) -> Path:
    if target.scope == "project":
        return target.project / ".claude"
    explicit = target.env.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(explicit).expanduser() if explicit else target.home / ".claude"


def wanted_hooks(command: str) -> dict[str, dict[str, Any]]:
    hook = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
    return {
        event: ({"matcher": "*", "hooks": [hook]} if event in TOOL_EVENTS else {"hooks": [hook]})
        for event in EVENTS
    }


def _ours(hook: dict[str, Any]) -> bool:
    return is_our_command(hook.get("command"), RUNTIME)


def plan(target: Target, *, remove: bool = False) -> Plan:
    result = Plan(RUNTIME, target.scope)
    folder = config_dir(target)
    settings_path = folder / "settings.json"
    before = read_text(settings_path)
    settings = load_json(settings_path, before)
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    assert isinstance(hooks, dict)
    if remove:
        remove_event_hooks(hooks, _ours)
    else:
        merge_event_hooks(hooks, wanted_hooks(target.hook_command(RUNTIME)), _ours)
    set_or_drop(settings, "hooks", hooks)
    result.changes.append(json_file_change(settings_path, before, settings))

    for name in PLUGIN_FILES:
        content = None if remove else (plugin_root() / name).read_text(encoding="utf-8")
        owned_file(result, folder / name, content)

    if target.mcp:
        if target.scope == "project":
            _plan_mcp_json(result, target, remove=remove)
        elif not remove:
            result.notes.append(
                "for the memory tools, register the MCP server once: "
                "claude mcp add --scope user agent-memory -- " + shlex.join(target.mcp_argv())
            )
    return result


def _plan_mcp_json(result: Plan, target: Target, *, remove: bool) -> None:
    path = target.project / ".mcp.json"
    before = read_text(path)
    data = load_json(path, before)
    argv = target.mcp_argv()
    entry = {"command": argv[0], "args": argv[1:]}
    merge_mcp_server(result, data, "mcpServers", entry, remove=remove, where=path)
    result.changes.append(json_file_change(path, before, data))
