"""Two users in one team project, as rows the recorder, summarizer and topics service would have
written, and the query service alone over them (team filters, issue 17).

Project ``web``: Dana (claude-code) wrote on March 16, Eli (codex) on March 17, and a pairing
session on March 17 holds events of both. Topics: ``topic:dana`` (Dana's segment alone) and
``topic:team`` (Eli's segment and the pairing session).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from agent_memory_embedded.servers import PostgresServer
from tests.stack import Stack, create_database, make_stack, start_nats

T = "default"
P = "web"
YEAR, MONTH, WEEK = f"year:2026@{P}", f"month:2026-03@{P}", f"week:2026-W12@{P}"
DAY16, DAY17 = f"day:2026-03-16@{P}", f"day:2026-03-17@{P}"
SEG_DANA, SEG_ELI, SEG_PAIR = "segment:sg-dana", "segment:sg-eli", "segment:sg-pair"


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 3, day, hour, minute, tzinfo=UTC)


# segment -> (day, agent, session, [(event_id, user_id)], start)
SEGMENTS: dict[str, tuple[str, str, str, list[tuple[str, str | None]], datetime]] = {
    SEG_DANA: (DAY16, "claude-code", "s-dana", [("d1", "dana"), ("d2", "dana")], at(16, 9)),
    SEG_ELI: (DAY17, "codex", "s-eli", [("e1", "eli"), ("e2", None)], at(17, 9)),
    SEG_PAIR: (DAY17, "claude-code", "s-pair", [("p1", "dana"), ("p2", "eli")], at(17, 14)),
}
CALENDAR = [  # node, level, bucket, parent, start, end, children
    (YEAR, "year", "2026", None, at(1, 0) - timedelta(days=60), at(31, 0) + timedelta(days=300),
     [MONTH]),
    (MONTH, "month", "2026-03", YEAR, at(1, 0), at(31, 0), [WEEK]),
    (WEEK, "week", "2026-W12", MONTH, at(16, 0), at(23, 0), [DAY16, DAY17]),
    (DAY16, "day", "2026-03-16", WEEK, at(16, 0), at(17, 0), [SEG_DANA]),
    (DAY17, "day", "2026-03-17", WEEK, at(17, 0), at(18, 0), [SEG_ELI, SEG_PAIR]),
]  # fmt: skip


def _node(
    conn: psycopg.Connection[Any],
    node_id: str,
    level: str,
    bucket: str,
    parent: str | None,
    start: datetime,
    end: datetime,
    *,
    children: list[str] | None = None,
    agent: str | None = None,
    session: str | None = None,
    event_ids: list[str] | None = None,
) -> None:
    title = f"billing work {bucket}"
    conn.execute(
        """INSERT INTO toc_nodes (tenant, node_id, project_id, level, bucket, parent_id,
               start_ts, end_ts, latest_version, source_version)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1, %s)""",
        (T, node_id, P, level, bucket, parent, start, end, 1 if level == "segment" else None),
    )
    conn.execute(
        """INSERT INTO toc_node_versions (tenant, node_id, version, project_id, level, bucket,
               parent_id, title, bullets, keywords, memory_kind, base_salience, child_ids,
               child_versions, start_ts, end_ts, session_id, agent_id, event_ids, overlap_count,
               source_version, cause, summarizer, search_text)
           VALUES (%s, %s, 1, %s, %s, %s, %s, %s, %s, %s, 'observation', 0.5, %s, %s, %s, %s,
               %s, %s, %s, %s, %s, %s, 'extractive', %s)""",
        (T, node_id, P, level, bucket, parent, title,
         Jsonb([{"text": f"Invoices {bucket}.", "kind": "observation", "salience": 0.5,
                 "grip_ids": []}]),
         ["billing"], children or [], [1] * len(children or []), start, end, session, agent,
         event_ids, 0 if event_ids is not None else None, 1 if event_ids is not None else None,
         f"{node_id}/v1", f"{title} invoices {bucket}. billing"),
    )  # fmt: skip


def seed(dsn: str) -> None:
    with psycopg.connect(dsn) as conn:
        for _, agent, session, events, start in SEGMENTS.values():
            for i, (event_id, user) in enumerate(events):
                conn.execute(
                    """INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id,
                           user_id, role, type, text, received_at)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, 'user', 'message', %s, %s)""",
                    (T, event_id, start + timedelta(minutes=i), P, agent, session, user,
                     f"billing invoices {event_id}", start),
                )  # fmt: skip
        for node_id, level, bucket, parent, start, end, children in CALENDAR:
            _node(conn, node_id, level, bucket, parent, start, end, children=children)
        for node_id, (day, agent, session, events, start) in SEGMENTS.items():
            ids = [e for e, _ in events]
            bucket = node_id.removeprefix("segment:")
            end = start + timedelta(minutes=len(ids))
            _node(conn, node_id, "segment", bucket, day, start, end, agent=agent,
                  session=session, event_ids=ids)  # fmt: skip
        # two topics: Dana's segment alone, and Eli's with the pairing session
        now = datetime.now(UTC)
        for topic_id, label, members in (
            ("topic:dana", "billing invoices dana", [SEG_DANA]),
            ("topic:team", "billing invoices team", [SEG_ELI, SEG_PAIR]),
        ):
            conn.execute(
                "INSERT INTO topics (tenant, topic_id, project_id, label, keywords, centroid) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                (T, topic_id, P, label, ["billing", "invoices"], [1.0, 0.0]),
            )
            for node_id in members:
                _, _, session, events, _ = SEGMENTS[node_id]
                conn.execute(
                    """INSERT INTO topic_segments (tenant, node_id, project_id, node_version,
                           session_id, title, text, event_ids, salience, start_ts, end_ts,
                           embedding, pending)
                       VALUES (%s, %s, %s, 1, %s, 'billing', 'billing', %s, 0.5, %s, %s,
                           %s, false)""",
                    (T, node_id, P, session, [e for e, _ in events], now - timedelta(days=2),
                     now - timedelta(days=1), [1.0, 0.0]),
                )  # fmt: skip
                conn.execute(
                    "INSERT INTO topic_members (tenant, node_id, topic_id, project_id, "
                    "assigned_by, similarity) VALUES (%s, %s, %s, %s, 'cluster', 1.0)",
                    (T, node_id, topic_id, P),
                )


@contextlib.contextmanager
def team_query_stack(pg_server: PostgresServer, workdir: Path) -> Iterator[Stack]:
    """The seeded database and the query service (no sentence model) on its own nats-server."""
    nats = start_nats(workdir)
    dsn = create_database(pg_server)
    seed(dsn)
    s = make_stack(nats, dsn, workdir, AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false")
    try:
        s.start("query")
        yield s
    finally:
        s.stop()
        nats.stop()
