"""The bm25-indexer's consumers on faststream's TestNatsBroker (no nats-server): recorded events
into the Tantivy index, once each however often they come.

The real process on real servers, kill -9 and resume: test_bm25_indexer.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from faststream.nats import TestNatsBroker

from agent_memory_bm25.app import consumers
from agent_memory_bm25.settings import Settings
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.subjects import STREAM_RECORDED, recorded_subject
from agent_memory_common.db.postgres import make_pool
from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex

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
        text=f"event {i}: the zookeeper quorum lost a node",
        received_at=T0,
    )


async def test_recorded_events_are_indexed_once(pg_dsn: str, tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "tantivy", writer=True)
    link = NatsLink(["nats://127.0.0.1:1"], name="test")  # never connected: the test broker
    pool = make_pool(pg_dsn)
    await pool.open()
    recorded, toc, _eraser = consumers(link, pool, Settings(), index)
    try:
        async with TestNatsBroker(link.broker) as broker:
            for e in (event(1), event(2), event(1)):  # the third is a redelivery
                subject = recorded_subject(e.tenant, e.project_id)
                await broker.publish(e.to_wire(), subject, stream=STREAM_RECORDED)
        assert (recorded.processed, toc.processed) == (3, 0)
        assert await index.count("default") == 2
    finally:
        await pool.close()
        await index.close()
