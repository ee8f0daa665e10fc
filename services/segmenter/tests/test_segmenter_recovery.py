"""The crash window between commit and publish, hit on purpose, on real Postgres and NATS.

A kill -9 (see test_segmenter_service.py) lands wherever it lands; here the handler and the
idle flush are driven in-process so that the publish after the commit is skipped exactly as a
crash at that instant would skip it, and what happens next is checked.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import nats
import orjson
import psycopg
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.consumer import Publication
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import ensure_pipeline
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.subjects import STREAM_SEGMENTS, recorded_subject
from agent_memory_common.core.settings import CommonSettings
from agent_memory_embedded.servers import NatsServer
from agent_memory_segmenter.app import flush_idle_sessions, sweep_outbox
from agent_memory_segmenter.handler import make_handler
from agent_memory_segmenter.logic import SessionKey, Thresholds
from agent_memory_segmenter.store import flush_idle

THRESHOLDS = Thresholds(gap_s=60, token_budget=200, overlap_tokens=50)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def event(i: int, at_s: float, session: str = "s1") -> Event:
    return Event(
        event_id=f"e-{i:03d}",
        ts=T0 + timedelta(seconds=at_s),
        tenant="default",
        project_id="proj",
        agent_id="agent",
        session_id=session,
        role="user",
        type="message",
        text=f"event {i} keeps the schema append-only",
        received_at=T0,
    )


async def record(dsn: str, events: list[Event]) -> None:
    """What the recorder does before it publishes on RECORDED: the row is committed first."""
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        for e in events:
            await conn.execute(
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


@pytest.fixture
async def nc(nats_server: NatsServer) -> AsyncIterator[Client]:
    client = await nats.connect(nats_server.url)
    yield client
    await client.close()


def delivered(nc: Client, events: list[Event]) -> list[Msg]:
    """RECORDED messages as the consumer receives them (the handler reads only the data)."""
    return [
        Msg(nc, subject=recorded_subject(e.tenant, e.project_id), data=e.to_wire()) for e in events
    ]


async def handle_and_commit(dsn: str, msgs: list[Msg]) -> list[Publication]:
    """One consumer batch up to its commit; the publish that would follow is not done."""
    handler = make_handler(THRESHOLDS)
    async with await psycopg.AsyncConnection.connect(dsn) as conn, conn.transaction():
        return await handler(conn, msgs)


async def test_a_redelivery_after_a_crash_before_publish_announces_the_versions_again(
    pg_dsn: str, nc: Client
) -> None:
    events = [event(0, 0), event(1, 10), event(2, 100)]  # e-002 closes the first by gap
    await record(pg_dsn, events)
    first = await handle_and_commit(pg_dsn, delivered(nc, events))
    assert [p.msg_id for p in first] == [
        "default/" + SessionKey("default", "proj", "s1").segment_id(0) + "/v1"
    ]
    # crash: nothing was published, nothing acknowledged; the same messages come again
    again = await handle_and_commit(pg_dsn, delivered(nc, events[2:]))
    assert again == first
    # a late event makes version 2; redelivering the old event must not resurrect version 1
    late = [event(3, 20)]
    await record(pg_dsn, late)
    second = await handle_and_commit(pg_dsn, delivered(nc, late))
    assert [p.msg_id for p in second] == [first[0].msg_id.replace("/v1", "/v2")]
    assert orjson.loads(second[0].payload)["event_ids"] == ["e-000", "e-001", "e-003"]
    assert await handle_and_commit(pg_dsn, delivered(nc, events[2:])) == []


async def test_an_idle_flush_whose_publish_was_lost_is_republished_by_the_sweep(
    pg_dsn: str, nats_server: NatsServer, nc: Client
) -> None:
    events = [event(0, 0), event(1, 1)]
    await record(pg_dsn, events)
    await handle_and_commit(pg_dsn, delivered(nc, events))
    await asyncio.sleep(0.4)
    key = SessionKey("default", "proj", "s1")
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        async with conn.transaction():
            item = await flush_idle(conn, key, idle_s=0.2)
        async with conn.transaction():
            # a second replica (or a second round) finds nothing left to flush
            assert await flush_idle(conn, key, idle_s=0.2) is None
    assert item is not None and item.publication.msg_id.endswith("/v1")
    # crash before the publish: the outbox row stays; the next sweep publishes it
    link = NatsLink([nats_server.url], name="test")
    await link.start(wait=5)
    pool = AsyncConnectionPool(pg_dsn, min_size=1, max_size=2, open=False)
    await pool.open()
    try:
        await ensure_pipeline(link.require_js(), CommonSettings())
        assert await flush_idle_sessions(link, pool, idle_s=0.2) == 0
        assert await sweep_outbox(link, pool, grace_s=0) == 1
        assert await sweep_outbox(link, pool, grace_s=0) == 0
        msg = await nc.jetstream().get_last_msg(STREAM_SEGMENTS, "mem.segments.>")
        assert msg.headers is not None
        assert msg.headers["Nats-Msg-Id"] == item.publication.msg_id
        assert msg.data is not None and orjson.loads(msg.data)["close_reason"] == "idle"
    finally:
        await pool.close()
        await link.close()
