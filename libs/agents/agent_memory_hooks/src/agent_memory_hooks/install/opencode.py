"""OpenCode: a plugin file of our own, ``agent-memory.js``, plus the MCP server in
``opencode.json``.

OpenCode loads every plugin file in ``.opencode/plugins/`` (``--project``) and in
``~/.config/opencode/plugins/`` (``--user``; ``$XDG_CONFIG_HOME`` is honoured). The plugin
(``hooks/assets/opencode-plugin.js``) is written with the hook command filled in (the command it
runs to record, and to ask for the brief and each prompt's recall: ``recall.py``); uninstall
removes it. The MCP server goes under ``"mcp"`` in ``opencode.json`` of the same scope, unless
that file is JSON with comments, which we would not rewrite (a note says what to add).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from agent_memory_hooks.install.base import (
    MANAGED_MARK,
    InstallError,
    Plan,
    Target,
    json_file_change,
    load_json,
    merge_mcp_server,
    owned_file,
    read_text,
)

RUNTIME = "opencode"
FILE_NAME = "agent-memory.js"
DEFAULT_COMMAND_LINE = 'const HOOK_COMMAND = ["agent-memory", "hook", "opencode"]'


def config_dir(target: Target) -> Path:
    if target.scope == "project":
        return target.project / ".opencode"
    xdg = target.env.get("XDG_CONFIG_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else target.home / ".config") / "opencode"


def plugin_source() -> str:
    asset = resources.files("agent_memory_hooks").joinpath("assets/opencode-plugin.js")
    return asset.read_text(encoding="utf-8")


def plugin_text(target: Target) -> str:
    source = plugin_source()
    if DEFAULT_COMMAND_LINE not in source:
        raise InstallError("the bundled OpenCode plugin lacks its HOOK_COMMAND line")
    command = json.dumps(target.hook_argv_for(RUNTIME))
    text = source.replace(DEFAULT_COMMAND_LINE, f"const HOOK_COMMAND = {command}")
    return f"// {MANAGED_MARK}\n" + text


def plan(target: Target, *, remove: bool = False) -> Plan:
    result = Plan(RUNTIME, target.scope)
    folder = config_dir(target)
    owned_file(result, folder / "plugins" / FILE_NAME, None if remove else plugin_text(target))
    if target.mcp:
        config = (target.project if target.scope == "project" else folder) / "opencode.json"
        before = read_text(config)
        argv = target.mcp_argv()
        entry = {"type": "local", "command": argv, "enabled": True}
        try:
            data = load_json(config, before)
        except InstallError:
            if not remove:
                result.notes.append(
                    f'{config} is not plain JSON; add under "mcp": '
                    f'"agent-memory": {json.dumps(entry)}'
                )
            return result
        merge_mcp_server(
            result, data, "mcp", entry, remove=remove, where=config, argv_field="command"
        )
        result.changes.append(json_file_change(config, before, data))
    return result
