"""One question, one answer (issue 53, point 6): identical searches on an unchanged store agree.

Usage feedback is on (the query service's access recorder, flushed every 50 ms here), but it
counts what an agent used (opened by id, pinned), not what a search returned: before, each
answer lowered the usage factor of what it returned, so the results just outside the answer
overtook those at its end and near ties swapped between two identical calls. Every part a real
process on a real nats-server and Postgres; BM25 and the scan tier rank (no sentence model).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import drained, eventually, make_event
from tests.stack import LEAN, Stack, module_stack

# Near ties: each mentions the kestrel once, in words of its own (no two are near-duplicates)
TEXTS = [
    "The kestrel job rotates the staging certificates every night",
    "Ask Priya before the kestrel dashboard changes its colour palette",
    "A kestrel worker crashed when the queue held malformed invoices",
    "We renamed the kestrel bucket so backups land in the archive region",
    "The kestrel cache warms itself after each deploy of the billing API",
    "Our kestrel alert pages the on-call engineer after five failed probes",
    "Logs from kestrel are kept ninety days then moved to cold storage",
    "The kestrel migration added an index on customer email addresses",
    "Kestrel retries a webhook three times with exponential backoff",
    "Nobody remembers why kestrel pins the old TLS library version",
    "The kestrel import tool skips rows whose currency code is unknown",
    "Kestrel exports a nightly CSV of refunds for the finance team",
]
QUERY = {"query": "kestrel", "project_id": "stable", "limit": 4}


@pytest.fixture(scope="module")
def stack(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        ("gateway", "recorder", "bm25-indexer", "query"),
        AGENT_MEMORY_QUERY__SEARCH__ACCESS_FLUSH_S="0.05",
        **LEAN,
    ) as s:
        yield s


def _search(stack: Stack) -> list[tuple[str, float]]:
    r = plain_http.post(f"{stack.query_url}/v1/search", json=QUERY, timeout=30)
    assert r.status_code == 200, r.text
    return [(x["id"], x["score"]) for x in r.json()["results"]]


def _usage(stack: Stack) -> dict[str, int]:
    with psycopg.connect(stack.pg_dsn) as conn:
        rows = conn.execute("SELECT item_id, access_count FROM search_access").fetchall()
    return {str(item): int(count) for item, count in rows}


def test_ten_identical_searches_return_ten_identical_rankings(stack: Stack) -> None:
    events = [
        make_event(i, project="stable", session=f"s{i % 3}", text=text)
        for i, text in enumerate(TEXTS)
    ]
    r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events}, timeout=10)
    assert r.status_code == 202, r.text
    # every event in the BM25 index (the indexer acknowledges after its commit, and a search
    # reloads the index): an answer read while the indexer still commits ranks a part of them
    eventually(
        lambda: drained(stack.query_url, len(events), consumers=("recorder", "bm25-indexer")),
        timeout=60,
        what="events stored and indexed",
    )
    assert len(_search(stack)) == QUERY["limit"]

    rankings = []
    for _ in range(10):
        rankings.append(_search(stack))
        time.sleep(0.2)  # the access recorder flushes meanwhile (every 50 ms)
    first = rankings[0]
    assert all(ranking == first for ranking in rankings), rankings
    scores = [score for _, score in first]
    assert scores == sorted(scores, reverse=True), first  # the order is the scores' order
    assert _usage(stack) == {}, "being returned is not being used"

    # usage feedback is on: what an agent opens is counted
    event_id = first[0][0].rsplit(":", 1)[1]
    opened = plain_http.get(f"{stack.query_url}/v1/events/{event_id}", timeout=10)
    assert opened.status_code == 200, opened.text
    eventually(lambda: _usage(stack).get(first[0][0]) == 1, timeout=10, what="use counted")
    top, score = _search(stack)[0]
    assert top == first[0][0] and score > first[0][1]  # used: lifted a little, never demoted
