"""Composition root of the bm25-indexer: text index (writer), pool, NATS link, two runners."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from psycopg_pool import AsyncConnectionPool

from agent_memory_bm25.handler import IndexHandler
from agent_memory_bm25.settings import Settings
from agent_memory_common.bus.consumer import ConsumerRunner
from agent_memory_common.bus.erasure import participant_runner, register_participant
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import BM25_INDEXER, BM25_INDEXER_TOC
from agent_memory_common.core.logs import get_logger
from agent_memory_common.service import consumer_service
from agent_memory_retrieval.adapters.factory import open_text_index
from agent_memory_retrieval.ports import IndexUnavailableError, TextIndex

log = get_logger(__name__)


def consumers(
    link: NatsLink, pool: AsyncConnectionPool, settings: Settings, index: TextIndex
) -> list[ConsumerRunner]:
    """The two durable consumers (faststream subscribers on ``link.broker``): recorded events and
    TOC node versions, into one text index."""
    handler = IndexHandler(index)
    options = settings.bm25
    return [
        ConsumerRunner(
            link, pool, replace(BM25_INDEXER, batch_size=options.batch_size), handler.recorded
        ),
        ConsumerRunner(
            link, pool, replace(BM25_INDEXER_TOC, batch_size=options.toc_batch_size), handler.toc
        ),
        participant_runner(link, pool, "bm25-indexer", handler.erase),
    ]


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    index = await open_text_index(settings, writer=True)
    try:
        try:
            await index.upgrade()
        except IndexUnavailableError as exc:  # busy or away: the first batch's write does it
            log.warning("bm25.upgrade_deferred", error=str(exc))
        async with consumer_service(
            settings, "bm25-indexer", pool_size=settings.bm25.pool_size, stop=stop
        ) as svc:
            await register_participant(svc.pool, "bm25-indexer")
            runners = consumers(svc.link, svc.pool, settings, index)
            log.info("bm25.started", consumers=[BM25_INDEXER.durable, BM25_INDEXER_TOC.durable])
            await asyncio.gather(*(r.run(svc.stop) for r in runners))
    finally:
        await index.close()
