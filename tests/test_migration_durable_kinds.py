"""Migration 0019: the pruning records of durable entries are forgotten, nothing else.

Durable kinds are never pruned now (``retention.DURABLE_KINDS``), but a store pruned before
holds records of such entries in ``index_pruned``, which ``rebuild-index`` never writes back.
The migration runs again here on a store with such records and others beside them.
"""

from __future__ import annotations

import psycopg
from psycopg.types.json import Jsonb

from agent_memory_common.db.postgres import apply_migrations

DURABLE_MIGRATION = 19


def _event(conn: psycopg.Connection, event_id: str, kind: str | None) -> None:
    conn.execute(
        "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id, role, type,"
        " text, metadata, received_at) VALUES ('t', %s, now(), 'p', 'a', 's', 'user', 'message',"
        " 'words', %s, now())",
        (event_id, Jsonb({"memory_kind": kind} if kind else {})),
    )


def _grip(conn: psycopg.Connection, grip_id: str, kind: str) -> None:
    conn.execute(
        "INSERT INTO toc_grips (tenant, grip_id, project_id, node_id, node_version, bullet_index,"
        " event_ids, excerpt, memory_kind, base_salience)"
        " VALUES ('t', %s, 'p', 'segment:x', 1, 0, ARRAY['e'], 'words', %s, 0.5)",
        (grip_id, kind),
    )


def _pruned(conn: psycopg.Connection, index: str, doc_id: str, level: str, reason: str) -> None:
    conn.execute(
        "INSERT INTO index_pruned (tenant, index_name, doc_id, project_id, level, ts, reason)"
        " VALUES ('t', %s, %s, 'p', %s, now(), %s)",
        (index, doc_id, level, reason),
    )


def test_only_the_records_of_durable_entries_are_forgotten(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _event(conn, "noted", "decision")
        _event(conn, "chatter", None)
        _grip(conn, "grip:d", "constraint")
        _grip(conn, "grip:o", "observation")
        for index in ("vector", "bm25"):
            _pruned(conn, index, "event:t:noted", "event", "retention")
            _pruned(conn, index, "event:t:chatter", "event", "retention")
            _pruned(conn, index, "grip:t:grip:d", "grip", "retention")
            _pruned(conn, index, "grip:t:grip:o", "grip", "retention")
            _pruned(conn, index, "node:t:segment:x", "segment", "retention")
        conn.execute("DELETE FROM schema_migrations WHERE version = %s", (DURABLE_MIGRATION,))
    assert apply_migrations(pg_dsn) == ["0019_durable_kinds_kept.sql"]
    with psycopg.connect(pg_dsn) as conn:
        left = {
            (str(r[0]), str(r[1]))
            for r in conn.execute("SELECT index_name, doc_id FROM index_pruned")
        }
    assert left == {
        (index, doc)
        for index in ("vector", "bm25")
        for doc in ("event:t:chatter", "grip:t:grip:o", "node:t:segment:x")
    }
