"""A NATS connection that is allowed to be down, owned by a faststream ``NatsBroker``.

Services must start, answer health checks and recover on their own while NATS restarts, so the
connection is made by a background loop and every user asks ``require_js()`` at the moment it
needs JetStream, getting ``TransientError`` (an HTTP 503, a nak) instead of a hang.

The broker (``link.broker``) makes and owns the connection, carries the consumers' subscriber
declarations (``consumer.py``: the AsyncAPI document, ``TestNatsBroker``) and publishes what is
published rarely (segments, TOC nodes, dead letters) with ``Nats-Msg-Id`` headers. The hot
publish paths (the gateway's events, the recorder's announcements: one message per event) go
through ``BatchPublisher`` on the same connection; see ``publisher.py`` for the measurement.
A link whose broker never connected (a ``TestNatsBroker`` in tests) publishes everything
through the broker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from faststream.nats import NatsBroker
from nats.aio.client import Client
from nats.js import JetStreamContext

from agent_memory_common.bus.publisher import BatchPublisher, Outgoing, publish_through_broker
from agent_memory_common.core import tracing
from agent_memory_common.core.errors import TransientError
from agent_memory_common.core.logs import get_logger

log = get_logger(__name__)


class NatsLink:
    """Owns one NATS client per process; reconnects forever."""

    def __init__(self, servers: list[str], *, name: str, broker: NatsBroker | None = None) -> None:
        self._servers = servers
        self._name = name
        self.broker = broker if broker is not None else self._make_broker()
        self._nc: Client | None = None
        self._js: JetStreamContext | None = None
        self._publisher: BatchPublisher | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self, wait: float | None = None) -> None:
        """Begin connecting in the background; optionally wait up to ``wait`` seconds."""
        if self._task is None:
            self._task = asyncio.create_task(
                self._connect_loop(), name=f"nats-connect-{self._name}"
            )
        if wait:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), wait)

    async def wait_connected(self, timeout: float) -> None:  # noqa: ASYNC109
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            raise TransientError(f"NATS not reachable at {','.join(self._servers)}") from None

    def _make_broker(self) -> NatsBroker:
        return NatsBroker(
            self._servers,
            name=self._name,
            connect_timeout=2,
            reconnect_time_wait=0.5,  # type: ignore[arg-type]  # nats-py takes a float
            max_reconnect_attempts=-1,
            allow_reconnect=True,
            ping_interval=5,
            max_outstanding_pings=3,
            error_cb=self._on_error,
            disconnected_cb=self._on_disconnected,
            reconnected_cb=self._on_reconnected,
            logger=None,  # structlog is the log; faststream would log every message at INFO
        )

    async def _connect_loop(self) -> None:
        delay = 0.2
        while self._nc is None:
            try:
                nc = await self.broker.connect()
            except Exception as exc:  # any failure to connect is retried: NATS may start later
                log.warning("nats.connect_failed", error=str(exc), retry_in_s=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self._nc = nc
            self._js = nc.jetstream(timeout=5)
            self._publisher = BatchPublisher(nc)
            self._ready.set()
            log.info("nats.connected", servers=self._servers)

    async def _on_error(self, exc: Exception) -> None:
        log.debug("nats.error", error=str(exc))

    async def _on_disconnected(self) -> None:
        log.warning("nats.disconnected")

    async def _on_reconnected(self) -> None:
        log.info("nats.reconnected")

    @property
    def connected(self) -> bool:
        return self._nc is not None and self._nc.is_connected

    @property
    def nc(self) -> Client:
        if self._nc is None:
            raise TransientError("NATS is not connected yet")
        return self._nc

    def require_js(self) -> JetStreamContext:
        """JetStream, or ``TransientError`` if NATS is not connected right now."""
        if self._js is None or not self.connected:
            raise TransientError("NATS is not connected")
        return self._js

    def require_publisher(self) -> BatchPublisher:
        """The batch publisher, or ``TransientError`` if NATS is not connected right now."""
        if self._publisher is None or not self.connected:
            raise TransientError("NATS is not connected")
        return self._publisher

    async def publish(
        self,
        messages: Sequence[Outgoing],
        timeout: float,  # noqa: ASYNC109
        *,
        hot: bool = False,
    ) -> None:
        """Publish to JetStream and wait for every ack (``publisher.PublishError`` otherwise).

        ``hot``: one message per event, through ``BatchPublisher``; else through faststream's
        broker. A link that never connected (a ``TestNatsBroker``) always uses the broker.
        Every message carries the current span's trace context when tracing is on
        (``tracing.py``): the gateway's request span, or a consumer's batch span.
        """
        headers = tracing.inject()
        if hot and self._publisher is not None:
            await self.require_publisher().publish(messages, timeout, headers)
        else:
            if self._publisher is not None and not self.connected:
                raise TransientError("NATS is not connected")
            await publish_through_broker(self.broker, messages, timeout, headers)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._nc is not None and not self._nc.is_closed:
            with contextlib.suppress(Exception):
                await self.broker.stop()  # drains the connection
