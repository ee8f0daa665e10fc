"""What an erasure leaves on disk (issue 55, point 7): after a verified erasure the erased text
is in no file of the Tantivy index folder, read byte by byte and with every LZ4 block of its
document stores decompressed, nor in the nats-server's stream files, and in no data file of
the test's Postgres database once the coordinator has rewritten the tables it deleted from
(``RECLAIM=full``) and checkpointed. The same scans first find the text on disk before the
erasure, so that a scan that cannot see it does not pass for one that found nothing.

A delete in Tantivy only marks a document: its stored text stays in its segment's ``.store``
file until a merge, which the default merge policy never starts for deletes alone; a deleted
Postgres row stays in its heap page until vacuum. Real services, nats-server and Postgres.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_memory_embedded.servers import PostgresServer
from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex
from agent_memory_retrieval.docs import IndexDoc, SearchFilter
from tests import plain_http
from tests.disk_residue import files_holding, tantivy_compression
from tests.helpers import eventually, make_event
from tests.stack import Stack, module_stack

PHRASE = "cormorant vellum isotope ninety-one"
KEPT = "pelican marble hinge"
A = {"Authorization": "Bearer tok-a"}


@pytest.fixture(scope="module")
def residue_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    tantivy = tmp_path_factory.mktemp("tantivy")
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS="tok-a:tenant-a",
        AGENT_MEMORY_TANTIVY_DIR=str(tantivy),
        AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S="1",
        AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S="1",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
        # a plain VACUUM leaves a deleted row's bytes in its page's free space (seen here in
        # toc_node_versions and toc_grips); VACUUM FULL rewrites the tables without them
        AGENT_MEMORY_QUERY__ERASURE__RECLAIM="full",
    ) as s:
        for name in ("segmenter", "summarizer", "bm25-indexer"):
            s.start(name)
        yield s


def _session(start: int, session: str, words: str, n: int = 6) -> list[dict[str, Any]]:
    events = [
        make_event(
            start + i,
            project="p",
            session=session,
            text=f"Turn {i} of {session}: the {words} note says the build stays green {i}.",
        )
        for i in range(n)
    ]
    events[-1]["type"] = "session_end"
    return events


def _bm25_finds(stack: Stack, words: str) -> bool:
    r = plain_http.post(
        f"{stack.query_url}/v1/search",
        json={"query": words, "project_id": "p", "tiers": ["bm25"]},
        headers=A,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return words in str(r.json()["results"]).lower()


def _summarized(dsn: str, words: str) -> bool:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT 1 FROM toc_node_versions WHERE level = 'day' AND lower(search_text) LIKE %s",
            (f"%{words}%",),
        ).fetchone()
    return row is not None


def _database_dir(pg_server: PostgresServer, dsn: str) -> Path:
    """This test's database's own folder of data files (``base/<oid>``), after a checkpoint
    (the test connects as a superuser) so that what the buffers hold is in the files."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        row = conn.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return pg_server.data_dir / "base" / str(row[0])


def _relations(dsn: str, files: list[str]) -> list[str]:
    """The relations whose data files are ``files`` (``<filenode>[.<n>]``, fork suffixes)."""
    nodes = sorted({int(f.split(".")[0].split("_")[0]) for f in files})
    with psycopg.connect(dsn) as conn:
        return [
            str(conn.execute("SELECT pg_filenode_relation(0, %s)::text", (n,)).fetchone())
            for n in nodes
        ]


