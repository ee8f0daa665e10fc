"""Two replicas of every consumer, and a nats-server restart, build exactly one replica's memory.

Compose and Kubernetes run each consumer service as several processes sharing its durable
JetStream consumers. Here the same events go to two pipelines, each on its own nats-server and
database: one runs every consumer once; the other runs two processes of each (recorder,
segmenter, summarizer, bm25-indexer, embedder, topics) and has its nats-server restarted halfway
through. Once both have drained, their segments, TOC (every node's latest version with its
grips), vector documents, BM25 documents and the topic service's segments must be the same.

What a session's segments are is a function of its events, except for the idle flush, which
closes an open segment after some wall-clock time without a new event: how long the posts to
the two pipelines take then decides where segments end. So no segment closes idle here: once
both pipelines have stored every event, a ``session_end`` closes each session.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from agent_memory_common.core.catalog import CONSUMERS
from agent_memory_embedded.servers import PostgresServer
from agent_memory_retrieval import RetrievalSettings, SearchFilter
from agent_memory_retrieval.adapters.factory import open_text_index
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import Stack, create_database, make_stack, start_nats
from tests.toc_support import latest_snapshot

CONSUMER_SERVICES = CONSUMERS
ENV = {
    # no segment closes for idleness while the events arrive (see the module's docstring)
    "AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S": "3600",
    "AGENT_MEMORY_SEGMENTER__HISTORICAL_QUIET_S": "0",  # events of 2026-01-01: no early close
    "AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER": "false",
}
SENTENCES = [
    "We decided to shard the outbox table by tenant.",
    "The migration failed because the lock timeout was too short.",
    "Fixed by raising lock_timeout to 5s for the migration role.",
    "Constraint: the recorder acknowledges only after the commit.",
    "The flaky test came from a race between two acks.",
    "Preference: keep the CLI output to one line per event.",
]
N_EVENTS = 48
T0 = 1_767_225_600_000
QUERIES = ("outbox shard tenant", "lock timeout migration", "flaky race acks")


def events() -> list[dict[str, Any]]:
    return [
        make_event(
            i,
            session=f"s{i % 3}",
            project="proj" if i % 4 else "other",
            text=f"{SENTENCES[i % len(SENTENCES)]} (note {i})",
            ts=T0 + i * 45_000,
        )
        for i in range(N_EVENTS)
    ]


def session_ends() -> list[dict[str, Any]]:
    """One ``session_end`` for each (project, session) of ``events()``, after all of them."""
    keys = sorted({(e["project_id"], e["session_id"]) for e in events()})
    return [
        make_event(
            N_EVENTS + n,
            session=session,
            project=project,
            type="session_end",
            text="session ended",
            ts=T0 + N_EVENTS * 45_000 + n,
        )
        for n, (project, session) in enumerate(keys)
    ]


@pytest.fixture
def pipelines(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, Stack]]:
    stacks: list[Stack] = []
    try:
        for replicas in (1, 2):
            workdir = tmp_path_factory.mktemp(f"replicas-{replicas}")
            stack = make_stack(start_nats(workdir), create_database(pg_server), workdir, **ENV)
            stacks.append(stack)
            stack.start("gateway")
            for name in CONSUMER_SERVICES:
                for replica in range(replicas):
                    stack.start(name, replica)
            stack.start("query")
        yield stacks[0], stacks[1]
    finally:
        for stack in stacks:
            stack.stop()
            stack.nats.stop()


def post(stack: Stack, batch: list[dict[str, Any]]) -> None:
    def accepted() -> bool:
        try:
            r = plain_http.post(
                f"{stack.gateway_url}/v1/events", json={"events": batch}, timeout=30
            )
        except httpx.HTTPError:
            return False
        return r.status_code == 202  # 503 while NATS restarts: retried with the same ids

    eventually(accepted, timeout=120, what="batch accepted")


def drained(stack: Stack, expected: int) -> bool:
    try:
        status = plain_http.get(f"{stack.query_url}/v1/status", timeout=10).json()
    except (httpx.HTTPError, ValueError):
        return False
    return bool(status.get("drained")) and status.get("events_stored") == expected


def snapshot(stack: Stack) -> dict[str, Any]:
    with psycopg.connect(stack.pg_dsn) as conn:
        segments = conn.execute(
            "SELECT DISTINCT ON (tenant, segment_id) tenant, segment_id, "
            "payload -> 'event_ids', payload -> 'start_ts', payload -> 'end_ts' "
            "FROM segment_versions ORDER BY tenant, segment_id, version DESC"
        ).fetchall()
        vectors = conn.execute(
            "SELECT id, type, level, kind, title, text, event_ids FROM vector_docs ORDER BY id"
        ).fetchall()
        topic_segments = conn.execute(
            "SELECT tenant, node_id, node_version, event_ids FROM topic_segments ORDER BY 1, 2"
        ).fetchall()
    return {
        "segments": segments,
        "toc": latest_snapshot(stack.pg_dsn),
        "vectors": vectors,
        "topic_segments": topic_segments,
        "bm25": asyncio.run(bm25_documents(stack)),
    }


async def bm25_documents(stack: Stack) -> dict[str, Any]:
    """What the BM25 index holds: its size, and every document each query matches, read from
    the index itself (search answers are ranked by usage and thinned of near-duplicates, so
    two equal indexes can answer differently)."""
    settings = RetrievalSettings(pg_dsn=stack.pg_dsn, home=Path(stack.env["AGENT_MEMORY_HOME"]))
    index = await open_text_index(settings, writer=False)
    try:
        answers: dict[str, Any] = {"documents": await index.count("default")}
        for q in QUERIES:
            hits = await index.search(q, SearchFilter(tenant="default", project_id="proj"), 1000)
            answers[q] = sorted((h.id, sorted(h.doc.event_ids)) for h in hits)
        return answers
    finally:
        await index.close()


def differences(last: dict[str, Any]) -> str:
    """Each part of the two snapshots that differs, with what only one side holds."""
    if not last:
        return "never both drained"
    parts: list[str] = []
    _differ("", last["single"], last["doubled"], parts)
    return "\n".join(parts)


def _differ(where: str, one: Any, two: Any, parts: list[str]) -> None:
    """Down to the first value that differs: a list by the rows only one side holds."""
    if one == two:
        return
    if isinstance(one, dict) and isinstance(two, dict):
        for key in sorted(set(one) | set(two), key=str):
            _differ(f"{where}.{key}" if where else str(key), one.get(key), two.get(key), parts)
    elif isinstance(one, list) and isinstance(two, list):
        only_one = [row for row in one if row not in two][:3]
        only_two = [row for row in two if row not in one][:3]
        parts.append(f"{where}: single only {only_one!r}; doubled only {only_two!r}")
    else:
        parts.append(f"{where}: single {one!r:.600}; doubled {two!r:.600}")


@pytest.mark.slow
@pytest.mark.timeout(1800)  # two whole pipelines, six model-loading processes
def test_two_replicas_and_a_nats_restart_build_what_one_builds(
    pipelines: tuple[Stack, Stack],
) -> None:
    single, doubled = pipelines
    batches = [events()[i : i + 12] for i in range(0, N_EVENTS, 12)]
    for number, batch in enumerate(batches):
        post(single, batch)
        post(doubled, batch)
        if number == 1:  # halfway: the JetStream server goes away and comes back
            doubled.nats.stop()
            doubled.nats.start()
    for stack in (single, doubled):
        eventually(functools.partial(drained, stack, N_EVENTS), timeout=600, what="drained")
    ends = session_ends()
    total = N_EVENTS + len(ends)
    for stack in (single, doubled):
        post(stack, ends)
    for stack in (single, doubled):
        eventually(functools.partial(drained, stack, total), timeout=600, what="sessions ended")

    last: dict[str, Any] = {}

    def same() -> bool:
        if not (drained(single, total) and drained(doubled, total)):
            return False
        last["single"], last["doubled"] = snapshot(single), snapshot(doubled)
        return bool(last["single"] == last["doubled"])

    try:
        eventually(same, timeout=480, what="the same memory from both pipelines")
    except AssertionError as failed:
        raise AssertionError(f"{failed}; they differ in: {differences(last)}") from None
    built = snapshot(single)
    assert built["segments"] and built["toc"] and built["vectors"]
    assert all(built["bm25"].values())
