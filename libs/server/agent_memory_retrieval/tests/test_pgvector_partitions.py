"""pgvector's table in partitions by (tenant, project): one graph per partition (migration 0020).

A search that names a project must read one partition only (that is the whole point: its
graph walk skips the other projects); one that does not must read them all and still rank
across them; a doc is never stored twice; and rows written before the migration survive it.
"""

from __future__ import annotations

import math
import random
import re
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
import psycopg
import pytest
from psycopg import sql

from agent_memory_common.db.postgres import apply_migrations, migrations
from agent_memory_embedded import PostgresServer
from agent_memory_retrieval.adapters.pgvector_index import QUERIES, PgVectorIndex, vector_literal
from agent_memory_retrieval.docs import IndexDoc, SearchFilter
from agent_memory_retrieval.ports import EMBEDDING_DIM

PARTITIONS = 4


def random_unit(rng: random.Random) -> list[float]:
    vec = [rng.gauss(0, 1) for _ in range(EMBEDDING_DIM)]
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec]


def search_params(vec: list[float], **flt: Any) -> dict[str, Any]:
    params: dict[str, Any] = dict.fromkeys(
        ("project_id", "agent_id", "session_id", "since", "until", "types", "kinds", "levels")
    )
    return {**params, "vec": vector_literal(vec), "tenant": "acme", "limit": 10, **flt}


def partitions_read(dsn: str, params: dict[str, Any]) -> set[str]:
    """The partitions the graph search's plan scans (pruned ones do not appear)."""
    with psycopg.connect(dsn, autocommit=True) as conn, conn.transaction():
        conn.execute(QUERIES["search_settings"], {"ef_search": "64"})
        rows = conn.execute(
            "EXPLAIN (COSTS OFF) " + QUERIES["search"], params, prepare=False
        ).fetchall()
    plan = "\n".join(r[0] for r in rows)
    return set(re.findall(r"\bon (vector_docs_p\d+)\b", plan))


async def test_a_project_search_reads_one_partition_and_an_unscoped_one_all(
    pg_dsn: str, make_doc: Callable[..., IndexDoc]
) -> None:
    rng = random.Random(5)
    docs = [make_doc(i, project_id=f"p{i % 12}") for i in range(240)]
    vectors = [random_unit(rng) for _ in docs]
    index = await PgVectorIndex.open(pg_dsn, exact_max_rows=0)  # always the graphs
    try:
        await index.upsert(docs, vectors)
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            holding = {
                str(r[0])
                for r in conn.execute("SELECT DISTINCT tableoid::regclass FROM vector_docs")
            }
        assert len(holding) == PARTITIONS  # twelve projects spread over every partition
        query = random_unit(rng)
        for project in ("p0", "p7"):
            read = partitions_read(pg_dsn, search_params(query, project_id=project))
            assert len(read) == 1, read
        assert partitions_read(pg_dsn, search_params(query)) == holding

        # the unscoped answer ranks across partitions: the true nearest of every project
        hits = await index.search(query, SearchFilter("acme"), 10)
        truth = sorted(
            ((sum(a * b for a, b in zip(v, query, strict=True)), d.id)
             for d, v in zip(docs, vectors, strict=True)),
            reverse=True,
        )[:10]  # fmt: skip
        assert [h.id for h in hits] == [doc_id for _, doc_id in truth]
        assert len({h.doc.project_id for h in hits}) > 1
    finally:
        await index.close()


def test_a_graph_search_walks_the_half_precision_graphs_and_an_exact_one_none(
    pg_dsn: str,
) -> None:
    """The graphs hold half-precision vectors (migration 0023), so the graph search must order
    by the same expression, or the planner cannot walk them and sorts every row instead; the
    exact search orders by the stored float32 vectors."""
    params = search_params([1.0 / math.sqrt(EMBEDDING_DIM)] * EMBEDDING_DIM)
    with psycopg.connect(pg_dsn, autocommit=True) as conn, conn.transaction():
        conn.execute(QUERIES["search_settings"], {"ef_search": "64"})
        conn.execute("SET LOCAL enable_seqscan = off")  # an empty table would be read whole
        graph = "\n".join(
            str(r[0]) for r in conn.execute("EXPLAIN " + QUERIES["search"], params).fetchall()
        )
    with psycopg.connect(pg_dsn, autocommit=True) as conn, conn.transaction():
        conn.execute(QUERIES["exact_settings"])
        exact = "\n".join(
            str(r[0]) for r in conn.execute("EXPLAIN " + QUERIES["search_exact"], params).fetchall()
        )
    # an index scan that orders by distance is a graph walk (a btree scan has no "Order By")
    walks = re.findall(r"Order By: \(\(embedding\)::halfvec\(384\) <=>", graph)
    assert len(walks) == PARTITIONS, graph
    assert "::halfvec" not in exact and "Order By:" not in exact, exact


async def test_a_doc_written_under_another_project_is_stored_once(
    pg_dsn: str, make_doc: Callable[..., IndexDoc]
) -> None:
    """The primary key includes the partition key, so the upsert alone would keep both."""
    rng = random.Random(9)
    index = await PgVectorIndex.open(pg_dsn)
    try:
        first = make_doc(1, project_id="alpha")
        await index.upsert([first, make_doc(2)], [random_unit(rng), random_unit(rng)])
        moved = make_doc(1, project_id="omega", text="moved")
        await index.upsert([moved], [random_unit(rng)])
        await index.upsert([moved], [random_unit(rng)])  # a redelivery changes nothing
        with psycopg.connect(pg_dsn) as conn:
            rows = conn.execute(
                "SELECT project_id, text FROM vector_docs WHERE id = %s", (first.id,)
            ).fetchall()
        assert rows == [("omega", "moved")]
        assert await index.count("acme") == 2
        hits = await index.search(random_unit(rng), SearchFilter("acme", project_id="alpha"), 5)
        assert hits == []
    finally:
        await index.close()


