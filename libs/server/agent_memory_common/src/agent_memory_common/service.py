"""The start and stop every consumer service shares, written once.

A consumer service serves ``/metrics``, ``/healthz`` and ``/readyz`` on its metrics port (at
once, so a liveness probe sees it alive while it migrates), migrates the database (Postgres may
still be starting: it keeps trying), connects to NATS (in the background, reconnecting
forever), opens its pool, makes sure the streams and durable consumers exist, and stops
cleanly on SIGTERM or SIGINT: the ``stop`` event is set, the runners finish their batch, the
pool and the connection close.

Consumers are background work: each runs at ``background_nice`` CPU niceness (default 5), so
that on a machine short of cores the gateway's requests are scheduled ahead of indexing.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass

import psycopg
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import ensure_pipeline
from agent_memory_common.core import runtime, tracing
from agent_memory_common.core.logs import get_logger
from agent_memory_common.core.metrics import WorkerProbe
from agent_memory_common.core.settings import CommonSettings
from agent_memory_common.db.postgres import make_pool, prepare_database

log = get_logger(__name__)


@dataclass(frozen=True)
class ServiceParts:
    link: NatsLink
    pool: AsyncConnectionPool
    stop: asyncio.Event


@contextlib.asynccontextmanager
async def consumer_service(
    settings: CommonSettings, name: str, *, pool_size: int, stop: asyncio.Event | None = None
) -> AsyncIterator[ServiceParts]:
    stop = stop or asyncio.Event()
    tracing.configure(name, settings.otlp_endpoint)
    niceness = runtime.lower_priority(settings.background_nice)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    parts: list[ServiceParts] = []  # set once ready: what /readyz looks at
    probe: WorkerProbe | None = None
    if settings.metrics.enabled:
        probe = WorkerProbe(
            settings.metrics.port_for(name),
            ready=lambda: bool(parts) and parts[0].link.connected and not parts[0].pool.closed,
            host=settings.metrics.host,
        )
        await probe.start()
    try:
        await prepare_database_until_ready(settings.pg_dsn, stop, name)
        link = NatsLink(settings.nats_servers, name=f"agent-memory-{name}")
        await link.start(wait=5)
        pool = make_pool(settings.pg_dsn, max_size=pool_size)
        await pool.open()
        try:
            await link.wait_connected(timeout=60)
            await ensure_pipeline(link.require_js(), settings)
            runtime.freeze_startup_objects()
            log.info(f"{name}.ready", nice=niceness)
            parts.append(ServiceParts(link=link, pool=pool, stop=stop))
            yield parts[0]
        finally:
            await pool.close()
            await link.close()
            log.info(f"{name}.stopped")
    finally:
        if probe is not None:
            await probe.stop()
        await asyncio.to_thread(tracing.shutdown)  # the last spans; never longer than 5 s


async def prepare_database_until_ready(dsn: str, stop: asyncio.Event, name: str) -> None:
    """Migrate at start; Postgres may still be starting, so keep trying until stopped."""
    while not stop.is_set():
        try:
            await asyncio.to_thread(prepare_database, dsn)
            return
        except psycopg.OperationalError as exc:
            log.warning(f"{name}.postgres_unavailable", error=str(exc))
            await asyncio.sleep(1)
