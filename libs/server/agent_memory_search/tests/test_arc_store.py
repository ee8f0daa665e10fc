"""What a session said after a problem report, read from the real Postgres (``arc_store``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from agent_memory_retrieval.docs import SearchFilter
from agent_memory_search.arc_store import edits_before, following_messages

TS = datetime(2026, 5, 1, tzinfo=UTC)


def _event(
    conn: psycopg.Connection,
    event_id: str,
    minute: int,
    text: str,
    *,
    session: str = "s1",
    type_: str = "message",
    agent: str = "a",
    metadata: dict[str, Any] | None = None,
) -> None:
    conn.execute(
        "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id, role, type,"
        " text, metadata, received_at) VALUES ('t', %s, %s, 'p', %s, %s, 'assistant', %s, %s,"
        " %s, now())",
        (
            event_id,
            TS + timedelta(minutes=minute),
            agent,
            session,
            type_,
            text,
            Jsonb(metadata or {}),
        ),
    )


async def test_the_messages_after_a_report_that_may_state_a_fix(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _event(conn, "before", 0, "Fixed: something earlier, before the report.")
        _event(conn, "report", 1, "After a crash my terminal shows nothing I type.")
        _event(conn, "try", 2, "Let me reproduce it with a forced panic.")
        _event(conn, "tool", 3, "Fixed 3 errors.", type_="tool_result")  # a tool's words
        _event(conn, "cause", 4, "Cause: a panic unwinds past main's cleanup.")
        _event(conn, "dup", 5, "Cause: a panic unwinds past main's cleanup.")
        _event(conn, "other-agent", 6, "The fix: a panic hook.", agent="b")
        _event(conn, "other-session", 7, "Fixed: the pool leak.", session="s2")
        _event(conn, "fix", 8, "Fixed: a panic hook restores the terminal.")
        _event(conn, "beyond", 20, "Fixed: beyond the window.")
        for i in range(9, 20):
            _event(conn, f"tool{i}", i, "Edit src/main.rs: applied", type_="tool_call")
        conn.execute(
            "INSERT INTO event_duplicates (tenant, event_id, duplicate_of, project_id,"
            " session_id, method, similarity) VALUES ('t', 'dup', 'cause', 'p', 's1', 'exact', 1)"
        )
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        scope = SearchFilter(tenant="t", project_id="p", agent_id="a")
        found = await following_messages(conn, scope, ["report", "report", "nothing"], 12)
        assert list(found) == ["report"]  # an id not stored brings nothing
        assert [h.doc.event_ids[0] for h in found["report"]] == ["cause", "fix"]
        assert found["report"][0].id == "event:t:cause" and found["report"][0].doc.type == "event"
        # the window counts every event of the session, tool calls too
        assert "fix" not in {
            h.doc.event_ids[0]
            for h in (await following_messages(conn, scope, ["report"], 3)).get("report", [])
        }
        # another agent's words are outside a scope that names an agent, inside one that does not
        wide = await following_messages(conn, SearchFilter(tenant="t"), ["report"], 12)
        assert [h.doc.event_ids[0] for h in wide["report"]] == ["cause", "other-agent", "fix"]
        # another tenant reads nothing of this one
        assert await following_messages(conn, SearchFilter(tenant="u"), ["report"], 12) == {}
        # a scope without events, or no window, asks nothing
        events_out = SearchFilter(tenant="t", types=("toc_node",))
        assert await following_messages(conn, events_out, ["report"], 12) == {}
        assert await following_messages(conn, scope, ["report"], 0) == {}


async def test_the_edit_made_last_before_a_stated_fix(pg_dsn: str) -> None:
    """The edits before the last one were attempts; a read, a command or another session's
    edit is no change of this fix; beyond the window nothing is read."""
    edit = {"tool_kind": "edit"}
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _event(conn, "old-edit", 0, "Edit src/a.rs\n@@ -1 +1 @@\n-x\n+y", type_="tool_call",
               metadata=edit)  # fmt: skip
        _event(conn, "attempt", 1, "Edit src/main.rs\n@@ -1 +1 @@\n+cleanup()", type_="tool_call",
               metadata=edit)  # fmt: skip
        _event(conn, "cause", 2, "Cause: a panic unwinds past main's cleanup.")
        _event(conn, "change", 3, "Edit src/terminal.rs\n@@ -1 +1 @@\n+hook()", type_="tool_call",
               metadata=edit)  # fmt: skip
        _event(conn, "elsewhere", 4, "Write src/b.rs (3 lines)", type_="tool_call", session="s2",
               metadata={"tool_kind": "write"})  # fmt: skip
        _event(conn, "read", 4, "Read src/terminal.rs", type_="tool_call",
               metadata={"tool_kind": "read"})  # fmt: skip
        _event(conn, "test", 5, "$ cargo test\nexit 0", type_="tool_result",
               metadata={"tool_kind": "shell"})  # fmt: skip
        _event(conn, "fix", 6, "Fixed: a panic hook restores the terminal.")
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        scope = SearchFilter(tenant="t", project_id="p")
        found = await edits_before(conn, scope, ["fix", "old-edit", "nothing"], 10)
        assert list(found) == ["fix"]
        assert found["fix"].id == "event:t:change" and found["fix"].doc.type == "event"
        assert await edits_before(conn, scope, ["fix"], 2) == {}  # the read and the test only
        assert await edits_before(conn, SearchFilter(tenant="u"), ["fix"], 10) == {}
        events_out = SearchFilter(tenant="t", types=("toc_node",))
        assert await edits_before(conn, events_out, ["fix"], 10) == {}
