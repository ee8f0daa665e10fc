"""``agent-memory admin ...``: operator commands on the derived data.

``rebuild-index`` refills the BM25 and/or the vector index from the system of record (every
event, and the latest version of every table-of-contents node and every grip when the TOC
tables exist), through the same mapping the live indexers use, so the result is the index the
pipeline would have built. Documents are upserted under their deterministic ids: running it
twice, or while the indexer services run, changes nothing but what was missing or outdated.
Search keeps answering meanwhile; with ``--fresh`` the selected index is emptied first, and
until it is refilled search leans on the other tiers.

A rebuild keeps the writers' retention rule
(``agent_memory_retrieval.lifecycle.cleanup.RetentionGate``, docs/lifecycle.md): the index of a
project the pruner has pruned under its current matrix gets only what the matrix keeps; with
``--retention`` every project's does (else the next pruner run removes the rest). Each page is
written under the tenants' index lock, held shared like an indexer's batch, so that no pruning
page falls between the rebuild's check and its write.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_memory_cli import erase, keys_cmd

if TYPE_CHECKING:
    # Every command builds this group's parsers; psycopg, rich and the index adapters are
    # imported by the commands that use them (``__main__`` says why).
    import psycopg

    from agent_memory_cli.settings import Settings
    from agent_memory_retrieval.docs import DocChanges
    from agent_memory_retrieval.lifecycle.cleanup import RetentionGate
    from agent_memory_retrieval.ports import Embedder, TextIndex, VectorIndex
    from agent_memory_retrieval.settings import RetrievalSettings

    PageReader = Callable[[psycopg.AsyncConnection, int], AsyncIterator[tuple[int, DocChanges]]]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    admin = sub.add_parser("admin", help="operator commands (rebuild derived indexes)")
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    keys_cmd.register(admin_sub)  # admin keys create|list|revoke
    rebuild = admin_sub.add_parser(
        "rebuild-index",
        help="refill the BM25 and/or vector index from Postgres (both when neither is named)",
    )
    rebuild.add_argument("--bm25", action="store_true", help="the text (BM25) index")
    rebuild.add_argument("--vector", action="store_true", help="the vector index (embeds)")
    rebuild.add_argument(
        "--fresh", action="store_true", help="empty the selected indexes first (drops orphans)"
    )
    rebuild.add_argument("--page-size", type=int, default=256, help="rows per write (default 256)")
    rebuild.add_argument("--quiet", action="store_true", help="no progress bar")
    rebuild.add_argument(
        "--retention",
        action="store_true",
        help=(
            "leave out what the retention matrix prunes in every project (in a pruned one, always)"
        ),
    )
    rebuild.set_defaults(run=_cmd_rebuild)
    cleanup = admin_sub.add_parser(
        "cleanup",
        help="prune index entries beyond retention and faded topics (--dry-run: only count them)",
    )
    cleanup.add_argument("--dry-run", action="store_true", help="count, remove nothing")
    cleanup.add_argument("--project-id", help="one project only")
    cleanup.add_argument("--tenant", help="one tenant only (default: every tenant)")
    cleanup.add_argument("--json", action="store_true", help="the report as JSON")
    cleanup.set_defaults(run=_cmd_cleanup)
    erase.register_admin(admin_sub)  # admin redact --since: through the erasure path
    from agent_memory_cli.topics import register_admin  # the topic graph's rebuild

    register_admin(admin_sub)


@dataclass
class RebuildReport:
    rows: int = 0
    text_docs: int = 0
    vector_docs: int = 0
    deleted: int = 0
    skipped: int = 0  # documents an index did not get: beyond retention (the writers' rule)
    seconds: float = 0.0


def _cmd_cleanup(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory_cli import cleanup  # its settings class is built from the pruner's

    return cleanup.run(settings, args)


def _cmd_rebuild(settings: Settings, args: argparse.Namespace) -> int:
    import psycopg

    from agent_memory_common.db.postgres import prepare_database
    from agent_memory_retrieval.settings import RetrievalSettings

    both = not args.bm25 and not args.vector
    if args.page_size < 1:
        print("agent-memory: --page-size must be at least 1", file=sys.stderr)
        return 2
    retrieval = RetrievalSettings()
    try:
        prepare_database(retrieval.pg_dsn)
    except psycopg.OperationalError as exc:
        print(f"agent-memory: Postgres not reachable: {exc}", file=sys.stderr)
        return 2
    report = asyncio.run(
        rebuild_index(
            retrieval,
            bm25=both or args.bm25,
            vector=both or args.vector,
            fresh=args.fresh,
            page_size=args.page_size,
            progress=not args.quiet,
            beyond_retention=args.retention,
        )
    )
    print(
        f"rebuilt from {report.rows} rows in {report.seconds:.1f}s: "
        f"{report.text_docs} BM25 documents, {report.vector_docs} vectors, "
        f"{report.deleted} removed, {report.skipped} left out by retention"
    )
    return 0


async def rebuild_index(
    settings: RetrievalSettings,
    *,
    bm25: bool,
    vector: bool,
    fresh: bool = False,
    page_size: int = 256,
    progress: bool = True,
    embedder: Embedder | None = None,
    beyond_retention: bool = False,
) -> RebuildReport:
    """Refill the selected indexes; ``embedder`` may be passed in (tests load it once)."""
    import psycopg
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from agent_memory_retrieval.adapters.factory import (
        load_embedder,
        open_text_index,
        open_vector_index,
    )
    from agent_memory_retrieval.indexing.sources import (
        count_sources,
        event_pages,
        grip_pages,
        node_pages,
        toc_present,
    )
    from agent_memory_retrieval.lifecycle.cleanup import RetentionGate, hold_index_writes

    started = time.monotonic()
    report = RebuildReport()
    text: TextIndex | None = await open_text_index(settings, writer=True) if bm25 else None
    vectors: VectorIndex | None = await open_vector_index(settings) if vector else None
    if vector and embedder is None:
        embedder = await asyncio.to_thread(load_embedder, settings)
    try:
        if fresh:
            for index in (text, vectors):
                if index is not None:
                    await index.clear()
        async with await psycopg.AsyncConnection.connect(settings.pg_dsn, autocommit=True) as conn:
            total = await count_sources(conn)
            gate = await RetentionGate.load(conn, beyond_retention=beyond_retention)
            sources: list[PageReader] = [event_pages]
            if await toc_present(conn):
                sources += [node_pages, grip_pages]
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
            )
            with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
                task = bar.add_task("rebuilding", total=total)
                for pages in sources:
                    async for rows, changes in pages(conn, page_size):
                        async with conn.transaction():
                            tenants = {d.tenant for d in changes.upserts}
                            await hold_index_writes(conn, tenants, exclusive=False)
                            await _write(conn, gate, changes, text, vectors, embedder, report)
                        report.rows += rows
                        bar.advance(task, rows)
    finally:
        for index in (text, vectors):
            if index is not None:
                await index.close()
    report.seconds = time.monotonic() - started
    return report


async def _write(
    conn: psycopg.AsyncConnection,
    gate: RetentionGate,
    changes: DocChanges,
    text: TextIndex | None,
    vectors: VectorIndex | None,
    embedder: Embedder | None,
    report: RebuildReport,
) -> None:
    docs = [d for d in changes.upserts if (d.title + d.text).strip()]
    allowed = await gate.allowed(conn, docs)
    text_docs, vector_docs = allowed["bm25"], allowed["vector"]
    report.skipped += (len(docs) - len(text_docs) if text is not None else 0) + (
        len(docs) - len(vector_docs) if vectors is not None else 0
    )
    for index in (text, vectors):
        if index is not None and changes.deletes:
            await index.delete(changes.deletes)
    if changes.deletes:
        report.deleted += len(changes.deletes)
    if text is not None and text_docs:
        await text.upsert(text_docs)
        report.text_docs += len(text_docs)
    if vectors is not None and embedder is not None and vector_docs:
        texts = [d.embedding_text() for d in vector_docs]
        embedded = await asyncio.to_thread(embedder.embed, texts)
        await vectors.upsert(vector_docs, embedded)
        report.vector_docs += len(vector_docs)
