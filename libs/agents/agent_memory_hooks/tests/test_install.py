"""``agent-memory install|uninstall <runtime>`` on a throw-away HOME and project folder.

Every runtime, both scopes, starting from settings a user already has: ``--dry-run`` writes
nothing; install merges our entries, keeps a backup of what it rewrote and prints the diff; a
second install changes nothing at all; uninstall gives back the user's files byte for byte (the
backups aside); a second uninstall changes nothing. Then the installed commands are run the way
each runtime would run them, against the real stack, and the events arrive.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agent_memory_hooks.install.claude_code import plugin_root, wanted_hooks
from tests.stack import Stack

from .conftest import AGENT_MEMORY, load_fixture, wait_for_events

RUNTIMES = ("claude-code", "gemini-cli", "copilot-cli", "opencode", "codex")
BACKUP = ".agent-memory-backup-"

USER_FILES: dict[str, dict[str, str]] = {
    # what a user may already have, per runtime, relative to HOME
    "claude-code": {
        ".claude/settings.json": '{"model": "opus",\n "hooks": {"Stop": [{"hooks": '
        '[{"type": "command", "command": "notify-send done"}]}]}}\n',
    },
    "gemini-cli": {
        ".gemini/settings.json": json.dumps(
            {
                "theme": "GitHub",
                "hooks": {
                    "BeforeTool": [
                        {
                            "matcher": "run_shell_command",
                            "hooks": [{"type": "command", "command": "./guard.sh"}],
                        }
                    ]
                },
            },
            indent=4,
        ),
    },
    "copilot-cli": {
        ".copilot/hooks/lint.json": '{"version": 1, "hooks": {"postToolUse": '
        '[{"type": "command", "bash": "make lint"}]}}\n',
        ".copilot/mcp-config.json": '{"mcpServers": {"github": {"type": "http", '
        '"url": "https://api.githubcopilot.com/mcp/"}}}\n',
    },
    "opencode": {
        ".config/opencode/opencode.json": '{\n  "$schema": "https://opencode.ai/config.json",\n'
        '  "model": "anthropic/claude-sonnet-4-5"\n}\n',
    },
    "codex": {
        ".codex/config.toml": '# my Codex settings\nmodel = "gpt-5.1"\napproval_policy = '
        '"on-request"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n',
    },
}
PROJECT_FILES: dict[str, dict[str, str]] = {
    # relative to the project folder
    "claude-code": {".claude/settings.json": '{"permissions": {"allow": ["Bash(make test)"]}}\n'},
    "gemini-cli": {},
    "copilot-cli": {".github/workflows/ci.yml": "on: push\n"},
    "opencode": {"opencode.json": '{"model": "openai/gpt-5.1"}\n'},
    "codex": {},
}


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under ``roots`` (backups left out), by path."""
    return {
        str(p): p.read_bytes()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and BACKUP not in p.name
    }


def backups(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob(f"*{BACKUP}*"))


def install(
    home: Path, project: Path, *args: str, command: str = "agent-memory"
) -> subprocess.CompletedProcess[str]:
    argv = [AGENT_MEMORY, *args]
    if args[0] == "install":
        argv += ["--command", command]
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "work" / "shop-api"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    home.mkdir()
    return home, project


def _seed(home: Path, project: Path, runtime: str) -> None:
    for rel, text in USER_FILES[runtime].items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    for rel, text in PROJECT_FILES[runtime].items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)


