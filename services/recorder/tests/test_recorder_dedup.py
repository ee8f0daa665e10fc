"""Dedup at ingest through the recorder's consumer (faststream's TestNatsBroker, real Postgres):
a repeat is stored and marked, never announced, and a redelivery keeps the first decision.

The whole pipeline on real servers (indexed once, no extra bullets): tests/test_dedup_e2e.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
from faststream.nats import JStream, NatsMessage, TestNatsBroker

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.publisher import MSG_ID
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.subjects import (
    STREAM_EVENTS,
    STREAM_RECORDED,
    event_subject,
    msg_id,
)
from agent_memory_common.db.postgres import make_pool
from agent_memory_recorder.app import consumer
from agent_memory_recorder.settings import DedupOptions, RecorderOptions

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PROMPT = "Please make the reconciliation job faster, it takes nine seconds"


def event(event_id: str, text: str, seconds: int, session: str = "s1") -> Event:
    return Event(
        event_id=event_id,
        ts=T0 + timedelta(seconds=seconds),
        tenant="default",
        project_id="proj",
        agent_id="agent",
        session_id=session,
        role="user",
        type="message",
        text=text,
        received_at=T0,
    )


async def _run(pg_dsn: str, options: RecorderOptions, events: list[Event]) -> list[bytes]:
    link = NatsLink(["nats://127.0.0.1:1"], name="test")  # never connected: the test broker
    pool = make_pool(pg_dsn)
    await pool.open()
    runner = consumer(link, pool, options)
    recorded: list[bytes] = []

    @link.broker.subscriber("mem.recorded.>", stream=JStream(STREAM_RECORDED, declare=False))
    async def later_stages(message: NatsMessage) -> None:
        recorded.append(message.body)

    try:
        async with TestNatsBroker(link.broker) as broker:
            for e in events:
                headers = {MSG_ID: msg_id(e.tenant, e.event_id)}
                await broker.publish(
                    e.to_wire(),
                    event_subject("default", "proj"),
                    headers=headers,
                    stream=STREAM_EVENTS,
                )
            assert runner.processed == len(events)
    finally:
        await pool.close()
    return recorded


async def test_a_repeat_is_stored_marked_and_not_announced(pg_dsn: str) -> None:
    first = event("p-1", PROMPT, 0)
    retried = event("p-2", PROMPT.upper() + "  ", 20)
    other_session = event("q-1", PROMPT, 30, session="s2")
    late = event("p-3", PROMPT, 3600 * 5)  # outside the window: an original again
    events = [first, retried, retried, other_session, late]  # p-2 twice: a redelivery
    recorded = await _run(pg_dsn, RecorderOptions(), events)
    assert recorded == [first.to_wire(), other_session.to_wire(), late.to_wire()]
    with psycopg.connect(pg_dsn) as conn:
        stored = conn.execute("SELECT event_id FROM events ORDER BY event_id").fetchall()
        marks = conn.execute(
            "SELECT event_id, duplicate_of, method, similarity FROM event_duplicates"
        ).fetchall()
    assert stored == [("p-1",), ("p-2",), ("p-3",), ("q-1",)]  # append-only: all kept
    assert marks == [("p-2", "p-1", "exact", 1.0)]


async def test_a_fresh_recorder_decides_from_postgres_and_dedup_can_be_off(pg_dsn: str) -> None:
    await _run(pg_dsn, RecorderOptions(), [event("p-1", PROMPT, 0)])
    # a new process (empty index): the original is loaded from the events table
    assert await _run(pg_dsn, RecorderOptions(), [event("p-2", PROMPT, 5)]) == []
    off = RecorderOptions(dedup=DedupOptions(enabled=False))
    assert await _run(pg_dsn, off, [event("p-3", PROMPT, 6)]) == [event("p-3", PROMPT, 6).to_wire()]
    with psycopg.connect(pg_dsn) as conn:
        marked = conn.execute("SELECT event_id FROM event_duplicates ORDER BY 1").fetchall()
    assert marked == [("p-2",)]
