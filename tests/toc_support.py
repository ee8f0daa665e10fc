"""Building a table of contents for tests and the TOC benchmark without the segmenter.

The summarizer's input is the SEGMENTS stream plus the stored events, so tests write events
straight into Postgres and publish segment messages as the segmenter would (same subject,
same message id ``<tenant>/<segment_id>/v<version>``, same JSON). The summarizer itself always
runs as a real process on real servers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
from collections.abc import Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import nats
import orjson
import psycopg

from agent_memory_common.bus.streams import ensure_pipeline
from agent_memory_common.contracts.subjects import STREAM_TOC, segment_subject
from agent_memory_common.core.settings import CommonSettings
from agent_memory_embedded.servers import PostgresServer
from tests.helpers import eventually
from tests.stack import Stack, create_database, make_stack, start_nats

T = TypeVar("T")
TENANT = "default"

# What coding sessions talk about: rules, definitions, procedures, preferences, observations.
SENTENCES = (
    "The recorder must acknowledge a message only after the Postgres commit.",
    "We moved the retry logic into the consumer runner so every service shares it.",
    "A grip means a link from a summary bullet to the exact events it came from.",
    "First run make install, then start the stack with agent-memory up.",
    "I prefer plain SQL files over an ORM for the query service.",
    "The migration takes an advisory lock so two replicas starting together do not race.",
    "Tests passed after the fix to the nats reconnect loop.",
    "Never store secrets in the event metadata; the gateway redacts them.",
    "The week rollup reads the latest version of every day in that week.",
    "Avoid global state in the handlers because replicas run side by side.",
    "The benchmark showed 8,000 events per second recorded on two cores.",
    "We call the per-project lock the rollup lock in the docs.",
    "Postgres restarted during the test and the pool reconnected on its own.",
    "The segmenter closes a segment after a gap of thirty minutes in event time.",
    "Timestamps are stored in UTC and rendered in the user's zone by the CLI.",
    "The query service answers 404 with the field name for an unknown node id.",
    "Idle flush closes a session's segment when no event arrives for a while.",
    "The summarizer keeps old node versions and moves the latest pointer.",
    "Use structlog for every service log line, never print.",
    "Search over titles and bullets works even while every index is down.",
)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from a synchronous test, on a loop of its own in a worker thread (the
    test session's loop is left alone)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass(frozen=True)
class FakeEvent:
    event_id: str
    ts: datetime
    project_id: str
    session_id: str
    role: str
    type: str
    text: str
    agent_id: str = "claude-code"
    tenant: str = TENANT


def event_text(n: int, sentences: int = 3) -> str:
    """Deterministic prose: a few of the sentences above, varying with ``n``."""
    picks = [SENTENCES[(n * 7 + k * 3) % len(SENTENCES)] for k in range(sentences)]
    return " ".join(picks)


def make_events(
    prefix: str,
    start: datetime,
    count: int,
    *,
    project: str = "proj",
    session: str = "s1",
    step: timedelta = timedelta(minutes=1),
    texts: Sequence[str] | None = None,
) -> list[FakeEvent]:
    return [
        FakeEvent(
            event_id=f"{prefix}-{i:05d}",
            ts=start + i * step,
            project_id=project,
            session_id=session,
            role="user" if i % 2 == 0 else "assistant",
            type="message",
            text=texts[i % len(texts)] if texts else event_text(hash_int(prefix) + i),
        )
        for i in range(count)
    ]


def hash_int(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "big")


def insert_events(dsn: str, events: Iterable[FakeEvent]) -> int:
    """Straight into the event log, as the recorder would have stored them."""
    rows = [
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
            "{}",
            e.ts,
        )
        for e in events
    ]
    with (
        psycopg.connect(dsn) as conn,
        conn.cursor() as cur,
        cur.copy(
            "COPY events (tenant, event_id, ts, project_id, agent_id, session_id, role, type, "
            "text, metadata, received_at) FROM STDIN"
        ) as copy,
    ):
        for row in rows:
            copy.write_row(row)
    return len(rows)


def segment_payload(
    events: Sequence[FakeEvent],
    *,
    segment_id: str,
    version: int = 1,
    ordinal: int = 0,
    overlap_count: int = 0,
    close_reason: str = "gap",
) -> dict[str, Any]:
    first = events[0]
    return {
        "tenant": first.tenant,
        "segment_id": segment_id,
        "version": version,
        "project_id": first.project_id,
        "agent_id": first.agent_id,
        "session_id": first.session_id,
        "ordinal": ordinal,
        "start_ts": first.ts.isoformat(),
        "end_ts": events[-1].ts.isoformat(),
        "event_ids": [e.event_id for e in events],
        "overlap_count": overlap_count,
        "token_count": sum(max(1, len(e.text) // 4) for e in events),
        "close_reason": close_reason,
    }


def retraction(payload: dict[str, Any], version: int) -> dict[str, Any]:
    return {
        **payload,
        "version": version,
        "event_ids": [],
        "overlap_count": 0,
        "token_count": 0,
        "close_reason": "retracted",
    }


def publish_segments(
    nats_url: str, payloads: Sequence[dict[str, Any]], *, msg_id_suffix: str = ""
) -> None:
    """Publish like the segmenter. ``msg_id_suffix`` defeats JetStream's de-duplication, to
    simulate a redelivery reaching the summarizer a second time."""

    async def go() -> None:
        nc = await nats.connect(nats_url)
        try:
            js = nc.jetstream(timeout=10)
            await ensure_pipeline(js, CommonSettings())
            futures = []
            for p in payloads:
                msg_id = f"{p['tenant']}/{p['segment_id']}/v{p['version']}{msg_id_suffix}"
                futures.append(
                    await js.publish_async(
                        segment_subject(p["tenant"], p["project_id"]),
                        orjson.dumps(p),
                        headers={"Nats-Msg-Id": msg_id},
                    )
                )
                if len(futures) >= 500:
                    await asyncio.gather(*futures)
                    futures = []
            await asyncio.gather(*futures)
        finally:
            await nc.close()

    run_async(go())


def toc_messages(nats_url: str) -> list[tuple[str, dict[str, Any]]]:
    """Every message on the TOC stream: (message id, payload)."""

    async def go() -> list[tuple[str, dict[str, Any]]]:
        nc = await nats.connect(nats_url)
        try:
            js = nc.jetstream(timeout=10)
            info = await js.stream_info(STREAM_TOC)
            out = []
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                msg = await js.get_msg(STREAM_TOC, seq)
                headers = msg.headers or {}
                out.append((headers.get("Nats-Msg-Id", ""), orjson.loads(msg.data or b"{}")))
            return out
        finally:
            await nc.close()

    return run_async(go())


def segments_summarized(dsn: str, tenant: str = TENANT) -> dict[str, int]:
    """segment_id -> the segment version its node summarizes."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT bucket, source_version FROM toc_nodes WHERE tenant = %s AND level = 'segment'",
            (tenant,),
        ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def all_summarized(dsn: str, expected: dict[str, int]) -> bool:
    got = segments_summarized(dsn)
    return all(got.get(k, 0) >= v for k, v in expected.items())


