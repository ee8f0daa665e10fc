"""GitHub Copilot CLI: a hook file of our own, ``agent-memory.json``.

Copilot loads every ``*.json`` in ``.github/hooks/`` (``--project``) and in ``~/.copilot/hooks/``
(``--user``; ``$COPILOT_HOME/hooks/`` when set), so no shared settings file is edited: install
writes that one file and uninstall removes it. Events are configured by their camelCase names,
whose payloads do not name the event, so each command passes ``--event``. With ``--user`` the MCP
server goes into ``~/.copilot/mcp-config.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_memory_hooks.copilot_cli import EVENTS
from agent_memory_hooks.install.base import (
    MANAGED_MARK,
    Plan,
    Target,
    dump_json,
    json_file_change,
    load_json,
    merge_mcp_server,
    owned_file,
    read_text,
)

RUNTIME = "copilot-cli"
HOOK_TIMEOUT_S = 10
FILE_NAME = "agent-memory.json"


def copilot_home(target: Target) -> Path:
    explicit = target.env.get("COPILOT_HOME", "").strip()
    return Path(explicit).expanduser() if explicit else target.home / ".copilot"


def hooks_file(target: Target) -> Path:
    if target.scope == "project":
        return target.project / ".github" / "hooks" / FILE_NAME
    return copilot_home(target) / "hooks" / FILE_NAME


def hook_config(target: Target) -> dict[str, Any]:
    return {
        "version": 1,
        "description": f"{MANAGED_MARK}: written by `agent-memory install copilot-cli`",
        "hooks": {
            event: [
                {
                    "type": "command",
                    "bash": target.hook_command(RUNTIME, "--event", event),
                    "timeoutSec": HOOK_TIMEOUT_S,
                }
            ]
            for event in EVENTS
        },
    }


def plan(target: Target, *, remove: bool = False) -> Plan:
    result = Plan(RUNTIME, target.scope)
    owned_file(result, hooks_file(target), None if remove else dump_json(hook_config(target)))
    if target.mcp and target.scope == "user":
        path = copilot_home(target) / "mcp-config.json"
        before = read_text(path)
        data = load_json(path, before)
        argv = target.mcp_argv()
        entry = {"type": "local", "command": argv[0], "args": argv[1:], "tools": ["*"]}
        merge_mcp_server(result, data, "mcpServers", entry, remove=remove, where=path)
        result.changes.append(json_file_change(path, before, data))
    return result
