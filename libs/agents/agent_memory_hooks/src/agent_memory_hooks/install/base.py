"""What every installer shares: a plan of file changes, shown as diffs, applied with backups.

An installer never edits in place as it goes. It reads the files it would touch, computes their
new text, and returns a ``Plan``; ``apply`` then prints a unified diff per file, writes nothing
on ``--dry-run``, and otherwise copies each existing file to
``<name>.agent-memory-backup-<timestamp>`` before writing the new text atomically. A file whose
new text equals the old is left untouched, which is what makes a second install a no-op.

Uninstall is surgical rather than a blind restore of the backup: it removes exactly the entries
install added (recognised by their command), so settings the user changed since are kept, and a
file install created is removed again once nothing else is left in it.
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from agent_memory_hooks.project import git_root

BACKUP_SUFFIX = ".agent-memory-backup-"
MANAGED_MARK = "agent-memory:managed"


class InstallError(Exception):
    """The installer refuses (unreadable settings, a conflicting entry); nothing was written."""


@dataclass
class Change:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is to be removed
    backup: bool = True  # False for files that are wholly ours (nothing of the user's to keep)

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass
class Plan:
    runtime: str
    scope: str
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, path: Path, after: str | None) -> None:
        self.changes.append(Change(path, read_text(path), after))


@dataclass
class Target:
    """Where a runtime's configuration lives for one scope, and how to call the hook."""

    scope: str  # "user" or "project"
    home: Path  # the user's home (tests point it at a temp folder)
    project: Path  # the project folder (for --project)
    hook_argv: list[str]  # how to run `agent-memory`, e.g. ["agent-memory"]
    env: dict[str, str]
    mcp: bool = True  # also register the MCP server where the runtime has a simple place
    project_id: str | None = None  # install --project NAME: the project the hooks record into

    def hook_argv_for(self, runtime: str, *extra: str) -> list[str]:
        named = ["--project-id", self.project_id] if self.project_id else []
        return [*self.hook_argv, "hook", runtime, *extra, *named]

    def hook_command(self, runtime: str, *extra: str) -> str:
        return shlex.join(self.hook_argv_for(runtime, *extra))

    def mcp_argv(self) -> list[str]:
        named = ["--project", self.project_id] if self.project_id else []
        return [*self.hook_argv, "mcp", *named]


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def load_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(
            f"{path} is not plain JSON ({exc}); fix it or add the agent-memory entries by hand"
        ) from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} holds a JSON {type(data).__name__}, expected an object")
    return data


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def json_change(path: Path, before: str | None, data: dict[str, Any]) -> str | None:
    """The new text for a JSON file.

    Unchanged text when the data did not change (a formatting difference alone is never a
    change); the text of the newest backup when the data is back to what that backup held (so
    uninstall gives the user's file back byte for byte, layout included); no file when nothing
    is left in it.
    """
    if before is not None and load_json(path, before) == data:
        return before
    for backup in sorted(path.parent.glob(path.name + BACKUP_SUFFIX + "*"), reverse=True):
        text = read_text(backup)
        try:
            if text is not None and load_json(backup, text) == data:
                return text
        except InstallError:
            continue
        break  # only the newest backup is the state before our last change
    if not data:
        return None
    return dump_json(data)


def json_file_change(path: Path, before: str | None, data: dict[str, Any]) -> Change:
    """``json_change`` as a ``Change``; removing a file that held nothing but our entries needs
    no backup (there is nothing of the user's in it to keep)."""
    after = json_change(path, before, data)
    return Change(path, before, after, backup=after is not None)


def default_hook_argv() -> list[str]:
    """``agent-memory`` when it is on PATH, else this very program, else the module."""
    if shutil.which("agent-memory"):
        return ["agent-memory"]
    script = Path(sys.argv[0]).resolve()
    if script.name == "agent-memory" and script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "agent_memory_cli.entry"]


def project_dir(start: Path) -> Path:
    root = git_root(str(start.resolve()))
    return Path(root) if root else start.resolve()