@pytest.mark.parametrize("scope", ["--user", "--project"])
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_install_is_idempotent_and_uninstall_restores(
    dirs: tuple[Path, Path], runtime: str, scope: str
) -> None:
    home, project = dirs
    _seed(home, project, runtime)
    original = snapshot(home, project)

    dry = install(home, project / "src", "install", runtime, scope, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "+++ " in dry.stdout and "nothing written" in dry.stdout
    assert snapshot(home, project) == original and backups(home, project) == []

    first = install(home, project / "src", "install", runtime, scope)
    assert first.returncode == 0, first.stderr
    assert "file(s) changed" in first.stdout
    installed = snapshot(home, project)
    assert installed != original
    _check_installed(runtime, scope, home, project, installed)
    # every file of the user's that install rewrote has a backup holding the old text
    rewritten = [p for p in original if installed.get(p) != original[p]]
    saved = backups(home, project)
    assert len(saved) == len(rewritten)
    for path in rewritten:
        (backup,) = [b for b in saved if str(b).startswith(path + BACKUP)]
        assert backup.read_bytes() == original[path]

    second = install(home, project / "src", "install", runtime, scope)
    assert second.returncode == 0, second.stderr
    assert "nothing to change" in second.stdout
    assert snapshot(home, project) == installed and backups(home, project) == saved

    removed = install(home, project / "src", "uninstall", runtime, scope)
    assert removed.returncode == 0, removed.stderr
    assert snapshot(home, project) == original
    again = install(home, project / "src", "uninstall", runtime, scope)
    assert "nothing to change" in again.stdout
    assert snapshot(home, project) == original


def _check_installed(
    runtime: str, scope: str, home: Path, project: Path, files: dict[str, bytes]
) -> None:
    base = home if scope == "--user" else project
    text = {
        Path(p).relative_to(base).as_posix(): v.decode()
        for p, v in files.items()
        if Path(p).is_relative_to(base)
    }
    if runtime == "claude-code":
        settings = json.loads(text[".claude/settings.json"])
        for event in (
            "SessionStart",
            "UserPromptSubmit",
            "PostToolUse",
            "PostToolUseFailure",
            "Stop",
            "SessionEnd",
            "PreCompact",
        ):
            commands = [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]
            assert commands.count("agent-memory hook claude-code") == 1
        if scope == "--user":
            assert "notify-send done" in text[".claude/settings.json"]  # the user's hook kept
        assert "agent-memory:managed" in text[".claude/commands/memory-search.md"]
        # no fixed address: the fallback goes through the command, which reads the settings
        assert not re.search(r":87\d\d", text[".claude/commands/memory-search.md"])
        assert "agent-memory:managed" in text[".claude/skills/agent-memory/SKILL.md"]
        if scope == "--project":
            assert json.loads(text[".mcp.json"])["mcpServers"]["agent-memory"]["args"] == ["mcp"]
    elif runtime == "gemini-cli":
        settings = json.loads(text[".gemini/settings.json"])
        assert set(settings["hooks"]) >= {"SessionStart", "BeforeAgent", "AfterAgent", "AfterTool"}
        assert settings["mcpServers"]["agent-memory"]["command"] == "agent-memory"
    elif runtime == "copilot-cli":
        folder = ".copilot/hooks" if scope == "--user" else ".github/hooks"
        config = json.loads(text[f"{folder}/agent-memory.json"])
        assert config["version"] == 1
        assert config["hooks"]["postToolUse"][0]["bash"] == (
            "agent-memory hook copilot-cli --event postToolUse"
        )
    elif runtime == "opencode":
        folder = ".config/opencode" if scope == "--user" else ".opencode"
        plugin = text[f"{folder}/plugins/agent-memory.js"]
        assert 'const HOOK_COMMAND = ["agent-memory", "hook", "opencode"]' in plugin
        config_path = ".config/opencode/opencode.json" if scope == "--user" else "opencode.json"
        assert json.loads(text[config_path])["mcp"]["agent-memory"]["command"] == [
            "agent-memory",
            "mcp",
        ]
    elif runtime == "codex":
        config = tomllib.loads(text[".codex/config.toml"])
        assert config["notify"] == ["agent-memory", "hook", "codex"]
        assert config["mcp_servers"]["agent-memory"] == {"command": "agent-memory", "args": ["mcp"]}
        if scope == "--user":
            assert config["model"] == "gpt-5.1" and "docs" in config["mcp_servers"]


def test_reinstall_with_another_command_replaces_ours_and_keeps_theirs(
    dirs: tuple[Path, Path],
) -> None:
    home, project = dirs
    _seed(home, project, "claude-code")
    assert install(home, project, "install", "claude-code", command="/old/bin/agent-memory")
    result = install(home, project, "install", "claude-code", command="/opt/am/bin/agent-memory")
    assert result.returncode == 0
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    commands = [
        h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]
    ]
    assert "/old/bin/agent-memory hook claude-code" not in commands
    assert commands.count("/opt/am/bin/agent-memory hook claude-code") == 7  # one per event
    assert "notify-send done" in commands


