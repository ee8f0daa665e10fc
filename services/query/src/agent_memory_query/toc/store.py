"""Reads of the table of contents (and its pins); SQL in ``sql/toc.sql``.

Nodes are shown as the API returns them: salience with the pin bonus applied, bullets with
their grips expanded, rows free of internal columns.

By user (team mode, docs/team.md). Users are recorded on events only (``events.user_id``), the
notion search's ``user_id`` filter uses too, so a node "has" a user when one of the segments
below it (itself, for a segment) holds an event of that user: the segments of the current tree
(``toc_nodes.parent_id``, latest versions), their ``event_ids`` probed in ``events`` through its
``(tenant, event_id)`` key. Costs:

- the filter (``user_id`` of the listings and of the term search) is one call of the SQL
  function ``toc_node_has_user`` (migration 0018) per node listed or matched, after the other
  filters: its ``EXISTS`` stops at the first event of the user, so a node
  the user wrote in costs a few index probes; a node they did not write costs one probe per event
  below it (a year: every event of the project that year). Fine for the listings' tens of nodes;
  a term search with ``user_id`` over years pays that for each matching year.
- ``agent_ids`` / ``user_ids`` of a node answer: a segment reads its own version (agent from the
  version, users by one probe per event); a calendar node walks the whole subtree, one probe per
  event below it. Listings do not carry them, for that reason.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection, sql
from psycopg.rows import dict_row

from agent_memory_common.contracts.memory import pinned_salience
from agent_memory_common.db.postgres import load_queries
from agent_memory_search import supersession_store
from agent_memory_search.brainstem.supersede import refs_for

Q = load_queries(__package__ or "", "sql/toc.sql")
# ``search`` over every node of the tenant, or over its newest only (``newest``)
SEARCH = sql.SQL(Q["search"])
ALL_NODES = sql.SQL("toc_nodes")
NEWEST_NODES = sql.SQL(
    "(SELECT * FROM toc_nodes r WHERE r.tenant = %(tenant)s"
    " ORDER BY r.updated_at DESC LIMIT %(newest)s)"
)

MAX_TERMS = 16
_TERM = re.compile(r"[a-z0-9][a-z0-9_\-]*")


async def _all(conn: AsyncConnection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q[name], params)
        return await cur.fetchall()


async def _one(conn: AsyncConnection, name: str, params: dict[str, Any]) -> dict[str, Any] | None:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(Q[name], params)
        return await cur.fetchone()


def salience_of(row: dict[str, Any]) -> float:
    return pinned_salience(row["base_salience"], row["pinned"])


def summary_json(row: dict[str, Any]) -> dict[str, Any]:
    """A node in a listing: enough to decide whether to open it."""
    out = {
        "node_id": row["node_id"],
        "project_id": row["project_id"],
        "level": row["level"],
        "bucket": row["bucket"],
        "version": row["version"],
        "title": row["title"],
        "keywords": list(row["keywords"]),
        "memory_kind": row["memory_kind"],
        "salience": salience_of(row),
        "pinned": row["pinned"],
        "start_ts": row["start_ts"],
        "end_ts": row["end_ts"],
        "child_count": row["child_count"],
    }
    if row["level"] == "segment" and row.get("event_count") is not None:
        out["event_count"] = row["event_count"]
    return out


async def years(
    conn: AsyncConnection,
    tenant: str,
    project_id: str | None,
    limit: int,
    user_id: str | None = None,
) -> list[dict[str, Any]]:
    params = {"tenant": tenant, "project_id": project_id, "limit": limit, "user_id": user_id}
    rows = await _all(conn, "years", params)
    return [summary_json(r) for r in rows]


async def node_exists(conn: AsyncConnection, tenant: str, node_id: str) -> bool:
    row = await _one(conn, "node_exists", {"tenant": tenant, "node_id": node_id})
    return row is not None and row["latest_version"] > 0


async def node_head(
    conn: AsyncConnection, tenant: str, node_id: str, version: int | None
) -> dict[str, Any] | None:
    """The node's stored row at ``version`` (latest if None): project, agent, level, child and
    event ids, enough to check who may see it and to list what is below it. Without what
    ``node`` adds (grips, supersession links, a calendar node's agents and users, the last a
    walk over every event below it: 19 ms for a year of a 50,000-event project), which a
    listing of children never shows."""
    return await _one(
        conn, "node_version", {"tenant": tenant, "node_id": node_id, "version": version}
    )


async def node(
    conn: AsyncConnection, tenant: str, node_id: str, version: int | None
) -> dict[str, Any] | None:
    """The full node at ``version`` (latest if None), bullets with their grips."""
    row = await node_head(conn, tenant, node_id, version)
    if row is None:
        return None
    bullets = list(row["bullets"])
    cited = list(dict.fromkeys(g for b in bullets for g in b["grip_ids"]))
    grips = await grips_by_id(conn, tenant, cited)
    cited_events = [e for g in grips.values() for e in g["event_ids"]]
    links = (await supersession_store.links_of(conn, tenant, cited_events)).links
    out = summary_json(row)
    out.update(
        {
            "latest_version": row["latest_version"],
            "is_latest": row["version"] == row["latest_version"],
            "parent_id": row["parent_id"],
            "bullets": [
                {
                    "text": b["text"],
                    "kind": b["kind"],
                    "salience": b["salience"],
                    "source_node_id": b.get("source_node_id"),
                    "grips": [grip_json(grips[g]) for g in b["grip_ids"] if g in grips],
                    # a decision this bullet states replaced, or was replaced by, another
                    **refs_for(
                        [e for g in b["grip_ids"] for e in grips.get(g, {}).get("event_ids", [])],
                        links,
                    ),
                }
                for b in bullets
            ],
            "child_ids": list(row["child_ids"]),
            "summarizer": row["summarizer"],
            "created_at": row["created_at"],
            "empty": row["is_empty"] and row["version"] == row["latest_version"],
        }
    )
    if row["level"] == "segment":
        agent_ids = [row["agent_id"]] if row["agent_id"] else []
        user_ids = list(row["user_ids"])
    else:
        who = await _one(conn, "subtree_attribution", {"tenant": tenant, "node_id": node_id})
        agent_ids = list(who["agent_ids"]) if who else []
        user_ids = list(who["user_ids"]) if who else []
    out.update({"agent_ids": agent_ids, "user_ids": user_ids})
    if row["level"] == "segment":
        out.update(
            {
                "session_id": row["session_id"],
                "agent_id": row["agent_id"],
                # the one user of its events (null: none or several)
                "user_id": user_ids[0] if len(user_ids) == 1 else None,
                "event_ids": list(row["event_ids"] or []),
                "overlap_count": row["overlap_count"],
                "segment_version": row["source_version"],
            }
        )
    return out


def grip_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "grip_id": row["grip_id"],
        "event_ids": list(row["event_ids"]),
        "excerpt": row["excerpt"],
        "memory_kind": row["memory_kind"],
        "salience": round(float(row["salience"]), 4),
        "pinned": row["pinned"],
        "node_id": row["node_id"],
        "node_version": row["node_version"],
        "bullet_index": row["bullet_index"],
    }


async def grips_by_id(
    conn: AsyncConnection, tenant: str, grip_ids: list[str]
) -> dict[str, dict[str, Any]]:
    if not grip_ids:
        return {}
    rows = await _all(conn, "grips_by_id", {"tenant": tenant, "grip_ids": grip_ids})
    return {r["grip_id"]: r for r in rows}


async def latest_summaries(
    conn: AsyncConnection, tenant: str, node_ids: list[str], user_id: str | None = None
) -> list[dict[str, Any]]:
    """Latest versions of the nodes, in time order; with ``user_id``, only the nodes holding an
    event of that user (see "By user" above)."""
    if not node_ids:
        return []
    params = {"tenant": tenant, "node_ids": node_ids, "user_id": user_id}
    rows = await _all(conn, "latest_summaries", params)
    return [summary_json(r) | {"empty": r["is_empty"]} for r in rows]


def event_json(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out.pop("seq", None)
    return out


async def events_by_id(
    conn: AsyncConnection, tenant: str, event_ids: list[str]
) -> list[dict[str, Any]]:
    """Stored events of the list, in the list's order."""
    rows = await _all(conn, "events_by_id", {"tenant": tenant, "event_ids": event_ids})
    by_id = {r["event_id"]: r for r in rows}
    return [by_id[e] for e in event_ids if e in by_id]


