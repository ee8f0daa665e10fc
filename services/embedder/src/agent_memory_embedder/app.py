"""Composition root of the embedder: model, vector index, pool, NATS link, two runners."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from agent_memory_common.consumer import ConsumerRunner
from agent_memory_common.logs import get_logger
from agent_memory_common.service import consumer_service
from agent_memory_common.streams import EMBEDDER, EMBEDDER_TOC
from agent_memory_embedder.handler import EmbedHandler
from agent_memory_embedder.settings import Settings
from agent_memory_retrieval.factory import load_embedder, open_vector_index

log = get_logger(__name__)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    embedder = await asyncio.to_thread(load_embedder, settings)  # seconds: torch and weights
    async with consumer_service(
        settings, "embedder", pool_size=settings.embedder.pool_size, stop=stop
    ) as svc:
        index = await open_vector_index(settings, pool=svc.pool)
        try:
            handler = EmbedHandler(embedder, index)
            runners = [
                ConsumerRunner(
                    svc.link,
                    svc.pool,
                    replace(EMBEDDER, batch_size=settings.embedder.batch_size),
                    handler.recorded,
                ),
                ConsumerRunner(
                    svc.link,
                    svc.pool,
                    replace(EMBEDDER_TOC, batch_size=settings.embedder.toc_batch_size),
                    handler.toc,
                ),
            ]
            log.info("embedder.started", consumers=[EMBEDDER.durable, EMBEDDER_TOC.durable])
            await asyncio.gather(*(r.run(svc.stop) for r in runners))
        finally:
            await index.close()
