"""Composition root of the summarizer: pool, NATS link, optional LLM client, consumer runner."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.consumer import ConsumerRunner
from agent_memory_common.bus.erasure import erasure_runner
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import SUMMARIZER
from agent_memory_common.core.logs import get_logger
from agent_memory_common.service import consumer_service
from agent_memory_summarizer.erasure import erase
from agent_memory_summarizer.handler import SummarizeHandler
from agent_memory_summarizer.llm import LlmSummarizer
from agent_memory_summarizer.settings import Settings, SummarizerOptions

log = get_logger(__name__)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    options = settings.summarizer
    llm = LlmSummarizer(options.llm) if options.llm.enabled else None
    try:
        async with consumer_service(
            settings, "summarizer", pool_size=options.pool_size, stop=stop
        ) as svc:
            log.info(
                "summarizer.started",
                consumer=SUMMARIZER.durable,
                summarizer=llm.name if llm else "extractive",
            )
            eraser = await erasure_runner(svc.link, svc.pool, "summarizer", erase)
            await asyncio.gather(
                consumer(svc.link, svc.pool, options, llm).run(svc.stop), eraser.run(svc.stop)
            )
    finally:
        if llm is not None:
            await llm.close()


def consumer(
    link: NatsLink,
    pool: AsyncConnectionPool,
    options: SummarizerOptions,
    llm: LlmSummarizer | None,
) -> ConsumerRunner:
    """The summarizer's durable consumer (a faststream subscriber on ``link.broker``)."""
    spec = replace(SUMMARIZER, batch_size=batch_size(options))
    return ConsumerRunner(link, pool, spec, SummarizeHandler(options.llm, llm))


def batch_size(options: SummarizerOptions) -> int:
    """With a model in the loop, a batch must still finish within the consumer's ack wait (or
    JetStream redelivers it to another replica while this one is still working on it)."""
    if not options.llm.enabled:
        return options.batch_size
    per_segment = options.llm.timeout_s * 1.5  # the call, plus reading and writing
    return max(1, min(options.batch_size, int(SUMMARIZER.ack_wait_s // per_segment)))