@pytest.mark.slow
def test_a_verified_erasure_leaves_no_text_in_the_index_files_or_table_files(
    residue_stack: Stack, pg_server: PostgresServer
) -> None:
    stack = residue_stack
    tantivy = Path(stack.env["AGENT_MEMORY_TANTIVY_DIR"])
    # one request: both sessions recorded and indexed together, so the erased documents share
    # their Tantivy segments (and heap pages) with documents that stay
    r = plain_http.post(
        f"{stack.gateway_url}/v1/events",
        json={"events": _session(0, "secret", PHRASE) + _session(100, "kept", KEPT)},
        headers=A,
    )
    assert r.status_code == 202, r.text
    eventually(lambda: _summarized(stack.pg_dsn, PHRASE), 240, "the secret session summarized")
    eventually(lambda: _bm25_finds(stack, PHRASE), 240, "the secret session indexed")
    eventually(lambda: _bm25_finds(stack, KEPT), 120, "the kept session indexed")

    # the scans see the phrase where it is: the document stores are LZ4 blocks, decoded
    assert tantivy_compression(tantivy) <= {"lz4", "none"}, tantivy_compression(tantivy)
    before = files_holding(tantivy, PHRASE)
    assert any(f.endswith(".store") for f in before), before
    database = _database_dir(pg_server, stack.pg_dsn)
    assert files_holding(database, PHRASE), "the phrase is in the table files before"
    eventually(lambda: files_holding(stack.nats.store_dir, PHRASE), 30, "in the stream files")

    r = plain_http.post(
        f"{stack.query_url}/v1/erasures",
        json={"project_id": "p", "scope": {"session_id": "secret"}},
        headers=A,
    )
    assert r.status_code == 202, r.text
    erasure_id = r.json()["erasure_id"]

    def verified() -> dict[str, Any] | None:
        receipt: dict[str, Any] = plain_http.get(
            f"{stack.query_url}/v1/erasures/{erasure_id}", headers=A
        ).json()
        return receipt if receipt["verified"] else None

    receipt = eventually(verified, 180, "verified")
    assert receipt["counts"]["events"] == 6 and receipt["counts"]["bm25_documents"] >= 6

    # verified: no file of the index folder holds the phrase, raw or decompressed
    assert files_holding(tantivy, PHRASE) == []
    assert _bm25_finds(stack, KEPT)  # what stays is still found, rewritten or not
    # nor the streams' block files: a session's messages are deleted one by one, overwritten
    assert files_holding(stack.nats.store_dir, PHRASE) == []

    # after the verdict the coordinator rewrites the tables and checkpoints: no data file of
    # the database holds it (the WAL still does: docs/lifecycle.md)
    eventually(lambda: "erasure.postgres_reclaimed" in stack.log("query"), 60, "reclaimed")
    assert "erasure.reclaim_failed" not in stack.log("query")
    left = files_holding(_database_dir(pg_server, stack.pg_dsn), PHRASE)
    assert left == [], _relations(stack.pg_dsn, left)


def _doc(n: int, text: str) -> IndexDoc:
    return IndexDoc(
        id=f"event:t:e-{n}",
        type="event",
        tenant="t",
        project_id="p",
        agent_id="a",
        session_id="s",
        ts=datetime(2026, 1, 1, tzinfo=UTC),
        level="event",
        text=text,
        context=text,
    )


async def test_expunge_deletes_rewrites_the_segments_holding_deleted_documents(
    tmp_path: Path,
) -> None:
    """The adapter alone: three commits (three segments), one document deleted from the
    second; its text stays in that segment's store until ``expunge_deletes``, and after it
    every other document is still found, and a second call has nothing to do."""
    index = TantivyIndex(tmp_path, writer=True)
    try:
        for batch in range(3):
            await index.upsert(
                [
                    _doc(
                        batch * 10 + i,
                        f"{PHRASE} {batch}" if (batch, i) == (1, 2) else f"ordinary words {i}",
                    )
                    for i in range(5)
                ]
            )
        await index.delete(["event:t:e-12"])
        assert files_holding(tmp_path, PHRASE), "a delete leaves the text in its segment"
        assert await index.expunge_deletes() == 4  # the deleted one's segment-mates
        assert files_holding(tmp_path, PHRASE) == []
        assert await index.count("t") == 14
        hits = await index.search("ordinary words", SearchFilter(tenant="t"), 50)
        assert len(hits) == 14
        assert await index.expunge_deletes() == 0
    finally:
        await index.close()
