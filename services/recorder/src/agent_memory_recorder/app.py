"""Composition root of the recorder: pool, NATS link, consumer runner."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import replace

from agent_memory_common.consumer import ConsumerRunner
from agent_memory_common.db import make_pool, prepare_database
from agent_memory_common.logs import get_logger
from agent_memory_common.natslink import NatsLink
from agent_memory_common.streams import RECORDER, ensure_pipeline
from agent_memory_recorder.handler import record
from agent_memory_recorder.settings import Settings

log = get_logger(__name__)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await _prepare_database_until_ready(settings, stop)
    link = NatsLink(settings.nats_servers, name="agent-memory-recorder")
    await link.start(wait=5)
    pool = make_pool(settings.pg_dsn, max_size=settings.recorder.pool_size)
    await pool.open()
    try:
        await link.wait_connected(timeout=60)
        await ensure_pipeline(link.require_js(), settings)
        spec = replace(RECORDER, batch_size=settings.recorder.batch_size)
        log.info("recorder.started", consumer=spec.durable)
        await ConsumerRunner(link, pool, spec, record).run(stop)
    finally:
        await pool.close()
        await link.close()
        log.info("recorder.stopped")


async def _prepare_database_until_ready(settings: Settings, stop: asyncio.Event) -> None:
    """Migrate at start; Postgres may still be starting, so keep trying until stopped."""
    import psycopg

    while not stop.is_set():
        try:
            await asyncio.to_thread(prepare_database, settings.pg_dsn)
            return
        except psycopg.OperationalError as exc:
            log.warning("recorder.postgres_unavailable", error=str(exc))
            await asyncio.sleep(1)
