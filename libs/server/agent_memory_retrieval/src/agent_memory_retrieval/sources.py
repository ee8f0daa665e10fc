"""From the system of record to index documents: the one mapping every writer uses.

The live writers (the embedder and bm25-indexer services) map pipeline messages (recorded
events, TOC node versions) and ``agent-memory admin rebuild-index`` maps Postgres rows, through
the same functions, so that a rebuild produces exactly the documents the pipeline produced.

- An event becomes ``event:<tenant>:<event_id>``, titled with its speaker (``metadata.speaker``,
  when the agent names who spoke) and matched with the turn before it in its session
  (``context``). Both come from the same rows whether the writer reads a message or a page.
- A TOC node version becomes ``node:<tenant>:<node_id>`` (title + bullets; provenance is the
  segment's events, or for a rollup the events of the grips its bullets cite, in order). A node
  whose latest version is empty (a retracted segment) is deleted from the indexes.
- A grip becomes ``grip:<tenant>:<grip_id>``, indexed from the node version that made it (a
  rollup citing it again changes nothing), with that version's time, session and agent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import orjson
from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.db import load_queries
from agent_memory_common.errors import PoisonMessageError
from agent_memory_common.event import Event
from agent_memory_retrieval.docs import (
    DEFAULT_KIND,
    IndexDoc,
    as_utc,
    event_doc_id,
    grip_doc_id,
    node_doc_id,
)

QUERIES = load_queries("agent_memory_retrieval", "sql/sources.sql")

MEMORY_KINDS = (
    "decision",
    "constraint",
    "definition",
    "procedure",
    "preference",
    "observation",
    "episode",
)
PIN_BONUS = 0.20  # the summarizer's: a pinned node or grip gains this much salience


def event_salience(length: int, kind: str) -> float:
    """The summarizer's write-time salience rule, for raw events (never pinned)."""
    value = min(max(length, 0) / 500, 1.0) * 0.45
    if kind != "observation":
        value += 0.20
    return round(value, 4)


CONTEXT_CHARS = 600  # enough for the question a turn answers, not a whole tool output


def speaker_of(metadata: Mapping[str, Any] | None) -> str:
    """Who spoke, when the agent says so: "what did Caroline research?" names the speaker,
    and a turn rarely names its own speaker in its text."""
    value = (metadata or {}).get("speaker")
    return value.strip()[:80] if isinstance(value, str) else ""


def context_of(text: str | None, metadata: Mapping[str, Any] | None) -> str:
    """A previous turn as context: ``speaker: text``, cut to ``CONTEXT_CHARS``."""
    body = (text or "")[:CONTEXT_CHARS].strip()
    speaker = speaker_of(metadata)
    return f"{speaker}: {body}" if speaker and body else body


def event_doc(event: Event, context: str = "") -> IndexDoc:
    """``context``: the previous turn of the session (``context_of``), '' for none."""
    kind = event.metadata.get("memory_kind")
    if kind not in MEMORY_KINDS:
        kind = DEFAULT_KIND
    return IndexDoc(
        id=event_doc_id(event.tenant, event.event_id),
        type="event",
        tenant=event.tenant,
        project_id=event.project_id,
        agent_id=event.agent_id,
        session_id=event.session_id,
        ts=as_utc(event.ts),
        level="event",
        kind=str(kind),
        salience=event_salience(len(event.text), str(kind)),
        title=speaker_of(event.metadata),
        text=event.text,
        event_ids=(event.event_id,),
        context=context,
    )


@dataclass
class DocChanges:
    """What one message or one page of rows does to the indexes."""

    upserts: list[IndexDoc] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)

    def extend(self, other: DocChanges) -> None:
        self.upserts.extend(other.upserts)
        self.deletes.extend(other.deletes)


def _ts(value: Any) -> datetime:
    return as_utc(value if isinstance(value, datetime) else datetime.fromisoformat(str(value)))


