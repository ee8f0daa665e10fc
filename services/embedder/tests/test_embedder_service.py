"""The embedder end to end: gateway -> recorder -> RECORDED -> embedder -> pgvector, every
part a real process on a real nats-server and Postgres; read back as the query service would."""

from __future__ import annotations

from pathlib import Path

import psycopg

from agent_memory_embedded.servers import NatsServer
from agent_memory_retrieval import RetrievalSettings, load_embedder
from tests import plain_http
from tests.helpers import eventually, make_event, recorded_backlog, republish_recorded
from tests.stack import make_stack


def vectors(pg_dsn: str) -> int:
    with psycopg.connect(pg_dsn) as conn:
        row = conn.execute("SELECT count(*) FROM vector_docs WHERE tenant = 'default'").fetchone()
    return int(row[0]) if row else 0


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
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": batch})
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
        # an event is embedded with the turn before it in its session, after its own text
        model = load_embedder(RetrievalSettings())
        with_context, alone = model.embed(
            [f"{batch[14]['text']}\n{batch[13]['text']}", batch[14]["text"]]
        )
        with psycopg.connect(pg_dsn) as conn:
            row = conn.execute(
                "SELECT 1 - (embedding <=> %s::vector), 1 - (embedding <=> %s::vector)"
                " FROM vector_docs WHERE id = 'event:default:e-000014'",
                (str(with_context), str(alone)),
            ).fetchone()
        assert row is not None and row[0] > 0.999 and row[1] < 0.99

        republish_recorded(nats_server.url, pg_dsn)
        eventually(
            lambda: recorded_backlog(nats_server.url, "embedder") == 0,
            timeout=120,
            what="redelivered",
        )
        assert vectors(pg_dsn) == 39
    finally:
        stack.stop()
