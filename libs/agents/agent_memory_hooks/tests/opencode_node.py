"""The real OpenCode plugin, installed as ``agent-memory install opencode`` writes it, run by node
with a stand-in for OpenCode (``fixtures/opencode_host.mjs``) calling its hooks."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .conftest import AGENT_MEMORY, FIXTURES

HOST = FIXTURES.parent / "opencode_host.mjs"


@dataclass
class HostRun:
    returncode: int
    stderr: str
    turns: list[dict[str, Any]]  # per prompt: parts, system, chat_ms, system_ms


def install_plugin(folder: Path, project_id: str | None = None) -> Path:
    """The plugin file as the installer writes it (the hook command filled in)."""
    from agent_memory_hooks.install.base import Target
    from agent_memory_hooks.install.opencode import plugin_text

    target = Target("user", folder, folder, [AGENT_MEMORY], {}, mcp=False, project_id=project_id)
    plugin = folder / "agent-memory.mjs"
    plugin.write_text(plugin_text(target))
    return plugin


def run_plugin(
    plugin: Path,
    env: dict[str, str],
    session: str,
    prompts: list[str],
    parent: str | None = None,
) -> HostRun:
    node = shutil.which("node")
    assert node, "node is needed to run the OpenCode plugin: `make node` installs Debian's nodejs"
    spec = json.dumps({"session": session, "parent": parent, "prompts": prompts})
    proc = subprocess.run(
        [node, str(HOST), str(plugin), spec], env=env, capture_output=True, text=True, timeout=60
    )
    turns = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return HostRun(proc.returncode, proc.stderr, turns)
