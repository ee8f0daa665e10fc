"""Writes of the recorder; SQL lives in ``sql/queries.sql``."""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from psycopg import AsyncConnection

from agent_memory_common.db import load_queries
from agent_memory_common.event import Event

QUERIES = load_queries(__package__ or "")


async def insert_events(conn: AsyncConnection, events: Sequence[Event]) -> None:
    """Append events; a row that already exists (a redelivery) is left as it is."""
    rows = [
        {
            "tenant": e.tenant,
            "event_id": e.event_id,
            "ts": e.ts,
            "project_id": e.project_id,
            "agent_id": e.agent_id,
            "session_id": e.session_id,
            "user_id": e.user_id,
            "role": e.role,
            "type": e.type,
            "text": e.text,
            "metadata": orjson.dumps(e.metadata).decode(),
            "received_at": e.received_at,
        }
        for e in events
    ]
    async with conn.cursor() as cur:
        await cur.executemany(QUERIES["insert_event"], rows)
