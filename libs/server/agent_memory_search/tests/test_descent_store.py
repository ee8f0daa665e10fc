"""The descent's read from the real Postgres (``descent_store.pruned_events``): the pruned events
of the span asked for, by the question's words; with the whole project's time
(``descent.ALL_TIME``) that project's and no other's, and never an event the indexes still hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg

from agent_memory_retrieval.docs import SearchFilter
from agent_memory_search.brainstem.descent import ALL_TIME
from agent_memory_search.descent_store import pruned_events

TS = datetime(2025, 3, 1, tzinfo=UTC)


def _event(
    conn: psycopg.Connection, event_id: str, days: int, text: str, *, project: str = "p",
    pruned: bool = True,
) -> None:  # fmt: skip
    conn.execute(
        "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id, role, type,"
        " text, metadata, received_at) VALUES ('t', %s, %s, %s, 'a', 's', 'user', 'message', %s,"
        " '{}', now())",
        (event_id, TS + timedelta(days=days), project, text),
    )
    if pruned:
        conn.execute(
            "INSERT INTO pruned_event_words (tenant, event_id, words)"
            " SELECT tenant, event_id, to_tsvector('english', text) FROM events"
            " WHERE tenant = 't' AND event_id = %s",
            (event_id,),
        )


async def test_the_whole_project_is_read_by_words_and_only_it(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _event(conn, "march", 0, "The heron ledger export skipped two shards.")
        _event(conn, "june", 100, "The heron ledger came back with a sparse merkle root.")
        _event(conn, "chatter", 101, "The pelican rollout starts with one region.")
        _event(conn, "indexed", 102, "The heron ledger still indexed.", pruned=False)
        _event(conn, "elsewhere", 103, "The heron ledger of another project.", project="q")
    flt = SearchFilter(tenant="t", project_id="p")
    query = "heron ledger sparse merkle root"
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        whole = await pruned_events(conn, flt, [], ALL_TIME, [], query, 200, 5_000)
        june = (TS + timedelta(days=90), TS + timedelta(days=110))
        period = await pruned_events(conn, flt, [], june, [], query, 200, 5_000)
        nothing = await pruned_events(conn, flt, [], None, [], query, 200, 5_000)
    assert [h.doc.event_ids[0] for _, h, _, _ in whole] == ["june", "march"]  # best first
    assert {node for node, _, _, _ in whole} == {""}  # under no node: the span asked for
    assert [h.doc.event_ids[0] for _, h, _, _ in period] == ["june"]
    assert nothing == []
