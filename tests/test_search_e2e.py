"""Search end to end: gateway -> recorder -> RECORDED -> bm25-indexer and embedder -> Tantivy and
pgvector -> ``/v1/search``, every part a real process on a real nats-server and Postgres.

The query service's own tests (``services/query/tests/test_search_api.py``) write the index
documents themselves to control kind, salience and time; this one checks that what the
indexer services write is what search reads: ids, provenance, filters, both tiers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import drained, eventually, make_event
from tests.stack import make_stack

TEXTS = [
    "The gateway answers 202 only after JetStream acknowledged every event.",
    "We chose Tantivy as the embedded BM25 engine because readers work in any process.",
    "Decision: the recorder must acknowledge a message only after the Postgres commit.",
    "The staging deploy failed because the migration took an exclusive lock for minutes.",
]


def search(url: str, **body: Any) -> dict[str, Any]:
    r = plain_http.post(f"{url}/v1/search", json=body, timeout=30)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


@pytest.mark.slow
def test_what_the_indexers_write_is_what_search_finds(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(nats_server, pg_dsn, tmp_path)
    try:
        for name in ("gateway", "recorder", "bm25-indexer", "embedder", "query"):
            stack.start(name)
        events = [
            make_event(i, project="proj" if i < 4 else "other", text=TEXTS[i % 4]) for i in range(6)
        ]
        events[2]["metadata"] = {"memory_kind": "constraint"}  # as a client may state it
        # A turn is matched by the turn before it in its session too (its BM25 context), so a
        # salient next turn could pass the turn itself by a rank: the rule gets its own session.
        events[2]["session_id"] = "s2"
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events})
        assert r.status_code == 202, r.text
        eventually(lambda: drained(stack.query_url, 6), timeout=120, what="pipeline drained")

        def found_by(tier: str) -> bool:
            answer = search(
                stack.query_url,
                query="why Tantivy for BM25",
                project_id="proj",
                tiers=[tier],
            )
            used = answer["explain"]["tiers"][tier]["status"] == "used"
            return used and bool(answer["results"])

        # the embedding model loads in the background in both the embedder and the query service
        eventually(lambda: found_by("bm25"), timeout=120, what="bm25 tier answers")
        eventually(lambda: found_by("vector"), timeout=180, what="vector tier answers")

        answer = search(stack.query_url, query="why Tantivy for BM25", project_id="proj")
        first = answer["results"][0]
        assert first["id"] == "event:default:e-000001"
        assert first["event_ids"] == ["e-000001"]
        assert first["type"] == "event" and first["project_id"] == "proj"
        assert answer["explain"]["tiers"]["vector"]["status"] == "used"
        assert answer["explain"]["tiers"]["bm25"]["status"] == "used"
        assert {r["project_id"] for r in answer["results"]} == {"proj"}
        # e-000003 (next in session s1) is found by e-000001's words, e-000002 (s2) is not
        by_bm25 = search(stack.query_url, query="Tantivy", project_id="proj", tiers=["bm25"])
        assert [r["id"] for r in by_bm25["results"]] == [
            "event:default:e-000001",
            "event:default:e-000003",
        ]

        # the kind stated by the client is indexed, and the filter on kinds reaches the engines
        rules = search(stack.query_url, query="acknowledge after commit", kinds=["constraint"])
        assert [r["event_ids"] for r in rules["results"]] == [["e-000002"]]
        assert rules["results"][0]["memory_kind"] == "constraint"
    finally:
        stack.stop()
