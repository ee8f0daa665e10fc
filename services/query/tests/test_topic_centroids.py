"""Topic centroids cached in the query process, on the real Postgres: a search reads only the
topics written since the last search of its scope, and never answers from a stale one."""

from __future__ import annotations

import psycopg

from agent_memory_embedded.servers import PostgresServer
from agent_memory_query.topics import store
from agent_memory_query.topics.centroids import CentroidCache
from tests.stack import create_database

DIM = 4


def _put(conn: psycopg.Connection, topic_id: str, project: str, centroid: list[float]) -> None:
    conn.execute(
        "INSERT INTO topics (tenant, topic_id, project_id, label, keywords, centroid)"
        " VALUES ('t', %s, %s, %s, %s, %s)"
        " ON CONFLICT (tenant, topic_id) DO UPDATE SET centroid = EXCLUDED.centroid,"
        " updated_at = now()",
        (topic_id, project, f"label {topic_id}", ["kw"], centroid),
    )


def _axis(i: int) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(DIM)]


async def _scope(cache: CentroidCache, dsn: str, project: str | None) -> dict[str, list[float]]:
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        scope = await cache.scope(conn, "t", project)
    return {t.topic_id: [float(x) for x in t.centroid] for t in scope.topics}


async def test_only_new_and_changed_topics_are_read_again(pg_dsn: str) -> None:
    cache = CentroidCache()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for i in range(3):
            _put(conn, f"topic:{i}", "p", _axis(i))
        _put(conn, "topic:other", "q", _axis(3))
    assert await _scope(cache, pg_dsn, "p") == {f"topic:{i}": _axis(i) for i in range(3)}
    assert cache.rows_read == 3
    assert len(await _scope(cache, pg_dsn, "p")) == 3
    assert cache.rows_read == 3  # nothing changed: nothing read

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _put(conn, "topic:1", "p", _axis(3))  # reclustered: the centroid moved
        conn.execute("DELETE FROM topics WHERE topic_id = 'topic:2'")  # merged away or erased
        _put(conn, "topic:new", "p", _axis(2))
    assert await _scope(cache, pg_dsn, "p") == {
        "topic:0": _axis(0),
        "topic:1": _axis(3),
        "topic:new": _axis(2),
    }
    assert cache.rows_read == 3 + 2  # the moved one and the new one
    # the whole tenant is a scope of its own
    assert set(await _scope(cache, pg_dsn, None)) == {
        "topic:0",
        "topic:1",
        "topic:new",
        "topic:other",
    }


async def test_the_same_ids_in_another_database_are_not_taken_from_the_cache(
    pg_dsn: str, pg_server: PostgresServer
) -> None:
    cache = CentroidCache()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _put(conn, "topic:0", "p", _axis(0))
    other = create_database(pg_server)
    with psycopg.connect(other, autocommit=True) as conn:
        _put(conn, "topic:0", "p", _axis(1))
    assert await _scope(cache, pg_dsn, "p") == {"topic:0": _axis(0)}
    assert await _scope(cache, other, "p") == {"topic:0": _axis(1)}


async def test_search_ranks_by_the_centroids_of_now(pg_dsn: str) -> None:
    """Through ``store.search`` and its process-wide cache: a moved centroid moves the answer
    at once; a centroid of another model's length never matches."""
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _put(conn, "topic:a", "p", _axis(0))
        _put(conn, "topic:b", "p", _axis(1))
        _put(conn, "topic:old-model", "p", [1.0, 1.0])
    for i in ("a", "b"):
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO topic_segments (tenant, node_id, project_id, node_version,"
                " session_id, title, text, event_ids, salience, start_ts, end_ts, embedding)"
                " VALUES ('t', %s, 'p', 1, 's', 'x', 'x', '{}', 1.0, now() - interval '1 day',"
                " now() - interval '1 day', '{}')",
                (f"segment:{i}",),
            )
            conn.execute(
                "INSERT INTO topic_members (tenant, topic_id, node_id, project_id, assigned_by,"
                " similarity) VALUES ('t', %s, %s, 'p', 'cluster', 1.0)",
                (f"topic:{i}", f"segment:{i}"),
            )

    async def top(vector: list[float]) -> list[str]:
        async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
            found = await store.search(conn, "t", "p", "q", vector, 3, 30.0)
        return [t["topic_id"] for t in found]

    assert await top(_axis(0)) == ["topic:a"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _put(conn, "topic:a", "p", _axis(2))
        _put(conn, "topic:b", "p", _axis(0))
    assert await top(_axis(0)) == ["topic:b"]
    assert await top(_axis(3)) == []


async def test_the_cache_keeps_a_bounded_number_of_topics(pg_dsn: str) -> None:
    cache = CentroidCache(topics=5)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for i in range(4):
            _put(conn, f"topic:p{i}", "p", _axis(i % DIM))
            _put(conn, f"topic:q{i}", "q", _axis(i % DIM))
    assert len(await _scope(cache, pg_dsn, "p")) == 4
    assert len(await _scope(cache, pg_dsn, "q")) == 4  # 8 > 5: the older scope goes
    assert cache.topics_kept == 4
    assert len(await _scope(cache, pg_dsn, None)) == 8  # one scope over the bound is kept
    assert cache.topics_kept == 8
    assert cache.rows_read == 4 + 4 + 8
