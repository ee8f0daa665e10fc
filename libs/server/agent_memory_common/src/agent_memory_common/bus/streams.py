"""Streams and durable consumers, created idempotently by whoever starts first."""

from __future__ import annotations

from dataclasses import dataclass

from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DeliverPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import NotFoundError

from agent_memory_common.contracts.subjects import (
    DLQ_WILDCARD,
    ERASURE_WILDCARD,
    EVENTS_WILDCARD,
    RECORDED_WILDCARD,
    SEGMENTS_WILDCARD,
    STREAM_DLQ,
    STREAM_ERASURE,
    STREAM_EVENTS,
    STREAM_RECORDED,
    STREAM_SEGMENTS,
    STREAM_TOC,
    TOC_WILDCARD,
)
from agent_memory_common.core.settings import CommonSettings

DAY_S = 86_400.0


def stream_configs(settings: CommonSettings) -> list[StreamConfig]:
    """File-backed streams with a duplicate window; Postgres is the record, these are the pipe.

    Messages stay 30 days, long enough for any consumer to come back from an outage; the
    permanent copy is the events table, from which everything derived can be rebuilt.
    """

    def stream(name: str, subject: str, max_age_days: float) -> StreamConfig:
        return StreamConfig(
            name=name,
            subjects=[subject],
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            num_replicas=settings.nats_replicas,
            duplicate_window=settings.duplicate_window_s,
            max_age=max_age_days * DAY_S,
        )

    return [
        stream(STREAM_EVENTS, EVENTS_WILDCARD, 30),
        stream(STREAM_RECORDED, RECORDED_WILDCARD, 30),
        stream(STREAM_SEGMENTS, SEGMENTS_WILDCARD, 30),
        stream(STREAM_TOC, TOC_WILDCARD, 30),
        stream(STREAM_DLQ, DLQ_WILDCARD, 90),
        # erasure requests hold ids only; kept as long as any pipeline message they purge
        stream(STREAM_ERASURE, ERASURE_WILDCARD, 30),
    ]


async def ensure_streams(js: JetStreamContext, settings: CommonSettings) -> None:
    for config in stream_configs(settings):
        try:
            await js.stream_info(config.name or "")
        except NotFoundError:
            await js.add_stream(config)
        else:
            await js.update_stream(config)


@dataclass(frozen=True)
class ConsumerSpec:
    """A durable pull consumer, named after the service that owns it."""

    durable: str
    stream: str
    filter_subject: str
    batch_size: int = 256
    ack_wait_s: float = 30.0
    max_ack_pending: int = 20_000
    fetch_timeout_s: float = 1.0  # how long a fetch waits before the runner looks at ``stop``
    pull_expires_s: float = 5.0  # how long one pull request stays open on the server
    # Wait for the input to pause this long before handling a batch (0: handle what arrived at
    # once), but never longer than ``linger_s`` in all; see ConsumerRunner.
    settle_s: float = 0.0
    linger_s: float = 0.05

    def config(self) -> ConsumerConfig:
        return ConsumerConfig(
            durable_name=self.durable,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            filter_subject=self.filter_subject,
            ack_wait=self.ack_wait_s,
            max_deliver=-1,  # never dropped by the server; poison goes to the dead-letter stream
            max_ack_pending=self.max_ack_pending,
        )


# the recorder's settle time is its own setting (AGENT_MEMORY_RECORDER__SETTLE_MS)
RECORDER = ConsumerSpec(durable="recorder", stream=STREAM_EVENTS, filter_subject=EVENTS_WILDCARD)
SEGMENTER = ConsumerSpec(
    durable="segmenter", stream=STREAM_RECORDED, filter_subject=RECORDED_WILDCARD
)
SUMMARIZER = ConsumerSpec(
    durable="summarizer", stream=STREAM_SEGMENTS, filter_subject=SEGMENTS_WILDCARD
)
# The search indexers: one durable per stream they read (a JetStream consumer belongs to one
# stream), each its own checkpoint. Embedding is the slow stage, hence smaller batches.
EMBEDDER = ConsumerSpec(
    durable="embedder", stream=STREAM_RECORDED, filter_subject=RECORDED_WILDCARD, batch_size=128
)
EMBEDDER_TOC = ConsumerSpec(
    durable="embedder-toc", stream=STREAM_TOC, filter_subject=TOC_WILDCARD, batch_size=64
)
BM25_INDEXER = ConsumerSpec(
    durable="bm25-indexer", stream=STREAM_RECORDED, filter_subject=RECORDED_WILDCARD
)
BM25_INDEXER_TOC = ConsumerSpec(
    durable="bm25-indexer-toc", stream=STREAM_TOC, filter_subject=TOC_WILDCARD
)
# The topic clusterer: segment summaries into themes (services/topics).
TOPICS = ConsumerSpec(
    durable="topics", stream=STREAM_TOC, filter_subject=TOC_WILDCARD, batch_size=64
)

# Every durable consumer of the pipeline, for /v1/status and for creating them ahead of time so
# that no message published before a service first starts is missed.
PIPELINE_CONSUMERS: tuple[ConsumerSpec, ...] = (
    RECORDER,
    SEGMENTER,
    SUMMARIZER,
    EMBEDDER,
    EMBEDDER_TOC,
    BM25_INDEXER,
    BM25_INDEXER_TOC,
    TOPICS,
)


async def ensure_consumer(js: JetStreamContext, spec: ConsumerSpec) -> None:
    await js.add_consumer(spec.stream, spec.config())


async def ensure_pipeline(js: JetStreamContext, settings: CommonSettings) -> None:
    await ensure_streams(js, settings)
    for spec in PIPELINE_CONSUMERS:
        await ensure_consumer(js, spec)
