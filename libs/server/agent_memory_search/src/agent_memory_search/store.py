"""Postgres side of search: the raw event scan (last tier of the fallback chain) and the access
counts behind the usage factor. Static SQL is in ``sql/search.sql``; the scan is composed with
``psycopg.sql`` because its filters are optional.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg
from psycopg import AsyncConnection, sql
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.memory import (
    MARKER_TYPES,
    RUNTIME_KIND,
    RUNTIME_TYPE,
)
from agent_memory_common.core.logs import get_logger
from agent_memory_common.db.postgres import load_queries
from agent_memory_retrieval.docs import (
    DEFAULT_KIND,
    Hit,
    IndexDoc,
    SearchFilter,
)
from agent_memory_retrieval.indexing.sources import event_doc
from agent_memory_search.event_scope import event_conditions

QUERIES = load_queries(__package__ or "", "sql/search.sql")
log = get_logger(__name__)

# The raw scan reads every matching row of the tenant, so it gets a hard time limit: a slow
# answer from the last tier is still better than none, an endless one is not.
SCAN_TIMEOUT_MS = 3000
_TERM = re.compile(r"[^\W_]+", re.UNICODE)
_FTS = sql.SQL("to_tsvector('english', text)")


def scan_terms(query: str, max_terms: int = 24) -> list[str]:
    """Alphanumeric words only, so the tsquery we build can never be a syntax error."""
    seen: dict[str, None] = {}
    for word in _TERM.findall(query.lower()):
        if len(word) > 1 or word.isdigit():
            seen.setdefault(word, None)
    return list(seen)[:max_terms]


_NOT_DUPLICATE = sql.SQL(
    "NOT EXISTS (SELECT 1 FROM event_duplicates AS d"
    " WHERE d.tenant = events.tenant AND d.event_id = events.event_id)"
)


# What people said: prompts, replies and notes (not tool calls, their output or markers).
_PROSE = sql.SQL("(type IN ('message', 'note') AND role IN ('user', 'assistant'))")
# What the indexes leave out (``sources.indexed``): session markers, what the runtime wrote and
# an edit's "applied". The scan finds what BM25 has not indexed yet, and must not find what it
# never will.
_INDEXED = sql.SQL(
    "type NOT IN ({markers})"
    " AND NOT (type = 'tool_result' AND metadata->>'tool_kind' IN ('edit', 'write')"
    " AND rtrim(text) LIKE '%%: applied' AND position(E'\\n' IN btrim(text)) = 0)"
).format(markers=sql.SQL(", ").join(sql.Literal(t) for t in sorted(MARKER_TYPES | {RUNTIME_TYPE})))
# ...unless a search asks for what the runtime wrote by its kind (``RUNTIME_KIND``): then the
# scan is where it is found, the indexes never hold it.
_INDEXED_OR_RUNTIME = sql.SQL("(type = {runtime} OR ({indexed}))").format(
    runtime=sql.Literal(RUNTIME_TYPE), indexed=_INDEXED
)
# An event's kind as ``sources.event_doc`` gives it: the runtime's own, else the summarizer's.
_KIND = sql.SQL(
    "CASE WHEN type = {runtime} THEN {runtime_kind}"
    " ELSE coalesce(metadata->>'memory_kind', {default}) END"
).format(
    runtime=sql.Literal(RUNTIME_TYPE),
    runtime_kind=sql.Literal(RUNTIME_KIND),
    default=sql.Literal(DEFAULT_KIND),
)


def _event_doc(row: dict[str, Any]) -> IndexDoc:
    """The same document the indexers make of this event (kind from metadata, salience)."""
    return event_doc(Event.from_row(row))


async def scan_events(
    conn: AsyncConnection, query: str, flt: SearchFilter, limit: int, newest: int | None = None
) -> list[Hit]:
    """Full-text match of the query's words (any of them) over the events table, best first.

    With no usable word (a query that was only a time expression, "what did we do yesterday")
    it browses instead: the newest prompts and replies inside the filter, then the newest of
    the rest. What the indexes leave out (session markers, an edit's "applied") is left out
    here too. Events are the only type here,
    so a filter that excludes events (or asks for a kind events are not) returns nothing.

    ``newest``: match only among the last ``newest`` events recorded (by ``seq``, whatever
    their timestamps), the ones BM25 may not have indexed yet. There is no full-text index on
    the events table, so a match tokenizes every row in scope: ~50 microseconds a row here,
    more than the tier's 2 s for the whole of a 1,000,000-event store.
    """
    if flt.types is not None and "event" not in flt.types:
        return []
    if flt.levels is not None and "event" not in flt.levels:
        return []
    params: dict[str, Any] = {"limit": limit}
    where = event_conditions(flt, params)
    where.append(_NOT_DUPLICATE)  # a duplicate is found through its original only
    runtime = flt.kinds is not None and RUNTIME_KIND in flt.kinds
    where.append(_INDEXED_OR_RUNTIME if runtime else _INDEXED)
    terms = scan_terms(query)
    if flt.kinds is not None:  # events carry their kind in metadata (default: observation)
        params["kinds"] = list(flt.kinds)
        where.append(sql.SQL("{} = ANY(%(kinds)s)").format(_KIND))
    if terms:
        params["tsq"] = " | ".join(terms)
        if newest is not None:
            params["newest"] = newest
            where.append(sql.SQL("seq > (SELECT coalesce(max(seq), 0) FROM events) - %(newest)s"))
        where.append(sql.SQL("{fts} @@ q").format(fts=_FTS))
        stmt = sql.SQL(
            "SELECT tenant, event_id, ts, project_id, agent_id, session_id, role, type, text,"
            " metadata, ts_rank_cd({fts}, q) AS rank"
            " FROM events, to_tsquery('english', %(tsq)s) AS q"
            " WHERE {where} ORDER BY rank DESC, ts DESC, seq DESC LIMIT %(limit)s"
        ).format(fts=_FTS, where=sql.SQL(" AND ").join(where))
    else:
        # Browsing a period: people's words first (a day of coding is mostly tool calls and
        # their output, and an overview of it is what was said), then the rest, newest first
        # in each. Two index scans, each stopping at ``limit``.
        cond = sql.SQL(" AND ").join(where)
        stmt = sql.SQL(
            "(SELECT tenant, event_id, ts, project_id, agent_id, session_id, role, type, text,"
            " metadata, 0.0 AS rank, 0 AS part FROM events WHERE {where} AND {prose}"
            " ORDER BY ts DESC, seq DESC LIMIT %(limit)s)"
            " UNION ALL "
            "(SELECT tenant, event_id, ts, project_id, agent_id, session_id, role, type, text,"
            " metadata, 0.0 AS rank, 1 AS part FROM events WHERE {where} AND NOT {prose}"
            " ORDER BY ts DESC, seq DESC LIMIT %(limit)s)"
            " ORDER BY part, ts DESC LIMIT %(limit)s"
        ).format(where=cond, prose=_PROSE)
    async with conn.transaction():
        await conn.execute(sql.SQL("SET LOCAL statement_timeout = {}").format(SCAN_TIMEOUT_MS))
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(stmt, params)
            rows = await cur.fetchall()
    return [Hit(id=(doc := _event_doc(r)).id, score=float(r["rank"]), doc=doc) for r in rows]


async def access_counts(conn: AsyncConnection, tenant: str, ids: Sequence[str]) -> dict[str, int]:
    if not ids:
        return {}
    cur = await conn.execute(QUERIES["access_counts"], {"tenant": tenant, "ids": list(ids)})
    return {str(item): int(count) for item, count in await cur.fetchall()}


async def roles_of(conn: AsyncConnection, tenant: str, ids: Sequence[str]) -> dict[str, str]:
    """Each stored event's role (``user``, ``assistant``, ``tool`` ...); an unknown id: none."""
    if not ids:
        return {}
    params = {"tenant": tenant, "ids": list(dict.fromkeys(ids))}
    cur = await conn.execute(QUERIES["roles_of"], params)
    return {str(event_id): str(role) for event_id, role in await cur.fetchall()}


class AccessRecorder:
    """Counts used items (opened by id, pinned: ``agent_memory_query.search.usage``; never a
    search's results) in memory and adds them to ``search_access`` in the background.

    A request never waits for this write: it only appends to a counter. A flush every
    ``interval_s`` turns the counter into one batched upsert; if Postgres is away the counts
    are kept (up to ``max_pending`` items) and retried, and beyond that the usage history is
    the part we give up, never the search.
    """

    def __init__(
        self, pool: AsyncConnectionPool, *, interval_s: float = 0.5, max_pending: int = 100_000
    ) -> None:
        self._pool = pool
        self._interval = interval_s
        self._max_pending = max_pending
        self._pending: Counter[tuple[str, str]] = Counter()
        self._task: asyncio.Task[None] | None = None

    def record(self, tenant: str, ids: Iterable[str]) -> None:
        for item in ids:
            key = (tenant, item)
            if key in self._pending or len(self._pending) < self._max_pending:
                self._pending[key] += 1

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="access-recorder")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.flush()

    async def flush(self) -> None:
        if not self._pending:
            return
        batch, self._pending = self._pending, Counter()
        keys = sorted(batch)
        params = {
            "tenants": [t for t, _ in keys],
            "ids": [i for _, i in keys],
            "counts": [batch[k] for k in keys],
        }
        try:
            async with self._pool.connection(timeout=5) as conn:
                await conn.execute(QUERIES["add_access"], params)
        except (psycopg.Error, TimeoutError, OSError) as exc:
            log.warning("search.access_flush_failed", error=str(exc), items=len(keys))
            for key, count in batch.items():  # keep them for the next flush
                if key in self._pending or len(self._pending) < self._max_pending:
                    self._pending[key] += count

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.flush()
