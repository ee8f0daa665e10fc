"""Composition root of the recorder: pool, NATS link, consumer runner."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.consumer import ConsumerRunner
from agent_memory_common.bus.erasure import erasure_runner
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import RECORDER
from agent_memory_common.core.logs import get_logger
from agent_memory_common.service import consumer_service
from agent_memory_recorder.handler import erase, make_handler
from agent_memory_recorder.settings import RecorderOptions, Settings

log = get_logger(__name__)


def consumer(link: NatsLink, pool: AsyncConnectionPool, options: RecorderOptions) -> ConsumerRunner:
    """The recorder's durable consumer (a faststream subscriber on ``link.broker``)."""
    spec = replace(RECORDER, batch_size=options.batch_size, settle_s=options.settle_ms / 1000)
    # one announcement per event: the hot publish path (BatchPublisher), see publisher.py
    handler = make_handler(options.dedup.rules())
    return ConsumerRunner(link, pool, spec, handler, hot_publish=True)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    async with consumer_service(
        settings, "recorder", pool_size=settings.recorder.pool_size, stop=stop
    ) as svc:
        runner = consumer(svc.link, svc.pool, settings.recorder)
        eraser = await erasure_runner(svc.link, svc.pool, "recorder", erase)
        log.info("recorder.started", consumer=RECORDER.durable)
        await asyncio.gather(runner.run(svc.stop), eraser.run(svc.stop))
