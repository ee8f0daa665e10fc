"""The one mapping from the system of record to index documents, on a real Postgres.

The live writers map pipeline messages and ``rebuild-index`` maps table rows; both must give
the same documents, or a rebuild would change search results.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.messages import toc_node_message
from agent_memory_common.core.errors import PoisonMessageError
from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex
from agent_memory_retrieval.docs import DocChanges, IndexDoc, SearchFilter
from agent_memory_retrieval.indexing.feed import IndexFeed
from agent_memory_retrieval.indexing.sources import (
    event_pages,
    grip_pages,
    node_pages,
    recorded_changes,
    toc_changes,
)

T = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SEG = "segment:seg-1"
DAY = "day:2026-03-02@proj"
GONE = "segment:seg-gone"


def _version(node_id: str, version: int, level: str, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "tenant": "acme",
        "node_id": node_id,
        "version": version,
        "project_id": "proj",
        "level": level,
        "bucket": node_id.split(":", 1)[1],
        "parent_id": None,
        "title": f"{node_id} v{version}",
        "bullets": [],
        "keywords": ["k"],
        "memory_kind": "observation",
        "base_salience": 0.3,
        "start_ts": T,
        "end_ts": T + timedelta(hours=1),
        "session_id": None,
        "agent_id": None,
        "event_ids": None,
        "cause": f"c-{node_id}-{version}",
    }
    row.update(over)
    return row


GRIPS = [
    # made by the segment's version 1, still cited by version 2 and by the day rollup
    {"grip_id": "grip:aaa", "node_version": 1, "event_ids": ["e1", "e2"],
     "excerpt": "we must use UTC", "memory_kind": "constraint", "base_salience": 0.5},
    # made by version 2
    {"grip_id": "grip:bbb", "node_version": 2, "event_ids": ["e3"], "excerpt": "retries back off",
     "memory_kind": "observation", "base_salience": 0.2},
]  # fmt: skip

VERSIONS = [
    _version(SEG, 1, "segment", session_id="s1", agent_id="claude", event_ids=["e1", "e2"],
             bullets=[{"text": "UTC everywhere", "kind": "constraint", "grip_ids": ["grip:aaa"]}]),
    _version(SEG, 2, "segment", session_id="s1", agent_id="claude", event_ids=["e1", "e2", "e3"],
             memory_kind="constraint", base_salience=0.6,
             bullets=[{"text": "UTC everywhere", "kind": "constraint", "grip_ids": ["grip:aaa"]},
                      {"text": "retries back off", "kind": "observation",
                       "grip_ids": ["grip:bbb"]}]),
    _version(DAY, 1, "day",
             bullets=[{"text": "retries back off", "kind": "observation", "grip_ids": ["grip:bbb"]},
                      {"text": "UTC everywhere", "kind": "constraint", "grip_ids": ["grip:aaa"]}]),
    _version(GONE, 1, "segment", session_id="s2", agent_id="claude", event_ids=["e9"],
             bullets=[{"text": "soon retracted", "kind": "observation", "grip_ids": []}]),
    _version(GONE, 2, "segment", session_id="s2", agent_id="claude", event_ids=[]),
]  # fmt: skip
LATEST = {SEG: 2, DAY: 1, GONE: 2}


def seed_toc(dsn: str) -> None:
    """The rows the summarizer would have written for the versions above."""
    with psycopg.connect(dsn) as conn:
        for node_id, latest in LATEST.items():
            v = next(r for r in VERSIONS if r["node_id"] == node_id)
            conn.execute(
                "INSERT INTO toc_nodes (tenant, node_id, project_id, level, bucket, start_ts,"
                " end_ts, latest_version, is_empty, pinned) VALUES"
                " ('acme', %s, 'proj', %s, %s, %s, %s, %s, %s, %s)",
                (node_id, v["level"], v["bucket"], T, T + timedelta(hours=1), latest,
                 node_id == GONE, node_id == DAY),
            )  # fmt: skip
        for v in VERSIONS:
            conn.execute(
                "INSERT INTO toc_node_versions (tenant, node_id, version, project_id, level,"
                " bucket, parent_id, title, bullets, keywords, memory_kind, base_salience,"
                " start_ts, end_ts, session_id, agent_id, event_ids, cause, summarizer,"
                " search_text) VALUES (%(tenant)s, %(node_id)s, %(version)s, %(project_id)s,"
                " %(level)s, %(bucket)s, %(parent_id)s, %(title)s, %(bullets)s, %(keywords)s,"
                " %(memory_kind)s, %(base_salience)s, %(start_ts)s, %(end_ts)s, %(session_id)s,"
                " %(agent_id)s, %(event_ids)s, %(cause)s, 'extractive', 'x')",
                {**v, "bullets": Jsonb(v["bullets"])},
            )
        for g in GRIPS:
            conn.execute(
                "INSERT INTO toc_grips (tenant, grip_id, project_id, node_id, node_version,"
                " bullet_index, event_ids, excerpt, memory_kind, base_salience) VALUES"
                " ('acme', %(grip_id)s, 'proj', %(node_id)s, %(node_version)s, 0, %(event_ids)s,"
                " %(excerpt)s, %(memory_kind)s, %(base_salience)s)",
                {**g, "node_id": SEG},
            )


def insert_events(dsn: str, events: list[Event]) -> None:
    with psycopg.connect(dsn) as conn:
        for e in events:
            conn.execute(
                "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id,"
                " role, type, text, metadata, received_at) VALUES (%s, %s, %s, %s, %s, %s, %s,"
                " %s, %s, %s, %s)",
                (e.tenant, e.event_id, e.ts, e.project_id, e.agent_id, e.session_id, e.role,
                 e.type, e.text, Jsonb(e.metadata), e.received_at),
            )  # fmt: skip


def seed_segment_events(dsn: str) -> None:
    """The events of segment seg-1 (e1..e3), which its index context is made of."""
    insert_events(
        dsn,
        [
            Event(
                event_id=f"e{i}", ts=T + timedelta(seconds=i), tenant="acme", project_id="proj",
                agent_id="claude", session_id="s1", role="user", type="message",
                text=f"said {i}", metadata={"speaker": "Ann"} if i == 1 else {}, received_at=T,
            )
            for i in (1, 2, 3)
        ],
    )  # fmt: skip


def payload(v: dict[str, Any]) -> bytes:
    """The summarizer's ``mem.toc`` message for one version (its builder, toc_node_message)."""
    grips = {
        g["grip_id"]: {
            **g,
            "node_id": SEG,
            "bullet_index": 0,
            "salience": g["base_salience"],
            "pinned": False,
        }
        for g in GRIPS
    }
    row = {**v, "child_ids": [], "overlap_count": None, "source_version": None}
    row["summarizer"] = "extractive"
    return toc_node_message(row, grips, pinned=v["node_id"] == DAY).to_wire()


