"""Staged vectors (``indexing.staged``) on real Postgres: a vector is taken only for the text
it was made from, in the space it was made in; a row taken is gone, one that did not match
stays for a later reading, and a batch that rolls back leaves them all for its redelivery."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import psycopg
import pytest

from agent_memory_retrieval.docs import IndexDoc, event_doc_id
from agent_memory_retrieval.indexing import staged

SPACE = "all-MiniLM-L6-v2/float32/256"


def doc(event_id: str, text: str) -> IndexDoc:
    return IndexDoc(
        id=event_doc_id("acme", event_id),
        type="event",
        tenant="acme",
        project_id="p",
        agent_id="a",
        session_id="s",
        ts=datetime(2026, 1, 1, tzinfo=UTC),
        level="event",
        text=text,
        event_ids=(event_id,),
    )


def stage(dsn: str, d: IndexDoc, text: str, vector: list[float], space: str = SPACE) -> None:
    with psycopg.connect(dsn) as conn:
        conn.execute(
            staged.STAGE_SQL,
            {
                "tenant": d.tenant,
                "doc_id": d.id,
                "space": space,
                "text_sha": staged.text_sha(text),
                "vector": staged.pack(vector),
            },
        )


def staged_ids(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return [r[0] for r in conn.execute("SELECT doc_id FROM staged_vectors ORDER BY doc_id")]


def test_export_text_round_trips_a_vector_exactly() -> None:
    vector = [0.1, -0.25, 1 / 3, 0.0, 1e-7]
    data = staged.from_text(staged.to_text(staged.pack(vector)))
    assert staged.unpack(data) == [float(x) for x in np.float32(vector)]
    for bad in ("", "not base64!", staged.to_text(b"abc")):
        with pytest.raises(ValueError):
            staged.from_text(bad)


async def test_a_vector_is_taken_only_for_its_text_and_space(pg_dsn: str) -> None:
    same, edited, other = doc("e1", "kept text"), doc("e2", "new text"), doc("e3", "x")
    stage(pg_dsn, same, "kept text", [0.5, 0.25])
    stage(pg_dsn, edited, "old text", [0.75, 0.5])  # the text changed since (a redaction)
    stage(pg_dsn, other, "x", [1.0, 0.0], space="another-model/float32/256")
    docs = [same, edited, other]
    texts = [d.text for d in docs]

    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        async with conn.transaction(force_rollback=True):  # a batch whose write failed
            assert await staged.take(conn, SPACE, docs, texts) == {"kept text": [0.5, 0.25]}
        assert len(staged_ids(pg_dsn)) == 3  # all left for the redelivery
        async with conn.transaction():
            assert await staged.take(conn, SPACE, docs, texts) == {"kept text": [0.5, 0.25]}
            assert await staged.take(conn, SPACE, docs, texts) == {}  # taken once
    assert staged_ids(pg_dsn) == [edited.id, other.id]  # the others wait for their text

    async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as conn:
        # read again with the text it was made from (the previous turn stored meanwhile)
        assert await staged.take(conn, SPACE, [edited], ["old text"]) == {"old text": [0.75, 0.5]}
        await staged.drop(conn, [other.id])  # the document deleted (an erasure)
        assert staged_ids(pg_dsn) == []
        stage(pg_dsn, same, "kept text", [0.5, 0.25])
        await conn.execute("UPDATE staged_vectors SET staged_at = now() - interval '2 days'")
        stage(pg_dsn, edited, "old text", [0.75, 0.5])  # staged today
        await conn.execute(staged.PURGE_SQL, {"tenant": "acme"})  # what a day left unmatched
        assert staged_ids(pg_dsn) == [edited.id]
