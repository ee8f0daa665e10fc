"""The pruner's work: one cleanup at a time, on the schedule or on demand.

The indexes are opened once (a Tantivy writer is taken per write and released after its commit,
so the bm25-indexer and the pruner take turns on the folder). Each run uses its own autocommit
connection: every page of deletions is recorded in its own commit (``cleanup.run_cleanup``), so
a kill -9 loses at most one page's record, which the next run redoes.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime

import psycopg

from agent_memory_common.core.logs import get_logger
from agent_memory_common.core.metrics import LIFECYCLE_RUNS
from agent_memory_pruner.settings import Settings
from agent_memory_retrieval.adapters.factory import open_text_index, open_vector_index
from agent_memory_retrieval.lifecycle.cleanup import (
    CleanupReport,
    CleanupScope,
    ExtraStep,
    run_cleanup,
)
from agent_memory_retrieval.lifecycle.topic_prune import topic_step
from agent_memory_retrieval.ports import TextIndex, VectorIndex

log = get_logger(__name__)

# Steps beyond the retention matrix and the episode rule, each reporting its own index; topic
# pruning (index "topics") joins them from the settings when a Pruner is built (``extra_steps``).
EXTRA_STEPS: list[ExtraStep] = []


class Pruner:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.text: TextIndex | None = None
        self.vectors: VectorIndex | None = None
        self._lock = asyncio.Lock()
        # topics below AGENT_MEMORY_TOPIC_PRUNE_BELOW (the topics service's variables)
        self.extra_steps: list[ExtraStep] = [
            topic_step(settings.topic_prune_rule(), settings.pruner.page_size),
            *EXTRA_STEPS,
        ]

    async def open(self) -> None:
        self.text = await open_text_index(self.settings, writer=True)
        self.vectors = await open_vector_index(self.settings)

    async def close(self) -> None:
        for index in (self.text, self.vectors):
            if index is not None:
                await index.close()

    async def run(
        self, scope: CleanupScope, *, dry_run: bool, now: datetime | None = None
    ) -> CleanupReport:
        """One cleanup; concurrent requests wait their turn (a run is not interleaved)."""
        kind = "cleanup_dry_run" if dry_run else "cleanup"
        try:
            async with (
                self._lock,
                await psycopg.AsyncConnection.connect(
                    self.settings.pg_dsn, autocommit=True
                ) as conn,
            ):
                report = await run_cleanup(
                    conn,
                    text=self.text,
                    vectors=self.vectors,
                    scope=scope,
                    dry_run=dry_run,
                    now=now,
                    episodes=self.settings.pruner.episode_rule(),
                    extra_steps=self.extra_steps,
                    page_size=self.settings.pruner.page_size,
                )
        except Exception:
            LIFECYCLE_RUNS.labels(kind, "failed").inc()
            raise
        LIFECYCLE_RUNS.labels(kind, "done").inc()
        log.info(
            "pruner.cleanup",
            dry_run=dry_run,
            tenant=scope.tenant,
            project_id=scope.project_id,
            entries=report.entries,
            seconds=report.seconds,
        )
        return report

    async def schedule(self, stop: asyncio.Event) -> None:
        """Every tenant, every ``interval_s`` (first after ``first_run_after_s``), until stopped."""
        options = self.settings.pruner
        delay = options.first_run_after_s
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=delay)
            if stop.is_set():
                return
            delay = options.interval_s
            try:
                await self.run(CleanupScope(), dry_run=False)
            except (psycopg.Error, OSError) as exc:  # Postgres away: try at the next tick
                log.warning("pruner.scheduled_run_failed", error=str(exc))
