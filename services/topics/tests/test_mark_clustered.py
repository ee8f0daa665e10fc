"""A re-cluster marks as clustered only the material it read, as it read it (real Postgres).

A theme whose segments arrived while a re-cluster ran was marked clustered with the rest of the
project though the clustering never saw it: it stayed without a topic until a day later (CI of
``49167e9``, test_topics, one theme of three missing)."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg

from agent_memory_topics import store
from tests.topics_support import seed_topic


def _pending(dsn: str) -> dict[str, bool]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT node_id, pending FROM topic_segments").fetchall()
    return {str(node): bool(pending) for node, pending in rows}


async def test_rows_written_after_the_read_stay_pending(pg_dsn: str) -> None:
    nodes = seed_topic(pg_dsn, "topic:t", ended=datetime.now(UTC), members=3)
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("UPDATE topic_segments SET pending = true")
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        material = await store.rows(conn, "material", tenant="acme", project_id="proj")
        assert [r["node_id"] for r in material] == sorted(nodes)
        # meanwhile: one segment rewritten, one new one (the consumer's own statements)
        async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as other:
            await other.execute(
                "UPDATE topic_segments SET text = 'rewritten', updated_at = now()"
                " WHERE node_id = %s",
                (nodes[0],),
            )
            await other.execute(
                "INSERT INTO topic_segments (tenant, node_id, project_id, node_version,"
                " session_id, title, text, event_ids, salience, start_ts, end_ts, embedding)"
                " SELECT tenant, 'segment:late', project_id, 1, session_id, title, text,"
                " event_ids, salience, start_ts, end_ts, embedding FROM topic_segments"
                " WHERE node_id = %s",
                (nodes[1],),
            )
        await store.run(
            conn,
            "mark_clustered",
            tenant="acme",
            project_id="proj",
            size=len(material),
            node_ids=[r["node_id"] for r in material],
            read_at=[r["updated_at"] for r in material],
        )
        await conn.commit()
    assert _pending(pg_dsn) == {
        nodes[0]: True,  # rewritten after the read: the next re-cluster sees the new text
        nodes[1]: False,
        nodes[2]: False,
        "segment:late": True,  # committed after the read: never seen, still pending
    }
