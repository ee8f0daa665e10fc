"""The idempotent consumer, written once.

Per batch: one Postgres transaction owned by the runner, in which the handler writes its
outputs; commit; publish the follow-up messages the handler asked for (awaiting JetStream's
acks); only then acknowledge the input. A crash anywhere before the ack means redelivery, and
handlers are idempotent (on the natural keys of what they write), so nothing is lost and nothing
is stored twice.

Each consumer is a faststream JetStream batch pull subscriber on the link's broker
(``declare_consumer``: subject, stream, durable, batch size, manual acks), whose handler is the
runner's ``process``: that is what the AsyncAPI document (``asyncapi.py``) describes and what the
services' handler tests drive through ``TestNatsBroker``. In production the batches are pulled
by ``PullFeed`` instead of faststream's loop (``pull.py`` has the measurement: ~6x the CPU per
message and a lone message waiting out the fetch timeout): a batch is whatever has arrived (one
pull request kept open, no wait for a full batch), optionally once the input has paused for the
spec's ``settle_s``; its acks go out as one write, still one explicit ack per message, so
replicas can share a durable consumer. Either way the same ``process`` runs, and acks only after
the commit and the follow-up publications.

Failures are sorted by type: a transient failure (Postgres or NATS away) naks with a growing
delay and is retried forever; a message that cannot be decoded or keeps failing is poison and is
moved to ``mem.dlq.<consumer>`` (published through faststream's broker) and terminated, so one
bad message never blocks the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence

import nats.errors
import nats.js.errors
import orjson
import psycopg
import pydantic
from faststream import AckPolicy, Context
from faststream.nats import JStream, NatsBroker, PullSub
from faststream.nats.message import NatsBatchMessage
from faststream.nats.subscriber.usecases import BatchPullStreamSubscriber
from nats.aio.msg import Msg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.publisher import Outgoing
from agent_memory_common.bus.pull import PullFeed, ack_all
from agent_memory_common.bus.streams import ConsumerSpec, ensure_consumer
from agent_memory_common.contracts.subjects import STREAM_DLQ, dlq_subject
from agent_memory_common.core import tracing
from agent_memory_common.core.errors import PoisonMessageError, TransientError
from agent_memory_common.core.logs import get_logger
from agent_memory_common.core.metrics import (
    CONSUMER_ACK_PENDING,
    CONSUMER_DEAD_LETTERS,
    CONSUMER_FAILURES,
    CONSUMER_MESSAGES,
    CONSUMER_PENDING,
    CONSUMER_REDELIVERIES,
    CONSUMER_SECONDS,
)

log = get_logger(__name__)

POISON_AFTER_DELIVERIES = 8
LAG_POLL_S = 10.0
TRANSIENT = (
    TransientError,
    TimeoutError,
    psycopg.OperationalError,
    nats.errors.TimeoutError,
    nats.errors.ConnectionClosedError,
    nats.errors.NoRespondersError,
    nats.js.errors.NoStreamResponseError,
)


# A message to publish after the handler's transaction commits.
Publication = Outgoing

Handler = Callable[[AsyncConnection, Sequence[Msg]], Awaitable[list[Publication]]]
Acker = Callable[[Sequence[Msg]], Awaitable[None]]


def declare_consumer(
    broker: NatsBroker, spec: ConsumerSpec, *, description: str | None = None
) -> BatchPullStreamSubscriber:
    """The durable consumer as a faststream JetStream batch pull subscriber (not started: see
    the module docstring); register its handler by calling the result on it."""
    return broker.subscriber(
        spec.filter_subject,
        stream=JStream(spec.stream, declare=False),  # ensure_streams owns the stream config
        durable=spec.durable,
        config=spec.config(),
        pull_sub=PullSub(batch_size=spec.batch_size, timeout=spec.fetch_timeout_s, batch=True),
        ack_policy=AckPolicy.MANUAL,  # acked by the runner, after its commit
        title=f"{spec.durable}:{spec.filter_subject}",
        description=description,
    )


def nak_delay(num_delivered: int) -> float:
    return float(min(0.5 * 2 ** max(num_delivered - 1, 0), 30.0))


class ConsumerRunner:
    """Pulls batches for one durable consumer and runs a handler on them."""

    def __init__(
        self,
        link: NatsLink,
        pool: AsyncConnectionPool,
        spec: ConsumerSpec,
        handler: Handler,
        *,
        hot_publish: bool = False,
        description: str | None = None,
        workers: int = 1,
    ) -> None:
        """``hot_publish``: the handler publishes one message per input message (the recorder);
        its publications go through ``BatchPublisher`` rather than faststream's broker.

        ``workers``: batches in flight at once in this process, each pulled, handled and acked
        on its own, as replicas of the consumer would be. For a handler whose batch spends
        part of its time here and part waiting on Postgres (the embedder: its model, then the
        vector write), a second batch fills the wait."""
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self._link = link
        self._pool = pool
        self._spec = spec
        self._handler = handler
        self._hot_publish = hot_publish
        self._workers = workers
        self.processed = 0
        doc = description or (handler.__doc__ or "").strip().split("\n\n")[0] or None
        self.subscriber = declare_consumer(link.broker, spec, description=doc)
        self.subscriber(self._on_batch)

    async def _on_batch(
        self,
        message: NatsBatchMessage = Context("message"),  # noqa: B008 (faststream's injection)
    ) -> None:
        """The faststream handler: the same ``process``, acked through faststream's message."""
        await self.process(message.raw_message, ack=_ack_each)

    async def run(self, stop: asyncio.Event) -> None:
        """Run until ``stop`` is set; survives NATS and Postgres outages."""
        lag = asyncio.create_task(self._poll_lag(stop))
        try:
            await self._run(stop)
        finally:
            lag.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lag

    async def _poll_lag(self, stop: asyncio.Event) -> None:
        """Keep the lag gauges (``num_pending``, ``num_ack_pending``) as JetStream reports
        them: a metric, so a failure here only leaves the gauge stale."""
        durable = self._spec.durable
        while not stop.is_set():
            try:
                js = self._link.require_js()
                info = await js.consumer_info(self._spec.stream, durable)
                CONSUMER_PENDING.labels(durable).set(info.num_pending or 0)
                CONSUMER_ACK_PENDING.labels(durable).set(info.num_ack_pending or 0)
            except Exception as exc:  # never let a gauge stop a consumer
                log.debug("consumer.lag_unknown", consumer=durable, error=repr(exc))
            await _sleep_or_stop(stop, LAG_POLL_S)

    async def _run(self, stop: asyncio.Event) -> None:
        if self._workers == 1:
            await self._work(stop)
            return
        tasks = [asyncio.create_task(self._work(stop)) for _ in range(self._workers)]
        try:
            await asyncio.gather(*tasks)
        finally:  # one failing takes the others down with it, as one worker's failure would
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _work(self, stop: asyncio.Event) -> None:
        """One worker: its own pull request on the durable consumer, one batch at a time."""
        while not stop.is_set():
            try:
                await self._link.wait_connected(timeout=5)
                js = self._link.require_js()
                await ensure_consumer(js, self._spec)
                feed = PullFeed(
                    self._link.nc,
                    self._spec.stream,
                    self._spec.durable,
                    batch=self._spec.batch_size,
                    expires_s=self._spec.pull_expires_s,
                )
                await feed.start()
            except (*TRANSIENT, nats.js.errors.Error) as exc:
                log.warning(
                    "consumer.subscribe_failed", consumer=self._spec.durable, error=str(exc)
                )
                await _sleep_or_stop(stop, 1.0)
                continue
            try:
                await self._pull_loop(feed, stop)
            except (*TRANSIENT, nats.js.errors.Error) as exc:
                log.warning("consumer.pull_failed", consumer=self._spec.durable, error=str(exc))
                await _sleep_or_stop(stop, 0.5)
            finally:
                await feed.close()

    async def _pull_loop(self, feed: PullFeed, stop: asyncio.Event) -> None:
        spec = self._spec
        while not stop.is_set():
            msgs = await feed.fetch(timeout=spec.fetch_timeout_s)
            if msgs and spec.settle_s > 0:
                msgs += await self._settle(feed, spec.batch_size - len(msgs))
            if msgs:
                await self.process(msgs, ack=self._ack_all)

    async def _settle(self, feed: PullFeed, room: int) -> list[Msg]:
        """More of a burst that is still arriving: whatever comes until the input pauses for
        ``settle_s`` (at most ``linger_s`` in all, at most ``room`` messages).

        A producer's batch reaches a consumer while the producer is still waiting for
        JetStream's acks. Handling it at once puts this consumer's work (its own, and the
        Postgres and NATS work it causes) on the cores the producer needs at that moment:
        measured, the gateway's p90 latency rises by ~1 ms at 5,000 events/s when the recorder
        runs beside it. Waiting for a pause in the input lets the burst, and the request that
        sent it, finish first; the batches are larger too.
        """
        spec = self._spec
        extra: list[Msg] = []
        deadline = time.monotonic() + spec.linger_s
        while len(extra) < room:
            left = min(spec.settle_s, deadline - time.monotonic())
            if left <= 0:
                break
            more = await feed.fetch(timeout=left, limit=room - len(extra))
            if not more:
                break
            extra += more
        return extra

    async def _ack_all(self, msgs: Sequence[Msg]) -> None:
        await ack_all(self._link.nc, msgs)

    async def process(self, msgs: Sequence[Msg], ack: Acker | None = None) -> None:
        """Handle a batch as one transaction; on failure, fall back to one message at a time.

        ``ack`` acknowledges messages (default: all in one write, ``pull.ack_all``); it is called
        only after the commit and the follow-up publications."""
        ack = ack or self._ack_all
        durable = self._spec.durable
        redelivered = sum(1 for msg in msgs if _deliveries(msg) > 1)
        if redelivered:
            CONSUMER_REDELIVERIES.labels(durable).inc(redelivered)
        start = time.perf_counter()
        try:
            await self._handle_and_ack(msgs, ack)
            CONSUMER_SECONDS.labels(durable).observe(time.perf_counter() - start)
        except TRANSIENT as exc:
            CONSUMER_FAILURES.labels(durable, "transient").inc()
            log.warning("consumer.batch_transient", consumer=self._spec.durable, error=str(exc))
            for msg in msgs:
                await _nak(msg)
            await asyncio.sleep(0.5)  # let the failing server breathe before the redelivery
        except Exception as exc:  # isolate the poison message: retry one by one below
            CONSUMER_FAILURES.labels(durable, "batch").inc()
            log.warning("consumer.batch_failed", consumer=self._spec.durable, error=repr(exc))
            for msg in msgs:
                await self._process_one(msg, ack)

    async def _process_one(self, msg: Msg, ack: Acker) -> None:
        try:
            await self._handle_and_ack([msg], ack)
        except TRANSIENT as exc:
            CONSUMER_FAILURES.labels(self._spec.durable, "transient").inc()
            log.warning("consumer.transient", consumer=self._spec.durable, error=str(exc))
            await _nak(msg)
        except (PoisonMessageError, pydantic.ValidationError, orjson.JSONDecodeError) as exc:
            await self._dead_letter(msg, exc)
        except Exception as exc:  # unknown failure: retried a few times, then dead-lettered
            if _deliveries(msg) >= POISON_AFTER_DELIVERIES:
                await self._dead_letter(msg, exc)
            else:
                CONSUMER_FAILURES.labels(self._spec.durable, "error").inc()
                log.exception("consumer.failed", consumer=self._spec.durable)
                await _nak(msg)

    async def _handle_and_ack(self, msgs: Sequence[Msg], ack: Acker) -> None:
        if tracing.enabled():  # the span's follow-ups carry its context (NatsLink.publish)
            with tracing.consume_span(self._spec.durable, msgs):
                await self._handle_and_ack_untraced(msgs, ack)
        else:
            await self._handle_and_ack_untraced(msgs, ack)

    async def _handle_and_ack_untraced(self, msgs: Sequence[Msg], ack: Acker) -> None:
        async with self._pool.connection() as conn, conn.transaction():
            publications = await self._handler(conn, msgs)
        if publications:
            await self._link.publish(publications, timeout=10, hot=self._hot_publish)
        await ack(msgs)  # after the commit and the follow-ups, never before
        self.processed += len(msgs)
        CONSUMER_MESSAGES.labels(self._spec.durable).inc(len(msgs))

    async def _dead_letter(self, msg: Msg, exc: BaseException) -> None:
        CONSUMER_FAILURES.labels(self._spec.durable, "poison").inc()
        CONSUMER_DEAD_LETTERS.labels(self._spec.durable).inc()
        log.error(
            "consumer.dead_letter",
            consumer=self._spec.durable,
            subject=msg.subject,
            error=repr(exc),
            num_delivered=_deliveries(msg),
        )
        headers = {
            "Agent-Memory-Error": repr(exc)[:500],
            "Agent-Memory-Subject": msg.subject,
            "Agent-Memory-Consumer": self._spec.durable,
            **(tracing.inject() or {}),  # the failed batch's span, when tracing is on
        }
        await self._link.broker.publish(
            msg.data, dlq_subject(self._spec.durable), headers=headers, stream=STREAM_DLQ, timeout=5
        )
        await msg.term()


async def _ack_each(msgs: Sequence[Msg]) -> None:
    for msg in msgs:
        await msg.ack()


def _deliveries(msg: Msg) -> int:
    try:
        return int(msg.metadata.num_delivered)
    except (AttributeError, ValueError, TypeError, nats.errors.Error):  # not from a stream
        return 1


async def _nak(msg: Msg) -> None:
    with contextlib.suppress(Exception):  # the server redelivers after ack_wait anyway
        await msg.nak(delay=nak_delay(_deliveries(msg)))


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
