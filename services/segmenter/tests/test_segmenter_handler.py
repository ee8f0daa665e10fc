"""The segmenter's consumer on faststream's TestNatsBroker (no nats-server): a gap closes a
segment, which goes out on mem.segments with its message id, once: a redelivery of an event
already handled changes nothing.

Redelivery after kill -9 on the real server: test_segmenter_service.py and
test_segmenter_recovery.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import psycopg
from faststream.nats import JStream, NatsMessage, TestNatsBroker

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.publisher import MSG_ID
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.subjects import (
    STREAM_RECORDED,
    STREAM_SEGMENTS,
    recorded_subject,
)
from agent_memory_common.db.postgres import make_pool
from agent_memory_segmenter.app import consumer
from agent_memory_segmenter.logic import SessionKey
from agent_memory_segmenter.settings import SegmenterOptions

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def event(i: int, at_s: float) -> Event:
    return Event(
        event_id=f"e-{i:03d}",
        ts=T0 + timedelta(seconds=at_s),
        tenant="default",
        project_id="proj",
        agent_id="agent",
        session_id="s1",
        role="user",
        type="message",
        text=f"event {i} keeps the schema append-only",
        received_at=T0,
    )


def record(dsn: str, events: list[Event]) -> None:
    """What the recorder commits before it announces the events on RECORDED."""
    with psycopg.connect(dsn) as conn:
        for e in events:
            conn.execute(
                "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id, "
                "role, type, text, received_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    e.tenant,
                    e.event_id,
                    e.ts,
                    e.project_id,
                    e.agent_id,
                    e.session_id,
                    e.role,
                    e.type,
                    e.text,
                    e.received_at,
                ),
            )


async def test_a_closed_segment_is_published_once_per_version(pg_dsn: str) -> None:
    events = [event(0, 0), event(1, 10), event(2, 100)]  # e-002 closes the first by its gap
    record(pg_dsn, events)
    link = NatsLink(["nats://127.0.0.1:1"], name="test")  # never connected: the test broker
    pool = make_pool(pg_dsn)
    await pool.open()
    runner = consumer(link, pool, SegmenterOptions(gap_s=60, token_budget=200, overlap_tokens=50))
    segments: list[tuple[str, bytes]] = []

    @link.broker.subscriber("mem.segments.>", stream=JStream(STREAM_SEGMENTS, declare=False))
    async def summarizer(message: NatsMessage) -> None:
        segments.append((message.headers[MSG_ID], message.body))

    try:
        async with TestNatsBroker(link.broker) as broker:
            for e in [*events, events[2]]:  # the last one again: a redelivery
                subject = recorded_subject(e.tenant, e.project_id)
                await broker.publish(e.to_wire(), subject, stream=STREAM_RECORDED)
            assert runner.processed == 4
    finally:
        await pool.close()
    first = "default/" + SessionKey("default", "proj", "s1").segment_id(0) + "/v1"
    assert [msg_id for msg_id, _ in segments] == [first]
    assert orjson.loads(segments[0][1])["event_ids"] == ["e-000", "e-001"]
    with psycopg.connect(pg_dsn) as conn:
        # the closed segment and the one e-002 opened, each once
        assert conn.execute("SELECT count(*) FROM segments").fetchone() == (2,)
