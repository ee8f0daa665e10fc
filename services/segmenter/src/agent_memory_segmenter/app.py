"""Composition root of the segmenter: pool, NATS link, consumer runner, idle flush."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace

from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.consumer import TRANSIENT, ConsumerRunner, Publication
from agent_memory_common.bus.erasure import erasure_runner
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import SEGMENTER
from agent_memory_common.core.logs import get_logger
from agent_memory_common.service import consumer_service
from agent_memory_segmenter import store
from agent_memory_segmenter.handler import make_eraser, make_handler
from agent_memory_segmenter.settings import SegmenterOptions, Settings

log = get_logger(__name__)

IDLE_BATCH = 500  # sessions per idle round; the rest wait for the next round
# An outbox row younger than this is probably being published by the flush that wrote it.
OUTBOX_GRACE_S = 5.0


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    options = settings.segmenter
    async with consumer_service(
        settings, "segmenter", pool_size=options.pool_size, stop=stop
    ) as svc:
        runner = consumer(svc.link, svc.pool, options)
        eraser = await erasure_runner(
            svc.link,
            svc.pool,
            "segmenter",
            make_eraser(options.thresholds, options.historical_after_s),
        )
        thresholds = str(options.thresholds)
        log.info("segmenter.started", consumer=SEGMENTER.durable, thresholds=thresholds)
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(runner.run(svc.stop))
            tasks.create_task(eraser.run(svc.stop))
            tasks.create_task(_idle_loop(svc.link, svc.pool, options, svc.stop))


def consumer(
    link: NatsLink, pool: AsyncConnectionPool, options: SegmenterOptions
) -> ConsumerRunner:
    """The segmenter's durable consumer (a faststream subscriber on ``link.broker``)."""
    spec = replace(SEGMENTER, batch_size=options.batch_size)
    return ConsumerRunner(
        link, pool, spec, make_handler(options.thresholds, options.historical_after_s)
    )


async def _idle_loop(
    link: NatsLink, pool: AsyncConnectionPool, options: SegmenterOptions, stop: asyncio.Event
) -> None:
    """Close sessions that went quiet, and republish what a crash left in the outbox."""
    while not stop.is_set():
        try:
            await sweep_outbox(link, pool, OUTBOX_GRACE_S)
            await flush_idle_sessions(
                link, pool, options.idle_flush_s, options.historical_quiet_s or None
            )
        except (*TRANSIENT, TimeoutError) as exc:
            log.warning("segmenter.idle_flush_failed", error=str(exc))
        except Exception:  # a bug here must not stop the consumer; the outbox keeps the work
            log.exception("segmenter.idle_flush_error")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), options.idle_check_interval_s)


async def flush_idle_sessions(
    link: NatsLink, pool: AsyncConnectionPool, idle_s: float, quiet_s: float | None = None
) -> int:
    """Each candidate in its own transaction: a busy session is skipped, not waited for.

    A tail closes after ``idle_s`` without a new event, or after ``quiet_s`` when its session
    is historical (``store.flush_idle``)."""
    async with pool.connection() as conn:
        candidates = await store.idle_candidates(conn, idle_s, IDLE_BATCH, quiet_s)
        await conn.commit()
    flushed = 0
    for key in candidates:
        async with pool.connection() as conn, conn.transaction():
            item = await store.flush_idle(conn, key, idle_s, quiet_s)
        if item is None:
            continue
        flushed += 1
        log.info("segmenter.idle_flushed", msg_id=item.publication.msg_id)
        await _publish(link, [item.publication])
        async with pool.connection() as conn, conn.transaction():
            await store.outbox_done(conn, item)
    return flushed


async def sweep_outbox(link: NatsLink, pool: AsyncConnectionPool, grace_s: float) -> int:
    """Publish outbox rows a crash left behind; JetStream drops a repeat by its msg id."""
    async with pool.connection() as conn, conn.transaction():
        due = await store.outbox_due(conn, grace_s, IDLE_BATCH)
        if due:
            await _publish(link, [item.publication for item in due])
            for item in due:
                await store.outbox_done(conn, item)
            log.info("segmenter.outbox_swept", count=len(due))
    return len(due)


async def _publish(link: NatsLink, pubs: list[Publication]) -> None:
    await link.publish(pubs, timeout=10)
