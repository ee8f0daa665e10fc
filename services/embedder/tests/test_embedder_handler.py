"""The embedder's consumers on faststream's TestNatsBroker (no nats-server, no model): recorded
events into pgvector, once each however often they come.

The real process with MiniLM on real servers: test_embedder_service.py."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import psycopg
from faststream.nats import TestNatsBroker

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.subjects import STREAM_RECORDED, recorded_subject
from agent_memory_common.db.postgres import make_pool
from agent_memory_embedder.app import consumers
from agent_memory_embedder.settings import Settings
from agent_memory_retrieval.adapters.factory import open_vector_index

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class FixedEmbedder:
    """The same unit vector for every text: the handler, not the model, is under test."""

    dimension = 384

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0] + [0.0] * (self.dimension - 1) for _ in texts]


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


async def test_recorded_events_are_embedded_once(pg_dsn: str) -> None:
    settings = Settings(pg_dsn=pg_dsn)
    link = NatsLink(["nats://127.0.0.1:1"], name="test")  # never connected: the test broker
    pool = make_pool(pg_dsn)
    await pool.open()
    index = await open_vector_index(settings, pool=pool)
    recorded, toc, _eraser = consumers(link, pool, settings, FixedEmbedder(), index)
    try:
        async with TestNatsBroker(link.broker) as broker:
            for e in (event(1), event(2), event(1)):  # the third is a redelivery
                subject = recorded_subject(e.tenant, e.project_id)
                await broker.publish(e.to_wire(), subject, stream=STREAM_RECORDED)
        assert (recorded.processed, toc.processed) == (3, 0)
    finally:
        await index.close()
        await pool.close()
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM vector_docs").fetchone() == (2,)