TREE_COLUMNS = (
    "node_id, version, project_id, level, bucket, parent_id, title, bullets, keywords, "
    "memory_kind, base_salience, child_ids, child_versions, start_ts, end_ts, session_id, "
    "agent_id, event_ids, overlap_count, source_version, cause, summarizer, search_text"
)


def tree_snapshot(dsn: str) -> dict[str, Any]:
    """Everything the TOC holds except wall-clock times: for comparing two builds."""
    with psycopg.connect(dsn) as conn:
        versions = conn.execute(
            f"SELECT {TREE_COLUMNS} FROM toc_node_versions ORDER BY tenant, node_id, version"
        ).fetchall()
        pointers = conn.execute(
            "SELECT tenant, node_id, project_id, level, bucket, parent_id, start_ts, end_ts, "
            "latest_version, source_version, is_empty FROM toc_nodes ORDER BY tenant, node_id"
        ).fetchall()
        grips = conn.execute(
            "SELECT tenant, grip_id, project_id, node_id, node_version, bullet_index, event_ids, "
            "excerpt, memory_kind, base_salience FROM toc_grips ORDER BY tenant, grip_id"
        ).fetchall()
    return {"versions": versions, "pointers": pointers, "grips": grips}


def latest_snapshot(dsn: str) -> list[tuple[Any, ...]]:
    """The tree as it reads now (latest version of every node, with its grips), leaving out
    what depends on the order messages were handled in: the calendar nodes' version numbers
    and which message caused them."""
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT n.node_id, n.parent_id, n.is_empty, v.title, v.bullets, v.keywords, "
            "v.memory_kind, v.base_salience, v.child_ids, v.event_ids, v.start_ts, v.end_ts, "
            "CASE WHEN n.level = 'segment' THEN v.version END, "
            "(SELECT array_agg(g.excerpt || ' ' || array_to_string(g.event_ids, ',') "
            "                  ORDER BY g.grip_id) "
            " FROM toc_grips g WHERE g.tenant = n.tenant AND g.grip_id IN ("
            "   SELECT jsonb_array_elements_text(b -> 'grip_ids') "
            "   FROM jsonb_array_elements(v.bullets) b)) "
            "FROM toc_nodes n JOIN toc_node_versions v ON v.tenant = n.tenant "
            "AND v.node_id = n.node_id AND v.version = n.latest_version "
            "ORDER BY n.tenant, n.node_id"
        ).fetchall()


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def consumer_idle(nats_url: str, stream: str = "SEGMENTS", durable: str = "summarizer") -> bool:
    """Nothing pending and nothing awaiting an ack: every delivered message was handled."""

    async def go() -> bool:
        nc = await nats.connect(nats_url)
        try:
            info = await nc.jetstream(timeout=10).consumer_info(stream, durable)
            return (info.num_pending or 0) == 0 and (info.num_ack_pending or 0) == 0
        finally:
            await nc.close()

    return run_async(go())