def by_id(changes: DocChanges) -> dict[str, IndexDoc]:
    return {d.id: d for d in changes.upserts}


async def collect(dsn: str, reader: Any) -> DocChanges:
    out = DocChanges()
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        async for _, changes in reader(conn, 2):  # small pages: the paging is exercised too
            out.extend(changes)
    return out


async def test_toc_messages_map_to_node_and_grip_documents(pg_dsn: str) -> None:
    seed_toc(pg_dsn)
    seed_segment_events(pg_dsn)
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        live = await toc_changes(conn, [payload(v) for v in VERSIONS])

    docs = by_id(live)
    seg, day = docs["node:acme:segment:seg-1"], docs["node:acme:day:2026-03-02@proj"]
    # the latest version wins; version 1 was stale by the time it was handled
    assert seg.title == "segment:seg-1 v2"
    assert seg.text == "UTC everywhere\nretries back off"
    assert (seg.type, seg.level, seg.kind, seg.session_id, seg.agent_id) == (
        "toc_node", "segment", "constraint", "s1", "claude",
    )  # fmt: skip
    assert seg.event_ids == ("e1", "e2", "e3")
    # matched by every word said in it, in event order; never shown
    assert seg.context == "Ann: said 1\nsaid 2\nsaid 3"
    assert docs["node:acme:day:2026-03-02@proj"].context == ""
    # a rollup's provenance: the events of the grips its bullets cite, in bullet order
    assert day.event_ids == ("e3", "e1", "e2")
    assert day.salience == pytest.approx(0.5)  # pinned: +0.2
    # each grip once, from the version that made it, with that version's time and session
    grip = docs["grip:acme:grip:aaa"]
    assert (grip.type, grip.level, grip.kind, grip.text) == (
        "grip", "grip", "constraint", "we must use UTC",
    )  # fmt: skip
    assert (grip.session_id, grip.ts, grip.event_ids) == ("s1", T, ("e1", "e2"))
    assert "grip:acme:grip:bbb" in docs
    assert len([d for d in live.upserts if d.type == "grip"]) == 2
    # the retracted segment leaves the index
    assert "node:acme:segment:seg-gone" in live.deletes
    assert "node:acme:segment:seg-gone" not in docs