def grip_doc(grip: Mapping[str, Any], origin: Mapping[str, Any]) -> IndexDoc:
    """``origin``: the node version that made the grip (project, start_ts, session, agent)."""
    kind = str(grip.get("memory_kind") or DEFAULT_KIND)
    return IndexDoc(
        id=grip_doc_id(str(origin["tenant"]), str(grip["grip_id"])),
        type="grip",
        tenant=str(origin["tenant"]),
        project_id=str(origin["project_id"]),
        agent_id=str(origin.get("agent_id") or ""),
        session_id=str(origin.get("session_id") or ""),
        ts=_ts(origin["start_ts"]),
        level="grip",
        kind=kind,
        salience=float(grip.get("salience") or 0.0),
        title="",
        text=str(grip["excerpt"]),
        event_ids=tuple(str(e) for e in grip.get("event_ids") or ()),
    )


def node_changes(
    payload: Mapping[str, Any], *, stale: bool = False, with_grips: bool = True
) -> DocChanges:
    """One TOC node version (the summarizer's ``mem.toc`` payload) as index changes.

    ``stale``: a newer version of the node exists already; its document is left alone, but the
    grips this version made are still indexed. ``with_grips=False``: the node only (rebuild
    reads grips from their own table).
    """
    changes = DocChanges()
    tenant, node_id = str(payload["tenant"]), str(payload["node_id"])
    grips = {str(g["grip_id"]): g for g in payload.get("grips") or ()}
    for grip in grips.values() if with_grips else ():
        if grip.get("node_id") == node_id and grip.get("node_version") == payload["version"]:
            changes.upserts.append(grip_doc(grip, payload))
    if stale:
        return changes
    bullets = list(payload.get("bullets") or ())
    doc_id = node_doc_id(tenant, node_id)
    if not bullets:
        changes.deletes.append(doc_id)
        return changes
    event_ids: list[str] = [str(e) for e in payload.get("event_ids") or ()]
    if not event_ids:  # a rollup: the evidence of its bullets, in bullet order
        for bullet in bullets:
            for gid in bullet.get("grip_ids") or ():
                event_ids.extend(str(e) for e in (grips.get(gid) or {}).get("event_ids") or ())
    kind = str(payload.get("memory_kind") or DEFAULT_KIND)
    changes.upserts.append(
        IndexDoc(
            id=doc_id,
            type="toc_node",
            tenant=tenant,
            project_id=str(payload["project_id"]),
            agent_id=str(payload.get("agent_id") or ""),
            session_id=str(payload.get("session_id") or ""),
            ts=_ts(payload["start_ts"]),
            level=str(payload["level"]),
            kind=kind,
            salience=float(payload.get("salience") or 0.0),
            title=str(payload.get("title") or ""),
            text="\n".join(str(b.get("text") or "") for b in bullets),
            event_ids=tuple(dict.fromkeys(event_ids)),
        )
    )
    return changes


SEGMENT_CONTEXT_CHARS = 20_000  # a segment is closed at ~4,000 tokens; tool output is cut


async def with_segment_text(conn: AsyncConnection, changes: DocChanges) -> DocChanges:
    """Segment nodes matched by every word said in them, not only by their summary.

    A segment's bullets keep a few sentences; its ``context`` (matched, never shown) is the
    text of all its events, so a search finds the stretch of conversation where something was
    said, and the brainstem can lift the moments inside it.
    """
    wanted = {
        (d.tenant, e): d.id for d in changes.upserts if d.level == "segment" for e in d.event_ids
    }
    if not wanted:
        return changes
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(
        QUERIES["texts_by_id"],
        {"tenants": [k[0] for k in wanted], "event_ids": [k[1] for k in wanted]},
    )
    texts: dict[tuple[str, str], str] = {
        (r["tenant"], r["event_id"]): context_of(r["text"], r["metadata"])
        for r in await cur.fetchall()
    }
    upserts = []
    for doc in changes.upserts:
        if doc.level == "segment":
            parts = [texts.get((doc.tenant, e), "") for e in doc.event_ids]
            text = "\n".join(p for p in parts if p)[:SEGMENT_CONTEXT_CHARS]
            doc = replace(doc, context=text)
        upserts.append(doc)
    return DocChanges(upserts=upserts, deletes=changes.deletes)


