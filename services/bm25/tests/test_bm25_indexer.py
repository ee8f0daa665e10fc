"""The bm25-indexer end to end: gateway -> recorder -> RECORDED -> bm25-indexer -> Tantivy,
every part a real process on a real nats-server and Postgres; read back by a reader instance
as the query service would."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats

from agent_memory_common.contracts.messages import TocNodeMessage
from agent_memory_common.contracts.subjects import toc_subject
from agent_memory_embedded.servers import NatsServer
from agent_memory_retrieval.adapters.tantivy_index import TantivyIndex
from agent_memory_retrieval.docs import SearchFilter
from tests import plain_http
from tests.helpers import eventually, make_event, recorded_backlog, republish_recorded
from tests.stack import make_stack


def indexed(root: Path, tenant: str = "default") -> int:
    async def count() -> int:
        index = TantivyIndex(root, writer=False)
        return await index.count(tenant) if await index.healthy() else -1

    return asyncio.run(count())


def search(root: Path, query: str) -> list[str]:
    async def run() -> list[str]:
        hits = await TantivyIndex(root, writer=False).search(query, SearchFilter("default"), 50)
        return [h.id for h in hits]

    return asyncio.run(run())


def segments(root: Path, query: str) -> list[str]:
    async def run() -> list[str]:
        flt = SearchFilter("default", types=("toc_node",), levels=("segment",))
        return [h.id for h in await TantivyIndex(root, writer=False).search(query, flt, 50)]

    return asyncio.run(run())


def publish_toc_version(nats_url: str) -> None:
    """A TOC node version as the summarizer publishes it (services/summarizer toc.py)."""
    payload = {
        "tenant": "default", "project_id": "proj", "node_id": "segment:seg-9", "version": 1,
        "level": "segment", "bucket": "seg-9", "parent_id": "day:2026-01-01@proj",
        "title": "Flaky zookeeper tests", "keywords": ["zookeeper"],
        "bullets": [{"text": "pinned the zookeeper image", "kind": "procedure",
                     "salience": 0.4, "grip_ids": ["grip:abc"]}],
        "memory_kind": "procedure", "salience": 0.4, "pinned": False, "child_ids": [],
        "start_ts": "2026-01-01T00:00:00Z", "end_ts": "2026-01-01T00:10:00Z",
        "session_id": "s1", "agent_id": "claude-code", "event_ids": ["e-000007"],
        "overlap_count": 0, "source_version": 1, "summarizer": "extractive",
        "grips": [{"grip_id": "grip:abc", "node_id": "segment:seg-9", "node_version": 1,
                   "bullet_index": 0, "event_ids": ["e-000007"],
                   "excerpt": "the zookeeper quorum lost a node", "memory_kind": "observation",
                   "salience": 0.1, "pinned": False}],
    }  # fmt: skip

    async def publish() -> None:
        nc = await nats.connect(nats_url)
        try:
            await nc.jetstream().publish(
                toc_subject("default", "proj"),
                TocNodeMessage.model_validate(payload).to_wire(),
                headers={"Nats-Msg-Id": "default/segment:seg-9/v1"},
            )
        finally:
            await nc.close()

    asyncio.run(publish())


def test_indexes_recorded_events_once_and_resumes_after_kill(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(nats_server, pg_dsn, tmp_path)
    root = tmp_path / "home" / "tantivy"
    try:
        for name in ("gateway", "recorder", "bm25-indexer"):
            stack.start(name)
        # at start, before any batch: the segment folder is made (upgrade())
        reader = TantivyIndex(root, writer=False)
        eventually(reader.segments_filled, what="the segment folder filled at start")
        batch = [make_event(i, text=f"note {i}: the kafka migration plan") for i in range(20)]
        batch[7]["text"] = "the zookeeper quorum lost a node during the deploy"
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": batch})
        assert r.status_code == 202, r.text
        eventually(lambda: indexed(root) == 20, what="20 events indexed")
        # the turn that said it, and the turn after it, matched by its context: the same words
        # and length, an exact tie, returned in id order
        assert search(root, "zookeeper quorum") == [
            "event:default:e-000007",
            "event:default:e-000008",
        ]

        # redelivery: the same events again under new message ids -> still one doc each
        assert republish_recorded(nats_server.url, pg_dsn) == 20
        eventually(
            lambda: recorded_backlog(nats_server.url, "bm25-indexer") == 0, what="redelivery seen"
        )
        assert indexed(root) == 20

        # kill -9, ingest while it is down, restart: the durable consumer resumes
        stack.processes["bm25-indexer"].kill()
        more = [make_event(i, text=f"late note {i} about the raft election") for i in range(20, 30)]
        assert (
            plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": more}).status_code
            == 202
        )
        eventually(lambda: recorded_backlog(nats_server.url, "bm25-indexer") >= 10, what="backlog")
        stack.start("bm25-indexer")
        eventually(lambda: indexed(root) == 30, what="backlog indexed after restart")
        assert len(search(root, "raft election")) == 10

        # a TOC node version: the node and the grip it made become documents
        publish_toc_version(nats_server.url)
        eventually(lambda: indexed(root) == 32, what="TOC node and grip indexed")
        assert set(search(root, "zookeeper")) == {
            "event:default:e-000007",
            "event:default:e-000008",
            "node:default:segment:seg-9",
            "grip:default:grip:abc",
        }
        # a search of segments alone reads the segment folder, which holds the node (its commit
        # follows the main folder's: the count above can be seen before it lands)
        eventually(
            lambda: segments(root, "zookeeper") == ["node:default:segment:seg-9"],
            what="the node in the segment folder",
        )
    finally:
        stack.stop()
