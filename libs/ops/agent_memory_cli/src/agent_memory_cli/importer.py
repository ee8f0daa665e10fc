"""``agent-memory import <runtime> [PATH]``: backfill the sessions a coding agent already stored.

The sessions are read by ``readers`` (one module per runtime: Claude Code, Codex CLI, Gemini
CLI, OpenCode, and what they share in ``readers.common``), which turn each stored session into
the events the runtime's hook or plugin posts, with the same ids and times: importing twice, or
importing what the hook already captured, stores each event once (the gateway and the recorder
de-duplicate by ``event_id``). This module finds the files, posts the events in batches and
reports. Copilot CLI is refused with a message rather than guessed: we found no description of
its session files that we could verify (docs/import.md).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent_memory_cli import readers
from agent_memory_cli.api import REFUSED, UNREACHABLE, token_from
from agent_memory_cli.readers.common import Reader
from agent_memory_hooks.project import ENV_PROJECT, resolve_project_id

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
    # events the gateway took but will never store, by reason (erased: their ids were erased)
    refusals: Counter[str] = field(default_factory=Counter)


def count_refusals(answer: Mapping[str, Any], reasons: Counter[str]) -> int:
    """The events of an accepted batch that the gateway refused (``refusals``), counted into
    ``reasons`` by reason; their number."""
    refusals = answer.get("refusals") or ()
    reasons.update(str(r.get("reason", "unknown")) for r in refusals)
    return len(refusals)


def refusal_note(reasons: Counter[str]) -> str:
    """``": 2770 erased"``: the reasons of the refused events, after their count."""
    if not reasons:
        return ""
    return ": " + ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))


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
    reader: Reader,
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
    def project_of(cwd: str | None, remote: str | None = None, branch: str | None = None) -> str:
        return resolve_project_id(cwd, env, remote, branch)

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
                        answer = await client.post_events(cast("list[EventIn]", chunk))
                    except ApiError as exc:
                        if exc.status not in (400, 413, 422):
                            raise
                        report.refused += len(chunk)
                        report.skipped_files.append(f"{path}: refused: {exc.message}")
                        continue
                    refused = count_refusals(answer, report.refusals)
                    report.refused += refused
                    report.events += len(chunk) - refused
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
    source = readers.source(runtime)
    root = Path(args.path).expanduser() if args.path else source.home(os.environ)
    if not root.exists():
        print(f"agent-memory: {root} does not exist", file=sys.stderr)
        return 2
    files = source.files(root)
    reader = source.events
    env: Mapping[str, str] = os.environ
    if args.project is not None:
        if not args.project.strip():
            print("agent-memory: --project: the name is blank", file=sys.stderr)
            return 2
        env = {**os.environ, ENV_PROJECT: args.project.strip()}
    from agent_memory_client import AgentMemoryClient, ApiError, UnavailableError

    async def main() -> ImportReport:
        if args.dry_run:
            return await run_import(
                None, files, env=env, batch=args.batch, progress=False, reader=reader
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
                env=env,
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
        f"{refusal_note(report.refusals)}"
    )
    for problem in report.skipped_files:
        print(f"  skipped {problem}")
    if args.wait is not None and not args.dry_run and report.events:
        return _wait(settings, args)
    return 0


def _wait(settings: Settings, args: argparse.Namespace) -> int:
    """Follow the phases until the status is drained: the imported sessions are then in the
    TOC and the indexes (a historical session's last segment closes seconds after its events)."""
    from agent_memory_cli.api import CommandFailed, run_with_client
    from agent_memory_cli.phases import wait_drained

    print(f"waiting for the pipeline (at most {args.wait:.0f} s):")
    try:
        drained = run_with_client(
            settings, args.token, lambda c: wait_drained(c, within_s=args.wait), timeout=30
        )
    except CommandFailed as exc:
        print(f"agent-memory: {exc}")
        return exc.code
    if not drained:
        print(f"agent-memory: not drained after {args.wait:.0f} s (agent-memory status)")
        return REFUSED
    print("done: the imported sessions are in the TOC and the indexes")
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
    parser.add_argument(
        "--project",
        metavar="NAME",
        help="record every session as project NAME (default: each session's repository, "
        "worktrees included: docs/integrations/README.md, 'Which project')",
    )
    parser.add_argument("--batch", type=int, default=BATCH, help="events per request (200)")
    parser.add_argument("--dry-run", action="store_true", help="read and count, post nothing")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--wait",
        nargs="?",
        type=float,
        const=3600.0,
        metavar="SECONDS",
        help="then follow the pipeline's phases (segments, summaries, vectors) until drained, "
        "at most SECONDS (3600)",
    )
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    parser.set_defaults(run=_run)
