"""``/v1/search`` on real processes and real indexes.

Events go in through the gateway and the recorder (so the raw-scan tier reads the real events
table); the test then writes the index documents for those events itself, as the bm25-indexer
and embedder services do, into the real engines (Tantivy under the stack's home, pgvector in
the stack's Postgres) with real all-MiniLM-L6-v2 vectors. That pins down each document's kind,
salience and time, which the ranking tests need, independently of the indexer services.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from agent_memory_embedded.servers import ManagedProcess, PostgresServer, free_port
from agent_memory_retrieval import (
    Embedder,
    IndexDoc,
    RetrievalSettings,
    event_doc_id,
    load_embedder,
    node_doc_id,
    open_text_index,
    open_vector_index,
)
from tests import plain_http
from tests.helpers import eventually
from tests.stack import Stack, create_database, make_stack, start_nats
from tests.toc_support import FakeEvent, publish_segments, segment_payload

NOW = datetime(2026, 3, 18, 12, 0, tzinfo=UTC)  # a Wednesday; every request passes it as "now"
ACME = {"authorization": "Bearer tok-acme"}
GLOBEX = {"authorization": "Bearer tok-globex"}
TOKENS = "tok-acme:acme,tok-globex:globex"


@dataclass(frozen=True)
class Item:
    tenant: str
    event_id: str
    project: str
    ts: datetime
    text: str
    kind: str = "observation"
    type: str = "event"
    title: str = ""
    event_ids: tuple[str, ...] = ()

    @property
    def doc_id(self) -> str:
        if self.type == "toc_node":
            return node_doc_id(self.tenant, self.event_id)
        return event_doc_id(self.tenant, self.event_id)

    def doc(self) -> IndexDoc:
        # the summarizer's write-time salience: length, plus 0.2 for a stated kind
        salience = min(len(self.text) / 500, 1.0) * 0.45 + (
            0.2 if self.kind != "observation" else 0
        )
        return IndexDoc(
            id=self.doc_id,
            type=self.type,
            tenant=self.tenant,
            project_id=self.project,
            agent_id="claude-code",
            session_id=f"{self.project}-s1",
            ts=self.ts,
            level="day" if self.type == "toc_node" else "event",
            kind=self.kind,
            salience=round(salience, 4),
            title=self.title,
            text=self.text,
            event_ids=self.event_ids or (self.event_id,),
        )


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


ITEMS = [
    # general facts, project "ops"
    Item(
        "acme",
        "ops-1",
        "ops",
        ago(1),
        "The gateway listens on port 8700; the query service answers on port 8701.",
    ),
    Item(
        "acme",
        "ops-2",
        "ops",
        ago(2),
        "Tantivy keeps the BM25 index in a folder under the agent-memory home.",
    ),
    Item(
        "acme",
        "ops-3",
        "ops",
        ago(3),
        "pgvector HNSW serves nearest neighbour search inside Postgres.",
    ),
    Item(
        "acme",
        "ops-4",
        "ops",
        ago(4),
        "The recorder acknowledges a message only after the Postgres commit.",
    ),
    Item(
        "acme",
        "ops-day",
        "ops",
        ago(1),
        "Ports of the services: gateway 8700, query 8701.",
        type="toc_node",
        title="Service ports overview",
        event_ids=("ops-1",),
    ),
    # an old rule and a fresh observation that matches the query better
    Item(
        "acme",
        "pol-rule",
        "policy",
        ago(150),
        "Deploys must always go through the staging cluster first, never straight to production.",
        kind="constraint",
    ),
    Item(
        "acme", "pol-obs", "policy", ago(1), "Deploys went through the staging cluster first today."
    ),
    # the same words in different weeks
    Item(
        "acme",
        "wk-this",
        "weeks",
        at("2026-03-17T09:00"),
        "Release checklist reviewed with the team on Tuesday.",
    ),
    Item(
        "acme",
        "wk-last-1",
        "weeks",
        at("2026-03-10T10:00"),
        "Release checklist reviewed with the team, items one to four.",
    ),
    Item(
        "acme",
        "wk-last-2",
        "weeks",
        at("2026-03-13T16:00"),
        "Release checklist reviewed again after the fixes.",
    ),
    Item(
        "acme",
        "wk-old",
        "weeks",
        at("2026-03-03T11:00"),
        "Release checklist reviewed for the previous release.",
    ),
    # a day out, told of the next day, and the same place months before
    Item(
        "acme",
        "trip-day",
        "trips",
        at("2026-03-04T09:00"),
        "We visit the lighthouse museum today with the kids.",
    ),
    Item(
        "acme",
        "trip-told",
        "trips",
        at("2026-03-05T18:00"),
        "Yesterday we visited the lighthouse museum with the kids.",
    ),
    Item(
        "acme",
        "trip-old",
        "trips",
        at("2026-01-10T10:00"),
        "We visited the lighthouse museum last winter as well.",
    ),
    # two speakers saying much the same
    Item(
        "acme",
        "chat-omar",
        "chat",
        ago(3),
        "My neighbour adopted a puppy as well, a beagle called Biscuit.",
        title="Omar",
    ),
    Item(
        "acme",
        "chat-nora",
        "chat",
        ago(2),
        "I adopted a puppy last month, a terrier.",
        title="Nora",
    ),
    # the same words in two projects and two tenants
    Item(
        "acme", "leak-a", "alpha", ago(5), "The key rotation schedule for alpha is every 90 days."
    ),
    Item("acme", "leak-b", "beta", ago(5), "The key rotation schedule for beta is every 30 days."),
    Item(
        "globex", "leak-g", "alpha", ago(5), "The key rotation schedule for alpha is every 7 days."
    ),
    # a problem reported, worked on and fixed in one session: the fix shares no word with
    # the question below, which is asked in the words of the problem
    Item(
        "acme",
        "arc-report",
        "tdk",
        ago(40),
        "When tdk panics my terminal is broken afterwards: no echo, no newlines, I have to"
        " type reset.",
    ),
    Item("acme", "arc-try", "tdk", ago(40) + timedelta(minutes=2), "Let me reproduce it first."),
    Item(
        "acme",
        "arc-fix",
        "tdk",
        ago(40) + timedelta(minutes=9),
        "Fixed: a panic hook restores the terminal (disable_raw_mode and LeaveAlternateScreen)"
        " before the default hook prints the message.",
    ),
    Item(
        "acme",
        "arc-widths",
        "tdk",
        ago(30),
        "Fixed: column widths are measured with the unicode-width crate, so wide characters"
        " line up.",
    ),
    # a decision reversed two months later (supersession, detected by the summarizer)
    Item(
        "acme",
        "broker-old",
        "broker",
        at("2026-01-12T10:00"),
        "We go with RabbitMQ for the payment events: the ops team already runs it, and we"
        " publish to a topic exchange.",
        kind="decision",
    ),
    Item(
        "acme",
        "broker-new",
        "broker",
        at("2026-03-02T10:00"),
        "We replace RabbitMQ with NATS JetStream for the payment events: replay and"
        " de-duplication by message id.",
        kind="decision",
    ),
    # one day of two pieces of work, for "where did we leave off?"
    Item(
        "acme",
        "day-morning",
        "importer",
        at("2026-03-10T09:00"),
        "Morning: the importer reads the old export format and skips the attachments.",
    ),
    Item(
        "acme",
        "day-evening",
        "importer",
        at("2026-03-10T18:00"),
        "Evening: attachments are imported too, as files beside the notes.",
    ),
]
BY_ID = {i.doc_id: i for i in ITEMS}


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return load_embedder(RetrievalSettings())


async def write_indexes(settings: RetrievalSettings, docs: list[IndexDoc], vectors: Any) -> None:
    """What the bm25-indexer and embedder services do for these documents."""
    text = await open_text_index(settings, writer=True)
    vector = await open_vector_index(settings)
    try:
        await text.upsert(docs)
        await vector.upsert(docs, vectors)
    finally:
        await text.close()
        await vector.close()


# Segments (as the segmenter would publish them) for the TOC tier: the real summarizer turns
# them into nodes and grips over the recorded events.
TOC_SEGMENTS = {
    "sg_ops": ("acme", ["ops-1", "ops-2", "ops-3", "ops-4"]),
    "sg_alpha": ("acme", ["leak-a"]),
    "sg_beta": ("acme", ["leak-b"]),
    "sg_globex": ("globex", ["leak-g"]),
    "sg_broker_old": ("acme", ["broker-old"]),
    "sg_broker_new": ("acme", ["broker-new"]),
    "sg_importer_morning": ("acme", ["day-morning"]),
    "sg_importer_evening": ("acme", ["day-evening"]),
}


def build_toc(stack: Stack, dsn: str) -> None:
    by_id = {(i.tenant, i.event_id): i for i in ITEMS}
    payloads = []
    for segment_id, (tenant, event_ids) in TOC_SEGMENTS.items():
        items = [by_id[(tenant, e)] for e in event_ids]
        events = [
            FakeEvent(
                event_id=i.event_id,
                ts=i.ts,
                project_id=i.project,
                session_id=f"{i.project}-s1",
                role="user",
                type="message",
                text=i.text,
                tenant=tenant,
            )
            for i in sorted(items, key=lambda i: i.ts)
        ]
        payloads.append(segment_payload(events, segment_id=segment_id))
    publish_segments(stack.nats.url, payloads)
    stack.start("summarizer")

    def summarized() -> bool:
        with psycopg.connect(dsn) as conn:
            row = conn.execute(
                "SELECT count(*) FROM toc_nodes WHERE level = 'segment' AND NOT is_empty"
            ).fetchone()
        return row == (len(TOC_SEGMENTS),)

    eventually(summarized, timeout=60, what="segments summarized")


@pytest.fixture(scope="module")
def search_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[Stack]:
    workdir = tmp_path_factory.mktemp("search")
    nats = start_nats(workdir)
    dsn = create_database(pg_server)
    stack = make_stack(nats, dsn, workdir, AGENT_MEMORY_TOKENS=TOKENS)
    try:
        stack.start("gateway")
        stack.start("recorder")
        for tenant, headers in (("acme", ACME), ("globex", GLOBEX)):
            events = [
                {
                    "event_id": i.event_id,
                    "ts": i.ts.isoformat(),
                    "project_id": i.project,
                    "agent_id": "claude-code",
                    "session_id": f"{i.project}-s1",
                    "role": "user",
                    "text": i.text,
                }
                for i in ITEMS
                if i.tenant == tenant and i.type == "event"
            ]
            r = plain_http.post(
                f"{stack.gateway_url}/v1/events", json={"events": events}, headers=headers
            )
            assert r.status_code == 202, r.text
        expected = sum(1 for i in ITEMS if i.type == "event")
        with psycopg.connect(dsn) as conn:
            eventually(
                lambda: conn.execute("SELECT count(*) FROM events").fetchone() == (expected,),
                what="events recorded",
            )
        build_toc(stack, dsn)
        settings = RetrievalSettings(pg_dsn=dsn, home=workdir / "home")
        docs = [i.doc() for i in ITEMS]
        vectors = embedder.embed([d.embedding_text() for d in docs])
        asyncio.run(write_indexes(settings, docs, vectors))
        stack.start("query")
        wait_for_vectors(stack.query_url)
        yield stack
    finally:
        stack.stop()
        nats.stop()


def wait_for_vectors(url: str) -> None:
    """The model loads in the background after start; until then vector is 'unavailable'."""

    def vector_used() -> bool:
        # a project with nothing in it: the tier runs, no result is returned (and counted)
        answer = search(url, query="gateway port", tiers=["vector"], project_id="warm-up")
        return bool(answer["explain"]["tiers"]["vector"]["status"] == "used")

    eventually(vector_used, timeout=180, what="embedding model loaded")


def search(url: str, headers: dict[str, str] = ACME, **body: Any) -> dict[str, Any]:
    body.setdefault("now", NOW.isoformat())
    r = plain_http.post(f"{url}/v1/search", json=body, headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def ids(answer: dict[str, Any]) -> list[str]:
    return [r["id"] for r in answer["results"]]


# --- the answer -------------------------------------------------------------------------------


def test_answer_shape_and_provenance(search_stack: Stack) -> None:
    answer = search(
        search_stack.query_url, query="which port does the query service answer on?", limit=3
    )
    assert answer["intent"] == "answer"
    assert answer["time_range"] is None
    first = answer["results"][0]
    assert first["id"] == event_doc_id("acme", "ops-1")
    expected = {
        "id": event_doc_id("acme", "ops-1"),
        "type": "event",
        "level": "event",
        "title": None,
        "text": BY_ID[first["id"]].text,
        "ts": first["ts"],
        "project_id": "ops",
        "agent_id": "claude-code",
        "session_id": "ops-s1",
        "score": first["score"],
        "salience": BY_ID[first["id"]].doc().salience,
        "memory_kind": "observation",
        "event_ids": ["ops-1"],
    }
    assert {k: first.get(k) for k in expected} == expected
    # optional fields, present when they apply: who said it, and supersession links
    assert set(first) - set(expected) <= {"user_id", "supersedes", "superseded_by"}
    assert datetime.fromisoformat(first["ts"]) == NOW - timedelta(days=1)
    assert 0 < first["score"] <= 1
    scores = [r["score"] for r in answer["results"]]
    assert scores == sorted(scores, reverse=True)
    explain = answer["explain"]
    assert {"tiers", "fallbacks", "timings_ms"} <= set(explain)
    assert explain["tiers"]["vector"]["status"] == "used"
    assert explain["tiers"]["bm25"]["status"] == "used"
    assert not any(f.startswith(("vector", "bm25")) for f in explain["fallbacks"]), explain
    timings = explain["timings_ms"]
    assert timings["total"] > 0 and "embed" in timings
    # the route's own stages around the brainstem, and the whole of it
    assert {"scope", "attribute", "answering"} <= set(timings)
    assert timings["answering"] >= timings["total"] + timings["attribute"] - 0.05  # rounding
    # questions are answered by moments, not overviews
    assert all(r["type"] != "toc_node" for r in answer["results"])


def test_explore_intent_brings_overviews(search_stack: Stack) -> None:
    answer = search(search_stack.query_url, query="service ports overview", project_id="ops")
    assert answer["intent"] == "explore"
    assert node_doc_id("acme", "ops-day") in ids(answer)


def test_vectors_lead_when_the_words_found_little(search_stack: Stack) -> None:
    """A question in other words than the stored ones: its one shared word ("listen") is all
    BM25 matched, and the vector tier takes BM25's weight; the same fact asked in its own
    words keeps the words first."""
    other = search(
        search_stack.query_url,
        query="Which listening number do the front door and the question answerer use?",
        project_id="ops",
    )
    plan = other["explain"]["plan"]
    assert plan["words_coverage"] < 0.2
    assert plan["weights"]["vector"] == 1.0 and plan["weights"]["bm25"] == 0.3
    assert any("vectors lead" in note for note in other["explain"]["fallbacks"])
    own = search(
        search_stack.query_url, query="Which port does the gateway listen on?", project_id="ops"
    )
    plan = own["explain"]["plan"]
    assert plan["words_coverage"] >= 0.5
    assert plan["weights"]["vector"] == 0.3 and plan["weights"]["bm25"] == 1.0
    assert ids(own)[0] == "event:acme:ops-1"


def test_get_search_for_curl(search_stack: Stack) -> None:
    r = plain_http.get(
        f"{search_stack.query_url}/v1/search",
        params={"q": "recorder acknowledges after commit", "tiers": "bm25", "limit": 2},
        headers=ACME,
    )
    assert r.status_code == 200, r.text
    answer = r.json()
    assert ids(answer)[0] == event_doc_id("acme", "ops-4")
    assert len(answer["results"]) <= 2
    assert answer["explain"]["tiers"]["vector"]["status"] == "not requested"


@pytest.mark.parametrize("tier", ["vector", "bm25", "toc", "scan"])
def test_each_tier_alone(search_stack: Stack, tier: str) -> None:
    answer = search(
        search_stack.query_url,
        query="where does Tantivy keep the BM25 index folder",
        project_id="ops",
        tiers=[tier],
    )
    first = answer["results"][0]
    assert "ops-2" in first["event_ids"]
    # the TOC tier answers with the grip under the matching bullet: the exact words
    assert first["type"] == ("grip" if tier == "toc" else "event")
    assert "Tantivy" in first["text"]
    tiers = answer["explain"]["tiers"]
    assert tiers[tier]["status"] == "used" and tiers[tier]["hits"] >= 1
    for other in {"vector", "bm25", "toc", "scan"} - {tier}:
        assert tiers[other]["status"] == "not requested"
    assert all(set(r["ranks"]) == {tier} for r in answer["explain"]["ranking"])


def test_old_constraint_outranks_fresh_observation_of_similar_similarity(
    search_stack: Stack,
) -> None:
    answer = search(
        search_stack.query_url,
        query="deploys went through the staging cluster first",
        project_id="policy",
    )
    rule, obs = event_doc_id("acme", "pol-rule"), event_doc_id("acme", "pol-obs")
    ranking = {r["id"]: r for r in answer["explain"]["ranking"]}
    # the fresh observation is the closer match in both indexes...
    for tier in ("vector", "bm25"):
        assert ranking[obs]["ranks"][tier] == 1
        assert ranking[rule]["ranks"][tier] == 2
    # ...and the five-month-old constraint still comes first
    assert ids(answer)[:2] == [rule, obs]
    assert answer["results"][0]["memory_kind"] == "constraint"
    assert ranking[rule]["factors"]["staleness"] == 1.0


def test_last_week_returns_only_last_week(search_stack: Stack) -> None:
    answer = search(search_stack.query_url, query="release checklist last week", project_id="weeks")
    assert answer["time_range"] == {
        "since": "2026-03-09T00:00:00Z",
        "until": "2026-03-16T00:00:00Z",
        "expression": "last week",
        "source": "query",
    }
    assert sorted(ids(answer)) == sorted(
        [event_doc_id("acme", "wk-last-1"), event_doc_id("acme", "wk-last-2")]
    )
    for r in answer["results"]:
        assert "2026-03-09" <= r["ts"][:10] < "2026-03-16"
    # the same words without the period find the other weeks too
    everything = search(search_stack.query_url, query="release checklist", project_id="weeks")
    assert len(everything["results"]) == 4


def test_explicit_since_until_and_time_boxed_browsing(search_stack: Stack) -> None:
    answer = search(
        search_stack.query_url,
        query="what did we do last week?",
        project_id="weeks",
    )
    assert answer["intent"] == "time-boxed"
    assert sorted(ids(answer)) == sorted(
        [event_doc_id("acme", "wk-last-1"), event_doc_id("acme", "wk-last-2")]
    )
    narrowed = search(
        search_stack.query_url,
        query="release checklist",
        project_id="weeks",
        since="2026-03-12T00:00:00Z",
        until="2026-03-14T00:00:00Z",
    )
    assert ids(narrowed) == [event_doc_id("acme", "wk-last-2")]
    assert narrowed["time_range"]["source"] == "request"


def test_a_reversed_decision_answers_with_the_new_one_and_its_history(
    search_stack: Stack,
) -> None:
    answer = search(
        search_stack.query_url,
        query="Which message broker do we use for the payment events?",
        project_id="broker",
    )
    first, *rest = answer["results"]
    assert first["event_ids"] == ["broker-new"]
    assert [r["event_id"] for r in first["supersedes"]] == ["broker-old"]
    assert first["supersedes"][0]["source"] == "detected"
    assert "RabbitMQ" in first["supersedes"][0]["text"]
    old = next(r for r in rest if r["event_ids"] == ["broker-old"])
    assert [r["event_id"] for r in old["superseded_by"]] == ["broker-new"]
    factors = {r["id"]: r["factors"] for r in answer["explain"]["ranking"]}
    assert factors[old["id"]]["superseded"] == 0.5


def test_a_fix_asked_in_the_words_of_its_problem_comes_from_the_session_after_the_report(
    search_stack: Stack,
) -> None:
    """The question matches the report of the problem, not the fix said nine minutes later;
    the session's arc brings the fix in (``ranks``: ``arc``, the report's place) above the
    report, and the fix of another problem stays where the tiers put it."""
    answer = search(
        search_stack.query_url,
        query="After a crash my shell stopped showing what I typed; how was that repaired?",
        project_id="tdk",
    )
    order = [r["event_ids"][0] for r in answer["results"]]
    assert order.index("arc-fix") < order.index("arc-report"), order
    ranks = {r["id"]: r["ranks"] for r in answer["explain"]["ranking"]}
    assert "arc" in ranks[event_doc_id("acme", "arc-fix")]
    assert "arc" not in ranks.get(event_doc_id("acme", "arc-widths"), {})
    assert any("problem report" in n for n in answer["explain"]["fallbacks"])
    # not a fix question: no arc is followed
    plain = search(
        search_stack.query_url, query="what happens to my terminal after a panic", project_id="tdk"
    )
    assert all("arc" not in r["ranks"] for r in plain["explain"]["ranking"])


def test_toc_bullets_carry_the_supersession_links(search_stack: Stack) -> None:
    r = plain_http.get(
        f"{search_stack.query_url}/v1/toc/nodes/segment:sg_broker_new", headers=ACME, timeout=30
    )
    assert r.status_code == 200, r.text
    linked = [b for b in r.json()["bullets"] if b.get("supersedes")]
    assert linked and linked[0]["supersedes"][0]["event_id"] == "broker-old"


def test_what_did_we_do_on_a_day_answers_with_the_days_toc_nodes(search_stack: Stack) -> None:
    # limit 1: only the day node; the raw events after it would count as returned (the usage
    # penalty) and move the close ranks that the fallback tests below assert
    answer = search(
        search_stack.query_url, query="what did we do on 2026-03-14?", project_id="ops", limit=1
    )
    assert answer["intent"] == "time-boxed"
    first = answer["results"][0]
    assert (first["type"], first["level"]) == ("toc_node", "day")
    assert set(first["event_ids"]) <= {"ops-1", "ops-2", "ops-3", "ops-4"}
    assert any("TOC node(s) first" in note for note in answer["explain"]["fallbacks"])


def test_where_did_we_leave_off_answers_with_the_last_day_of_work(search_stack: Stack) -> None:
    """No period is named, but the last day of work in scope (before ``now``) is meant."""
    answer = search(
        search_stack.query_url, query="Where did we leave off?", project_id="broker", limit=1
    )
    assert answer["intent"] == "time-boxed"
    assert answer["time_range"]["since"] == "2026-03-02T00:00:00Z"
    assert answer["time_range"]["expression"] == "the last day of work (2026-03-02)"
    first = answer["results"][0]
    assert (first["type"], first["level"], first["event_ids"]) == (
        "toc_node",
        "day",
        ["broker-new"],
    )
    before = search(
        search_stack.query_url,
        query="what were we working on?",
        project_id="broker",
        now="2026-02-01T12:00:00Z",
        limit=1,
    )
    assert before["results"][0]["event_ids"] == ["broker-old"]
    assert "last_day" in before["explain"]["timings_ms"]


def test_where_did_we_leave_off_tells_the_day_from_its_end(search_stack: Stack) -> None:
    """The day's node, then its segments newest first: in time order a long day's last pieces
    of work, where it stopped, fell past the limit."""
    answer = search(
        search_stack.query_url, query="Where did we leave off?", project_id="importer", limit=3
    )
    nodes = [(r["level"], r["event_ids"]) for r in answer["results"] if r["type"] == "toc_node"]
    assert [level for level, _ in nodes] == ["day", "segment", "segment"]
    assert [ids for _, ids in nodes[1:]] == [["day-evening"], ["day-morning"]]
    two = search(
        search_stack.query_url, query="Where did we leave off?", project_id="importer", limit=2
    )
    assert [r["event_ids"] for r in two["results"]][1:] == [["day-evening"]]
    # a day named is told in time order
    told = search(
        search_stack.query_url, query="what did we do on 2026-03-10?", project_id="importer"
    )
    told_nodes = [(r["level"], r["event_ids"]) for r in told["results"][:3]]
    assert [ids for _, ids in told_nodes[1:]] == [["day-morning"], ["day-evening"]]


def test_a_question_about_a_day_finds_what_was_told_of_it_the_next_day(
    search_stack: Stack,
) -> None:
    """A question names when a thing happened; a conversation tells of it afterwards."""
    day, told = event_doc_id("acme", "trip-day"), event_doc_id("acme", "trip-told")
    answer = search(
        search_stack.query_url,
        query="What museum did we visit on March 4, 2026?",
        project_id="trips",
    )
    assert answer["intent"] == "answer"
    assert answer["time_range"] == {
        "since": "2026-03-04T00:00:00Z",
        "until": "2026-03-05T00:00:00Z",
        "expression": "on March 4, 2026",
        "source": "query",
        "window": {"since": "2026-02-25T00:00:00Z", "until": "2026-03-19T00:00:00Z"},
    }
    # the day itself first, then the evening after it; January is outside the window
    assert ids(answer) == [day, told]
    factors = {r["id"]: r["factors"] for r in answer["explain"]["ranking"]}
    assert factors[day]["period"] == 1.0
    assert factors[told]["period"] == pytest.approx(0.67)
    assert any("days after it" in note for note in answer["explain"]["fallbacks"])


def test_a_long_answer_about_a_period_goes_on_beyond_it(search_stack: Stack) -> None:
    day, told, old = (event_doc_id("acme", e) for e in ("trip-day", "trip-told", "trip-old"))
    answer = search(
        search_stack.query_url,
        query="What museum did we visit on March 4, 2026?",
        project_id="trips",
        limit=30,
    )
    # the window's moments first, then where else the same was talked about
    assert ids(answer) == [day, told, old]
    assert "beyond_period" in answer["explain"]["timings_ms"]
    assert "relaxed" not in answer["time_range"]


@pytest.mark.parametrize("limit", [10, 30])
def test_a_question_about_an_empty_period_is_answered_from_all_time(
    search_stack: Stack, limit: int
) -> None:
    answer = search(
        search_stack.query_url,
        query="What museum did we visit on March 4, 2025?",
        project_id="trips",
        limit=limit,
    )
    assert answer["time_range"]["relaxed"] is True
    assert "window" not in answer["time_range"]
    assert len(answer["results"]) == 3
    assert all("period" not in r["factors"] for r in answer["explain"]["ranking"])


def test_a_question_naming_a_speaker_prefers_their_own_words(search_stack: Stack) -> None:
    answer = search(search_stack.query_url, query="What puppy did Nora adopt?", project_id="chat")
    nora, omar = event_doc_id("acme", "chat-nora"), event_doc_id("acme", "chat-omar")
    assert ids(answer) == [nora, omar]
    factors = {r["id"]: r["factors"] for r in answer["explain"]["ranking"]}
    assert factors[nora]["speaker"] == pytest.approx(1.3)
    assert "speaker" not in factors[omar]


def test_a_period_with_nothing_in_it_is_relaxed_and_said_so(search_stack: Stack) -> None:
    answer = search(search_stack.query_url, query="release checklist in 2019", project_id="weeks")
    assert answer["results"], "the range matched nothing, so all time was searched"
    assert answer["time_range"]["relaxed"] is True
    assert any("matched nothing" in f for f in answer["explain"]["fallbacks"])


def provenance(answer: dict[str, Any]) -> set[str]:
    return {e for r in answer["results"] for e in r["event_ids"]}


@pytest.mark.parametrize("tiers", [None, ["vector"], ["bm25"], ["toc"], ["scan"]])
def test_project_and_tenant_filters_never_leak(
    search_stack: Stack, tiers: list[str] | None
) -> None:
    extra: dict[str, Any] = {"tiers": tiers} if tiers else {}
    url = search_stack.query_url
    alpha = search(url, query="key rotation schedule", project_id="alpha", **extra)
    assert provenance(alpha) == {"leak-a"}
    assert {r["project_id"] for r in alpha["results"]} == {"alpha"}
    acme_all = search(url, query="key rotation schedule every days", **extra)
    assert {"leak-a", "leak-b"} <= provenance(acme_all)
    assert "leak-g" not in provenance(acme_all)
    assert all(r["id"].split(":")[1] == "acme" for r in acme_all["results"])
    globex = search(url, GLOBEX, query="key rotation schedule every days", **extra)
    assert provenance(globex) == {"leak-g"}
    assert all(r["id"].split(":")[1] == "globex" for r in globex["results"])
    nothing = search(url, GLOBEX, query="key rotation schedule", project_id="beta", **extra)
    assert nothing["results"] == []


def test_opened_items_are_counted_off_the_hot_path_returned_ones_are_not(
    search_stack: Stack,
) -> None:
    """Usage feedback counts what an agent used (issue 53, point 6): a search changes no
    count, so the same search twice ranks alike; opening a result by id counts it."""
    answer = search(search_stack.query_url, query="pgvector nearest neighbour", limit=2)
    returned = ids(answer)
    assert returned

    def counts() -> dict[str, int]:
        with psycopg.connect(search_stack.pg_dsn) as conn:
            rows = conn.execute(
                "SELECT item_id, access_count FROM search_access WHERE tenant = 'acme'"
                " AND item_id = ANY(%s)",
                (returned,),
            ).fetchall()
        return {str(item): int(count) for item, count in rows}

    time.sleep(1)  # flushed every 0.5 s: a count would be there by now
    assert counts() == {}
    opened = next(r for r in answer["results"] if r["type"] == "event")
    event_id = opened["event_ids"][0]
    r = plain_http.get(f"{search_stack.query_url}/v1/events/{event_id}", headers=ACME)
    assert r.status_code == 200, r.text
    eventually(lambda: counts().get(opened["id"]) == 1, timeout=10, what="the use counted")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": 101}, "limit"),
        ({"query": "x", "since": "yesterday-ish"}, "since"),
        ({"query": "x", "until": 12}, "until"),
        ({"query": "x", "now": "soon"}, "now"),
        ({"query": "x", "since": "2026-03-02T00:00:00Z", "until": "2026-03-01T00:00:00Z"}, "until"),
        ({"query": "x", "kinds": ["rumour"]}, "kinds[0]"),
        ({"query": "x", "tiers": ["magic"]}, "tiers[0]"),
        ({"query": "x", "tiers": []}, "tiers"),
        ({"query": "x", "intent": "guess"}, "intent"),
        ({"query": "x", "project": "typo"}, "project"),
        ([], "body"),
    ],
)
def test_bad_input_is_422_naming_the_field(search_stack: Stack, body: Any, field: str) -> None:
    r = plain_http.post(f"{search_stack.query_url}/v1/search", json=body, headers=ACME)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field


def test_body_that_is_not_json_is_422(search_stack: Stack) -> None:
    r = plain_http.post(
        f"{search_stack.query_url}/v1/search",
        content=b"{not json",
        headers={**ACME, "content-type": "application/json"},
    )
    assert r.status_code == 422 and r.json()["field"] == "body"


def test_get_bad_input_names_the_parameter(search_stack: Stack) -> None:
    url = f"{search_stack.query_url}/v1/search"
    assert plain_http.get(url, params={"q": " "}, headers=ACME).json()["field"] == "q"
    assert plain_http.get(url, headers=ACME).json()["field"] == "q"
    r = plain_http.get(url, params={"q": "x", "tiers": "bm25,nope"}, headers=ACME)
    assert r.status_code == 422 and r.json()["field"] == "tiers[1]"
    assert plain_http.get(url, params={"q": "x"}).status_code == 401


# --- fallbacks: the same data, seen by query services whose indexes are away ------------------


@pytest.fixture
def degraded_query(search_stack: Stack, tmp_path: Path) -> Iterator[Any]:
    """Start another query service on the same data with some engines unreachable."""
    started: list[ManagedProcess] = []
    # a test above opened one of these items (a use); the usage factor is theirs, not what a
    # fallback is judged on (the fused ranks of the two close items differ by a few percent)
    time.sleep(1)  # the main query service's last counts are flushed (every 0.5 s)
    with psycopg.connect(search_stack.pg_dsn) as conn:
        conn.execute("DELETE FROM search_access WHERE tenant = 'acme'")

    def start(**env: str) -> str:
        port = free_port()
        proc = ManagedProcess(
            "query-degraded",
            [sys.executable, "-m", "agent_memory_query"],
            tmp_path / f"query-{port}.log",
            env={**search_stack.env, "AGENT_MEMORY_QUERY__PORT": str(port), **env},
            ready=lambda: _ok(f"http://127.0.0.1:{port}/readyz"),
        )
        started.append(proc)
        proc.start(timeout=60)
        return f"http://127.0.0.1:{port}"

    yield start
    for proc in started:
        proc.stop()


def _ok(url: str) -> bool:
    try:
        return plain_http.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def test_vector_index_unavailable_falls_back_to_bm25(degraded_query: Any) -> None:
    url = degraded_query(
        AGENT_MEMORY_QDRANT_URL=dead_url(), AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false"
    )
    answer = search(url, query="recorder acknowledges after the Postgres commit")
    assert ids(answer)[0] == event_doc_id("acme", "ops-4"), [
        (r["id"], r["fused"], r["ranks"], r["factors"]) for r in answer["explain"]["ranking"][:4]
    ]
    tiers = answer["explain"]["tiers"]
    assert tiers["vector"]["status"] == "unavailable"
    assert tiers["bm25"]["status"] == "used"
    assert any(f.startswith("vector unavailable") and f.endswith("-> bm25")
               for f in answer["explain"]["fallbacks"])  # fmt: skip


def test_bm25_index_unavailable_falls_back_to_vector(degraded_query: Any) -> None:
    url = degraded_query(AGENT_MEMORY_OPENSEARCH_URL=dead_url())
    wait_for_vectors(url)
    answer = search(url, query="recorder acknowledges after the Postgres commit")
    assert ids(answer)[0] == event_doc_id("acme", "ops-4"), [
        (r["id"], r["fused"], r["ranks"], r["factors"]) for r in answer["explain"]["ranking"][:4]
    ]
    tiers = answer["explain"]["tiers"]
    assert tiers["bm25"]["status"] == "unavailable"
    assert tiers["vector"]["status"] == "used"
    assert any(f.startswith("bm25 unavailable") and f.endswith("-> vector")
               for f in answer["explain"]["fallbacks"])  # fmt: skip


def test_both_indexes_unavailable_fall_back_to_toc_then_raw_scan(degraded_query: Any) -> None:
    url = degraded_query(
        AGENT_MEMORY_QDRANT_URL=dead_url(),
        AGENT_MEMORY_OPENSEARCH_URL=dead_url(),
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    )
    answer = search(url, query="recorder acknowledges after the Postgres commit")
    assert "ops-4" in provenance(answer)
    tiers = answer["explain"]["tiers"]
    assert tiers["vector"]["status"] == tiers["bm25"]["status"] == "unavailable"
    assert tiers["toc"]["status"] == "used"
    fallbacks = answer["explain"]["fallbacks"]
    assert fallbacks[0].startswith("vector and bm25 unavailable") and fallbacks[0].endswith(
        "-> toc"
    )
    # too few from the TOC alone: the raw scan adds the events themselves
    assert tiers["scan"]["status"] == "used"
    assert any(f.endswith("-> scan") for f in fallbacks)
    assert event_doc_id("acme", "ops-4") in ids(answer)
    # the raw scan alone still answers, and tenants stay apart on it
    scan = search(url, query="recorder acknowledges after the Postgres commit", tiers=["scan"])
    assert event_doc_id("acme", "ops-4") in ids(scan)[:2]
    globex = search(url, GLOBEX, query="key rotation schedule", tiers=["scan"])
    assert ids(globex) == [event_doc_id("globex", "leak-g")]


# --- the CLI ----------------------------------------------------------------------------------


def run_cli(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    port = stack.query_url.rsplit(":", 1)[1]
    return subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "search", *args],
        env={**os.environ, "AGENT_MEMORY_QUERY__PORT": port, "AGENT_MEMORY_TOKEN": "tok-acme"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_search_readable_and_json(search_stack: Stack) -> None:
    now = ["--now", NOW.isoformat()]
    done = run_cli(search_stack, "which port does the query service use", "--project", "ops", *now)
    assert done.returncode == 0, done.stderr + done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].startswith("intent: answer")
    assert "  1. " in done.stdout and "events: ops-1" in done.stdout
    assert "the query service answers on port 8701" in done.stdout

    done = run_cli(
        search_stack, "release checklist last week", "--project", "weeks", "--json", *now
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["time_range"]["expression"] == "last week"
    assert {r["event_ids"][0] for r in answer["results"]} == {"wk-last-1", "wk-last-2"}

    done = run_cli(search_stack, "anything", "--since", "not-a-time")
    assert done.returncode == 1
    assert "since" in done.stdout


@pytest.mark.parametrize("rows", [1, 0])
def test_with_bm25_answering_the_fallbacks_read_only_the_newest_items(
    degraded_query: Any, rows: int
) -> None:
    """BM25 matches the fallbacks' words over every event and TOC node it indexed, so when it
    answered, the TOC and raw scan tiers look only at the last ``FRESH_ROWS`` nodes and events
    written (here 1: globex's last event, outside acme's scope); 0 restores the whole scope."""
    url = degraded_query(
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
        AGENT_MEMORY_QUERY__SEARCH__FRESH_ROWS=str(rows),
    )
    answer = search(url, query="recorder acknowledges after the Postgres commit")
    tiers, fallbacks = answer["explain"]["tiers"], answer["explain"]["fallbacks"]
    assert tiers["bm25"]["status"] == "used", fallbacks
    assert tiers["toc"]["status"] == tiers["scan"]["status"] == "used", fallbacks
    assert ids(answer)[0] == event_doc_id("acme", "ops-4")
    notes = {f"{t}: only the newest items (BM25 answered for the rest)" for t in ("toc", "scan")}
    if rows:
        assert notes <= set(fallbacks)
        assert tiers["scan"]["hits"] == 0
    else:
        assert not notes & set(fallbacks)
        assert tiers["scan"]["hits"] >= 1
