"""From the system of record to index documents: the one mapping every writer uses.

The live writers (the embedder and bm25-indexer services) map pipeline messages (recorded
events, TOC node versions) and ``agent-memory admin rebuild-index`` maps Postgres rows, through
the same functions, so that a rebuild produces exactly the documents the pipeline produced.

- An event with text, not a session marker nor an edit's "applied" (``indexed``), becomes
  ``event:<tenant>:<event_id>``, titled with its speaker (``metadata.speaker``, when the agent
  names who spoke) and matched with the turn before it in its session (``context``), markers
  skipped. Both come from the same rows whether the writer reads a message or a page.
- A TOC node version becomes ``node:<tenant>:<node_id>`` (title + bullets; provenance is the
  segment's events, or for a rollup the events of the grips its bullets cite, in order). A node
  whose latest version is empty (a retracted segment) is deleted from the indexes.
- A grip becomes ``grip:<tenant>:<grip_id>``, indexed from the node version that made it (a
  rollup citing it again changes nothing), with that version's time, session and agent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.memory import (
    DEFAULT_KIND,
    MARKER_TYPES,
    MEMORY_KINDS,
    RUNTIME_KIND,
    event_salience,
    is_runtime_event,
)
from agent_memory_common.contracts.messages import RecordedMessage, TocNodeMessage, toc_node_message
from agent_memory_common.core.errors import PoisonMessageError
from agent_memory_common.db.postgres import load_queries
from agent_memory_retrieval.docs import (
    DocChanges,
    IndexDoc,
    as_utc,
    event_doc_id,
    grip_doc_id,
    node_doc_id,
)

QUERIES = load_queries("agent_memory_retrieval.indexing", "sql/sources.sql")

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


def indexed(event: Event) -> bool:
    """Whether an event gets index documents: not when it has no text, nor when it says
    nothing another event does not say better. A session marker ("Claude Code session ended
    (prompt_input_exit)") answers no question, yet it matched "code" in questions and, with the
    last reply as its context, stood beside that reply in answers: markers filled 1 in 20
    places of ``make bench-coding``'s answers. An edit's acknowledgement ("Edit src/app.rs:
    applied") names the file its call named, next to the change. What the runtime wrote (a
    compaction prompt, a system reminder) answered unrelated questions first (issue 52, point
    3): a search finds it only when it asks for ``RUNTIME_KIND`` (the raw scan's). The events
    listing and the TOC still show all of them."""
    if event.type in MARKER_TYPES or is_runtime_event(event.type) or not event.text.strip():
        return False  # what the runtime wrote: found by the scan, when a search asks its kind
    return not _acknowledges_edit(event)


def _acknowledges_edit(event: Event) -> bool:
    """An edit's or a write's result that only says it was applied (the capture hooks'
    ``shape.result_text``); a failed one keeps its error."""
    return (
        event.type == "tool_result"
        and event.metadata.get("tool_kind") in ("edit", "write")
        and event.text.rstrip().endswith(": applied")
        and "\n" not in event.text.strip()
    )


def event_doc(event: Event, context: str = "") -> IndexDoc:
    """``context``: the previous turn of the session (``context_of``), '' for none."""
    kind = event.metadata.get("memory_kind")
    if is_runtime_event(event.type):
        kind = RUNTIME_KIND
    elif kind not in MEMORY_KINDS:
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
        # the summarizer's rule (a tool's words weigh nothing by their length), never pinned
        salience=event_salience(event.text, str(kind), event.role, event.type, event.metadata),
        title=speaker_of(event.metadata),
        text=event.text,
        event_ids=(event.event_id,),
        context=context,
    )


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
    message: TocNodeMessage, *, stale: bool = False, with_grips: bool = True
) -> DocChanges:
    """One TOC node version (a ``mem.toc`` message) as index changes.

    ``stale``: a newer version of the node exists already; its document is left alone, but the
    grips this version made are still indexed. ``with_grips=False``: the node only (rebuild
    reads grips from their own table).
    """
    changes = DocChanges()
    tenant, node_id = message.tenant, message.node_id
    grips = {g.grip_id: g for g in message.grips}
    origin = {
        "tenant": tenant,
        "project_id": message.project_id,
        "agent_id": message.agent_id,
        "session_id": message.session_id,
        "start_ts": message.start_ts,
    }
    for grip in grips.values() if with_grips else ():
        if grip.node_id == node_id and grip.node_version == message.version:
            changes.upserts.append(grip_doc(grip.model_dump(), origin))
    if stale:
        return changes
    doc_id = node_doc_id(tenant, node_id)
    if not message.bullets:
        changes.deletes.append(doc_id)
        return changes
    event_ids: list[str] = list(message.event_ids or ())
    if not event_ids:  # a rollup: the evidence of its bullets, in bullet order
        for bullet in message.bullets:
            for gid in bullet.grip_ids:
                if (cited := grips.get(gid)) is not None:
                    event_ids.extend(cited.event_ids)
    changes.upserts.append(
        IndexDoc(
            id=doc_id,
            type="toc_node",
            tenant=tenant,
            project_id=message.project_id,
            agent_id=message.agent_id or "",
            session_id=message.session_id or "",
            ts=as_utc(message.start_ts),
            level=message.level,
            kind=message.memory_kind,
            salience=message.salience,
            title=message.title,
            text="\n".join(b.text for b in message.bullets),
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
        yield len(rows), DocChanges(upserts=await event_docs(conn, rows))


async def event_docs(conn: AsyncConnection, rows: list[dict[str, Any]]) -> list[IndexDoc]:
    """The index documents of ``events`` rows read with their ``erased`` flag, as the live
    indexers map them (the previous turn read as context)."""
    # an erased event (tombstoned, not deleted yet) is never indexed again
    events = [e for r in rows if not r.pop("erased", False) and indexed(e := Event.from_row(r))]
    contexts = await previous_turns(conn, events)
    return [event_doc(e, c) for e, c in zip(events, contexts, strict=True)]


async def tenant_event_pages(
    conn: AsyncConnection,
    page_size: int,
    *,
    tenant: str,
    project: str | None = None,
    since: datetime | None = None,
) -> AsyncIterator[list[IndexDoc]]:
    """The documents of one tenant's events (one project's, from ``since``), in ``seq`` order,
    a page at a time (``agent-memory export --vectors`` reads their stored vectors)."""
    after = 0
    while True:
        cur = conn.cursor(row_factory=dict_row)
        params = {"tenant": tenant, "project": project, "since": since}
        await cur.execute(
            QUERIES["tenant_events_page"], {**params, "after": after, "limit": page_size}
        )
        rows = await cur.fetchall()
        if not rows:
            return
        after = int(rows[-1]["seq"])
        yield await event_docs(conn, rows)


async def node_pages(
    conn: AsyncConnection, page_size: int
) -> AsyncIterator[tuple[int, DocChanges]]:
    """The latest version of every TOC node, read as the summarizer's message."""
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
        for message in await _messages(conn, rows):
            # grips are indexed from their own table (grip_pages), not from the nodes here
            changes.extend(node_changes(message, with_grips=False))
        yield len(rows), await with_segment_text(conn, changes)


async def _messages(
    conn: AsyncConnection, rows: Sequence[Mapping[str, Any]]
) -> list[TocNodeMessage]:
    """Node version rows (``nodes_page`` columns) as the summarizer's ``mem.toc`` messages."""
    cited: dict[str, set[str]] = {}
    for r in rows:
        for b in r["bullets"] or ():
            cited.setdefault(r["tenant"], set()).update(b.get("grip_ids") or ())
    grips: dict[str, dict[str, dict[str, Any]]] = {}
    for tenant, ids in cited.items():
        gcur = conn.cursor(row_factory=dict_row)
        await gcur.execute(QUERIES["grips_by_id"], {"tenant": tenant, "ids": sorted(ids)})
        grips[tenant] = {g["grip_id"]: g for g in await gcur.fetchall()}
    return [toc_node_message(r, grips.get(r["tenant"], {}), r["pinned"]) for r in rows]


async def node_version_message(
    conn: AsyncConnection, tenant: str, node_id: str, version: int
) -> TocNodeMessage | None:
    """One node version as a ``mem.toc`` message, with today's pins: what a pin republishes so
    that the indexes learn the new salience (a redelivered version changes nothing else)."""
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(
        QUERIES["node_version"], {"tenant": tenant, "node_id": node_id, "version": version}
    )
    rows = await cur.fetchall()
    messages = await _messages(conn, rows)
    return messages[0] if messages else None


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


async def stored_before_successors(conn: AsyncConnection, events: Sequence[Event]) -> list[Event]:
    """The next turns that were stored before these events, to be indexed again now.

    An event's document holds its previous turn as context, read when it is indexed. When the
    previous turn is stored after it (two recorder replicas committing one session's events
    out of order, or a turn that arrived late), the next turn was indexed without it; indexing
    it again with this batch mends that. In order, as a single recorder stores a live session,
    no next turn was stored first and nothing more is read or written.
    """
    if not events:
        return []
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(
        QUERIES["stored_before_successors"],
        {"tenants": [e.tenant for e in events], "event_ids": [e.event_id for e in events]},
    )
    have = {(e.tenant, e.event_id) for e in events}
    out: list[Event] = []
    for row in await cur.fetchall():
        key = (row["tenant"], row["event_id"])
        if key not in have:
            have.add(key)
            out.append(Event.from_row(row))
    return out


async def recorded_changes(
    conn: AsyncConnection, payloads: Sequence[bytes], *, context: bool = True
) -> DocChanges:
    """Recorded events (``mem.recorded.*``, ``Event`` wire JSON) as index documents.

    ``context=False``: events without their previous turn, so that Postgres is not read for
    it (a writer whose index ignores ``context``). Raises ``pydantic.ValidationError`` for a
    message that is no event (poison).
    """
    events = await _not_erased([RecordedMessage.from_wire(data) for data in payloads], conn)
    if context:
        events += await stored_before_successors(conn, events)
    events = [e for e in events if indexed(e)]
    contexts = await previous_turns(conn, events) if context else [""] * len(events)
    docs = [event_doc(e, c) for e, c in zip(events, contexts, strict=True)]
    return DocChanges(upserts=docs)


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
        decoded = [TocNodeMessage.from_wire(data) for data in payloads]
    except ValueError as exc:  # pydantic.ValidationError
        raise PoisonMessageError(f"not a TOC node version: {exc!r}") from exc
    keys = [(m.tenant, m.node_id) for m in decoded]
    latest = await latest_versions(conn, keys)
    changes = DocChanges()
    for message, key in zip(decoded, keys, strict=True):
        changes.extend(node_changes(message, stale=message.version < latest.get(key, 0)))
    changes = await _citing_erased_dropped(changes, conn)
    return await with_segment_text(conn, changes) if context else changes


async def _citing_erased_dropped(changes: DocChanges, conn: AsyncConnection) -> DocChanges:
    """Documents that cite an erased event are deleted, not written: a node version published
    before an erasure can reach an indexer after the indexer did its part of that erasure (the
    TOC stream and the erasure requests are separate consumers; the summarizer, which publishes
    the node's next version without the erased events, may be down or behind). Its grips would
    bring the erased text back, which no later step removes."""
    cited = {(d.tenant, e) for d in changes.upserts for e in d.event_ids}
    if not cited:
        return changes
    cur = await conn.execute(
        QUERIES["erased_among"],
        {"tenants": [t for t, _ in cited], "event_ids": [e for _, e in cited]},
    )
    erased = {(r[0], r[1]) for r in await cur.fetchall()}
    if not erased:
        return changes
    out = DocChanges(deletes=list(changes.deletes))
    for doc in changes.upserts:
        if any((doc.tenant, e) in erased for e in doc.event_ids):
            out.deletes.append(doc.id)
        else:
            out.upserts.append(doc)
    return out


async def erasure_changes(
    conn: AsyncConnection, tenant: str, erasure_id: str, grip_ids: Sequence[str]
) -> DocChanges:
    """An erasure as index changes: the documents of the erased events and of the grips that
    cited them go; the events right after an erased one are indexed again, since their
    context (the previous turn) was erased text. TOC nodes need nothing here: the summarizer
    publishes their new versions (empty ones leave the indexes)."""
    cur = await conn.execute(
        "SELECT event_id FROM erased_events WHERE erasure_id = %s", (erasure_id,)
    )
    deletes = [event_doc_id(tenant, r[0]) for r in await cur.fetchall()]
    deletes += [grip_doc_id(tenant, g) for g in grip_ids]
    dcur = conn.cursor(row_factory=dict_row)
    await dcur.execute(QUERIES["erasure_neighbours"], {"erasure_id": erasure_id})
    events = [e for r in await dcur.fetchall() if indexed(e := Event.from_row(r))]
    contexts = await previous_turns(conn, events)
    docs = [event_doc(e, c) for e, c in zip(events, contexts, strict=True)]
    return DocChanges(upserts=docs, deletes=deletes)


async def _not_erased(events: list[Event], conn: AsyncConnection) -> list[Event]:
    """Leave out erased events: a message from before an erasure (redelivered, replayed) must
    not bring its document back."""
    if not events:
        return events
    cur = await conn.execute(
        QUERIES["erased_among"],
        {"tenants": [e.tenant for e in events], "event_ids": [e.event_id for e in events]},
    )
    erased = {(r[0], r[1]) for r in await cur.fetchall()}
    return [e for e in events if (e.tenant, e.event_id) not in erased] if erased else events
