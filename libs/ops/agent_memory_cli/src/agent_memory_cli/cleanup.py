"""``agent-memory admin cleanup [--dry-run]``: apply the retention matrix (and prune faded topics)
now, from a terminal.

Runs the pruner's own cleanup (``agent_memory_retrieval.lifecycle.cleanup``) in this process,
against the
stack's Postgres and index engines, like ``admin rebuild-index``: it works whether or not the
pruner service is up, and is safe beside it (both are idempotent). Every tenant unless
``--tenant``; per index and level, how many entries would go (``--dry-run``) or went, with a few
examples. The episode rule is read from ``AGENT_MEMORY_PRUNER__EPISODE_*`` and the topic rule
from ``AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS`` / ``AGENT_MEMORY_TOPIC_PRUNE_BELOW``, as the service
does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import psycopg

from agent_memory_cli.settings import Settings
from agent_memory_common.core.logs import configure_logging
from agent_memory_common.db.postgres import prepare_database
from agent_memory_retrieval.adapters.factory import open_text_index, open_vector_index
from agent_memory_retrieval.lifecycle.cleanup import CleanupReport, CleanupScope, run_cleanup
from agent_memory_retrieval.lifecycle.retention import EpisodeOptions
from agent_memory_retrieval.lifecycle.topic_prune import TopicPruneSettings, topic_step


class CleanupSettings(TopicPruneSettings):
    pruner: EpisodeOptions = EpisodeOptions()


async def cleanup(
    settings: CleanupSettings, scope: CleanupScope, *, dry_run: bool
) -> CleanupReport:
    text = await open_text_index(settings, writer=not dry_run)
    vectors = await open_vector_index(settings)
    try:
        async with await psycopg.AsyncConnection.connect(settings.pg_dsn, autocommit=True) as conn:
            return await run_cleanup(
                conn,
                text=text,
                vectors=vectors,
                scope=scope,
                dry_run=dry_run,
                episodes=settings.pruner.episode_rule(),
                extra_steps=[topic_step(settings.topic_prune_rule())],
            )
    finally:
        await text.close()
        await vectors.close()


def render(report: CleanupReport) -> str:
    verb = "would go" if report.dry_run else "went"
    lines = [
        f"{'dry run: ' if report.dry_run else ''}{report.entries} entries {verb} "
        f"in {report.seconds:.1f}s (ages measured at {report.now:%Y-%m-%d %H:%M} UTC)"
    ]
    for index in report.indexes:
        head = f"{index.index} ({index.engine}): {index.entries} {verb}"
        if index.status != "ok":
            head += f"  [{index.status}: {index.reason}]"
        lines.append(head)
        for level in index.levels:
            lines.append(f"  {level.level:<8} keep {level.keep:<10} {level.entries:>8}")
            for ex in level.examples:
                lines.append(f"      {ex.ts:%Y-%m-%d}  {ex.project_id}  {ex.id}  {ex.excerpt[:60]}")
    return "\n".join(lines)


def run(_: Settings, args: argparse.Namespace) -> int:
    """``agent-memory admin cleanup`` (its parser is in ``admin``, which stays light)."""
    settings = CleanupSettings()
    # logs go to stderr, so that --json output stays one JSON document
    configure_logging("cleanup", settings.log_level, settings.log_json)
    try:
        prepare_database(settings.pg_dsn)
    except psycopg.OperationalError as exc:
        print(f"agent-memory: Postgres not reachable: {exc}", file=sys.stderr)
        return 2
    scope = CleanupScope(tenant=args.tenant, project_id=args.project_id)
    report = asyncio.run(cleanup(settings, scope, dry_run=args.dry_run))
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print(render(report))
    return 0
