"""The recorder's consumer on faststream's TestNatsBroker (no nats-server): each event stored
once however often it comes, announced on mem.recorded every time, poison dead-lettered.

Redelivery, de-duplication and kill -9 on the real server are tests/test_event_log.py and
tests/test_crash_recovery.py."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import psycopg
import pytest
from faststream.nats import JStream, NatsMessage, TestNatsBroker

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.publisher import MSG_ID
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.subjects import (
    STREAM_DLQ,
    STREAM_EVENTS,
    STREAM_RECORDED,
    event_subject,
    msg_id,
)
from agent_memory_common.db.locks import hold_xact_locks, lock_name
from agent_memory_common.db.postgres import make_pool
from agent_memory_recorder.app import consumer
from agent_memory_recorder.handler import make_handler
from agent_memory_recorder.settings import DedupOptions, RecorderOptions

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


@pytest.mark.parametrize("dedup", [True, False], ids=["dedup", "no-dedup"])
async def test_one_session_is_stored_by_one_replica_at_a_time(pg_dsn: str, dedup: bool) -> None:
    """While another replica stores events of the session (its transaction still open), this
    one waits for that commit: so ``seq`` order is commit order within a session, which the
    indexers use to find a turn stored before its previous turn."""
    handler = make_handler(DedupOptions(enabled=dedup).rules())
    msg = SimpleNamespace(data=event(1).to_wire())
    other = await psycopg.AsyncConnection.connect(pg_dsn)
    try:
        await hold_xact_locks(other, [lock_name("record-session", "default", "s1")])

        async def store() -> None:
            async with await psycopg.AsyncConnection.connect(pg_dsn) as conn, conn.transaction():
                await handler(conn, [msg])  # type: ignore[list-item]

        task = asyncio.create_task(store())
        await asyncio.sleep(0.5)
        assert not task.done()  # waiting for the other replica's commit
        await other.rollback()
        await asyncio.wait_for(task, 30)
    finally:
        await other.close()
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT event_id FROM events").fetchall() == [("e-1",)]
