"""Postgres side of supersession for search: the links touching a set of events, and the
newer events themselves (a superseded moment brings its successor into the answer)."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.contracts.event import Event
from agent_memory_common.db.postgres import load_queries
from agent_memory_retrieval.indexing.sources import event_doc
from agent_memory_search.brainstem.supersede import SHOWN_CHARS, SHOWN_LINKS, Link, Links

QUERIES = load_queries(__package__ or "", "sql/supersession.sql")


async def links_of(conn: AsyncConnection, tenant: str, event_ids: Sequence[str]) -> Links:
    """The links touching ``event_ids`` (at most ``SHOWN_LINKS`` each way per event) and the
    event docs of their newer sides."""
    if not event_ids:
        return Links([], {})
    params = {
        "tenant": tenant,
        "ids": list(dict.fromkeys(event_ids)),
        "shown": SHOWN_LINKS,
        "chars": SHOWN_CHARS,
    }
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["links_of"], params)
        links = [Link(**row) for row in await cur.fetchall()]
        newer = sorted({link.newer_event_id for link in links})
        if not newer:
            return Links(links, {})
        await cur.execute(QUERIES["events_by_id"], {"tenant": tenant, "ids": newer})
        rows = await cur.fetchall()
    return Links(links, {r["event_id"]: event_doc(Event.from_row(r)) for r in rows})
