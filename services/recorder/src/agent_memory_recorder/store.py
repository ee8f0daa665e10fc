"""Writes of the recorder; SQL lives in ``sql/queries.sql``."""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from psycopg import AsyncConnection

from agent_memory_common.db import load_queries
from agent_memory_common.event import Event

QUERIES = load_queries(__package__ or "")


async def insert_events(conn: AsyncConnection, events: Sequence[Event]) -> None:
    """Append events in the caller's transaction; rows that already exist are left as they are."""
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["create_incoming"])
        async with cur.copy(QUERIES["copy_incoming"]) as copy:
            for e in events:
                await copy.write_row(
                    (
                        e.tenant,
                        e.event_id,
                        e.ts,
                        e.project_id,
                        e.agent_id,
                        e.session_id,
                        e.user_id,
                        e.role,
                        e.type,
                        e.text,
                        orjson.dumps(e.metadata).decode(),
                        e.received_at,
                    )
                )
        await cur.execute(QUERIES["insert_from_incoming"])
