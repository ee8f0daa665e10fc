"""A "what did we do" question answers from the table of contents of its period.

"What happened on 2025-03-02?" or "what was done last week?" carries no words to rank by
once its period is parsed out; searching the tiers then returns the newest raw events of the
period (issue 13: eight events from the last four minutes of the day, never the day's
summary). The TOC already says what happened: the period's own calendar node(s) first (a week
for a week, its days, ...), then the segments inside it, each a summary of one piece of work,
in time order. ``levels_for`` picks the levels from the period's length.

"Where did we leave off?" names no period, but means one: the last day of work in scope
(``last_worked_day``), answered the same way but from the end: the day's node, then its
segments newest first. In time order the day's last segments, where the work stopped, came
after all of the day's earlier work (``make bench-real``: BookMinder's last prompts were the
375th event id of the answer, behind seven earlier segments), and on a day of more segments
than the answer's limit they were not in it at all.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.contracts.memory import pinned_salience
from agent_memory_common.db.postgres import load_queries
from agent_memory_retrieval.docs import Hit, IndexDoc, node_doc_id

QUERIES = load_queries(__package__ or "", "sql/period.sql")


def levels_for(since: datetime, until: datetime) -> tuple[str, ...]:
    """The calendar levels that summarise a period of this length, coarsest first, then its
    segments: a day -> its day node; a week -> the week, then its days; a month -> ..."""
    span = until - since
    if span <= timedelta(days=2):
        return ("day", "segment")
    if span <= timedelta(days=8):
        return ("week", "day", "segment")
    if span <= timedelta(days=32):
        return ("month", "week", "day", "segment")
    return ("year", "month", "week", "segment")


def _doc(tenant: str, row: dict[str, Any]) -> IndexDoc:
    bullets = [str(b.get("text", "")) for b in row["bullets"] or []]
    return IndexDoc(
        id=node_doc_id(tenant, row["node_id"]),
        type="toc_node",
        tenant=tenant,
        project_id=row["project_id"],
        agent_id=row["agent_id"],
        session_id=row["session_id"] if row["level"] == "segment" else "",
        ts=row["start_ts"],
        level=row["level"],
        kind=row["memory_kind"],
        salience=pinned_salience(row["base_salience"], row["pinned"]),
        title=row["title"],
        text="\n".join(bullets),
        event_ids=tuple(row["event_ids"] or ()),
    )


async def period_nodes(
    conn: AsyncConnection,
    tenant: str,
    project_id: str | None,
    since: datetime,
    until: datetime,
    limit: int,
    newest_first: bool = False,
) -> list[Hit]:
    """The period's nodes, coarsest level first, each level in time order (``newest_first``:
    the newest node of a level first)."""
    params = {
        "tenant": tenant,
        "project_id": project_id,
        "levels": list(levels_for(since, until)),
        "since": since,
        "until": until,
        "limit": limit,
        "newest_first": newest_first,
    }
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["period_nodes"], params)
        rows = await cur.fetchall()
    return [Hit(id=(d := _doc(tenant, r)).id, score=1.0, doc=d) for r in rows]


async def last_worked_day(
    conn: AsyncConnection, tenant: str, project_id: str | None, now: datetime
) -> tuple[datetime, datetime] | None:
    """``[since, until)`` of the day of the newest segment of work in scope begun before
    ``now``: its day node's bounds, or the calendar day in ``now``'s time zone before the TOC
    rolled it up; None when nothing was summarized yet."""
    params = {"tenant": tenant, "project_id": project_id, "now": now}
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(QUERIES["last_worked_day"], params)
        row = await cur.fetchone()
    if row is None:
        return None
    if row["day_start"] is not None:
        return row["day_start"], row["day_end"]
    tz = now.tzinfo or UTC
    day = row["last_ts"].astimezone(tz).date()
    since = datetime.combine(day, time(0), tz)
    return since.astimezone(UTC), (since + timedelta(days=1)).astimezone(UTC)
