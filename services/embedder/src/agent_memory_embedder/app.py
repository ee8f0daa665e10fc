"""Composition root of the embedder: model, vector index, pool, NATS link, its runners."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.consumer import ConsumerRunner
from agent_memory_common.bus.erasure import participant_runner, register_participant
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import EMBEDDER, EMBEDDER_TOC
from agent_memory_common.core.logs import get_logger
from agent_memory_common.service import consumer_service
from agent_memory_embedder.handler import EmbedHandler
from agent_memory_embedder.settings import Settings
from agent_memory_retrieval.adapters.factory import load_embedder, open_vector_index
from agent_memory_retrieval.ports import Embedder, VectorIndex

log = get_logger(__name__)


def consumers(
    link: NatsLink,
    pool: AsyncConnectionPool,
    settings: Settings,
    embedder: Embedder,
    index: VectorIndex,
) -> list[ConsumerRunner]:
    """The two durable consumers (faststream subscribers on ``link.broker``): recorded events and
    TOC node versions, into one vector index."""
    handler = EmbedHandler(embedder, index, settings.vector_space)
    options = settings.embedder
    return [
        ConsumerRunner(
            link,
            pool,
            replace(EMBEDDER, batch_size=options.batch_size),
            handler.recorded,
            workers=options.workers,
        ),
        # as many for TOC versions: the model takes the batches in turn, and with fewer TOC
        # workers the segments' summaries would wait behind the events (measured: 77 s late)
        ConsumerRunner(
            link,
            pool,
            replace(EMBEDDER_TOC, batch_size=options.toc_batch_size),
            handler.toc,
            workers=options.workers,
        ),
        participant_runner(link, pool, "embedder", handler.erase),
    ]


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    embedder = await asyncio.to_thread(load_embedder, settings)  # seconds: torch and weights
    async with consumer_service(
        settings, "embedder", pool_size=settings.embedder.pool_size_needed(), stop=stop
    ) as svc:
        index = await open_vector_index(settings, pool=svc.pool)
        try:
            await register_participant(svc.pool, "embedder")
            runners = consumers(svc.link, svc.pool, settings, embedder, index)
            log.info("embedder.started", consumers=[EMBEDDER.durable, EMBEDDER_TOC.durable])
            await asyncio.gather(*(r.run(svc.stop) for r in runners))
        finally:
            await index.close()
