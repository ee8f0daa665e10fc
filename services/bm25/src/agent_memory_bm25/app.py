"""Composition root of the bm25-indexer: text index (writer), pool, NATS link, two runners."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from agent_memory_bm25.handler import IndexHandler
from agent_memory_bm25.settings import Settings
from agent_memory_common.consumer import ConsumerRunner
from agent_memory_common.logs import get_logger
from agent_memory_common.service import consumer_service
from agent_memory_common.streams import BM25_INDEXER, BM25_INDEXER_TOC
from agent_memory_retrieval.factory import open_text_index

log = get_logger(__name__)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    index = await open_text_index(settings, writer=True)
    try:
        async with consumer_service(
            settings, "bm25-indexer", pool_size=settings.bm25.pool_size, stop=stop
        ) as svc:
            handler = IndexHandler(index)
            runners = [
                ConsumerRunner(
                    svc.link,
                    svc.pool,
                    replace(BM25_INDEXER, batch_size=settings.bm25.batch_size),
                    handler.recorded,
                ),
                ConsumerRunner(
                    svc.link,
                    svc.pool,
                    replace(BM25_INDEXER_TOC, batch_size=settings.bm25.toc_batch_size),
                    handler.toc,
                ),
            ]
            log.info("bm25.started", consumers=[BM25_INDEXER.durable, BM25_INDEXER_TOC.durable])
            await asyncio.gather(*(r.run(svc.stop) for r in runners))
    finally:
        await index.close()