# --- reading the system of record (rebuild) ----------------------------------------------------


async def toc_present(conn: AsyncConnection) -> bool:
    cur = await conn.execute(QUERIES["toc_present"])
    row = await cur.fetchone()
    return bool(row and row[0])


async def latest_versions(
    conn: AsyncConnection, keys: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """(tenant, node_id) -> latest version, for the staleness check of the live writers."""
    if not keys:
        return {}
    cur = await conn.execute(
        QUERIES["latest_versions"],
        {"tenants": [k[0] for k in keys], "node_ids": [k[1] for k in keys]},
    )
    return {(r[0], r[1]): int(r[2]) for r in await cur.fetchall()}


async def count_sources(conn: AsyncConnection) -> int:
    """How many rows a rebuild reads (for the progress bar)."""
    cur = await conn.execute(QUERIES["count_events"])
    row = await cur.fetchone()
    total = int(row[0]) if row else 0
    if await toc_present(conn):
        for name in ("count_nodes", "count_grips"):
            cur = await conn.execute(QUERIES[name])
            row = await cur.fetchone()
            total += int(row[0]) if row else 0
    return total


async def event_pages(
    conn: AsyncConnection, page_size: int
) -> AsyncIterator[tuple[int, DocChanges]]:
    """Every event, in ``seq`` order, as pages of documents; yields (rows read, changes)."""
    after = 0
    while True:
        cur = conn.cursor(row_factory=dict_row)
        await cur.execute(QUERIES["events_page"], {"after": after, "limit": page_size})
        rows = await cur.fetchall()
        if not rows:
            return
        after = int(rows[-1]["seq"])
        events = [Event.from_row(r) for r in rows]
        contexts = await previous_turns(conn, events)
        docs = [event_doc(e, c) for e, c in zip(events, contexts, strict=True)]
        yield len(rows), DocChanges(upserts=docs)


async def node_pages(
    conn: AsyncConnection, page_size: int
) -> AsyncIterator[tuple[int, DocChanges]]:
    """The latest version of every TOC node, shaped as the summarizer's payload."""
    after = ("", "")
    while True:
        cur = conn.cursor(row_factory=dict_row)
        await cur.execute(
            QUERIES["nodes_page"],
            {"after_tenant": after[0], "after_node": after[1], "limit": page_size},
        )
        rows = await cur.fetchall()
        if not rows:
            return
        after = (rows[-1]["tenant"], rows[-1]["node_id"])
        changes = DocChanges()
        for payload in await _payloads(conn, rows):
            # grips are indexed from their own table (grip_pages), not from the nodes here
            changes.extend(node_changes(payload, with_grips=False))
        yield len(rows), await with_segment_text(conn, changes)


async def _payloads(
    conn: AsyncConnection, rows: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Node version rows (``nodes_page`` columns) as the summarizer's ``mem.toc`` payloads."""
    cited: dict[str, set[str]] = {}
    for r in rows:
        for b in r["bullets"] or ():
            cited.setdefault(r["tenant"], set()).update(b.get("grip_ids") or ())
    grips: dict[tuple[str, str], dict[str, Any]] = {}
    for tenant, ids in cited.items():
        gcur = conn.cursor(row_factory=dict_row)
        await gcur.execute(QUERIES["grips_by_id"], {"tenant": tenant, "ids": sorted(ids)})
        for g in await gcur.fetchall():
            grips[(tenant, g["grip_id"])] = g
    out = []
    for r in rows:
        payload = dict(r)
        payload["salience"] = r["base_salience"] + (PIN_BONUS if r["pinned"] else 0.0)
        if r["is_empty"]:
            payload["bullets"] = []
        ids_here = [gid for b in r["bullets"] or () for gid in b.get("grip_ids") or ()]
        payload["grips"] = [
            grips[(r["tenant"], gid)]
            for gid in dict.fromkeys(ids_here)
            if (r["tenant"], gid) in grips
        ]
        out.append(payload)
    return out


async def node_version_payload(
    conn: AsyncConnection, tenant: str, node_id: str, version: int
) -> dict[str, Any] | None:
    """One node version as a ``mem.toc`` payload, with today's pins: what a pin republishes
    so that the indexes learn the new salience (a redelivered version changes nothing else)."""
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(
        QUERIES["node_version"], {"tenant": tenant, "node_id": node_id, "version": version}
    )
    rows = await cur.fetchall()
    payloads = await _payloads(conn, rows)
    return payloads[0] if payloads else None


async def grip_pages(
    conn: AsyncConnection, page_size: int
) -> AsyncIterator[tuple[int, DocChanges]]:
    """Every grip, with the node version that made it."""
    after = ("", "")
    while True:
        cur = conn.cursor(row_factory=dict_row)
        await cur.execute(
            QUERIES["grips_page"],
            {"after_tenant": after[0], "after_grip": after[1], "limit": page_size},
        )
        rows = await cur.fetchall()
        if not rows:
            return
        after = (rows[-1]["tenant"], rows[-1]["grip_id"])
        yield len(rows), DocChanges(upserts=[grip_doc(r, r) for r in rows])


# --- reading the pipeline (live writers) -------------------------------------------------------


async def previous_turns(conn: AsyncConnection, events: Sequence[Event]) -> list[str]:
    """The context of each event: the turn before it in its session, read from Postgres.

    The recorder committed every recorded event before publishing it, so the previous turn is
    there even when it came in the same batch; one query serves the whole batch.
    """
    if not events:
        return []
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(
        QUERIES["previous_turns"],
        {
            "tenants": [e.tenant for e in events],
            "event_ids": [e.event_id for e in events],
        },
    )
    found = {int(r["i"]): context_of(r["text"], r["metadata"]) for r in await cur.fetchall()}
    return [found.get(i, "") for i in range(1, len(events) + 1)]


async def recorded_changes(
    conn: AsyncConnection, payloads: Sequence[bytes], *, context: bool = True
) -> DocChanges:
    """Recorded events (``mem.recorded.*``, ``Event`` wire JSON) as index documents.

    ``context=False``: events without their previous turn, so that Postgres is not read for
    it (a writer whose index ignores ``context``). Raises ``pydantic.ValidationError`` for a
    message that is no event (poison).
    """
    events = [Event.from_wire(data) for data in payloads]
    contexts = await previous_turns(conn, events) if context else [""] * len(events)
    docs = [event_doc(e, c) for e, c in zip(events, contexts, strict=True)]
    return DocChanges(upserts=[d for d in docs if d.text.strip()])


async def toc_changes(
    conn: AsyncConnection, payloads: Sequence[bytes], *, context: bool = True
) -> DocChanges:
    """TOC node versions (``mem.toc.*``) as index changes; an outdated version is skipped.

    ``context``: whether segments get their events' text (``with_segment_text``).

    A redelivered old version must not overwrite the document of a newer one (ids are per
    node, not per version), so each version is compared with the node's latest version in
    Postgres, which the summarizer committed before publishing.
    """
    try:
        decoded = [orjson.loads(data) for data in payloads]
        keys = [(str(p["tenant"]), str(p["node_id"])) for p in decoded]
        latest = await latest_versions(conn, keys)
        changes = DocChanges()
        for payload, key in zip(decoded, keys, strict=True):
            stale = int(payload["version"]) < latest.get(key, 0)
            changes.extend(node_changes(payload, stale=stale))
    except (KeyError, TypeError, ValueError) as exc:
        raise PoisonMessageError(f"not a TOC node version: {exc!r}") from exc
    return await with_segment_text(conn, changes) if context else changes