async def test_a_version_citing_an_erased_event_is_deleted_not_indexed(pg_dsn: str) -> None:
    """A node version published before an erasure, handled after the indexer's part of it:
    whatever cites the erased event leaves the index, the rest is indexed as usual."""
    seed_toc(pg_dsn)
    seed_segment_events(pg_dsn)
    with psycopg.connect(pg_dsn) as conn:
        conn.execute(
            "INSERT INTO erased_events (tenant, event_id, erasure_id, project_id, session_id, ts)"
            " VALUES ('acme', 'e3', 'er-1', 'proj', 's1', %s)",
            (T,),
        )
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        live = await toc_changes(conn, [payload(v) for v in VERSIONS])
    docs = by_id(live)
    # the segment (e1..e3), the day (its bullets cite grip bbb) and grip bbb (e3) go
    for gone in ("node:acme:segment:seg-1", "node:acme:day:2026-03-02@proj", "grip:acme:grip:bbb"):
        assert gone not in docs and gone in live.deletes, gone
    assert docs["grip:acme:grip:aaa"].event_ids == ("e1", "e2")


class _HeldFeed(IndexFeed[DocChanges]):
    """The bm25-indexer's feed on a real Tantivy index, whose work on version 1 of the segment
    waits at a gate: a slow replica. ``slow_prepare``: the gate is in ``prepare`` (the
    embedder's model, run outside the locks), else in ``write`` (under them)."""

    reads_segment_text = False
    retention_index = "bm25"
    erasure_store = "bm25_documents"

    def __init__(self, index: TantivyIndex, slow_prepare: bool) -> None:
        self.index = index
        self.slow_prepare = slow_prepare  # type: ignore[misc]
        self.entered, self.gate = asyncio.Event(), asyncio.Event()

    async def _hold(self, changes: DocChanges) -> None:
        seg = "node:acme:segment:seg-1"
        if any(d.id == seg and d.title.endswith(" v1") for d in changes.upserts):
            self.entered.set()
            await self.gate.wait()

    async def prepare(
        self, conn: psycopg.AsyncConnection, changes: DocChanges, earlier: DocChanges | None
    ) -> DocChanges:
        if self.slow_prepare and earlier is None:
            await self._hold(changes)
        return changes

    async def write(self, changes: DocChanges) -> None:
        if not self.slow_prepare:
            await self._hold(changes)
        await self.index.upsert(changes.upserts)


