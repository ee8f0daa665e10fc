"""Migration 0021: each newer statement keeps its two best detected predecessors.

A store written before it holds, for a statement summarized early, one or two more detected
links from every later segment of older statements. The migration runs again here on such a
store: the best two of each newer statement stay (score, then the most recent older one),
explicit links and the links of other statements are untouched.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg

from agent_memory_common.db.postgres import apply_migrations

MIGRATION = 21
TS = datetime(2026, 5, 1, tzinfo=UTC)


def _statement(conn: psycopg.Connection, event_id: str, days: int) -> None:
    conn.execute(
        "INSERT INTO memory_statements (tenant, event_id, project_id, session_id, ts, kind,"
        " subject, text, cue) VALUES ('t', %s, 'p', %s, %s, 'decision', ARRAY['rabbitmq'],"
        " 'words', false)",
        (event_id, event_id, TS + timedelta(days=days)),
    )


def _link(conn: psycopg.Connection, older: str, newer: str, score: float, source: str) -> None:
    conn.execute(
        "INSERT INTO memory_supersessions (tenant, older_event_id, newer_event_id, project_id,"
        " source, score) VALUES ('t', %s, %s, 'p', %s, %s)",
        (older, newer, source, score),
    )


def test_each_newer_statement_keeps_its_two_best_detected_predecessors(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for i, event_id in enumerate(["a", "b", "c", "d", "e", "new", "other"]):
            _statement(conn, event_id, i)
        # "new": four detected candidates (b and d tie on score: the more recent d wins)
        _link(conn, "a", "new", 0.9, "detected")
        _link(conn, "b", "new", 0.7, "detected")
        _link(conn, "c", "new", 0.5, "detected")
        _link(conn, "d", "new", 0.7, "detected")
        _link(conn, "e", "new", 0.1, "explicit")  # asked for: kept whatever its score
        _link(conn, "a", "other", 0.3, "detected")
        _link(conn, "b", "other", 0.2, "detected")
        conn.execute("DELETE FROM schema_migrations WHERE version = %s", (MIGRATION,))
    assert apply_migrations(pg_dsn) == ["0021_supersession_predecessors_kept.sql"]
    with psycopg.connect(pg_dsn) as conn:
        left = {
            (str(r[0]), str(r[1]))
            for r in conn.execute("SELECT older_event_id, newer_event_id FROM memory_supersessions")
        }
    assert left == {("a", "new"), ("d", "new"), ("e", "new"), ("a", "other"), ("b", "other")}