def sample_sessions() -> dict[str, list[FakeEvent]]:
    """A small tree: two projects, March and April 2026, a week across the month boundary."""
    return {
        "sg_mar20": make_events("mar20", utc(2026, 3, 20, 9), 8, session="z"),
        "sg_mar30": make_events("mar30", utc(2026, 3, 30, 9), 10, session="a"),
        "sg_mar31": make_events("mar31", utc(2026, 3, 31, 14), 12, session="b"),
        "sg_apr02": make_events("apr02", utc(2026, 4, 2, 9), 10, session="c"),
        "sg_other": make_events("oth", utc(2026, 4, 2, 9), 8, project="other", session="d"),
    }


@contextlib.contextmanager
def toc_service_stack(
    pg_server: PostgresServer, workdir: Any, **env: str
) -> Iterator[tuple[Stack, dict[str, list[FakeEvent]]]]:
    """Summarizer and query service over ``sample_sessions()``; ``sg_mar31`` has 2 versions
    (10 then 12 events). Yields once the tree is built and the query service is up."""
    nats_server = start_nats(workdir)
    dsn = create_database(pg_server)
    stack = make_stack(
        nats_server, dsn, workdir, AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false", **env
    )
    events = sample_sessions()
    try:
        for evs in events.values():
            insert_events(dsn, evs)
        payloads = [
            segment_payload(evs[:-2] if sid == "sg_mar31" else evs, segment_id=sid)
            for sid, evs in events.items()
        ]
        payloads.append(segment_payload(events["sg_mar31"], segment_id="sg_mar31", version=2))
        publish_segments(nats_server.url, payloads)
        stack.start("summarizer")
        expected = {sid: 1 for sid in events} | {"sg_mar31": 2}
        eventually(lambda: all_summarized(dsn, expected), timeout=60, what="tree built")
        eventually(lambda: consumer_idle(nats_server.url), timeout=30, what="summarizer idle")
        stack.start("query")
        yield stack, events
    finally:
        stack.stop()
        nats_server.stop()
