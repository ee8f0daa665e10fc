"""``agent-memory install <runtime>`` and ``agent-memory uninstall <runtime>``."""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from agent_memory_hooks.install.base import (
    InstallError,
    Plan,
    Target,
    apply,
    default_hook_argv,
    project_dir,
)
from agent_memory_hooks.runner import RUNTIMES, canonical_runtime

MODULES = {
    "claude-code": "claude_code",
    "gemini-cli": "gemini_cli",
    "copilot-cli": "copilot_cli",
    "opencode": "opencode",
    "codex": "codex",
}
RUNTIME_HELP = (
    "claude-code, gemini-cli, copilot-cli, opencode or codex (or: claude, gemini, copilot)"
)


def register(sub: Any) -> None:
    for name, verb in (("install", "add"), ("uninstall", "remove")):
        parser = sub.add_parser(
            name,
            help=f"{verb} agent-memory hooks for a coding agent ({', '.join(RUNTIMES)})",
            description=(
                f"{verb.capitalize()} the agent-memory hooks (and MCP server) in the runtime's "
                "configuration; prints the change as a diff and keeps a backup of every file it "
                "rewrites (<file>.agent-memory-backup-<time>)."
            ),
        )
        parser.add_argument("runtime", help=RUNTIME_HELP)
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument(
            "--user", dest="scope", action="store_const", const="user", help="for every project"
        )
        scope.add_argument(
            "--project",
            dest="project_name",
            nargs="?",
            const="",
            default=None,
            metavar="NAME",
            help="for this project only (files meant to be committed); with NAME, its sessions "
            "are recorded (and recalled) as project NAME instead of the repository's name",
        )
        parser.set_defaults(scope="user")
        parser.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
        parser.add_argument(
            "--dir",
            type=Path,
            default=None,
            help="the project folder for --project (default: the enclosing git repository)",
        )
        if name == "install":
            parser.add_argument(
                "--command",
                dest="hook_command",
                help="how the agent should run agent-memory (default: 'agent-memory' if it is "
                "on PATH, else this program's full path)",
            )
            parser.add_argument(
                "--no-mcp",
                dest="mcp",
                action="store_false",
                help="do not register the agent-memory MCP server",
            )
        parser.set_defaults(run=_run, remove=name == "uninstall")


def build_target(args: argparse.Namespace) -> Target:
    hook_command = getattr(args, "hook_command", None)
    name = getattr(args, "project_name", None)
    if name is not None and name and not name.strip():
        raise InstallError("--project NAME: the name is blank")
    return Target(
        scope="project" if name is not None else args.scope,
        home=Path(os.path.expanduser("~")),
        project=project_dir(args.dir or Path.cwd()),
        hook_argv=shlex.split(hook_command) if hook_command else default_hook_argv(),
        env=dict(os.environ),
        mcp=getattr(args, "mcp", True),
        project_id=name.strip() if name else None,
    )


def make_plan(runtime: str, target: Target, *, remove: bool) -> Plan:
    module = importlib.import_module(f"agent_memory_hooks.install.{MODULES[runtime]}")
    plan: Plan = module.plan(target, remove=remove)
    return plan


def _run(_: Any, args: argparse.Namespace) -> int:
    runtime = canonical_runtime(args.runtime)
    if runtime is None:
        print(
            f"agent-memory: unknown runtime {args.runtime!r}; use {RUNTIME_HELP}", file=sys.stderr
        )
        return 2
    try:
        target = build_target(args)
        plan = make_plan(runtime, target, remove=args.remove)
        return apply(plan, dry_run=args.dry_run, out=sys.stdout)
    except InstallError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 1
