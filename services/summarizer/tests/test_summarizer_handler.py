"""The summarizer's consumer on faststream's TestNatsBroker (no nats-server): a segment in, TOC
node versions out on mem.toc with their message ids; the same segment again writes no new
version and announces the same ids (JetStream drops the repeats by them).

The real process on real servers, kill -9 and replays: test_toc_pipeline.py, test_toc_replay.py.
"""

from __future__ import annotations

import orjson
from faststream.nats import JStream, NatsMessage, TestNatsBroker

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.publisher import MSG_ID
from agent_memory_common.contracts.subjects import STREAM_SEGMENTS, STREAM_TOC, segment_subject
from agent_memory_common.db.postgres import make_pool
from agent_memory_summarizer.app import consumer
from agent_memory_summarizer.settings import SummarizerOptions
from tests.toc_support import (
    TENANT,
    insert_events,
    make_events,
    segment_payload,
    segments_summarized,
    utc,
)


async def test_a_segment_becomes_toc_versions_once(pg_dsn: str) -> None:
    events = make_events("mar27", utc(2026, 3, 27, 10), 12, session="b")
    insert_events(pg_dsn, events)
    payload = orjson.dumps(segment_payload(events, segment_id="sg_mar27"))
    link = NatsLink(["nats://127.0.0.1:1"], name="test")  # never connected: the test broker
    pool = make_pool(pg_dsn)
    await pool.open()
    runner = consumer(link, pool, SummarizerOptions(), None)
    toc: list[str] = []

    @link.broker.subscriber("mem.toc.>", stream=JStream(STREAM_TOC, declare=False))
    async def indexers(message: NatsMessage) -> None:
        toc.append(message.headers[MSG_ID])

    subject = segment_subject(TENANT, events[0].project_id)
    try:
        async with TestNatsBroker(link.broker) as broker:
            await broker.publish(payload, subject, stream=STREAM_SEGMENTS)
            first = list(toc)
            await broker.publish(payload, subject, stream=STREAM_SEGMENTS)  # a redelivery
            assert runner.processed == 2
    finally:
        await pool.close()
    assert segments_summarized(pg_dsn) == {"sg_mar27": 1}
    assert first and all(m.startswith(f"{TENANT}/") and "/v" in m for m in first)
    assert sorted(toc[len(first) :]) == sorted(first)  # the same versions, the same ids
