"""Whether a project has turned recall injection off, as every recall and brief asks: cached.

The question comes with every prompt of every agent (``POST /v1/recall``) and its answer
changes when someone runs ``agent-memory recall off``, so this process keeps it per (tenant,
project) for ``TTL_S`` seconds, "on" (no row) as well as "off": an agent's prompts come seconds
apart, and most of them then cost no round trip to Postgres for it. A miss is one primary-key
lookup of ``recall_settings`` (on the connection the brief already holds; a recall takes one
from the pool for it, as it would for the lookup without a cache).

A ``PUT`` sets the new value in the cache of the process that served it, so from the next
request there; another replica of the query service sees it when its entry expires, at most
``TTL_S`` later. A lookup that raced with a ``PUT`` of this process is not cached (it may have
read the value before it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.db.postgres import reading
from agent_memory_query.injection import store

TTL_S = 5.0
MAX_ENTRIES = 10_000  # past it the cache starts over: a lookup each, no unbounded growth


class InjectionSwitch:
    def __init__(
        self,
        ttl_s: float = TTL_S,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl_s
        self._max = max_entries
        self._clock = clock
        self._off: dict[tuple[str, str], tuple[bool, float]] = {}  # key -> (off, expires)
        self._sets = 0  # PUTs served by this process: a lookup that spans one is not kept

    def cached(self, tenant: str, project_id: str) -> bool | None:
        """Off (True), on (False), or not known here (None)."""
        hit = self._off.get((tenant, project_id))
        if hit is None or hit[1] <= self._clock():
            return None
        return hit[0]

    def remember(self, tenant: str, project_id: str, off: bool) -> None:
        if len(self._off) >= self._max:
            self._off.clear()
        self._off[(tenant, project_id)] = (off, self._clock() + self._ttl)

    def was_set(self, tenant: str, project_id: str, injection: str) -> None:
        """A ``PUT`` of this process: the new value, at once."""
        self._sets += 1
        self.remember(tenant, project_id, injection == "off")

    async def is_off(self, conn: AsyncConnection[Any], tenant: str, project_id: str) -> bool:
        """On a connection the caller holds (the brief's)."""
        hit = self.cached(tenant, project_id)
        if hit is not None:
            return hit
        sets = self._sets
        injection, _ = await store.switch(conn, tenant, project_id)
        off = injection == "off"
        if sets == self._sets:
            self.remember(tenant, project_id, off)
        return off

    async def is_off_in(self, pool: AsyncConnectionPool, tenant: str, project_id: str) -> bool:
        """With a connection of ``pool``, taken only on a miss (the recall's)."""
        hit = self.cached(tenant, project_id)
        if hit is not None:
            return hit
        async with reading(pool) as conn:
            return await self.is_off(conn, tenant, project_id)