def test_the_graph_rows_are_those_of_the_projects_partition(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO vector_docs (id, tenant, type, project_id, agent_id, session_id, ts,"
            " level, kind, salience, title, text, event_ids, embedding)"
            " SELECT 'event:acme:' || n, 'acme', 'event', 'p' || (n %% 6), 'a', 's', now(),"
            " 'event', 'observation', 0.5, '', 'x', ARRAY['e'], %s::vector"
            " FROM generate_series(1, 600) AS n",
            (vector_literal([1.0] + [0.0] * (EMBEDDING_DIM - 1)),),
        )
        conn.execute("ANALYZE vector_docs")

        def graph_rows(project: str | None) -> int:
            row = conn.execute(
                QUERIES["graph_rows"], {"tenant": "acme", "project_id": project}
            ).fetchone()
            assert row is not None
            return int(row[0])

        for project in ("p0", "p3"):
            (partition_rows,) = conn.execute(
                "SELECT count(*) FROM vector_docs WHERE tableoid = (SELECT tableoid"
                " FROM vector_docs WHERE project_id = %s LIMIT 1)",
                (project,),
            ).fetchone() or (0,)
            assert 100 <= graph_rows(project) == partition_rows < 600
        assert graph_rows(None) == 600
        assert graph_rows("nowhere") == 0  # no rows: searched exactly, whatever the table


def test_rows_written_before_the_partitions_survive_the_migration(
    pg_server: PostgresServer,
) -> None:
    """A database at migration 0019 with vectors in one table: 0020 moves every row."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = pg_server.dsn(name)
    rng = random.Random(3)
    vectors = [random_unit(rng) for _ in range(50)]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version, name, text in migrations():
            if version >= 20:
                break
            with conn.transaction():
                conn.execute(text.encode())
                conn.execute("INSERT INTO schema_migrations VALUES (%s, %s)", (version, name))
        for n, vec in enumerate(vectors):
            conn.execute(
                "INSERT INTO vector_docs (id, tenant, type, project_id, agent_id, session_id,"
                " ts, level, kind, salience, title, text, event_ids, embedding)"
                " VALUES (%s, 'acme', 'event', %s, 'a', 's', now(), 'event', 'decision', 0.9,"
                " '', %s, ARRAY[%s], %s::vector)",
                (f"event:acme:e{n}", f"p{n % 5}", f"text {n}", f"e{n}", vector_literal(vec)),
            )
        before = conn.execute(
            "SELECT id, project_id, text, embedding::text FROM vector_docs ORDER BY id"
        ).fetchall()
    assert "0020_vector_partitions.sql" in apply_migrations(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        after = conn.execute(
            "SELECT id, project_id, text, embedding::text FROM vector_docs ORDER BY id"
        ).fetchall()
        kind = conn.execute(
            "SELECT relkind FROM pg_class WHERE oid = 'vector_docs'::regclass"
        ).fetchone()
        graphs = conn.execute(
            "SELECT count(*) FROM pg_inherits i JOIN pg_index x ON x.indrelid = i.inhrelid"
            " JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_am a ON a.oid = c.relam"
            " WHERE i.inhparent = 'vector_docs'::regclass AND a.amname = 'hnsw'"
        ).fetchone()
    assert after == before and len(after) == 50
    assert kind == ("p",)
    assert graphs == (PARTITIONS,)


def test_the_move_check_probes_the_primary_keys_not_every_row(pg_dsn: str) -> None:
    """It runs before every write of the embedder: a scan of the table there made a load of
    a million vectors quadratic (116 ms a batch at 240,000 rows, 0.6 ms with the probes)."""
    ids = [f"event:acme:e{n}" for n in range(64)]
    params = {"ids": ids, "tenants": ["acme"] * 64, "projects": ["p"] * 64}
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("SET enable_seqscan = off")  # a tiny table: judge the plan, not its cost
        plan = "\n".join(
            str(r[0]) for r in conn.execute("EXPLAIN " + QUERIES["remove_moved"], params).fetchall()
        )
    assert plan.count("Index Cond: (id = ANY") == PARTITIONS, plan


def test_a_vector_is_stored_as_the_float32_values_it_was_given(pg_dsn: str) -> None:
    """pgvector keeps float32: the literal must read back as exactly those values."""
    vec = random_unit(random.Random(3))
    with psycopg.connect(pg_dsn) as conn:
        row = conn.execute("SELECT %s::vector::text", (vector_literal(vec),)).fetchone()
    assert row is not None
    stored = np.asarray(orjson.loads(row[0]), dtype=np.float32)
    assert np.array_equal(stored, np.asarray(vec, dtype=np.float32))


def test_a_vector_of_the_wrong_size_is_refused_before_sql() -> None:
    with pytest.raises(ValueError, match="384-d"):
        vector_literal([0.1] * (EMBEDDING_DIM - 1))
    with pytest.raises(ValueError, match="384-d"):
        vector_literal([[0.1] * EMBEDDING_DIM])  # a batch of one is not a vector