@pytest.mark.parametrize("slow_prepare", [False, True], ids=["slow-write", "slow-model"])
async def test_a_slow_replica_never_lands_an_older_version_over_a_newer_one(
    pg_dsn: str, tmp_path: Path, slow_prepare: bool
) -> None:
    """Replica A finds version 1 current and is slow (to write it, or in the model before the
    write); meanwhile the summarizer commits version 2 and replica B handles it. The index ends
    with version 2, and B never waits for A's model."""
    seed_toc(pg_dsn)
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("UPDATE toc_nodes SET latest_version = 1 WHERE node_id = %s", (SEG,))
    index = TantivyIndex(tmp_path / "tantivy", writer=True)
    feed = _HeldFeed(index, slow_prepare)
    v1, v2 = (payload(v) for v in VERSIONS[:2])

    async def replica(data: bytes) -> None:
        async with await psycopg.AsyncConnection.connect(pg_dsn) as conn, conn.transaction():
            await feed.toc(conn, [SimpleNamespace(data=data)])  # type: ignore[list-item]

    try:
        a = asyncio.create_task(replica(v1))
        await asyncio.wait_for(feed.entered.wait(), 30)
        with psycopg.connect(pg_dsn) as conn:
            conn.execute("UPDATE toc_nodes SET latest_version = 2 WHERE node_id = %s", (SEG,))
        b = asyncio.create_task(replica(v2))
        await asyncio.sleep(0.5)  # a write of version 2 not held back by A happens now
        # B waits for A's write (under the lock), never for A's model (before it)
        assert b.done() == slow_prepare
        feed.gate.set()
        await asyncio.wait_for(asyncio.gather(a, b), 30)
        hits = await index.search("utc", SearchFilter(tenant="acme", levels=("segment",)), 5)
        assert [h.doc.title for h in hits] == ["segment:seg-1 v2"]
    finally:
        await index.close()


async def test_rebuild_reads_the_same_documents_as_the_pipeline_wrote(pg_dsn: str) -> None:
    seed_toc(pg_dsn)
    seed_segment_events(pg_dsn)
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        live = await toc_changes(conn, [payload(v) for v in VERSIONS])
    nodes, grips = await collect(pg_dsn, node_pages), await collect(pg_dsn, grip_pages)

    assert by_id(nodes) | by_id(grips) == by_id(live)
    assert nodes.deletes == ["node:acme:segment:seg-gone"]


async def test_events_map_alike_from_messages_and_rows(pg_dsn: str) -> None:
    events = [
        Event(
            event_id=f"e{i}", ts=T + timedelta(seconds=i), tenant="acme", project_id="proj",
            agent_id="claude", session_id="s1", role="user", type="message",
            text="a rule: never force-push" if i == 2 else f"event {i}",
            metadata={"memory_kind": "constraint"} if i == 2 else {"speaker": f"P{i % 2}"},
            received_at=T,
        )
        for i in range(5)
    ]  # fmt: skip
    other_session = Event(
        event_id="x1", ts=T + timedelta(seconds=3, milliseconds=500), tenant="acme",
        project_id="proj", agent_id="claude", session_id="s2", role="user", type="message",
        text="elsewhere", metadata={}, received_at=T,
    )  # fmt: skip
    events.insert(4, other_session)
    insert_events(pg_dsn, events)

    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        live = await recorded_changes(conn, [e.to_wire() for e in events])
        bare = await recorded_changes(conn, [e.to_wire() for e in events], context=False)
    rebuilt = await collect(pg_dsn, event_pages)
    # a writer whose index ignores context (vectors) gets the same documents without it
    assert by_id(bare) == {i: replace(d, context="") for i, d in by_id(live).items()}

    assert by_id(live) == by_id(rebuilt)
    docs = by_id(live)
    rule = docs["event:acme:e2"]
    assert (rule.kind, rule.level, rule.event_ids) == ("constraint", "event", ("e2",))
    assert rule.salience > docs["event:acme:e1"].salience
    # the speaker is the title; the previous turn of the same session is the context, across
    # the rebuild's page boundaries (pages of 2) and past another session's event
    assert (docs["event:acme:e1"].title, docs["event:acme:e1"].context) == ("P1", "P0: event 0")
    assert (rule.title, rule.context) == ("", "P1: event 1")
    assert docs["event:acme:e3"].context == "a rule: never force-push"
    assert docs["event:acme:e4"].context == "P1: event 3"
    assert docs["event:acme:e0"].context == docs["event:acme:x1"].context == ""


