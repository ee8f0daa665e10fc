"""``agent-memory admin rebuild-index``: the indexes refilled from Postgres equal the indexes
the pipeline built, and a second run changes nothing; run as the real command, next to a
running bm25-indexer (the Tantivy writer lock is shared by turns)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import psycopg

from agent_memory_embedded.servers import NatsServer
from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex
from agent_memory_retrieval.docs import IndexDoc, SearchFilter
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import Stack, make_stack

N = 30


def snapshot(root: Path) -> dict[str, IndexDoc]:
    """Every document of the text index (all test events share the word 'decided')."""

    async def read() -> dict[str, IndexDoc]:
        index = TantivyIndex(root, writer=False)
        if not await index.healthy():
            return {}
        hits = await index.search("decided", SearchFilter("default"), 10 * N)
        return {h.id: h.doc for h in hits}

    return asyncio.run(read())


def vector_ids(pg_dsn: str) -> set[str]:
    with psycopg.connect(pg_dsn) as conn:
        return {r[0] for r in conn.execute("SELECT id FROM vector_docs")}


def rebuild(stack: Stack, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "admin", "rebuild-index", *flags],
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_rebuild_gives_the_same_indexes_and_is_idempotent(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(nats_server, pg_dsn, tmp_path)
    root = tmp_path / "home" / "tantivy"
    try:
        for name in ("gateway", "recorder", "bm25-indexer"):
            stack.start(name)
        events = [make_event(i, session=f"s{i % 3}") for i in range(N)]
        assert plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events}).is_success
        eventually(lambda: len(snapshot(root)) == N, what="pipeline indexed the events")
        built = snapshot(root)

        done = rebuild(stack, "--fresh")  # both tiers, emptied first
        assert done.returncode == 0, done.stderr
        assert f"rebuilt from {N} rows" in done.stdout
        assert snapshot(root) == built
        assert vector_ids(pg_dsn) == set(built)

        again = rebuild(stack, "--bm25", "--quiet")  # no --fresh: upserts over the same docs
        assert again.returncode == 0, again.stderr
        assert f"{N} BM25 documents, 0 vectors" in again.stdout
        assert snapshot(root) == built
    finally:
        stack.stop()
