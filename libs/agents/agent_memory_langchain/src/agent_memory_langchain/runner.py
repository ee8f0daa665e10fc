"""A private event loop in a daemon thread, and the background recorder that lives on it.

An agent may run synchronously (``agent.invoke``) or on its own event loop (``agent.ainvoke``);
the middleware must serve both without ever blocking the agent on the network. So the HTTP client
lives on one loop of ours: capture only appends to a bounded buffer (microseconds), and a sender
task on our loop posts batches to the gateway with retries. Recall, which the agent does wait
for, is a coroutine submitted to that loop with a deadline.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from agent_memory_client import AgentMemoryClient, ApiError, UnavailableError
from agent_memory_client.types import EventIn

log = logging.getLogger("agent_memory_langchain")
T = TypeVar("T")


class LoopThread:
    """An asyncio loop running forever in a daemon thread; ``submit`` runs a coroutine on it."""

    def __init__(self, name: str = "agent-memory") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coro`` on the loop and wait for it (from a thread that is not the loop's)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    async def acall(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:  # noqa: ASYNC109
        """The same from another event loop (the agent's), without blocking that loop."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except TimeoutError:
            future.cancel()
            raise

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)


@dataclass
class RecorderStats:
    enqueued: int = 0
    sent: int = 0
    dropped_full: int = 0
    rejected: int = 0
    retries: int = 0


class BackgroundRecorder:
    """Bounded buffer + sender. ``record`` never blocks and never raises.

    Full buffer: the oldest event is dropped (and counted), because the newest context matters
    most and the agent must not wait. Gateway unreachable: the batch is retried with exponential
    backoff, without limit while the process lives (events carry their ids, so a retry after an
    ambiguous failure is de-duplicated by the gateway). A batch the gateway refuses (4xx) is
    retried one event at a time so that one bad event does not take its neighbours down.
    """

    def __init__(
        self,
        loop: LoopThread,
        client_factory: Callable[[], AgentMemoryClient],
        *,
        max_buffer: int = 1000,
        batch_size: int = 100,
        backoff_initial: float = 0.2,
        backoff_max: float = 10.0,
    ) -> None:
        self._loop = loop
        self._client_factory = client_factory
        self._client: AgentMemoryClient | None = None
        self._buffer: collections.deque[EventIn] = collections.deque()
        self._max_buffer = max_buffer
        self._batch_size = batch_size
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._lock = threading.Lock()
        self._wake: asyncio.Event | None = None
        self._idle: asyncio.Event | None = None
        self._task: concurrent.futures.Future[None] | None = None
        self.stats = RecorderStats()
        self._closed = False
        atexit.register(self.close, 1.0)

    @property
    def client(self) -> AgentMemoryClient:
        """The client, created on our loop (httpx binds its pool to the loop that uses it)."""
        if self._client is None:
            self._client = self._client_factory()
        return self._client

    def record(self, events: list[EventIn]) -> None:
        if self._closed or not events:
            return
        with self._lock:
            for event in events:
                if len(self._buffer) >= self._max_buffer:
                    self._buffer.popleft()
                    self.stats.dropped_full += 1
                self._buffer.append(event)
                self.stats.enqueued += 1
        if self._task is None:
            self._task = asyncio.run_coroutine_threadsafe(self._start(), self._loop.loop)
        else:
            self._loop.loop.call_soon_threadsafe(self._kick)

    def _kick(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _start(self) -> None:
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._wake.set()
        await self._run()

    def _take(self) -> list[EventIn]:
        with self._lock:
            n = min(self._batch_size, len(self._buffer))
            return [self._buffer.popleft() for _ in range(n)]

    def pending(self) -> int:
        with self._lock:
            return len(self._buffer)

    async def _run(self) -> None:
        assert self._wake is not None and self._idle is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            while batch := self._take():
                self._idle.clear()
                await self._send(batch)
            self._idle.set()

    async def _send(self, batch: list[EventIn]) -> None:
        delay = self._backoff_initial
        while True:
            try:
                await self.client.post_events(batch)
                self.stats.sent += len(batch)
                return
            except UnavailableError as exc:
                self.stats.retries += 1
                log.warning("agent-memory: gateway unavailable, retrying in %.1fs: %s", delay, exc)
                await asyncio.sleep(exc.retry_after or delay)
                delay = min(delay * 2, self._backoff_max)
            except ApiError as exc:
                if len(batch) == 1:
                    self.stats.rejected += 1
                    log.warning("agent-memory: event refused by the gateway: %s", exc)
                    return
                for event in batch:
                    await self._send([event])
                return
            except Exception:  # never let the sender die: a bug here must not stop capture
                self.stats.rejected += len(batch)
                log.exception("agent-memory: unexpected error while sending events")
                return

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything buffered has been sent (or given up); True when drained."""
        if self._task is None:
            return True
        try:
            return self._loop.call(self._drained(), timeout)
        except TimeoutError:
            return False

    async def _drained(self) -> bool:
        # polled: the buffer is filled from other threads, which cannot set our loop's events
        while self.pending() or (self._idle is not None and not self._idle.is_set()):  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        return True

    def close(self, timeout: float = 5.0) -> None:
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        if self._task is not None:
            self._task.cancel()  # the sender task; its loop outlives this recorder
            time.sleep(0)
        if self._client is not None:
            try:
                self._loop.call(self._client.aclose(), 2.0)
            except Exception:  # closing is best effort
                log.debug("agent-memory: client close failed", exc_info=True)
