"""The recorder's consumer on faststream's TestNatsBroker (no nats-server): each event stored
once however often it comes, announced on mem.recorded every time, poison dead-lettered.

Redelivery, de-duplication and kill -9 on the real server are tests/test_event_log.py and
tests/test_crash_recovery.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
from faststream.nats import JStream, NatsMessage, TestNatsBroker

from agent_memory_common.db import make_pool
from agent_memory_common.event import Event
from agent_memory_common.natslink import NatsLink
from agent_memory_common.publisher import MSG_ID
from agent_memory_common.subjects import (
    STREAM_DLQ,
    STREAM_EVENTS,
    STREAM_RECORDED,
    event_subject,
    msg_id,
)
from agent_memory_recorder.app import consumer
from agent_memory_recorder.settings import RecorderOptions

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def event(i: int) -> Event:
    return Event(
        event_id=f"e-{i}",
        ts=T0 + timedelta(seconds=i),
        tenant="default",
        project_id="proj",
        agent_id="agent",
        session_id="s1",
        role="user",
        type="message",
        text=f"event {i}: the events table is append-only",
        received_at=T0,
    )


async def test_records_once_announces_each_delivery_and_dead_letters_poison(pg_dsn: str) -> None:
    link = NatsLink(["nats://127.0.0.1:1"], name="test")  # never connected: the test broker
    pool = make_pool(pg_dsn)
    await pool.open()
    runner = consumer(link, pool, RecorderOptions())

    recorded: list[bytes] = []
    dead: list[bytes] = []

    @link.broker.subscriber("mem.recorded.>", stream=JStream(STREAM_RECORDED, declare=False))
    async def later_stages(message: NatsMessage) -> None:
        recorded.append(message.body)

    @link.broker.subscriber("mem.dlq.>", stream=JStream(STREAM_DLQ, declare=False))
    async def dead_letters(message: NatsMessage) -> None:
        dead.append(message.body)

    subject = event_subject("default", "proj")
    try:
        async with TestNatsBroker(link.broker) as broker:
            for e in (event(1), event(2), event(1)):  # the third is a redelivery
                headers = {MSG_ID: msg_id(e.tenant, e.event_id)}
                await broker.publish(e.to_wire(), subject, headers=headers, stream=STREAM_EVENTS)
            await broker.publish(b"{not an event", subject, stream=STREAM_EVENTS)
            assert runner.processed == 3
            assert recorded == [event(1).to_wire(), event(2).to_wire(), event(1).to_wire()]
            assert dead == [b"{not an event"]
    finally:
        await pool.close()
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute("SELECT event_id FROM events ORDER BY event_id").fetchall()
    assert rows == [("e-1",), ("e-2",)]
