"""Composition root of the recorder: pool, NATS link, consumer runner."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from agent_memory_common.consumer import ConsumerRunner
from agent_memory_common.logs import get_logger
from agent_memory_common.service import consumer_service
from agent_memory_common.streams import RECORDER
from agent_memory_recorder.handler import record
from agent_memory_recorder.settings import Settings

log = get_logger(__name__)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    async with consumer_service(
        settings, "recorder", pool_size=settings.recorder.pool_size, stop=stop
    ) as svc:
        options = settings.recorder
        spec = replace(RECORDER, batch_size=options.batch_size, settle_s=options.settle_ms / 1000)
        log.info("recorder.started", consumer=spec.durable)
        # one announcement per event: the hot publish path (BatchPublisher), see publisher.py
        runner = ConsumerRunner(svc.link, svc.pool, spec, record, hot_publish=True)
        await runner.run(svc.stop)
