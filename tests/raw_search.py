"""The query service's search over a real Postgres holding only raw events: no index, no
model, so the raw scan answers. For tests of how the brainstem reads a question (its frame,
its own-words weighing) end to end, on rows written as the recorder writes them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from agent_memory_common.db.postgres import make_pool
from agent_memory_query.search.runtime import SearchRuntime, open_search
from agent_memory_query.settings import QueryOptions, SearchOptions, Settings


def insert_messages(pg_dsn: str, start: datetime, rows: Sequence[tuple[str, str, str]]) -> None:
    """``rows``: (event id, role, text), one message a minute from ``start``, tenant ``t``,
    project ``p``, one session."""
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for minute, (event_id, role, text) in enumerate(rows):
            conn.execute(
                "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id,"
                " role, type, text, metadata, received_at) VALUES ('t', %s, %s, 'p', 'a', 's',"
                " %s, 'message', %s, %s, now())",
                (event_id, start + timedelta(minutes=minute), role, text, Jsonb({})),
            )


@asynccontextmanager
async def raw_search(pg_dsn: str, home: Path) -> AsyncIterator[SearchRuntime]:
    """The search runtime on ``pg_dsn``, without the embedding model; closed afterwards."""
    settings = Settings(
        pg_dsn=pg_dsn,
        home=home,
        query=QueryOptions(search=SearchOptions(load_embedder=False)),
    )
    pool = make_pool(pg_dsn, min_size=1, max_size=2)
    await pool.open(wait=True)
    runtime = await open_search(settings, pool)
    try:
        yield runtime
    finally:
        await runtime.close()
        await pool.close()
