"""Composition root of the topics service: the embedder, one consumer, and the timer that
re-clusters due projects (and prunes faded topics, if ``topic_prune_interval`` is set)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace

from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.consumer import ConsumerRunner
from agent_memory_common.bus.erasure import erasure_runner
from agent_memory_common.bus.streams import TOPICS
from agent_memory_common.core.logs import get_logger
from agent_memory_common.core.metrics import TOPICS_RECLUSTER_SECONDS, TOPICS_RECLUSTER_STARTED
from agent_memory_common.service import consumer_service
from agent_memory_retrieval.adapters.factory import load_embedder
from agent_memory_topics import store
from agent_memory_topics.erasure import erase
from agent_memory_topics.handler import TopicsHandler
from agent_memory_topics.recluster import prune, recluster
from agent_memory_topics.settings import Settings

log = get_logger(__name__)


async def recluster_due(pool: AsyncConnectionPool, settings: Settings) -> int:
    """Re-cluster every project with enough new material (or new material and an old
    clustering), each in its own transaction; the number re-clustered."""
    opts = settings.topics
    async with pool.connection() as conn:
        due = await store.rows(
            conn,
            "due_projects",
            min_new=opts.recluster_min_new,
            share=opts.recluster_share,
            every_s=opts.recluster_every_s,
        )
    for p in due:
        TOPICS_RECLUSTER_STARTED.set_to_current_time()
        try:
            with TOPICS_RECLUSTER_SECONDS.time():
                async with pool.connection() as conn:
                    await recluster(conn, p["tenant"], p["project_id"], opts)
        finally:
            TOPICS_RECLUSTER_STARTED.set(0)
    return len(due)


async def housekeeping(pool: AsyncConnectionPool, settings: Settings, stop: asyncio.Event) -> None:
    """The timer: due re-clusters every ``check_interval_s``, and a prune every
    ``topic_prune_interval`` seconds when set (off by default: the retention pruner prunes
    faded topics). Failures are logged and retried on the next tick."""
    last_prune = time.monotonic()
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), settings.topics.check_interval_s)
        if stop.is_set():
            return
        try:
            await recluster_due(pool, settings)
            every = settings.topic_prune_interval
            if every > 0 and time.monotonic() - last_prune >= every:
                async with pool.connection() as conn:
                    await prune(conn, settings.topic_prune_rule())
                last_prune = time.monotonic()
        except Exception as exc:  # Postgres away: the next tick tries again
            log.warning("topics.housekeeping_failed", error=str(exc))


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    embedder = await asyncio.to_thread(load_embedder, settings)
    async with consumer_service(
        settings, "topics", pool_size=settings.topics.pool_size, stop=stop
    ) as svc:
        handler = TopicsHandler(embedder, settings.topics.assign_similarity)
        runner = ConsumerRunner(
            svc.link, svc.pool, replace(TOPICS, batch_size=settings.topics.batch_size), handler.toc
        )
        eraser = await erasure_runner(svc.link, svc.pool, "topics", erase)
        log.info("topics.started", consumers=[TOPICS.durable])
        await asyncio.gather(
            runner.run(svc.stop),
            eraser.run(svc.stop),
            housekeeping(svc.pool, settings, svc.stop),
        )
