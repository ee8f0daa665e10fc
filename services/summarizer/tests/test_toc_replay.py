"""The TOC is a function of the stream: replaying it into an empty database gives the same
tree, and a summarizer killed with SIGKILL mid-run loses and duplicates nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_memory_common.contracts.subjects import STREAM_SEGMENTS
from agent_memory_embedded.servers import NatsServer, PostgresServer
from tests.helpers import eventually
from tests.stack import Stack, create_database, make_stack
from tests.toc_support import (
    FakeEvent,
    all_summarized,
    consumer_idle,
    insert_events,
    latest_snapshot,
    make_events,
    publish_segments,
    retraction,
    run_async,
    segment_payload,
    segments_summarized,
    toc_messages,
    tree_snapshot,
    utc,
)


@pytest.fixture
def toc_stack(nats_server: NatsServer, pg_dsn: str, tmp_path: Path) -> Iterator[Stack]:
    stack = make_stack(nats_server, pg_dsn, tmp_path)
    try:
        yield stack
    finally:
        stack.stop()


def workload(
    segments: int, *, per_segment: int = 6, per_day: int = 3
) -> tuple[list[FakeEvent], list[dict[str, Any]], dict[str, int]]:
    """Segments of two projects spread over days (crossing month ends), a few re-versioned,
    one retracted: every kind of change the tree must absorb."""
    events: list[FakeEvent] = []
    payloads: list[dict[str, Any]] = []
    for i in range(segments):
        project = "alpha" if i % 3 else "beta"
        start = utc(2026, 1, 26, 8) + timedelta(days=i // per_day, hours=3 * (i % per_day))
        evs = make_events(f"w{i:04d}", start, per_segment, project=project, session=f"s{i}")
        events.extend(evs)
        payloads.append(segment_payload(evs[:-1], segment_id=f"sg_{i:04d}"))
        if i % 7 == 0:  # a late event grew it: version 2
            payloads.append(segment_payload(evs, segment_id=f"sg_{i:04d}", version=2))
    first_of_sg_0001 = next(p for p in payloads if p["segment_id"] == "sg_0001")
    payloads.append(retraction(first_of_sg_0001, version=2))
    expected: dict[str, int] = {}
    for p in payloads:
        expected[p["segment_id"]] = max(expected.get(p["segment_id"], 0), p["version"])
    return events, payloads, expected


def delete_summarizer_consumer(nats_url: str) -> None:
    import nats

    async def go() -> None:
        nc = await nats.connect(nats_url)
        try:
            await nc.jetstream().delete_consumer(STREAM_SEGMENTS, "summarizer")
        finally:
            await nc.close()

    run_async(go())


def pullers(nats_url: str) -> int:
    """Pull requests waiting on the summarizer's consumer: one per idle replica."""
    import nats

    async def go() -> int:
        nc = await nats.connect(nats_url)
        try:
            info = await nc.jetstream().consumer_info(STREAM_SEGMENTS, "summarizer")
            return int(info.num_waiting or 0)
        finally:
            await nc.close()

    return run_async(go())


def replay_into_fresh_database(
    stack: Stack, pg_server: PostgresServer, events: list[FakeEvent], expected: dict[str, int]
) -> str:
    """Stop the summarizer, forget its consumer, point it at an empty database holding only the
    events, and let it read the SEGMENTS stream again from the first message."""
    stack.processes["summarizer"].stop()
    delete_summarizer_consumer(stack.nats.url)
    fresh = create_database(pg_server)
    insert_events(fresh, events)
    stack.env["AGENT_MEMORY_PG_DSN"] = fresh
    stack.env["AGENT_MEMORY_SUMMARIZER__BATCH_SIZE"] = "1"  # batching must not matter
    stack.start("summarizer")
    eventually(lambda: all_summarized(fresh, expected), timeout=120, what="replay done")
    eventually(lambda: consumer_idle(stack.nats.url), timeout=30, what="replay idle")
    return fresh


def test_replaying_the_stream_into_an_empty_database_gives_the_same_tree(
    toc_stack: Stack, pg_server: PostgresServer
) -> None:
    events, payloads, expected = workload(24)
    insert_events(toc_stack.pg_dsn, events)
    publish_segments(toc_stack.nats.url, payloads)
    toc_stack.env["AGENT_MEMORY_SUMMARIZER__BATCH_SIZE"] = "16"
    toc_stack.start("summarizer")
    eventually(lambda: all_summarized(toc_stack.pg_dsn, expected), timeout=90, what="built")
    eventually(lambda: consumer_idle(toc_stack.nats.url), timeout=30, what="idle")
    original = tree_snapshot(toc_stack.pg_dsn)
    assert len(original["versions"]) > 100 and len(original["grips"]) > 50

    replayed = tree_snapshot(replay_into_fresh_database(toc_stack, pg_server, events, expected))
    assert replayed["pointers"] == original["pointers"]
    assert replayed["grips"] == original["grips"]
    assert replayed["versions"] == original["versions"]


