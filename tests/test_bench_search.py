"""``make bench-search``'s stand-in vectors for a million events: unit length, near the model
vectors they are made from, and the same on every run (the figures of two runs compare); and
its bulk load's rebuild of the HNSW graphs."""

from __future__ import annotations

import numpy as np
import psycopg

from tests.bench.bench_search import (
    PARTITION_GRAPHS,
    PARTS_AND_GRAPHS,
    _drop_hnsw,
    stand_in_vectors,
)


def test_stand_ins_are_unit_vectors_near_the_model_ones_and_repeatable() -> None:
    rng = np.random.default_rng(1)
    model = rng.normal(size=(500, 384)).astype(np.float32)
    model /= np.linalg.norm(model, axis=1, keepdims=True)
    stand_ins = stand_in_vectors(model, 250_000, seed=7)
    assert stand_ins.shape == (250_000, 384) and stand_ins.dtype == np.float32
    assert np.allclose(np.linalg.norm(stand_ins, axis=1), 1.0, atol=1e-5)
    # each is closest to the model vector it leans on (weight 1), not a random point
    nearest = (stand_ins[:1000] @ model.T).max(axis=1)
    assert nearest.min() > 0.8
    assert np.array_equal(stand_ins, stand_in_vectors(model, 250_000, seed=7))
    assert not np.array_equal(stand_ins, stand_in_vectors(model, 250_000, seed=8))


async def test_the_bulk_load_rebuilds_every_partitions_graph(pg_dsn: str) -> None:
    """A load of many rows drops the HNSW index and makes it again after them: on the
    partitioned table that must build one graph per partition, valid, not the parent's alone
    (the first 1M run after migration 0020 searched without any graph)."""
    recreate = await _drop_hnsw(pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        assert conn.execute(GRAPHS).fetchone() == (0, 0)
        conn.execute(recreate)
        assert conn.execute(GRAPHS).fetchone() == (4, 4)
        prewarmed = [r[0] for r in conn.execute(PARTS_AND_GRAPHS).fetchall()]
        assert len(prewarmed) == 8 and "vector_docs_p0" in prewarmed  # 4 tables, 4 graphs
        parent = conn.execute(
            "SELECT x.indisvalid FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid"
            " WHERE c.relname = 'vector_docs_embedding_hnsw'"
        ).fetchone()
        assert parent == (True,)


GRAPHS = f"SELECT count(*), count(*) FILTER (WHERE g.valid) FROM ({PARTITION_GRAPHS}) AS g"
