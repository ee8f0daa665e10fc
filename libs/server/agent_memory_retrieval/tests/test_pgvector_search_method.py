"""pgvector's two ways to answer: exact for a narrow scope, the HNSW graph for a wide one.

The contract suite runs on both ways (``pgvector`` and ``pgvector-graph``); these tests check
the choice between them and that the exact way returns the true nearest neighbours.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import timedelta

import psycopg
import psycopg.pq
import pytest

from agent_memory_common.db.postgres import make_pool
from agent_memory_retrieval.adapters.pgvector_index import (
    EXACT_MAX_ROWS,
    EXACT_MIN_ROWS,
    PgVectorIndex,
    exact_row_limit,
)
from agent_memory_retrieval.docs import IndexDoc, SearchFilter
from agent_memory_retrieval.ports import EMBEDDING_DIM, IndexUnavailableError

T0_OFFSET = timedelta(minutes=1)


def random_unit(rng: random.Random) -> list[float]:
    vec = [rng.gauss(0, 1) for _ in range(EMBEDDING_DIM)]
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec]


def test_the_exact_limit_grows_with_the_table_and_the_depth_within_bounds() -> None:
    # the cross-overs measured at 100,000 vectors: about 9,000 rows for 40, 11,000 for 100
    assert 8_000 <= exact_row_limit(100_000, 40) <= 10_000
    assert 10_000 <= exact_row_limit(100_000, 100) <= 12_000
    assert exact_row_limit(100_000, 10) == exact_row_limit(100_000, 64)  # ef_search floor
    assert exact_row_limit(1_000_000, 40) > exact_row_limit(100_000, 40)
    assert exact_row_limit(0, 40) == EXACT_MIN_ROWS  # unknown size (never analysed)
    assert exact_row_limit(10**10, 300) == EXACT_MAX_ROWS


async def test_a_narrow_scope_is_searched_exactly_a_wide_one_through_the_graph(
    pg_dsn: str, make_doc: Callable[..., IndexDoc]
) -> None:
    index = await PgVectorIndex.open(pg_dsn, exact_max_rows=5)
    try:
        big = [make_doc(i, project_id="big") for i in range(8)]
        small = [make_doc(100 + i, project_id="small") for i in range(3)]
        other = make_doc(200, tenant="globex", project_id="small")
        rng = random.Random(1)
        await index.upsert([*big, *small, other], [random_unit(rng) for _ in range(12)])

        async def method(**flt: object) -> str:
            return await index.search_method(SearchFilter("acme", **flt), 10)  # type: ignore[arg-type]

        assert await method(project_id="small") == "exact"
        assert await method(project_id="big") == "graph"
        assert await method() == "graph"  # the whole tenant: 11 rows
        assert await method(session_id="s1") == "graph"
        assert await method(session_id="nobody") == "exact"
        # make_doc(n) is at T0 + n minutes: the first two of "big" only
        since, until = big[0].ts, big[2].ts
        assert await method(project_id="big", since=since, until=until) == "exact"
        assert await method(since=big[5].ts, until=small[0].ts + T0_OFFSET) == "exact"
        assert await index.search_method(SearchFilter("globex"), 10) == "exact"
    finally:
        await index.close()

    auto = await PgVectorIndex.open(pg_dsn)  # the cost model: a tiny table is all exact
    try:
        assert await auto.search_method(SearchFilter("acme"), 10) == "exact"
    finally:
        await auto.close()
    graph = await PgVectorIndex.open(pg_dsn, exact_max_rows=0)
    try:
        assert await graph.search_method(SearchFilter("acme", project_id="small"), 10) == "graph"
    finally:
        await graph.close()


async def test_exact_search_returns_the_true_nearest_neighbours_in_order(
    pg_dsn: str, make_doc: Callable[..., IndexDoc]
) -> None:
    rng = random.Random(7)
    docs = [make_doc(i, project_id=f"p{i % 4}", kind=rng.choice(["a", "b"])) for i in range(400)]
    vectors = [random_unit(rng) for _ in docs]
    query = random_unit(rng)
    index = await PgVectorIndex.open(pg_dsn)
    try:
        await index.upsert(docs, vectors)
        for flt in (
            SearchFilter("acme", project_id="p1"),
            SearchFilter("acme", project_id="p2", kinds=("b",)),
            SearchFilter("acme"),
        ):
            assert await index.search_method(flt, 15) == "exact"
            hits = await index.search(query, flt, 15)

            def cosine(vec: list[float]) -> float:
                return sum(a * b for a, b in zip(vec, query, strict=True))

            truth = sorted(
                ((cosine(vec), doc.id) for doc, vec in zip(docs, vectors, strict=True)
                 if flt.matches(doc)),
                reverse=True,
            )[:15]  # fmt: skip
            assert [h.id for h in hits] == [doc_id for _, doc_id in truth]
            for hit, (score, _) in zip(hits, truth, strict=True):
                assert hit.score == pytest.approx(score, abs=1e-5)
    finally:
        await index.close()


async def test_a_missing_table_is_an_unavailable_index_on_both_ways(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE vector_docs")
    for exact_max_rows in (None, 0):
        index = await PgVectorIndex.open(pg_dsn, exact_max_rows=exact_max_rows)
        try:
            with pytest.raises(IndexUnavailableError):
                await index.search([1.0] + [0.0] * (EMBEDDING_DIM - 1), SearchFilter("acme"), 5)
            if exact_max_rows is None:  # 0 decides without asking Postgres
                with pytest.raises(IndexUnavailableError):
                    await index.search_method(SearchFilter("acme"), 5)
        finally:
            await index.close()


async def test_a_failed_search_leaves_the_connection_clean_for_the_next(
    pg_dsn: str, make_doc: Callable[..., IndexDoc]
) -> None:
    """The search is pipelined with its own COMMIT: an error skips it, and the connection must
    still go back to the pool out of any transaction (one connection here, so it is reused)."""
    pool = make_pool(pg_dsn, min_size=1, max_size=1)
    await pool.open(wait=True)
    try:
        for exact_max_rows in (None, 0):
            index = await PgVectorIndex.open(pg_dsn, pool=pool, exact_max_rows=exact_max_rows)
            doc = make_doc(1)
            await index.upsert([doc], [[1.0] + [0.0] * (EMBEDDING_DIM - 1)])
            with pytest.raises(psycopg.DataError):  # pgvector refuses NaN (null in the literal)
                await index.search([math.nan] * EMBEDDING_DIM, SearchFilter("acme"), 5)
            hits = await index.search([1.0] + [0.0] * (EMBEDDING_DIM - 1), SearchFilter("acme"), 5)
            assert [h.id for h in hits] == [doc.id]
            async with pool.connection() as conn:
                assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
                cur = await conn.execute("SELECT current_setting('enable_indexscan')")
                assert await cur.fetchone() == ("on",)  # the exact search's setting was local
    finally:
        await pool.close()