async def grip_with_context(
    conn: AsyncConnection, tenant: str, grip_id: str, context: int
) -> dict[str, Any] | None:
    grips = await grips_by_id(conn, tenant, [grip_id])
    if grip_id not in grips:
        return None
    grip = grips[grip_id]
    sources = await _all(
        conn, "events_by_id", {"tenant": tenant, "event_ids": list(grip["event_ids"])}
    )
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    if sources and context > 0:
        first, last = sources[0], sources[-1]
        common = {"tenant": tenant, "limit": context}
        before = await _all(
            conn,
            "events_before",
            common
            | {
                "project_id": first["project_id"],
                "session_id": first["session_id"],
                "ts": first["ts"],
                "seq": first["seq"],
            },
        )
        before.reverse()
        after = await _all(
            conn,
            "events_after",
            common
            | {
                "project_id": last["project_id"],
                "session_id": last["session_id"],
                "ts": last["ts"],
                "seq": last["seq"],
            },
        )
    return grip_json(grip) | {
        "project_id": grip["project_id"],
        "created_at": grip["created_at"],
        "events": [event_json(e) for e in sources],
        "before": [event_json(e) for e in before],
        "after": [event_json(e) for e in after],
    }


async def path_to_root(conn: AsyncConnection, tenant: str, node_id: str) -> list[str]:
    """``node_id`` and its ancestors, top-down."""
    path = [node_id]
    while len(path) < 8:
        row = await _one(conn, "parent_of", {"tenant": tenant, "node_id": path[-1]})
        if row is None or row["parent_id"] is None:
            break
        path.append(row["parent_id"])
    return list(reversed(path))


