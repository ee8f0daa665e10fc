"""The gateway's one read of Postgres besides API keys: which event ids were erased.

An erased event id is never stored again (the recorder refuses it, ``erased_events``), so the
gateway asks first and answers such ids as refused (``reason: "erased"``) instead of reporting
them accepted. The check is an accelerator of honesty, not a dependency of ingest: when Postgres
cannot answer within ``timeout_s`` (or at all) the batch is published whole, as before, the
recorder still drops the erased ids, and further checks are skipped for ``retry_s`` so that an
outage costs a request nothing. SQL lives in ``sql/queries.sql``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from agent_memory_common.core.logs import get_logger
from agent_memory_common.db.postgres import load_queries

QUERIES = load_queries(__package__ or "")
log = get_logger(__name__)


class Tombstones:
    """``erased(tenant, ids)``: the erased ones among ``ids``; None when it is not known."""

    def __init__(
        self, pool: AsyncConnectionPool, *, timeout_s: float = 0.5, retry_s: float = 5.0
    ) -> None:
        self.pool = pool
        self.timeout_s = timeout_s
        self.retry_s = retry_s
        self._skip_until = 0.0

    async def erased(self, tenant: str, event_ids: Sequence[str]) -> set[str] | None:
        if not event_ids:
            return set()
        if time.monotonic() < self._skip_until:
            return None
        lookup = asyncio.ensure_future(self._lookup(tenant, event_ids))
        try:
            # shielded: a query cut short leaves its connection in an unknown state; it ends
            # on its own (bounded by the pool's and the server's timeouts) and is dropped
            return await asyncio.wait_for(asyncio.shield(lookup), self.timeout_s)
        except TimeoutError:
            reason = f"no answer within {self.timeout_s:g} s"
            lookup.add_done_callback(_retrieve)
        except (psycopg.Error, PoolTimeout, OSError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
        self._skip_until = time.monotonic() + self.retry_s
        log.warning("gateway.tombstones_unknown", reason=reason, skip_s=self.retry_s)
        return None

    async def _lookup(self, tenant: str, event_ids: Sequence[str]) -> set[str]:
        async with self.pool.connection(timeout=self.timeout_s) as conn:
            await conn.set_autocommit(True)  # one SELECT: no BEGIN and COMMIT round trips
            try:
                cur = await conn.execute(
                    QUERIES["erased_of"], {"tenant": tenant, "event_ids": list(event_ids)}
                )
                return {str(row[0]) for row in await cur.fetchall()}
            finally:
                try:
                    await conn.set_autocommit(False)  # back to the pool as it came
                except psycopg.Error:  # cut short mid-statement: the pool replaces it
                    await conn.close()


def _retrieve(done: asyncio.Future[set[str]]) -> None:
    """An answer nobody waited for is not an error."""
    if not done.cancelled():
        done.exception()