def test_codex_refuses_to_replace_an_existing_notify(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('notify = ["terminal-notifier-wrapper"]\nmodel = "o3"\n')
    result = install(home, project, "install", "codex")
    assert result.returncode == 1
    assert "already sets notify" in result.stderr
    assert config.read_text() == 'notify = ["terminal-notifier-wrapper"]\nmodel = "o3"\n'
    assert backups(home) == []


def test_unreadable_settings_are_not_touched(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // my comment\n  "theme": "GitHub"\n}\n')
    result = install(home, project, "install", "gemini-cli")
    assert result.returncode == 1 and "not plain JSON" in result.stderr
    assert settings.read_text() == '{\n  // my comment\n  "theme": "GitHub"\n}\n'


def test_a_file_we_did_not_write_is_left_alone(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    mine = home / ".claude" / "commands" / "memory-search.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own command\n")
    result = install(home, project, "install", "claude-code")
    assert result.returncode == 0
    assert "left" in result.stdout and "memory-search.md alone" in result.stdout
    assert mine.read_text() == "my own command\n"
    install(home, project, "uninstall", "claude-code")
    assert mine.read_text() == "my own command\n"


def test_claude_plugin_matches_the_installer() -> None:
    root = plugin_root()
    manifest = json.loads((root / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "agent-memory"
    market = json.loads((root / ".claude-plugin" / "marketplace.json").read_text())
    assert market["plugins"][0]["source"] == "./"
    hooks = json.loads((root / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks == {e: [g] for e, g in wanted_hooks("agent-memory hook claude-code").items()}
    mcp = json.loads((root / ".mcp.json").read_text())
    assert mcp["mcpServers"]["agent-memory"] == {"command": "agent-memory", "args": ["mcp"]}
    for name in ("memory-search", "memory-status"):
        text = (root / "commands" / f"{name}.md").read_text()
        assert text.startswith("---\ndescription: ")
    skill = (root / "skills" / "agent-memory" / "SKILL.md").read_text()
    front = skill.split("---")[1]
    assert "name: agent-memory" in front and "description:" in front
    for tool in ("memory_search", "memory_toc", "memory_expand"):
        assert tool in skill  # the skill teaches the TOC walk and grip expansion


def _installed_command(home: Path, runtime: str) -> list[str]:
    """The argv a runtime would run, read back from what install wrote."""
    if runtime == "claude-code":
        settings = json.loads((home / ".claude" / "settings.json").read_text())
        return ["bash", "-c", settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]]
    if runtime == "gemini-cli":
        settings = json.loads((home / ".gemini" / "settings.json").read_text())
        return ["bash", "-c", settings["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]]
    if runtime == "copilot-cli":
        config = json.loads((home / ".copilot" / "hooks" / "agent-memory.json").read_text())
        return ["bash", "-c", config["hooks"]["userPromptSubmitted"][0]["bash"]]
    config = tomllib.loads((home / ".codex" / "config.toml").read_text())
    return list(config["notify"])


def test_installed_hooks_deliver_to_the_stack(shared_stack: Stack, dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    payloads: dict[str, dict[str, Any]] = {
        "claude-code": {**load_fixture("claude-code", "UserPromptSubmit"), "session_id": "inst-cc"},
        "gemini-cli": {**load_fixture("gemini-cli", "BeforeAgent"), "session_id": "inst-gem"},
        "copilot-cli": {
            **load_fixture("copilot-cli", "userPromptSubmitted"),
            "sessionId": "inst-cop",
        },
        "codex": {**load_fixture("codex", "agent-turn-complete"), "thread-id": "inst-cdx"},
    }
    for payload in payloads.values():  # the agent runs in the project's src/ folder
        payload["cwd"] = str(project / "src")
    env = {**shared_stack.env, "HOME": str(home), "AGENT_MEMORY_HOME": str(home / ".am")}
    env["AGENT_MEMORY_HOOK_TIMEOUT_MS"] = "5000"
    for runtime, payload in payloads.items():
        assert install(home, project, "install", runtime, command=AGENT_MEMORY).returncode == 0
        argv = _installed_command(home, runtime)
        if runtime == "codex":  # Codex appends the JSON as one more argument
            proc = subprocess.run([*argv, json.dumps(payload)], env=env, cwd=project, timeout=30)
        else:
            proc = subprocess.run(
                argv, input=json.dumps(payload).encode(), env=env, cwd=project, timeout=30
            )
        assert proc.returncode == 0, (runtime, shlex.join(argv))
    for session, count in (("inst-cc", 1), ("inst-gem", 1), ("inst-cop", 1), ("inst-cdx", 2)):
        events = wait_for_events(shared_stack.query_url, session, count)
        assert {e["project_id"] for e in events} == {"shop-api"}  # the enclosing git repository


def test_install_with_a_project_name_records_and_recalls_under_it(
    shared_stack: Stack, dirs: tuple[Path, Path]
) -> None:
    """``install <runtime> --project NAME``: project scope, and the installed hook and MCP
    server name the project NAME instead of the repository (issue 52, point 4)."""
    home, project = dirs
    done = install(home, project, "install", "claude-code", "--project", "billing-ops")
    assert done.returncode == 0, done.stdout + done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert shlex.split(command)[-2:] == ["--project-id", "billing-ops"]
    mcp = json.loads((project / ".mcp.json").read_text())["mcpServers"]["agent-memory"]
    assert mcp["args"][-3:] == ["mcp", "--project", "billing-ops"]
    assert not (home / ".claude" / "settings.json").exists()  # NAME implies --project scope
    again = install(home, project, "install", "claude-code", "--project", "billing-ops")
    assert again.returncode == 0 and not backups(home, project)  # idempotent
    for runtime in ("codex", "opencode", "copilot-cli", "gemini-cli"):
        done = install(home, project, "install", runtime, "--project", "billing-ops")
        assert done.returncode == 0, done.stdout + done.stderr
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert codex["notify"][-2:] == ["--project-id", "billing-ops"]
    plugin = (project / ".opencode" / "plugins" / "agent-memory.js").read_text()
    assert '"opencode", "--project-id", "billing-ops"]' in plugin

    payload = {**load_fixture("claude-code", "UserPromptSubmit"), "session_id": "inst-named"}
    payload["cwd"] = str(project / "src")
    env = {**shared_stack.env, "HOME": str(home), "AGENT_MEMORY_HOME": str(home / ".am")}
    env["AGENT_MEMORY_HOOK_TIMEOUT_MS"] = "5000"
    proc = subprocess.run(
        ["bash", "-c", command.replace("agent-memory", AGENT_MEMORY, 1)],
        input=json.dumps(payload).encode(),
        env=env,
        cwd=project,
        timeout=30,
    )
    assert proc.returncode == 0
    events = wait_for_events(shared_stack.query_url, "inst-named", 1)
    assert {e["project_id"] for e in events} == {"billing-ops"}
    for runtime in RUNTIMES:  # uninstall finds the named hooks as ours
        assert install(home, project, "uninstall", runtime, "--project").returncode == 0
    left = [p for p in project.rglob("*") if p.is_file() and ".git" not in p.parts]
    assert left == [], left


def test_install_refuses_a_blank_project_name(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    done = install(home, project, "install", "claude-code", "--project", "  ")
    assert done.returncode != 0 and "--project NAME" in done.stderr