async def path_at(
    conn: AsyncConnection, tenant: str, project_id: str, ts: datetime
) -> tuple[list[str], str | None]:
    """(path year -> ..., the segment holding ``ts`` or None)."""
    params = {"tenant": tenant, "project_id": project_id, "ts": ts}
    segment = await _one(conn, "segment_at", params)
    if segment is not None:
        return await path_to_root(conn, tenant, segment["node_id"]), segment["node_id"]
    rows = await _all(conn, "calendar_at", params)
    return [r["node_id"] for r in rows], None


def search_terms(query: str) -> list[str]:
    terms = [t.strip("-_") for t in _TERM.findall(query.lower())]
    return list(dict.fromkeys(t for t in terms if len(t) >= 2))[:MAX_TERMS]


def _like(term: str) -> str:
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _hits(terms: list[str], text: str) -> list[str]:
    """Terms that start a word of ``text`` ("lock" finds "locks", not "block"), as the
    database's ``\\m`` does."""
    low = text.lower()
    return [t for t in terms if re.search(r"(?<![a-z0-9_])" + re.escape(t), low)]


async def search(
    conn: AsyncConnection,
    tenant: str,
    terms: list[str],
    *,
    project_id: str | None,
    root: str | None,
    since: datetime | None,
    until: datetime | None,
    levels: list[str] | None,
    limit: int,
    user_id: str | None = None,
    newest: int | None = None,
) -> list[dict[str, Any]]:
    """Term matching over titles, bullets and key phrases of the latest node versions, scored
    and ranked in the database (see ``search`` in sql/toc.sql); ties go to the more recent.
    With ``user_id``, only nodes holding an event of that user (see "By user" above). With
    ``newest``, only among the tenant's ``newest`` nodes written last."""
    nodes = ALL_NODES if newest is None else NEWEST_NODES
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            SEARCH.format(nodes=nodes),
            {
                "tenant": tenant,
                "project_id": project_id,
                "root": root,
                "since": since,
                "until": until,
                "levels": levels,
                "patterns": [_like(t) for t in terms],
                "terms": terms,
                "limit": limit,
                "user_id": user_id,
                "newest": newest,
            },
        )
        rows = await cur.fetchall()
    hits = []
    for row in rows:
        matched = set(_hits(terms, " ".join(row["keywords"])) + _hits(terms, row["title"]))
        bullets = []
        for index, bullet in enumerate(row["bullets"]):
            found = _hits(terms, bullet["text"])
            if found:
                matched.update(found)
                bullets.append(
                    {
                        "index": index,
                        "text": bullet["text"],
                        "kind": bullet["kind"],
                        "grip_ids": bullet["grip_ids"],
                    }
                )
        hits.append(
            summary_json(row)
            | {
                "score": row["score"],
                "matched_terms": [t for t in terms if t in matched],
                "bullets": bullets,
            }
        )
    return hits


async def pin(
    conn: AsyncConnection, tenant: str, memory_id: str, pinned: bool
) -> tuple[dict[str, Any], tuple[str, int], str] | None:
    """Pin or unpin a grip (``grip:...``) or a node; None when there is no such memory.

    Returns the answer, the node version whose documents carry the pin (the node's latest
    version, or for a grip the version that made it) and the memory's project.
    """
    params = {"tenant": tenant, "memory_id": memory_id, "pinned": pinned}
    if memory_id.startswith("grip:"):
        row = await _one(conn, "pin_grip", params)
        if row is None:
            return None
        answer = {
            "memory_id": memory_id,
            "type": "grip",
            "pinned": row["pinned"],
            "salience": round(float(row["salience"]), 4),
        }
        return answer, (str(row["node_id"]), int(row["version"])), str(row["project_id"])
    row = await _one(conn, "pin_node", params)
    if row is None:
        return None
    base = float(row["base_salience"] or 0.0)
    answer = {
        "memory_id": memory_id,
        "type": "node",
        "pinned": row["pinned"],
        "salience": pinned_salience(base, row["pinned"]),
    }
    return answer, (str(row["node_id"]), int(row["version"])), str(row["project_id"])
