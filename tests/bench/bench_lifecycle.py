"""Lifecycle benchmark, the cleanup part: retention over the indexes of 100,000 events.

Run by ``make bench-lifecycle``. Self-contained: its own Postgres (pgvector) in a temporary
folder; 100,000 events spread evenly over the last 120 days in 5 projects are copied into
``events``, and their index documents written straight into both embedded stores (``vector_docs``
rows in pgvector, with one constant embedding, as the vectors' values do not matter to a delete;
Tantivy documents through the adapter). Then the cleanup the pruner runs
(``agent_memory_retrieval.lifecycle.cleanup.run_cleanup``) is timed as a dry run and as a real
run, and
a second dry run checks nothing is left. About 75 % of the events are beyond the 30-day
retention of event entries.

The HNSW graph of ``vector_docs`` is dropped before seeding (building it for 100,000 rows would
take minutes on two cores and pgvector marks deleted rows lazily, so deletes cost about the same
with or without it; vacuum tidies the graph later). Erasure is the erasure branch's part.

A measurement, not a test: the exit code is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from agent_memory_common.db.postgres import prepare_database
from agent_memory_embedded import PostgresServer, free_port
from agent_memory_retrieval.adapters.pgvector_index import PgVectorIndex
from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex
from agent_memory_retrieval.docs import IndexDoc, event_doc_id
from agent_memory_retrieval.lifecycle.cleanup import CleanupReport, CleanupScope, run_cleanup
from agent_memory_retrieval.ports import EMBEDDING_DIM

PROJECTS = 5
SPAN_DAYS = 120
WORDS = ("cache", "retry", "schema", "deploy", "lock", "index")


def _text(i: int) -> str:
    return f"event {i}: the {WORDS[i % len(WORDS)]} change for {WORDS[(i * 7) % len(WORDS)]}"


def seed_postgres(dsn: str, n: int, now: datetime) -> None:
    step = timedelta(days=SPAN_DAYS) / n
    vector = "[" + ",".join(["0.05"] * EMBEDDING_DIM) + "]"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS vector_docs_embedding_hnsw")
        with conn.cursor().copy(
            "COPY events (tenant, event_id, ts, project_id, agent_id, session_id, role, type, "
            "text, received_at) FROM STDIN"
        ) as copy:
            for i in range(n):
                ts = now - i * step
                copy.write_row(
                    (
                        "default",
                        f"b-{i:07d}",
                        ts,
                        f"p{i % PROJECTS}",
                        "bench",
                        f"s{i // 100}",
                        "user",
                        "message",
                        _text(i),
                        ts,
                    )
                )
        conn.execute(
            "INSERT INTO vector_docs (id, tenant, type, project_id, agent_id, session_id, ts, "
            "level, kind, salience, title, text, event_ids, embedding) "
            "SELECT 'event:' || tenant || ':' || event_id, tenant, 'event', project_id, agent_id, "
            "session_id, ts, 'event', 'observation', 0.5, '', text, ARRAY[event_id], "
            "%s::vector FROM events",
            (vector,),
        )
        conn.execute("ANALYZE")


async def seed_tantivy(index: TantivyIndex, n: int, now: datetime, batch: int = 20_000) -> None:
    step = timedelta(days=SPAN_DAYS) / n
    for start in range(0, n, batch):
        docs = [
            IndexDoc(
                id=event_doc_id("default", f"b-{i:07d}"),
                type="event",
                tenant="default",
                project_id=f"p{i % PROJECTS}",
                agent_id="bench",
                session_id=f"s{i // 100}",
                ts=now - i * step,
                level="event",
                text=_text(i),
                event_ids=(f"b-{i:07d}",),
            )
            for i in range(start, min(n, start + batch))
        ]
        await index.upsert(docs)


async def cleanup(dsn: str, tantivy: Path, dry_run: bool, now: datetime) -> CleanupReport:
    text = TantivyIndex(tantivy, writer=True)
    vectors = await PgVectorIndex.open(dsn)
    try:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            return await run_cleanup(
                conn, text=text, vectors=vectors, scope=CleanupScope(), dry_run=dry_run, now=now
            )
    finally:
        await text.close()
        await vectors.close()


def _cell(report: CleanupReport, index: str) -> tuple[int, float]:
    for i in report.indexes:
        if i.index == index:
            return i.entries, i.seconds
    return 0, 0.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="am-bench-lifecycle-"))
    pg = PostgresServer(workdir / "pg" / "data", free_port(), workdir / "postgres.log", trust=True)
    now = datetime.now(UTC)
    try:
        pg.start(timeout=120)
        dsn = pg.dsn("agent_memory_bench")
        prepare_database(dsn)
        t0 = time.monotonic()
        seed_postgres(dsn, args.events, now)
        t1 = time.monotonic()
        tantivy = workdir / "tantivy"
        asyncio.run(seed_tantivy(TantivyIndex(tantivy, writer=True), args.events, now))
        t2 = time.monotonic()
        print(
            f"seeded {args.events:,} events: Postgres + pgvector {t1 - t0:.1f}s, "
            f"Tantivy {t2 - t1:.1f}s",
            flush=True,
        )
        runs = []
        for label, dry in (("dry run", True), ("run", False), ("dry run after", True)):
            started = time.monotonic()
            report = asyncio.run(cleanup(dsn, tantivy, dry, now))
            runs.append((label, report, time.monotonic() - started))
        print()
        print(
            f"| cleanup of {args.events:,} events' indexes | entries | pgvector | Tantivy "
            "| episodes | wall |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for label, report, wall in runs:
            v_n, v_s = _cell(report, "vector")
            b_n, b_s = _cell(report, "bm25")
            _, e_s = _cell(report, "episodes")
            print(
                f"| {label} | {report.entries:,} (vector {v_n:,}, bm25 {b_n:,}) | {v_s:.2f}s "
                f"| {b_s:.2f}s | {e_s:.2f}s | {wall:.2f}s |"
            )
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT count(*) FROM vector_docs").fetchone()
            left = int(row[0]) if row else -1
        print(f"\nvector_docs left: {left:,}; events kept: {args.events:,} (never pruned)")
    finally:
        pg.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
