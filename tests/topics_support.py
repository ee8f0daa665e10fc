"""Themed segment nodes for the topic tests and bench: written to the TOC tables the way the
summarizer writes them, and published on ``mem.toc`` the way it announces them."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import nats
import orjson
import psycopg
from psycopg.types.json import Jsonb

from agent_memory_common.bus.streams import ensure_pipeline
from agent_memory_common.contracts.messages import TocBullet, TocNodeMessage
from agent_memory_common.contracts.subjects import toc_subject
from agent_memory_common.core.settings import CommonSettings

THEMES: dict[str, list[str]] = {
    "ci pipeline": [
        "The CI pipeline failed again because of flaky tests in the integration suite.",
        "We added retries for flaky tests and cached dependencies in the CI pipeline.",
        "CI pipeline caching keys were wrong, so every build downloaded the wheels again.",
        "Flaky tests traced to a race in the test fixtures; the CI pipeline is green now.",
        "Build matrix of the CI pipeline trimmed; caching restored the build speed.",
    ],
    "billing invoices": [
        "Billing invoices were rounded wrongly; the invoice totals use decimal amounts now.",
        "Invoice emails were sent twice by the billing job; an idempotency key stops it.",
        "The Stripe webhook for billing invoices verifies the signing secret first.",
        "Refunds on billing invoices now credit the customer balance instead of cash.",
        "Billing tax rates for invoices come from the customer country and region.",
    ],
    "authentication login": [
        "Login sessions expired too early; the authentication token lifetime is one day now.",
        "OAuth login with the identity provider failed on the redirect callback URL.",
        "Authentication middleware rejects expired tokens with a clear unauthorized answer.",
        "Password reset links for login are single use and expire after an hour.",
        "Refresh tokens rotate on every authentication so a stolen token stops working.",
    ],
}


def theme_segment(
    tenant: str,
    project_id: str,
    theme: str,
    n: int,
    session_id: str,
    end: datetime,
    *,
    salience: float = 0.5,
    seed: int = 0,
) -> TocNodeMessage:
    """A segment node about ``theme``: three of its sentences, in an order set by ``seed``."""
    rng = random.Random(f"{theme}/{n}/{seed}")
    sentences = rng.sample(THEMES[theme], 3)
    node_id = f"segment:{project_id}-{theme.replace(' ', '-')}-{n}-{seed}"
    return TocNodeMessage(
        tenant=tenant,
        project_id=project_id,
        node_id=node_id,
        version=1,
        level="segment",
        bucket=node_id.removeprefix("segment:"),
        parent_id=None,
        title=sentences[0].split(";")[0].split(",")[0],
        bullets=[TocBullet(text=s, kind="observation", salience=salience) for s in sentences],
        keywords=theme.split(),
        memory_kind="observation",
        salience=salience,
        pinned=False,
        start_ts=end - timedelta(minutes=30),
        end_ts=end,
        session_id=session_id,
        agent_id="claude",
        event_ids=[f"ev-{node_id}-{i}" for i in range(3)],
        overlap_count=0,
        source_version=1,
        summarizer="extractive",
    )


def write_toc(dsn: str, nodes: Sequence[TocNodeMessage]) -> None:
    """The segment nodes as rows of ``toc_nodes`` and ``toc_node_versions``."""
    with psycopg.connect(dsn) as conn:
        for m in nodes:
            conn.execute(
                """INSERT INTO toc_nodes (tenant, node_id, project_id, level, bucket, parent_id,
                       start_ts, end_ts, latest_version, source_version)
                   VALUES (%s, %s, %s, 'segment', %s, NULL, %s, %s, %s, %s)
                   ON CONFLICT (tenant, node_id)
                   DO UPDATE SET latest_version = EXCLUDED.latest_version""",
                (m.tenant, m.node_id, m.project_id, m.bucket, m.start_ts, m.end_ts, m.version,
                 m.version),
            )  # fmt: skip
            conn.execute(
                """INSERT INTO toc_node_versions (tenant, node_id, version, project_id, level,
                       bucket, parent_id, title, bullets, keywords, memory_kind, base_salience,
                       start_ts, end_ts, session_id, agent_id, event_ids, overlap_count,
                       source_version, cause, summarizer, search_text)
                   VALUES (%s, %s, %s, %s, 'segment', %s, NULL, %s, %s, %s, 'observation', %s,
                       %s, %s, %s, %s, %s, 0, %s, %s, 'extractive', %s)
                   ON CONFLICT DO NOTHING""",
                (m.tenant, m.node_id, m.version, m.project_id, m.bucket, m.title,
                 Jsonb([b.model_dump() for b in m.bullets]), m.keywords, m.salience,
                 m.start_ts, m.end_ts, m.session_id, m.agent_id, m.event_ids, m.version,
                 f"{m.bucket}/v{m.version}", m.title.lower()),
            )  # fmt: skip


def publish_toc(nats_url: str, nodes: Sequence[TocNodeMessage], *, suffix: str = "") -> None:
    """Publish like the summarizer (``suffix`` defeats de-duplication: a redelivery)."""

    async def go() -> None:
        nc = await nats.connect(nats_url)
        try:
            js = nc.jetstream(timeout=10)
            await ensure_pipeline(js, CommonSettings())
            for m in nodes:
                await js.publish(
                    toc_subject(m.tenant, m.project_id),
                    m.to_wire(),
                    headers={"Nats-Msg-Id": m.msg_id + suffix},
                )
        finally:
            await nc.close()

    asyncio.run(go())


def topic_snapshot(dsn: str, tenant: str | None = None) -> dict[str, Any]:
    """Topics with their members and labels, edges: what must not change on redelivery."""
    with psycopg.connect(dsn) as conn:
        topics = conn.execute(
            "SELECT tenant, topic_id, project_id, label FROM topics ORDER BY 1, 2"
        ).fetchall()
        members = conn.execute(
            "SELECT tenant, topic_id, node_id FROM topic_members ORDER BY 1, 2, 3"
        ).fetchall()
        edges = conn.execute(
            "SELECT tenant, topic_id, other_id, weight FROM topic_edges ORDER BY 1, 2, 3"
        ).fetchall()
    keep = [t for t in topics if tenant is None or t[0] == tenant]
    return {"topics": keep, "members": members, "edges": edges}


def dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def seed_topic(
    dsn: str,
    topic_id: str,
    *,
    ended: datetime,
    tenant: str = "acme",
    project_id: str = "proj",
    members: int = 2,
    salience: float = 0.5,
    label: str = "",
) -> list[str]:
    """A topic with ``members`` segments ending at ``ended``, written straight to the topic
    tables as a re-cluster leaves them (no clustering); returns the members' node ids."""
    nodes = [f"segment:{topic_id.removeprefix('topic:')}-{i}" for i in range(members)]
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "INSERT INTO topics (tenant, topic_id, project_id, label, keywords, centroid) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (tenant, topic_id, project_id, label or topic_id, ["k"], [1.0, 0.0]),
        )
        for node_id in nodes:
            conn.execute(
                "INSERT INTO topic_segments (tenant, node_id, project_id, node_version, session_id,"
                " title, text, event_ids, salience, start_ts, end_ts, embedding, pending)"
                " VALUES (%s, %s, %s, 1, 's', %s, %s, %s, %s, %s, %s, %s, false)",
                (
                    tenant,
                    node_id,
                    project_id,
                    node_id,
                    node_id,
                    ["e"],
                    salience,
                    ended - timedelta(hours=1),
                    ended,
                    [1.0, 0.0],
                ),
            )
            conn.execute(
                "INSERT INTO topic_members (tenant, node_id, topic_id, project_id, assigned_by,"
                " similarity) VALUES (%s, %s, %s, %s, 'cluster', 0.9)",
                (tenant, node_id, topic_id, project_id),
            )
    return nodes


def topic_rows(dsn: str) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of the topic tables a prune may touch (topics, membership) or must not
    (segments)."""
    with psycopg.connect(dsn) as conn:
        return {
            "topics": conn.execute("SELECT tenant, topic_id FROM topics ORDER BY 1, 2").fetchall(),
            "members": conn.execute(
                "SELECT tenant, topic_id, node_id FROM topic_members ORDER BY 1, 2, 3"
            ).fetchall(),
            "segments": conn.execute(
                "SELECT tenant, node_id FROM topic_segments ORDER BY 1, 2"
            ).fetchall(),
        }
