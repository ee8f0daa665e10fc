"""``agent-memory import <runtime> [PATH]``: backfill the sessions a coding agent already stored.

Claude Code keeps every session as a transcript, ``~/.claude/projects/<escaped cwd>/<session>
.jsonl`` (``$CLAUDE_CONFIG_DIR/projects`` when set), and its subagents' transcripts beside it
(``<session>/subagents/agent-*.jsonl``, or ``agent-*.jsonl`` in the project folder in older
releases). PATH is one transcript, one project's folder, or the whole ``projects`` folder (the
default); every ``*.jsonl`` below it is read.

Each transcript goes through the hook's own parser (``agent_memory_hooks.claude_code.
transcript_events``), so an imported event has the id and the time the hook gives it: session +
line ``uuid`` (or ``tool_use_id``), the line's ``timestamp``. Importing twice, or importing what
the hook already captured, stores each event once (the gateway and the recorder de-duplicate by
``event_id``). The project is the one the hook would name, from the ``cwd`` the transcript
records, or ``AGENT_MEMORY_PROJECT_ID`` when it is set.

Codex CLI (``~/.codex/sessions/**/rollout-*.jsonl``), Gemini CLI
(``~/.gemini/tmp/*/chats/session-*.json``) and OpenCode (``~/.local/share/opencode/storage``)
are read by ``import_runtimes`` with the same event shapes. Copilot CLI is refused with a
message rather than guessed: we found no description of its session files that we could verify
(docs/import.md).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent_memory_cli import import_runtimes
from agent_memory_cli.api import REFUSED, UNREACHABLE, token_from
from agent_memory_hooks import claude_code, lite
from agent_memory_hooks.events import HookContext, now_ms
from agent_memory_hooks.project import resolve_project_id

if TYPE_CHECKING:  # the client and rich are imported when an import runs
    from agent_memory_cli.settings import Settings
    from agent_memory_client import AgentMemoryClient
    from agent_memory_client.types import EventIn

RUNTIMES = ("claude-code", "codex", "gemini-cli", "copilot-cli", "opencode")
ALIASES = {"claude": "claude-code", "gemini": "gemini-cli", "copilot": "copilot-cli"}
NOT_SUPPORTED = {
    "copilot-cli": "Copilot CLI sessions (~/.copilot/session-state/*/events.jsonl)",
}
BATCH = 200
DESCRIPTION = (
    "Backfill the sessions a coding agent already stored (Claude Code, Codex, Gemini CLI, "
    "OpenCode), with the ids and times its hook gives them: importing twice, or importing "
    "what the hook already captured, stores each event once. PATH is one session file, one "
    "project's folder, or the runtime's whole folder (the default). Options may come before or "
    "after the runtime and the path. agent-memory import FILE imports an export instead."
)


@dataclass
class ImportReport:
    files: int = 0
    sessions: set[str] = field(default_factory=set)
    events: int = 0
    skipped_lines: int = 0
    skipped_files: list[str] = field(default_factory=list)
    refused: int = 0


def claude_home(env: Mapping[str, str]) -> Path:
    explicit = env.get("CLAUDE_CONFIG_DIR", "").strip()
    return (Path(explicit).expanduser() if explicit else Path.home() / ".claude") / "projects"


def transcripts(root: Path) -> list[Path]:
    """``root`` itself when it is a file, else every ``*.jsonl`` below it (subagents too)."""
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())


def read_lines(path: Path) -> tuple[list[tuple[dict[str, Any], int]], int]:
    """The transcript's JSON objects with their byte offsets (as the hook's cursor gives them),
    and how many lines could not be read."""
    lines: list[tuple[dict[str, Any], int]] = []
    skipped = 0
    offset = 0
    with path.open("rb") as f:
        for raw in f:
            start = offset
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                item = lite.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                skipped += 1
                continue
            if isinstance(item, dict):
                lines.append((item, start))
            else:
                skipped += 1
    return lines, skipped


def claude_events(
    path: Path, env: Mapping[str, str], project_of: Callable[[str | None], str]
) -> tuple[list[dict[str, Any]], int]:
    """One transcript as events, exactly as the hook would have posted them."""
    lines, skipped = read_lines(path)
    first_cwd = next((i["cwd"] for i, _ in lines if isinstance(i.get("cwd"), str)), None)
    ctx = HookContext(
        runtime=claude_code.RUNTIME,
        now_ms=now_ms(),  # only for a line without a timestamp
        project_of=project_of,
        user_id=env.get("AGENT_MEMORY_USER_ID", "").strip() or None,
        cwd=first_cwd or str(path.parent),
    )
    session = next((i["sessionId"] for i, _ in lines if isinstance(i.get("sessionId"), str)), "")
    payload = {"session_id": session or path.stem}
    events = claude_code.transcript_events(lines, payload, ctx, {})
    for event in events:
        event["metadata"]["imported_from"] = path.name
    return events, skipped


Reader = Callable[[Path, Mapping[str, str], Callable[[str | None], str]], tuple[list[Any], int]]


def runtime_source(
    runtime: str, env: Mapping[str, str]
) -> tuple[Path, Callable[[Path], list[Path]], Reader]:
    """A runtime's default folder, how to find its session files below a PATH, its reader."""
    if runtime == "codex":
        return (
            import_runtimes.codex_home(env),
            import_runtimes.codex_files,
            import_runtimes.codex_events,
        )
    if runtime == "opencode":
        return (
            import_runtimes.opencode_home(env),
            import_runtimes.opencode_files,
            import_runtimes.opencode_events,
        )
    if runtime == "gemini-cli":
        return (
            import_runtimes.gemini_home(env),
            import_runtimes.gemini_files,
            import_runtimes.gemini_events,
        )
    return claude_home(env), transcripts, claude_events


