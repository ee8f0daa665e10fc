"""What recall injected, counted per (tenant, project, UTC day, kind, session) in
``recall_usage``, off the request's path.

An answer only adds to a counter in memory (``record``); a flush every ``interval_s`` writes
the counters as one batched upsert. If Postgres refuses or is away, the answer was given all
the same and the counts are kept (up to ``max_pending`` keys) for the next flush; beyond that,
and at a kill -9 (at most ``interval_s`` of answers), the cost history is what we give up,
never an answer. The same design as the search's ``AccessRecorder``.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

import psycopg
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.core.logs import get_logger
from agent_memory_query.injection import store
from agent_memory_query.injection.store import UsageKey

log = get_logger(__name__)
Counts = tuple[int, int, int, datetime]  # answers, given, tokens, latest answer


class UsageRecorder:
    def __init__(
        self, pool: AsyncConnectionPool, *, interval_s: float = 0.5, max_pending: int = 100_000
    ) -> None:
        self._pool = pool
        self._interval = interval_s
        self._max_pending = max_pending
        self._pending: dict[UsageKey, Counts] = {}
        self._task: asyncio.Task[None] | None = None

    def record(
        self,
        tenant: str,
        project_id: str,
        session_id: str | None,
        kind: str,
        tokens: int,
        *,
        given: bool,
    ) -> None:
        """Count one answer of ``kind`` (``brief``, ``recall``) and the tokens it gave."""
        now = datetime.now(UTC)
        key = (tenant, project_id, now.date(), kind, session_id or "")
        self._add(key, (1, int(given), tokens, now))

    def _add(self, key: UsageKey, counts: Counts) -> None:
        before = self._pending.get(key)
        if before is None:
            if len(self._pending) >= self._max_pending:
                return
            self._pending[key] = counts
            return
        self._pending[key] = (
            before[0] + counts[0],
            before[1] + counts[1],
            before[2] + counts[2],
            max(before[3], counts[3]),
        )

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="recall-usage-recorder")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.flush()

    async def flush(self) -> None:
        if not self._pending:
            return
        batch, self._pending = self._pending, {}
        try:
            async with self._pool.connection(timeout=5) as conn:
                await store.add_usage(conn, list(batch.items()))
        except (psycopg.Error, TimeoutError, OSError) as exc:
            log.warning("recall.usage_flush_failed", error=str(exc), rows=len(batch))
            self._keep(batch)
        except asyncio.CancelledError:  # shutting down mid-write: close() flushes them
            self._keep(batch)
            raise

    def _keep(self, batch: dict[UsageKey, Counts]) -> None:
        """An unwritten batch back into the counters, for the next flush."""
        for key, counts in batch.items():
            self._add(key, counts)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.flush()
