"""Composition root of the bm25-indexer: text index (writer), pool, NATS link, two runners."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import replace

import psycopg

from agent_memory_bm25.handler import IndexHandler
from agent_memory_bm25.settings import Settings
from agent_memory_common.consumer import ConsumerRunner
from agent_memory_common.db import make_pool, prepare_database
from agent_memory_common.logs import get_logger
from agent_memory_common.natslink import NatsLink
from agent_memory_common.streams import BM25_INDEXER, BM25_INDEXER_TOC, ensure_pipeline
from agent_memory_retrieval.factory import open_text_index

log = get_logger(__name__)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await _prepare_database_until_ready(settings, stop)
    index = await open_text_index(settings, writer=True)
    link = NatsLink(settings.nats_servers, name="agent-memory-bm25-indexer")
    await link.start(wait=5)
    pool = make_pool(settings.pg_dsn, max_size=settings.bm25.pool_size)
    await pool.open()
    try:
        await link.wait_connected(timeout=60)
        await ensure_pipeline(link.require_js(), settings)
        handler = IndexHandler(index)
        runners = [
            ConsumerRunner(
                link,
                pool,
                replace(BM25_INDEXER, batch_size=settings.bm25.batch_size),
                handler.recorded,
            ),
            ConsumerRunner(
                link,
                pool,
                replace(BM25_INDEXER_TOC, batch_size=settings.bm25.toc_batch_size),
                handler.toc,
            ),
        ]
        log.info("bm25.started", consumers=[BM25_INDEXER.durable, BM25_INDEXER_TOC.durable])
        await asyncio.gather(*(r.run(stop) for r in runners))
    finally:
        await index.close()
        await pool.close()
        await link.close()
        log.info("bm25.stopped")


async def _prepare_database_until_ready(settings: Settings, stop: asyncio.Event) -> None:
    """Migrate at start; Postgres may still be starting, so keep trying until stopped."""
    while not stop.is_set():
        try:
            await asyncio.to_thread(prepare_database, settings.pg_dsn)
            return
        except psycopg.OperationalError as exc:
            log.warning("bm25.postgres_unavailable", error=str(exc))
            await asyncio.sleep(1)
