"""``VectorIndex`` on pgvector: an HNSW (cosine) index in the system-of-record Postgres.

The embedded default: no extra server, readable by every process. The table comes from
migration ``0004_vectors.sql``. Filters are plain ``WHERE`` clauses next to the
``ORDER BY embedding <=> q``.

The table is split into 4 partitions by hash of (tenant, project_id) (migration
``0020_vector_partitions.sql``), each with its own HNSW graph: a search that names a project
reads one partition, whose graph holds that project and the few others hashed with it; one
that does not reads all four and merges their answers (Postgres's Merge Append). At 1,000,000
vectors in 20 projects, 2 cores, graph search p50: one project 21.7 -> 6.9 ms, every project
1.9 -> 8.2 ms (8 partitions: 4.6 and 16.1 ms; the migration has the table). The graphs hold
the vectors at half precision (migration ``0023_vector_graphs_halfvec.sql``): 43 % smaller,
inserts a fifth cheaper; what a graph finds is ordered by the exact float32 distance.

Two ways to answer, chosen per search from the size of the filtered scope:

- through the HNSW graphs, with pgvector 0.8's iterative scan, so a filtered search does not
  come back short. A graph walks about ``max(ef_search, limit) * graph rows / scope rows``
  nodes before the filters have let enough through: cheap for a wide scope, dear for a
  narrow one (one session of a busy project);
- exactly: the btree indexes on (tenant, project_id, ts), (tenant, ts) and
  (tenant, session_id) fetch the scope, and every row of it is ranked. Cost grows with the
  scope's rows, and the answer is the true nearest neighbours (the graph's is approximate).

Postgres's planner makes this choice badly (for one project of twenty at 100,000 vectors in
one graph it took the graph: 22 ms against 11 ms exact, and the graph found 97 % of the true
top 40), so the adapter makes it: it counts the scope's rows (index-only, stopped at the
limit that matters) and the rows of the graphs it would walk (the planner's counts of the
partitions), both cached for ``SCOPE_TTL_S``, and compares with ``exact_row_limit``.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import orjson
import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.db.postgres import load_queries, make_pool
from agent_memory_retrieval.docs import Hit, IndexDoc, SearchFilter, as_utc
from agent_memory_retrieval.ports import EMBEDDING_DIM, IndexUnavailableError

QUERIES = load_queries("agent_memory_retrieval.adapters", "sql/pgvector.sql")
# The graphs order by half-precision vectors (migration 0023); an exact search ranks the
# stored float32 ones, so its answer is the true nearest neighbours, not the nearly true.
GRAPH_ORDER = "ORDER BY embedding::halfvec(384) <=> %(vec)s::halfvec(384)"
EXACT_ORDER = "ORDER BY embedding <=> %(vec)s::vector"
if GRAPH_ORDER not in QUERIES["search"]:  # a change of one must be a change of both
    raise RuntimeError(f"pgvector.sql search: no {GRAPH_ORDER!r} to swap for exact search")
QUERIES["search_exact"] = QUERIES["search"].replace(GRAPH_ORDER, EXACT_ORDER)
EF_SEARCH = 64
# Exact search wins while scope_rows ** 2 <= EXACT_RATIO * max(ef_search, limit) * graph_rows:
# a node the graph visits costs about EXACT_RATIO rows of an exact scan (its neighbours'
# distances and a heap fetch for the filters). Measured at 100,000 vectors, 2 cores: the
# cross-over is near 9,000 rows for limit 40 and 12,000 for limit 100 (ratio 12 to 14).
EXACT_RATIO = 12
EXACT_MIN_ROWS = 1_000  # exact below this whatever the table: a millisecond or two
EXACT_MAX_ROWS = 50_000  # never above: bounds an exact search at a few tens of ms
SCOPE_TTL_S = 30.0  # how long a scope's row count and the table's size are trusted
SCOPE_CACHE_SIZE = 1024
_UNAVAILABLE = (
    psycopg.OperationalError,  # includes the pool's PoolTimeout
    psycopg.InterfaceError,
    psycopg.errors.UndefinedTable,
    TimeoutError,
)


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form; checked here so a wrong model fails loudly, not in SQL.

    Each component as the shortest text that reads back as the same float32, which pgvector
    stores: exact (seven significant digits were not always), and written by orjson in C, 16
    microseconds a vector against 230 for Python's formatting, once per search and once per
    row the embedder writes."""
    values = np.asarray(vector, dtype=np.float32)
    if values.shape != (EMBEDDING_DIM,):
        raise ValueError(f"expected a {EMBEDDING_DIM}-d vector, got shape {values.shape}")
    return orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY).decode()