def batches(events: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(events), size):
        yield events[start : start + size]


async def run_import(
    client: AgentMemoryClient | None,
    files: Sequence[Path],
    *,
    env: Mapping[str, str],
    batch: int = BATCH,
    progress: bool = True,
    reader: Reader = claude_events,
) -> ImportReport:
    """Read ``files`` and post their events (``client`` None: read and count only)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from agent_memory_client import ApiError

    report = ImportReport()

    @functools.lru_cache(maxsize=1024)
    def project_of(cwd: str | None) -> str:
        return resolve_project_id(cwd, env)

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("importing", total=len(files))
        for path in files:
            bar.update(task, description=f"importing {path.name[:40]}")
            try:
                events, skipped = reader(path, env, project_of)
            except OSError as exc:
                report.skipped_files.append(f"{path}: {exc}")
                bar.advance(task)
                continue
            report.files += 1
            report.skipped_lines += skipped
            report.sessions.update(e["session_id"] for e in events)
            for chunk in batches(events, batch):
                if client is not None:
                    try:
                        await client.post_events(cast("list[EventIn]", chunk))
                    except ApiError as exc:
                        if exc.status not in (400, 413, 422):
                            raise
                        report.refused += len(chunk)
                        report.skipped_files.append(f"{path}: refused: {exc.message}")
                        continue
                report.events += len(chunk)
            bar.advance(task)
    return report


def _run(settings: Settings, args: argparse.Namespace) -> int:
    runtime = ALIASES.get(args.runtime, args.runtime)
    if runtime in NOT_SUPPORTED:
        print(
            f"agent-memory: import {runtime} is not supported yet: {NOT_SUPPORTED[runtime]} are "
            "in a format we have no verified sample of; its hook captures new sessions",
            file=sys.stderr,
        )
        return REFUSED
    if args.batch < 1:
        print("agent-memory: --batch must be at least 1", file=sys.stderr)
        return 2
    home, find, reader = runtime_source(runtime, os.environ)
    root = Path(args.path).expanduser() if args.path else home
    if not root.exists():
        print(f"agent-memory: {root} does not exist", file=sys.stderr)
        return 2
    files = find(root)
    from agent_memory_client import AgentMemoryClient, ApiError, UnavailableError

    async def main() -> ImportReport:
        if args.dry_run:
            return await run_import(
                None, files, env=os.environ, batch=args.batch, progress=False, reader=reader
            )
        async with AgentMemoryClient(
            gateway_url=settings.gateway_url,
            query_url=settings.query_url,
            token=token_from(args.token),
            timeout=60.0,
        ) as client:
            return await run_import(
                client,
                files,
                env=os.environ,
                batch=args.batch,
                progress=not args.quiet,
                reader=reader,
            )

    try:
        report = asyncio.run(main())
    except UnavailableError as exc:
        print(f"agent-memory: gateway unavailable at {settings.gateway_url}: {exc}")
        return UNREACHABLE
    except ApiError as exc:
        print(f"agent-memory: import failed: {exc.status}: {exc.message}")
        return REFUSED
    verb = "read" if args.dry_run else "sent"
    print(
        f"imported {len(report.sessions)} session(s) from {report.files} file(s): "
        f"{report.events} event(s) {verb}, {report.skipped_lines} line(s) skipped, "
        f"{len(report.skipped_files)} file(s) skipped, {report.refused} event(s) refused"
    )
    for problem in report.skipped_files:
        print(f"  skipped {problem}")
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "import",
        help="backfill a coding agent's existing sessions (idempotent: same ids as the hook)",
        description=DESCRIPTION,
    )
    parser.add_argument("runtime", choices=[*RUNTIMES, *ALIASES], help="whose sessions")
    parser.add_argument(
        "path",
        nargs="?",
        help="one session file, one project's folder, or the runtime's folder (default: "
        "~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, ~/.local/share/opencode/storage)",
    )
    parser.add_argument("--batch", type=int, default=BATCH, help="events per request (200)")
    parser.add_argument("--dry-run", action="store_true", help="read and count, post nothing")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    parser.set_defaults(run=_run)