def is_our_command(command: object, runtime: str) -> bool:
    """An installed hook of ours: ``… agent-memory … hook <runtime> …``, whatever the path."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not any("agent-memory" in w or "agent_memory_cli" in w for w in words):
        return False
    return any(a == "hook" and b == runtime for a, b in itertools.pairwise(words))


# -- the "hooks" object shared by Claude Code and Gemini CLI ----------------------------------


def merge_event_hooks(
    hooks: dict[str, Any],
    wanted: dict[str, dict[str, Any]],
    ours: Callable[[dict[str, Any]], bool],
) -> None:
    """Make each event of ``wanted`` run our hook exactly once, leaving other hooks alone.

    ``hooks`` maps an event name to a list of ``{"matcher"?, "hooks": [hook...]}`` groups;
    ``wanted`` maps an event name to the group we want there. An event that already has our
    exact hook is left as it is; otherwise any stale hook of ours (an older command) is removed
    and our group appended.
    """
    for event, group in wanted.items():
        groups = hooks.get(event)
        if not isinstance(groups, list):
            groups = []
        hook = group["hooks"][0]
        if any(hook in g.get("hooks", []) for g in groups if isinstance(g, dict)):
            hooks[event] = groups
            continue
        groups = _without_ours(groups, ours)
        groups.append(group)
        hooks[event] = groups


def remove_event_hooks(hooks: dict[str, Any], ours: Callable[[dict[str, Any]], bool]) -> None:
    """Remove our hooks, and the groups and events that held nothing else."""
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = _without_ours(groups, ours)
        if kept == groups:
            continue
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]


def _without_ours(groups: list[Any], ours: Callable[[dict[str, Any]], bool]) -> list[Any]:
    kept: list[Any] = []
    for g in groups:
        if not isinstance(g, dict) or not isinstance(g.get("hooks"), list):
            kept.append(g)
            continue
        mine = [h for h in g["hooks"] if isinstance(h, dict) and ours(h)]
        if not mine:
            kept.append(g)
            continue
        rest = [h for h in g["hooks"] if h not in mine]
        if rest:
            kept.append({**g, "hooks": rest})
    return kept


def set_or_drop(container: dict[str, Any], key: str, value: dict[str, Any]) -> None:
    if value:
        container[key] = value
    else:
        container.pop(key, None)


MCP_NAME = "agent-memory"


def merge_mcp_server(
    plan: Plan,
    data: dict[str, Any],
    key: str,
    entry: dict[str, Any],
    *,
    remove: bool,
    where: Path,
    argv_field: str = "args",
) -> None:
    """Add our MCP server under ``data[key]`` (or remove it), in each runtime's own shape.

    A server of that name that is not ours (its ``argv_field`` does not run ``mcp``) is never
    touched: removing leaves it, and installing over a different one only adds a note.
    """
    servers = data.get(key) if isinstance(data.get(key), dict) else {}
    assert isinstance(servers, dict)
    current = servers.get(MCP_NAME)
    if remove:
        if isinstance(current, dict) and "mcp" in current.get(argv_field, []):
            del servers[MCP_NAME]
    elif current is None:
        servers[MCP_NAME] = entry
    elif current != entry:
        plan.notes.append(f"{where} already defines an '{MCP_NAME}' MCP server; left as is")
    set_or_drop(data, key, servers)


# -- files we own entirely ----------------------------------------------------------------------


def owned_file(plan: Plan, path: Path, content: str | None) -> None:
    """Write (or with ``content=None`` remove) a file of ours; leave a stranger's file alone."""
    before = read_text(path)
    if before is not None and MANAGED_MARK not in before:
        what = "install over" if content is not None else "remove"
        plan.notes.append(f"left {path} alone: it exists and was not written by agent-memory")
        plan.notes.append(f"  (refusing to {what} a file we do not own)")
        return
    plan.changes.append(Change(path, before, content, backup=False))


# -- applying -------------------------------------------------------------------------------------


def apply(plan: Plan, *, dry_run: bool, out: TextIO) -> int:
    changes = [c for c in plan.changes if c.changed]
    verb = "would change" if dry_run else "changed"
    for change in changes:
        _print_diff(change, out)
    for note in plan.notes:
        out.write(f"note: {note}\n")
    if not changes:
        out.write(f"{plan.runtime} ({plan.scope}): nothing to change, already as wanted\n")
        return 0
    if dry_run:
        out.write(f"dry run: {len(changes)} file(s) {verb}, nothing written\n")
        return 0
    for change in changes:
        if change.before is not None and change.backup:
            backup = _backup_path(change.path)
            shutil.copy2(change.path, backup)
            out.write(f"backup: {backup}\n")
        if change.after is None:
            change.path.unlink()
            _remove_empty_parents(change.path.parent, stop_at=3)
        else:
            write_atomic(change.path, change.after)
    out.write(f"{plan.runtime} ({plan.scope}): {len(changes)} file(s) {verb}\n")
    return 0


def _backup_path(path: Path) -> Path:
    """``<name>.agent-memory-backup-<time>``; names sort by time, and never collide (an
    install and an uninstall within one second must not overwrite each other's backup)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    candidate = path.with_name(f"{path.name}{BACKUP_SUFFIX}{stamp}")
    while candidate.exists():
        time.sleep(0.001)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        candidate = path.with_name(f"{path.name}{BACKUP_SUFFIX}{stamp}")
    return candidate


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.agent-memory-tmp")
    tmp.write_text(text, encoding="utf-8")
    if path.exists():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)


def _remove_empty_parents(folder: Path, stop_at: int) -> None:
    """Remove folders install created for its own file (``plugins/``, ``skills/x/``), no more
    than ``stop_at`` levels up, and only while they are empty."""
    for _ in range(stop_at):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _print_diff(change: Change, out: TextIO) -> None:
    before = (change.before or "").splitlines(keepends=True)
    after = (change.after or "").splitlines(keepends=True)
    old = str(change.path) if change.before is not None else "/dev/null"
    new = str(change.path) if change.after is not None else "/dev/null"
    out.writelines(_ensure_newlines(difflib.unified_diff(before, after, old, new)))


def _ensure_newlines(lines: Iterable[str]) -> Iterable[str]:
    for line in lines:
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
