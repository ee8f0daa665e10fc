"""The raw scan browsing a period (no words to match), from the real Postgres."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
from psycopg.types.json import Jsonb

from agent_memory_retrieval.docs import SearchFilter
from agent_memory_search.store import scan_events

TS = datetime(2026, 7, 14, 9, tzinfo=UTC)


async def test_a_period_is_browsed_by_what_people_said_first(pg_dsn: str) -> None:
    """A day of coding is mostly tool calls and their output; its overview is what was said,
    newest first, then the rest; session markers and an edit's "applied" say nothing, and
    are not found by their words either (the indexes leave them out too)."""
    rows = [
        ("start", "system", "session_start", "Claude Code session started (startup)"),
        ("prompt", "user", "message", "Implement the dunning schedule."),
        ("call", "assistant", "tool_call", "$ uv run pytest -q"),
        ("reply", "assistant", "message", "The schedule retries on day 1, 3 and 7."),
        ("output", "tool", "tool_result", "$ uv run pytest -q\nexit 0\n" + "." * 900),
        ("applied", "tool", "tool_result", "Edit src/pytest_plugin.py: applied"),
        ("failed", "tool", "tool_result", "Edit src/pytest_plugin.py\nold_string not found"),
        ("end", "system", "session_end", "Claude Code session ended"),
    ]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for minute, (event_id, role, type_, text) in enumerate(rows):
            meta = {"tool_kind": "edit"} if event_id in ("applied", "failed") else {}
            conn.execute(
                "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id,"
                " role, type, text, metadata, received_at) VALUES ('t', %s, %s, 'p', 'a', 's',"
                " %s, %s, %s, %s, now())",
                (event_id, TS + timedelta(minutes=minute), role, type_, text, Jsonb(meta)),
            )
    day = SearchFilter(tenant="t", since=TS, until=TS + timedelta(days=1))
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        hits = await scan_events(conn, "", day, 10)
        assert [h.doc.event_ids[0] for h in hits] == ["reply", "prompt", "failed", "output", "call"]
        hits = await scan_events(conn, "", day, 3)
        assert [h.doc.event_ids[0] for h in hits] == ["reply", "prompt", "failed"]
        # words to match: every kind of event, best match first, as before
        hits = await scan_events(conn, "pytest", day, 10)
        assert {h.doc.event_ids[0] for h in hits} == {"call", "output"}
        hits = await scan_events(conn, "claude code session edit plugin", day, 10)
        assert {h.doc.event_ids[0] for h in hits} == {"failed"}