def _count_summarized(dsn: str) -> int:
    return len(segments_summarized(dsn))


@pytest.mark.slow
def test_kill_9_mid_run_loses_and_duplicates_nothing(
    toc_stack: Stack, pg_server: PostgresServer
) -> None:
    events, payloads, expected = workload(150, per_segment=8, per_day=5)
    insert_events(toc_stack.pg_dsn, events)
    publish_segments(toc_stack.nats.url, payloads)
    toc_stack.env["AGENT_MEMORY_SUMMARIZER__BATCH_SIZE"] = "2"  # many commits: the kill lands
    toc_stack.start("summarizer")  # between, or inside, one of them
    eventually(lambda: _count_summarized(toc_stack.pg_dsn) >= 15, timeout=90, what="under way")
    toc_stack.processes["summarizer"].kill()
    at_crash = _count_summarized(toc_stack.pg_dsn)
    assert 0 < at_crash < len(expected), "the crash must happen mid-run"
    toc_stack.start("summarizer")
    eventually(lambda: all_summarized(toc_stack.pg_dsn, expected), timeout=180, what="done")
    eventually(lambda: consumer_idle(toc_stack.nats.url), timeout=30, what="idle")

    crashed = tree_snapshot(toc_stack.pg_dsn)
    with psycopg.connect(toc_stack.pg_dsn) as conn:
        causes = conn.execute(
            "SELECT node_id, cause, count(*) FROM toc_node_versions GROUP BY 1, 2"
        ).fetchall()
        per_segment = conn.execute(
            "SELECT bucket, count(*), max(version) FROM toc_node_versions "
            "WHERE level = 'segment' GROUP BY 1"
        ).fetchall()
    assert all(c[2] == 1 for c in causes), "a message made two versions of one node"
    versions_of = {p["segment_id"]: 0 for p in payloads}
    for p in payloads:
        versions_of[p["segment_id"]] += 1
    for segment_id, count, latest in per_segment:
        assert latest == expected[segment_id], "the newest segment version is the one read"
        assert 1 <= count <= versions_of[segment_id]
    # every node version was announced exactly once, none is missing
    ids = [m[0] for m in toc_messages(toc_stack.nats.url)]
    assert len(ids) == len(set(ids))
    assert set(ids) == {f"default/{v[0]}/v{v[1]}" for v in crashed["versions"]}

    # and the tree reads as the one an uninterrupted run builds. (After the restart, the batch
    # that was in flight is redelivered only once its ack wait expires, so it is handled after
    # later messages: the history of the ancestors may interleave differently, never the
    # content they end with.)
    crashed_latest = latest_snapshot(toc_stack.pg_dsn)
    clean = replay_into_fresh_database(toc_stack, pg_server, events, expected)
    assert latest_snapshot(clean) == crashed_latest
    assert tree_snapshot(clean)["grips"] == crashed["grips"]


def test_two_replicas_at_once_build_the_tree_one_builds(
    toc_stack: Stack, pg_server: PostgresServer
) -> None:
    """Two summarizer processes share the durable consumer; the per-project advisory lock
    serializes their rollups, so the tree ends as a single replica's replay of the stream."""
    import sys

    from agent_memory_embedded.servers import ManagedProcess

    events, payloads, expected = workload(30, per_segment=5, per_day=6)
    insert_events(toc_stack.pg_dsn, events)
    publish_segments(toc_stack.nats.url, payloads[:1])  # creates the consumer
    toc_stack.env["AGENT_MEMORY_SUMMARIZER__BATCH_SIZE"] = "1"  # interleave as much as possible
    second = ManagedProcess(
        "summarizer-2",
        [sys.executable, "-m", "agent_memory_summarizer"],
        toc_stack.workdir / "summarizer-2.log",
        env=toc_stack.env,
    )
    second.start()
    try:
        toc_stack.start("summarizer")
        # both replicas are pulling before the rest of the stream arrives
        eventually(lambda: pullers(toc_stack.nats.url) >= 2, timeout=30, what="two pullers")
        publish_segments(toc_stack.nats.url, payloads[1:])
        eventually(lambda: all_summarized(toc_stack.pg_dsn, expected), timeout=90, what="done")
        eventually(lambda: consumer_idle(toc_stack.nats.url), timeout=30, what="idle")
    finally:
        second.stop()
    both = toc_stack.log("summarizer") + (toc_stack.workdir / "summarizer-2.log").read_text()
    assert '"deadlock' not in both.lower() and "consumer.dead_letter" not in both
    with psycopg.connect(toc_stack.pg_dsn) as conn:
        causes = conn.execute(
            "SELECT node_id, cause, count(*) FROM toc_node_versions GROUP BY 1, 2"
        ).fetchall()
    assert all(c[2] == 1 for c in causes)
    shared = latest_snapshot(toc_stack.pg_dsn)
    alone = replay_into_fresh_database(toc_stack, pg_server, events, expected)
    assert latest_snapshot(alone) == shared
