"""Writes of the recorder; SQL lives in ``sql/queries.sql``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from psycopg import AsyncConnection

from agent_memory_common.db.postgres import load_queries
from agent_memory_recorder.dedup import SessionKey

QUERIES = load_queries(__package__ or "")


class EventRow(NamedTuple):
    """One ``events`` row in the column order of ``copy_incoming`` (a tuple, so COPY writes it
    as it is; named, so the handler reads ``row.session_id``, not ``row[5]``).

    The two times are RFC 3339 text, which Postgres parses: no datetime objects to build and
    format on the hot path. ``metadata`` is JSON text.
    """

    tenant: str
    event_id: str
    ts: str
    project_id: str
    agent_id: str
    session_id: str
    user_id: str | None
    role: str
    type: str
    text: str
    metadata: str
    received_at: str


async def insert_rows(conn: AsyncConnection, rows: Sequence[EventRow]) -> set[tuple[str, str]]:
    """Append events in the caller's transaction; rows that already exist are left as they are.

    Returns the (tenant, event_id) of erased events, which are refused (never stored again)."""
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["create_incoming"])
        async with cur.copy(QUERIES["copy_incoming"]) as copy:
            for row in rows:
                await copy.write_row(row)
        await cur.execute(QUERIES["insert_from_incoming"])
        await cur.execute(QUERIES["refused_in_incoming"])
        return {(r[0], r[1]) for r in await cur.fetchall()}


async def erase_events(conn: AsyncConnection, erasure_id: str) -> int:
    """Delete the tombstoned events of one erasure (the caller allowed it), and their dedup
    marks (the copies of an erased event are tombstoned with it)."""
    await conn.execute(QUERIES["erase_duplicate_marks"], {"erasure_id": erasure_id})
    cur = await conn.execute(QUERIES["erase_events"], {"erasure_id": erasure_id})
    return cur.rowcount


async def insert_new_rows(
    conn: AsyncConnection, rows: Sequence[EventRow]
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """``insert_rows``, answering the (tenant, event_id) of the rows that were not there yet,
    and of the erased ones refused."""
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["create_incoming"])
        async with cur.copy(QUERIES["copy_incoming"]) as copy:
            for row in rows:
                await copy.write_row(row)
        await cur.execute(QUERIES["insert_from_incoming_returning"])
        new = {(t, e) for t, e in await cur.fetchall()}
        await cur.execute(QUERIES["refused_in_incoming"])
        return new, {(r[0], r[1]) for r in await cur.fetchall()}


# An original as the dedup index loads it: event_id, ts, role, type, text.
Original = tuple[str, datetime, str, str, str]


async def recent_originals(
    conn: AsyncConnection, keys: Sequence[SessionKey], limit: int
) -> list[list[Original]]:
    """Each session's latest originals, oldest first, in the order of ``keys``."""
    out: list[list[Original]] = [[] for _ in keys]
    if not keys:
        return out
    params = {
        "tenants": [k[0] for k in keys],
        "projects": [k[1] for k in keys],
        "sessions": [k[2] for k in keys],
        "limit": limit,
    }
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["recent_originals"], params)
        for i, event_id, ts, role, type_, text in await cur.fetchall():
            out[i - 1].append((event_id, ts, role, type_, text))
    return out


# A duplicate mark: tenant, event_id, duplicate_of, project_id, session_id, method, similarity.
Mark = tuple[str, str, str, str, str, str, float]


async def insert_duplicates(conn: AsyncConnection, marks: Sequence[Mark]) -> set[tuple[str, str]]:
    """Store the marks whose original exists; answers the (tenant, event_id) stored."""
    if not marks:
        return set()
    cols = list(zip(*marks, strict=True))
    params = {
        "tenants": list(cols[0]),
        "event_ids": list(cols[1]),
        "originals": list(cols[2]),
        "projects": list(cols[3]),
        "sessions": list(cols[4]),
        "methods": list(cols[5]),
        "similarities": list(cols[6]),
    }
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["insert_duplicates"], params)
        return {(t, e) for t, e in await cur.fetchall()}


async def stored_duplicates(
    conn: AsyncConnection, keys: Sequence[tuple[str, str]]
) -> set[tuple[str, str]]:
    """Which of these already-recorded events were marked duplicate when first recorded."""
    if not keys:
        return set()
    params = {"tenants": [k[0] for k in keys], "event_ids": [k[1] for k in keys]}
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["stored_duplicates"], params)
        return {(t, e) for t, e in await cur.fetchall()}
