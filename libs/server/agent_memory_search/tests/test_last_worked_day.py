""" "Where did we leave off?": the last day of work in scope, read from the real Postgres."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import psycopg

from agent_memory_search.period import last_worked_day


def _node(
    conn: psycopg.Connection,
    node_id: str,
    level: str,
    start: datetime,
    end: datetime,
    *,
    project: str = "p",
    empty: bool = False,
) -> None:
    conn.execute(
        "INSERT INTO toc_nodes (tenant, node_id, project_id, level, bucket, start_ts, end_ts,"
        " latest_version, is_empty) VALUES ('t', %s, %s, %s, %s, %s, %s, 1, %s)",
        (node_id, project, level, node_id, start, end, empty),
    )


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


async def test_the_day_of_the_newest_segment_before_now(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _node(conn, "day:2026-07-14@p", "day", at("2026-07-14T00:00"), at("2026-07-15T00:00"))
        _node(conn, "segment:a", "segment", at("2026-07-14T09:00"), at("2026-07-14T10:00"))
        # rolled up into no day yet: the calendar day
        _node(conn, "segment:b", "segment", at("2026-07-21T23:30"), at("2026-07-21T23:50"))
        # a retracted segment is no work; another project's is not this one's
        _node(
            conn, "segment:c", "segment", at("2026-07-25T09:00"), at("2026-07-25T10:00"), empty=True
        )
        _node(
            conn,
            "segment:d",
            "segment",
            at("2026-07-28T09:00"),
            at("2026-07-28T10:00"),
            project="q",
        )
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        now = at("2026-07-30T12:00")
        assert await last_worked_day(conn, "t", "p", now) == (
            at("2026-07-21T00:00"),
            at("2026-07-22T00:00"),
        )
        # the calendar day is the caller's: 23:30 UTC is the next day in Berlin in summer
        berlin = now.astimezone(timezone(timedelta(hours=2)))
        assert await last_worked_day(conn, "t", "p", berlin) == (
            at("2026-07-21T22:00"),
            at("2026-07-22T22:00"),
        )
        # asked before that segment began: the day before, with its day node's bounds
        assert await last_worked_day(conn, "t", "p", at("2026-07-20T00:00")) == (
            at("2026-07-14T00:00"),
            at("2026-07-15T00:00"),
        )
        # every project: the newest of all
        assert await last_worked_day(conn, "t", None, now) == (
            at("2026-07-28T00:00"),
            at("2026-07-29T00:00"),
        )
        assert await last_worked_day(conn, "t", "p", at("2026-07-01T00:00")) is None
        assert await last_worked_day(conn, "other", None, now) is None