def exact_row_limit(graph_rows: int, limit: int) -> int:
    """The largest scope (rows matching the filters) that is searched exactly, when the
    graph search would walk graphs of ``graph_rows`` in all."""
    by_cost = math.isqrt(EXACT_RATIO * max(EF_SEARCH, limit) * max(graph_rows, 0))
    return max(EXACT_MIN_ROWS, min(EXACT_MAX_ROWS, by_cost))


_ScopeKey = tuple[str, str | None, str | None, datetime | None, datetime | None]
_GraphKey = tuple[str, str | None]


@dataclass(frozen=True)
class _Count:
    rows: int  # counted up to a cap; ``capped``: there are at least this many
    capped: bool
    expires: float


class PgVectorIndex:
    def __init__(
        self, pool: AsyncConnectionPool, *, owns_pool: bool, exact_max_rows: int | None = None
    ) -> None:
        """``exact_max_rows``: a fixed scope limit for exact search instead of
        ``exact_row_limit`` (0: always the graph), for tests of both ways."""
        self._pool = pool
        self._owns_pool = owns_pool
        self._exact_max_rows = exact_max_rows
        self._scopes: OrderedDict[_ScopeKey, _Count] = OrderedDict()
        self._graphs: OrderedDict[_GraphKey, _Count] = OrderedDict()

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        pool: AsyncConnectionPool | None = None,
        exact_max_rows: int | None = None,
    ) -> PgVectorIndex:
        if pool is not None:
            return cls(pool, owns_pool=False, exact_max_rows=exact_max_rows)
        own = make_pool(dsn, min_size=1, max_size=2)
        await own.open(wait=False)  # Postgres may be down: connect in the background
        return cls(own, owns_pool=True, exact_max_rows=exact_max_rows)

    async def upsert(self, docs: Sequence[IndexDoc], vectors: Sequence[Sequence[float]]) -> None:
        if len(docs) != len(vectors):
            raise ValueError(f"{len(docs)} documents but {len(vectors)} vectors")
        if not docs:
            return
        rows = {
            doc.id: {
                "id": doc.id,
                "tenant": doc.tenant,
                "type": doc.type,
                "project_id": doc.project_id,
                "agent_id": doc.agent_id,
                "session_id": doc.session_id,
                "ts": as_utc(doc.ts),
                "level": doc.level,
                "kind": doc.kind,
                "salience": float(doc.salience),
                "title": doc.title,
                "text": doc.text,
                "event_ids": list(doc.event_ids),
                "embedding": vector_literal(vec),
            }
            for doc, vec in zip(docs, vectors, strict=True)
        }
        # sorted ids: concurrent writers lock rows in the same order, so they cannot deadlock
        ordered = [rows[k] for k in sorted(rows)]
        keys = {
            "ids": [r["id"] for r in ordered],
            "tenants": [r["tenant"] for r in ordered],
            "projects": [r["project_id"] for r in ordered],
        }
        try:
            async with (
                self._pool.connection() as conn,
                conn.transaction(),
                conn.cursor() as cur,
            ):
                await cur.execute(QUERIES["remove_moved"], keys)
                await cur.executemany(QUERIES["upsert"], ordered)
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"pgvector: {exc}") from exc

    async def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        await self._execute("delete", {"ids": list(ids)})

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        try:
            async with self._pool.connection() as conn:
                cur = await conn.execute(QUERIES["vectors"], {"ids": list(ids)})
                rows = await cur.fetchall()
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"pgvector: {exc}") from exc
        # pgvector's text form is '[x,y,...]', a JSON array
        return {str(row[0]): [float(x) for x in orjson.loads(row[1])] for row in rows}

    async def clear(self) -> None:
        await self._execute("clear", {})

    async def _execute(self, name: str, params: dict[str, Any]) -> None:
        try:
            async with self._pool.connection() as conn, conn.transaction():
                await conn.execute(QUERIES[name], params)
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"pgvector: {exc}") from exc

    async def search(self, vector: Sequence[float], flt: SearchFilter, limit: int) -> list[Hit]:
        if limit <= 0:
            return []
        params: dict[str, Any] = {
            "vec": vector_literal(vector),
            "tenant": flt.tenant,
            "project_id": flt.project_id,
            "agent_id": flt.agent_id,
            "session_id": flt.session_id,
            "since": as_utc(flt.since) if flt.since is not None else None,
            "until": as_utc(flt.until) if flt.until is not None else None,
            "types": list(flt.types) if flt.types is not None else None,
            "kinds": list(flt.kinds) if flt.kinds is not None else None,
            "levels": list(flt.levels) if flt.levels is not None else None,
            "limit": limit,
        }
        try:
            async with (
                self._pool.connection() as conn,
                conn.cursor(row_factory=dict_row) as cur,
            ):
                # Two round trips, not four: psycopg sends its BEGIN alone, then the settings,
                # the search and COMMIT go together and the end of the pipeline brings their
                # results back (conn.transaction() or conn.commit() would each add a Sync).
                # On an error the COMMIT is skipped and the pool's context rolls back.
                async with conn.pipeline():
                    if exact := await self._exact(conn, flt, limit):
                        await conn.execute(QUERIES["exact_settings"])
                    else:
                        ef_search = str(max(EF_SEARCH, limit))
                        await conn.execute(QUERIES["search_settings"], {"ef_search": ef_search})
                    # never a prepared generic plan: the NULL-able filters must fold away
                    query = QUERIES["search_exact" if exact else "search"]
                    await cur.execute(query, params, prepare=False)
                    await conn.execute("COMMIT")
                rows = await cur.fetchall()
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"pgvector: {exc}") from exc
        return [
            Hit(id=row["id"], score=1.0 - float(row["distance"]), doc=_doc(row)) for row in rows
        ]

    async def search_method(self, flt: SearchFilter, limit: int) -> str:
        """``"exact"`` or ``"graph"``: how ``search`` would answer now (for tests and tuning)."""
        try:
            async with self._pool.connection() as conn, conn.transaction():
                return "exact" if await self._exact(conn, flt, limit) else "graph"
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"pgvector: {exc}") from exc

    async def _exact(
        self, conn: psycopg.AsyncConnection[Any], flt: SearchFilter, limit: int
    ) -> bool:
        """Whether the scope is small enough to rank every row of it (see the module doc).

        The scope is counted on the columns the btree indexes hold (tenant, project, session,
        time), so the count reads the index only; agent, type, kind and level filters make the
        real scope smaller still, which only favours exact search more.
        """
        now = time.monotonic()
        if self._exact_max_rows is not None:
            cap = self._exact_max_rows
        else:
            cap = exact_row_limit(await self._graph_rows(conn, flt, now), limit)
        if cap <= 0:
            return False
        key: _ScopeKey = (flt.tenant, flt.project_id, flt.session_id, flt.since, flt.until)
        known = self._scopes.get(key)
        if known is None or known.expires <= now or (known.capped and known.rows <= cap):
            params = {
                "tenant": flt.tenant,
                "project_id": flt.project_id,
                "session_id": flt.session_id,
                "since": as_utc(flt.since) if flt.since is not None else None,
                "until": as_utc(flt.until) if flt.until is not None else None,
                "cap": cap + 1,
            }
            cur = await conn.execute(QUERIES["scope_rows"], params, prepare=False)
            row = await cur.fetchone()
            rows = int(row[0]) if row else 0
            known = _Count(rows, rows > cap, now + SCOPE_TTL_S)
            self._scopes[key] = known
            while len(self._scopes) > SCOPE_CACHE_SIZE:
                self._scopes.popitem(last=False)
        self._scopes.move_to_end(key)
        return known.rows <= cap

    async def _graph_rows(
        self, conn: psycopg.AsyncConnection[Any], flt: SearchFilter, now: float
    ) -> int:
        """Rows of the graphs a search of ``flt`` walks: its project's partition, or all."""
        key: _GraphKey = (flt.tenant, flt.project_id)
        known = self._graphs.get(key)
        if known is None or known.expires <= now:
            params = {"tenant": flt.tenant, "project_id": flt.project_id}
            cur = await conn.execute(QUERIES["graph_rows"], params, prepare=False)
            row = await cur.fetchone()
            known = _Count(int(row[0]) if row else 0, False, now + SCOPE_TTL_S)
            self._graphs[key] = known
            while len(self._graphs) > SCOPE_CACHE_SIZE:
                self._graphs.popitem(last=False)
        self._graphs.move_to_end(key)
        return known.rows

    async def count(self, tenant: str) -> int:
        try:
            async with self._pool.connection() as conn:
                cur = await conn.execute(QUERIES["count"], {"tenant": tenant})
                row = await cur.fetchone()
        except _UNAVAILABLE as exc:
            raise IndexUnavailableError(f"pgvector: {exc}") from exc
        return int(row[0]) if row else 0

    async def healthy(self) -> bool:
        try:
            async with self._pool.connection(timeout=2.0) as conn:
                await conn.execute(QUERIES["healthy"])
        except (psycopg.Error, TimeoutError, OSError):  # PoolTimeout is an OperationalError
            return False
        return True

    async def close(self) -> None:
        if self._owns_pool:
            await self._pool.close()


def _doc(row: dict[str, Any]) -> IndexDoc:
    return IndexDoc(
        id=row["id"],
        type=row["type"],
        tenant=row["tenant"],
        project_id=row["project_id"],
        agent_id=row["agent_id"],
        session_id=row["session_id"],
        ts=as_utc(row["ts"]),
        level=row["level"],
        kind=row["kind"],
        salience=float(row["salience"]),
        title=row["title"],
        text=row["text"],
        event_ids=tuple(row["event_ids"]),
    )