async def test_markers_and_edit_acknowledgements_get_no_document(pg_dsn: str) -> None:
    """A marker ("Claude Code session ended") answers nothing: it matched "code" in questions
    and, with the last reply as its context, stood beside it in answers; nor is it any turn's
    context. "Edit src/app.rs: applied" names the file its call named beside the change; a
    failed edit keeps its error. The events listing keeps them all."""
    edit = {"tool_kind": "edit"}
    kinds: list[tuple[str, str, str, dict[str, Any]]] = [
        ("system", "session_start", "Claude Code session started (startup)", {}),
        ("user", "message", "Why is the build red?", {}),
        ("assistant", "tool_call", "Edit src/app.rs\n@@ -1 +1 @@\n-a\n+b", edit),
        ("tool", "tool_result", "Edit src/app.rs: applied", edit),
        ("tool", "tool_result", "Edit src/app.rs\nString to replace not found", edit),
        ("assistant", "message", "Fixed: the lockfile was stale.", {}),
        ("system", "session_end", "Claude Code session ended (prompt_input_exit)", {}),
    ]
    events = [
        Event(
            event_id=f"m{i}", ts=T + timedelta(seconds=i), tenant="acme", project_id="proj",
            agent_id="claude", session_id="s1", role=role, type=type_, text=text,
            metadata=metadata, received_at=T,
        )
        for i, (role, type_, text, metadata) in enumerate(kinds)
    ]  # fmt: skip
    insert_events(pg_dsn, events)
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        live = by_id(await recorded_changes(conn, [e.to_wire() for e in events]))
    assert by_id(await collect(pg_dsn, event_pages)) == live
    assert {i: d.context for i, d in live.items()} == {
        "event:acme:m1": "",  # not the marker before it
        "event:acme:m2": "Why is the build red?",
        "event:acme:m4": "Edit src/app.rs: applied",
        "event:acme:m5": "Edit src/app.rs\nString to replace not found",
    }


async def test_a_turn_stored_late_brings_its_next_turn_back_with_it(pg_dsn: str) -> None:
    """e2 was stored (and indexed) before e1, the turn before it: indexing e1 indexes e2 again,
    now with e1 as its context. Stored in order, nothing more is indexed."""

    def turn(i: int) -> Event:
        return Event(
            event_id=f"e{i}", ts=T + timedelta(seconds=i), tenant="acme", project_id="proj",
            agent_id="claude", session_id="s1", role="user", type="message",
            text=f"turn {i}", metadata={}, received_at=T,
        )  # fmt: skip

    insert_events(pg_dsn, [turn(0), turn(2), turn(1), turn(3)])  # e1 late, e3 in order
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        late = by_id(await recorded_changes(conn, [turn(1).to_wire()]))
        in_order = by_id(await recorded_changes(conn, [turn(3).to_wire()]))
        bare = by_id(await recorded_changes(conn, [turn(1).to_wire()], context=False))
    assert {i: d.context for i, d in late.items()} == {
        "event:acme:e1": "turn 0",
        "event:acme:e2": "turn 1",
    }
    assert {i: d.context for i, d in in_order.items()} == {"event:acme:e3": "turn 2"}
    assert list(bare) == ["event:acme:e1"]  # an index without context has nothing to mend


