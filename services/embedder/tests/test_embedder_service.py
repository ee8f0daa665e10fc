"""The embedder end to end: gateway -> recorder -> RECORDED -> embedder -> pgvector, every
part a real process on a real nats-server and Postgres; read back as the query service would."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import nats
import psycopg

from agent_memory_common.event import Event
from agent_memory_common.subjects import STREAM_RECORDED, recorded_subject
from agent_memory_embedded.servers import NatsServer
from agent_memory_embedded.testing import make_stack
from tests.helpers import eventually, make_event


def vectors(pg_dsn: str) -> int:
    with psycopg.connect(pg_dsn) as conn:
        row = conn.execute("SELECT count(*) FROM vector_docs WHERE tenant = 'default'").fetchone()
    return int(row[0]) if row else 0


def pending(nats_url: str, durable: str) -> int:
    async def info() -> int:
        nc = await nats.connect(nats_url)
        try:
            ci = await nc.jetstream().consumer_info(STREAM_RECORDED, durable)
            return int(ci.num_pending or 0) + int(ci.num_ack_pending or 0)
        finally:
            await nc.close()

    return asyncio.run(info())


def republish(nats_url: str, pg_dsn: str) -> None:
    """Every recorded event once more on RECORDED under new message ids (a redelivery)."""
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute(
            "SELECT event_id, ts, tenant, project_id, agent_id, session_id, user_id, role, type,"
            " text, metadata, received_at FROM events"
        ).fetchall()
    names = [
        *("event_id", "ts", "tenant", "project_id", "agent_id", "session_id", "user_id"),
        *("role", "type", "text", "metadata", "received_at"),
    ]
    events = [Event(**dict(zip(names, r, strict=True))) for r in rows]

    async def publish() -> None:
        nc = await nats.connect(nats_url)
        try:
            js = nc.jetstream()
            for e in events:
                await js.publish(
                    recorded_subject(e.tenant, e.project_id),
                    e.to_wire(),
                    headers={"Nats-Msg-Id": f"again/{e.event_id}"},
                )
        finally:
            await nc.close()

    asyncio.run(publish())


def test_embeds_a_batch_of_recorded_events_once(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(nats_server, pg_dsn, tmp_path)
    try:
        for name in ("gateway", "recorder", "embedder"):
            stack.start(name)
        batch = [make_event(i, text=f"status update {i}: tests are green") for i in range(40)]
        batch[13]["text"] = "which database holds the event log? we picked postgres"
        batch[21]["text"] = "   "  # nothing to embed: left out of the index
        r = httpx.post(f"{stack.gateway_url}/v1/events", json={"events": batch})
        assert r.status_code == 202, r.text
        eventually(lambda: vectors(pg_dsn) == 39, timeout=180, what="39 events embedded")

        with psycopg.connect(pg_dsn) as conn:
            # the stored vectors are the model's: a text's nearest neighbour is itself, and
            # every vector is unit length
            nearest = conn.execute(
                "SELECT b.id FROM vector_docs a, vector_docs b WHERE a.id = %s"
                " ORDER BY a.embedding <=> b.embedding LIMIT 1",
                ("event:default:e-000013",),
            ).fetchone()
            norms = conn.execute(
                "SELECT min(vector_norm(embedding)), max(vector_norm(embedding)) FROM vector_docs"
            ).fetchone()
        assert nearest == ("event:default:e-000013",)
        assert norms is not None and abs(norms[0] - 1) < 1e-3 and abs(norms[1] - 1) < 1e-3

        republish(nats_server.url, pg_dsn)
        eventually(
            lambda: pending(nats_server.url, "embedder") == 0, timeout=120, what="redelivered"
        )
        assert vectors(pg_dsn) == 39
    finally:
        stack.stop()
