"""What ``open_search`` wires up, on a real Postgres (no HTTP, no model)."""

from __future__ import annotations

from pathlib import Path

import psycopg

from agent_memory_common.db.postgres import make_pool
from agent_memory_query.search.runtime import open_search
from agent_memory_query.settings import QueryOptions, SearchOptions, Settings


async def test_access_counts_are_read_per_tenant_and_the_connection_goes_back_transactional(
    pg_dsn: str, tmp_path: Path
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO search_access (tenant, item_id, access_count) VALUES"
            " ('acme', 'event:acme:a', 3), ('acme', 'event:acme:b', 1),"
            " ('globex', 'event:acme:c', 7)"
        )
    settings = Settings(
        pg_dsn=pg_dsn,
        home=tmp_path,
        query=QueryOptions(search=SearchOptions(load_embedder=False)),
    )
    pool = make_pool(pg_dsn, min_size=1, max_size=1)  # one connection: the one lookup used
    await pool.open(wait=True)
    runtime = await open_search(settings, pool)
    try:
        lookup = runtime.brainstem.access_lookup
        assert lookup is not None
        ids = ["event:acme:a", "event:acme:b", "event:acme:c"]
        assert await lookup("acme", ids) == {"event:acme:a": 3, "event:acme:b": 1}
        assert await lookup("acme", []) == {}
        async with pool.connection() as conn:
            assert conn.autocommit is False
            await conn.execute("CREATE TEMP TABLE scratch (x int)")
            await conn.rollback()  # a transaction again: the table went with it
            cur = await conn.execute("SELECT to_regclass('pg_temp.scratch') IS NULL")
            assert await cur.fetchone() == (True,)
    finally:
        await runtime.close()
        await pool.close()