def test_an_event_is_embedded_with_its_previous_turn_a_segment_without_its_text() -> None:
    event = IndexDoc(
        id="event:acme:e1", type="event", tenant="acme", project_id="p", agent_id="a",
        session_id="s", ts=T, level="event", title="Nora", text="Three of them!",
        context="Omar: How many dogs do you have?",
    )  # fmt: skip
    assert event.embedding_text() == "Nora\nThree of them!\nOmar: How many dogs do you have?"
    segment = replace(event, id="node:acme:seg", type="toc_node", level="segment")
    assert segment.embedding_text() == "Nora\nThree of them!"
    assert replace(event, context="").embedding_text() == "Nora\nThree of them!"
    assert event.match_text() == "Nora\nThree of them!\nOmar: How many dogs do you have?"


async def test_bad_messages_are_poison(pg_dsn: str) -> None:
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        with pytest.raises(PoisonMessageError):
            await toc_changes(conn, [b'{"tenant": "acme"}'])
        with pytest.raises(PoisonMessageError):
            await toc_changes(conn, [b"not json"])


@pytest.mark.parametrize("kind", ["decision", "constraint", "observation"])
def test_an_event_keeps_the_kind_its_metadata_names(kind: str) -> None:
    from agent_memory_retrieval.indexing.sources import event_doc

    event = Event(
        event_id="e1", ts=T, tenant="acme", project_id="p", agent_id="a", session_id="s",
        role="user", type="message", text="We go with NATS for the events.",
        metadata={"memory_kind": kind}, received_at=T,
    )  # fmt: skip
    doc = event_doc(event)
    assert doc.kind == kind
    bonus = 0.0 if kind == "observation" else 0.20  # a stated kind's salience bonus
    assert doc.salience == pytest.approx(round(31 / 500 * 0.45 + bonus, 4))


@pytest.mark.parametrize(
    ("role", "type_", "metadata", "spoken"),
    [
        ("user", "message", {}, True),
        ("assistant", "message", {}, True),
        ("assistant", "note", {}, True),
        ("tool", "tool_result", {}, False),
        ("assistant", "tool_call", {}, False),
        ("user", "message", {"hook_event": "PostToolUseFailure"}, False),
        ("assistant", "message", {"tool_name": "Bash"}, False),
        ("system", "session_start", {}, False),
    ],
)
def test_only_what_people_said_weighs_by_its_length(
    role: str, type_: str, metadata: dict[str, str], spoken: bool
) -> None:
    """A 2,000-character test log is not more important than a short decision: a tool's
    call or output, or a session marker, gets the salience of an empty text of its kind."""
    from agent_memory_retrieval.indexing.sources import event_doc

    event = Event(
        event_id="e1", ts=T, tenant="acme", project_id="p", agent_id="a", session_id="s",
        role=role, type=type_, text="x" * 2000, metadata=metadata, received_at=T,
    )  # fmt: skip
    assert event_doc(event).salience == pytest.approx(0.45 if spoken else 0.0)


async def test_the_database_stores_decisions_and_refuses_unknown_kinds(pg_dsn: str) -> None:
    """Migration 0007 widens the CHECK of the stored kinds; a rebuild reads the kind back."""
    insert = (
        "INSERT INTO toc_grips (tenant, grip_id, project_id, node_id, node_version,"
        " bullet_index, event_ids, excerpt, memory_kind, base_salience) VALUES"
        " ('acme', %s, 'proj', %s, 1, 0, ARRAY['e1'], 'we go with NATS', %s, 0.3)"
    )
    seed_toc(pg_dsn)
    with psycopg.connect(pg_dsn) as conn:
        conn.execute(insert, ("grip:dec", SEG, "decision"))
    with psycopg.connect(pg_dsn) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(insert, ("grip:bad", SEG, "rumour"))
    grips = by_id(await collect(pg_dsn, grip_pages))
    assert grips["grip:acme:grip:dec"].kind == "decision"
