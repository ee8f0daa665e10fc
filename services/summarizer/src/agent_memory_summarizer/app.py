"""Composition root of the summarizer: pool, NATS link, optional LLM client, consumer runner."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import replace

import psycopg

from agent_memory_common.consumer import ConsumerRunner
from agent_memory_common.db import make_pool, prepare_database
from agent_memory_common.logs import get_logger
from agent_memory_common.natslink import NatsLink
from agent_memory_common.streams import SUMMARIZER, ensure_pipeline
from agent_memory_summarizer.handler import SummarizeHandler
from agent_memory_summarizer.llm import LlmSummarizer
from agent_memory_summarizer.settings import Settings, SummarizerOptions

log = get_logger(__name__)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await _prepare_database_until_ready(settings, stop)
    options = settings.summarizer
    link = NatsLink(settings.nats_servers, name="agent-memory-summarizer")
    await link.start(wait=5)
    pool = make_pool(settings.pg_dsn, max_size=options.pool_size)
    await pool.open()
    llm = LlmSummarizer(options.llm) if options.llm.enabled else None
    try:
        await link.wait_connected(timeout=60)
        await ensure_pipeline(link.require_js(), settings)
        spec = replace(SUMMARIZER, batch_size=batch_size(options))
        log.info(
            "summarizer.started",
            consumer=spec.durable,
            summarizer=llm.name if llm else "extractive",
        )
        await ConsumerRunner(link, pool, spec, SummarizeHandler(options.llm, llm)).run(stop)
    finally:
        if llm is not None:
            await llm.close()
        await pool.close()
        await link.close()
        log.info("summarizer.stopped")


def batch_size(options: SummarizerOptions) -> int:
    """With a model in the loop, a batch must still finish within the consumer's ack wait (or
    JetStream redelivers it to another replica while this one is still working on it)."""
    if not options.llm.enabled:
        return options.batch_size
    per_segment = options.llm.timeout_s * 1.5  # the call, plus reading and writing
    return max(1, min(options.batch_size, int(SUMMARIZER.ack_wait_s // per_segment)))


async def _prepare_database_until_ready(settings: Settings, stop: asyncio.Event) -> None:
    """Migrate at start; Postgres may still be starting, so keep trying until stopped."""
    while not stop.is_set():
        try:
            await asyncio.to_thread(prepare_database, settings.pg_dsn)
            return
        except psycopg.OperationalError as exc:
            log.warning("summarizer.postgres_unavailable", error=str(exc))
            await asyncio.sleep(1)
