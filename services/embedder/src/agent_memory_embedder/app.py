"""Composition root of the embedder: model, vector index, pool, NATS link, two runners."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import replace

import psycopg

from agent_memory_common.consumer import ConsumerRunner
from agent_memory_common.db import make_pool, prepare_database
from agent_memory_common.logs import get_logger
from agent_memory_common.natslink import NatsLink
from agent_memory_common.streams import EMBEDDER, EMBEDDER_TOC, ensure_pipeline
from agent_memory_embedder.handler import EmbedHandler
from agent_memory_embedder.settings import Settings
from agent_memory_retrieval.factory import load_embedder, open_vector_index

log = get_logger(__name__)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await _prepare_database_until_ready(settings, stop)
    embedder = await asyncio.to_thread(load_embedder, settings)  # seconds: torch and weights
    link = NatsLink(settings.nats_servers, name="agent-memory-embedder")
    await link.start(wait=5)
    pool = make_pool(settings.pg_dsn, max_size=settings.embedder.pool_size)
    await pool.open()
    index = await open_vector_index(settings, pool=pool)
    try:
        await link.wait_connected(timeout=60)
        await ensure_pipeline(link.require_js(), settings)
        handler = EmbedHandler(embedder, index)
        runners = [
            ConsumerRunner(
                link,
                pool,
                replace(EMBEDDER, batch_size=settings.embedder.batch_size),
                handler.recorded,
            ),
            ConsumerRunner(
                link,
                pool,
                replace(EMBEDDER_TOC, batch_size=settings.embedder.toc_batch_size),
                handler.toc,
            ),
        ]
        log.info("embedder.started", consumers=[EMBEDDER.durable, EMBEDDER_TOC.durable])
        await asyncio.gather(*(r.run(stop) for r in runners))
    finally:
        await index.close()
        await pool.close()
        await link.close()
        log.info("embedder.stopped")


async def _prepare_database_until_ready(settings: Settings, stop: asyncio.Event) -> None:
    """Migrate at start; Postgres may still be starting, so keep trying until stopped."""
    while not stop.is_set():
        try:
            await asyncio.to_thread(prepare_database, settings.pg_dsn)
            return
        except psycopg.OperationalError as exc:
            log.warning("embedder.postgres_unavailable", error=str(exc))
            await asyncio.sleep(1)
