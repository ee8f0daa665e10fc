"""The topic graph on the real servers: nats-server, Postgres, the topics and query services.

Segment nodes are written and published the way the summarizer does (``tests/topics_support``),
so these tests need no LLM and no segmenter, and cover what issue 14 asks: stable ids across a
re-cluster, a new segment joining the right topic, decay ranking a recent small topic above an
old large one, symmetric related topics, tenants and projects kept apart, redelivery and kill -9
changing nothing, and a rebuild giving the same topics.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from agent_memory_common.contracts.messages import TocNodeMessage
from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import eventually, scrape, value
from tests.stack import Stack, module_stack
from tests.topics_support import THEMES, publish_toc, theme_segment, topic_snapshot, write_toc

# the topics service loads the sentence model (tens of seconds, minutes on a busy machine)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

A = {"Authorization": "Bearer tok-a"}  # tenant 'default'
B = {"Authorization": "Bearer tok-b"}  # tenant 'other'
NOW = datetime.now(UTC).replace(microsecond=0)


def nodes_for(
    tenant: str, project: str, per_theme: int, *, days_ago: float = 1, seed: int = 0
) -> list[TocNodeMessage]:
    out = []
    for k, theme in enumerate(THEMES):
        for n in range(per_theme):
            end = NOW - timedelta(days=days_ago, hours=n + 5 * k)
            session = f"{project}-{theme.split()[0]}-s{n % 3}"
            out.append(theme_segment(tenant, project, theme, n, session, end, seed=seed))
    return out


@pytest.fixture(scope="module")
def topic_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """nats-server, Postgres, the topics service and the query service (nothing else)."""
    with module_stack(
        pg_server,
        tmp_path_factory,
        ("topics", "query"),
        AGENT_MEMORY_TOKENS="tok-a:default,tok-b:other",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
        AGENT_MEMORY_TOPICS__CHECK_INTERVAL_S="0.5",
        AGENT_MEMORY_TOPICS__RECLUSTER_MIN_NEW="5",
        # a few segments written during a re-cluster stay pending for the next one: here it
        # comes within seconds (a day by default), so every test sees the material clustered
        AGENT_MEMORY_TOPICS__RECLUSTER_EVERY_S="2",
    ) as s:
        yield s


def settled(dsn: str, expected: int) -> bool:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE pending) FROM topic_segments"
        ).fetchone()
    assert row is not None
    return bool(row[0] >= expected and row[1] == 0)


def topics(stack: Stack, headers: dict[str, str], **params: Any) -> list[dict[str, Any]]:
    r = plain_http.get(f"{stack.query_url}/v1/topics", params=params, headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    out: list[dict[str, Any]] = r.json()["topics"]
    return out


def topic(stack: Stack, topic_id: str, headers: dict[str, str] = A) -> dict[str, Any]:
    r = plain_http.get(f"{stack.query_url}/v1/topics/{topic_id}", headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


@pytest.fixture(scope="module")
def seeded(topic_stack: Stack) -> Stack:
    """Three themes in tenant 'default' projects p1 and p2, and in tenant 'other' p1."""
    batches = [
        nodes_for("default", "p1", 5),
        nodes_for("default", "p2", 4, seed=1),
        nodes_for("other", "p1", 4, seed=2),
    ]
    total = 0
    for nodes in batches:
        write_toc(topic_stack.pg_dsn, nodes)
        publish_toc(topic_stack.nats.url, nodes)
        total += len(nodes)
    eventually(lambda: settled(topic_stack.pg_dsn, total), timeout=480, what="topics settle")
    return topic_stack


def theme_of(node_id: str) -> str:
    return next(t for t in THEMES if t.replace(" ", "-") in node_id)


def test_themes_become_topics_with_labels(seeded: Stack) -> None:
    found = topics(seeded, A, project_id="p1")
    assert len(found) == 3
    for t in found:
        detail = topic(seeded, t["topic_id"])
        assert len({theme_of(m["node_id"]) for m in detail["members"]}) == 1  # pure
        theme = theme_of(detail["members"][0]["node_id"])
        assert any(w in t["label"].lower() for w in theme.split()), (t["label"], theme)
        assert t["size"] == 5 and t["importance"] > 0
        assert all(m["event_ids"] for m in detail["members"])


def test_reclusters_are_timed_and_none_is_left_running(seeded: Stack) -> None:
    """What an operator's alert reads: a hung re-cluster keeps its start time on the gauge."""
    found = scrape(seeded.metrics_urls["topics"])
    assert value(found, "agent_memory_topics_recluster_seconds_count") >= 2  # two tenants
    assert value(found, "agent_memory_topics_recluster_started_timestamp_seconds") == 0


def test_tenants_and_projects_never_mix(seeded: Stack) -> None:
    mine = {t["topic_id"]: t for t in topics(seeded, A, limit=100)}
    theirs = {t["topic_id"]: t for t in topics(seeded, B, limit=100)}
    assert mine and theirs and not set(mine) & set(theirs)
    assert {t["project_id"] for t in theirs.values()} == {"p1"}
    for tid, t in mine.items():
        members = topic(seeded, tid)["members"]
        assert all(m["node_id"].startswith(f"segment:{t['project_id']}-") for m in members)
    for tid in theirs:
        assert plain_http.get(f"{seeded.query_url}/v1/topics/{tid}", headers=A).status_code == 404


def test_related_topics_are_symmetric(seeded: Stack) -> None:
    for t in topics(seeded, A, limit=100):
        for rel in topic(seeded, t["topic_id"])["related"]:
            back = topic(seeded, rel["topic_id"])["related"]
            assert {"topic_id": t["topic_id"], "label": t["label"], "weight": rel["weight"]} in [
                {"topic_id": b["topic_id"], "label": t["label"], "weight": b["weight"]}
                for b in back
            ]


def test_search_by_meaning_finds_the_theme(seeded: Stack) -> None:
    r = plain_http.post(
        f"{seeded.query_url}/v1/topics/search",
        json={"query": "invoices and billing", "project_id": "p1"},
        headers=A,
    )
    assert r.status_code == 200, r.text
    hits = r.json()["topics"]
    assert hits and "billing" in " ".join(hits[0]["keywords"] + [hits[0]["label"].lower()])
    bad = plain_http.post(f"{seeded.query_url}/v1/topics/search", json={"query": ""}, headers=A)
    assert bad.status_code == 422 and bad.json()["field"] == "query"


def test_a_new_segment_joins_the_right_topic_and_ids_survive_a_rebuild(seeded: Stack) -> None:
    before = {t["topic_id"]: t for t in topics(seeded, A, project_id="p1")}
    billing = next(tid for tid, t in before.items() if "billing" in t["label"].lower())
    new = theme_segment("default", "p1", "billing invoices", 9, "p1-billing-s9", NOW, seed=7)
    write_toc(seeded.pg_dsn, [new])
    publish_toc(seeded.nats.url, [new])

    def joined() -> bool:
        return new.node_id in {m["node_id"] for m in topic(seeded, billing)["members"]}

    eventually(joined, timeout=60, what="the new billing segment joins the billing topic")
    snapshot = topic_snapshot(seeded.pg_dsn)
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory_topics", "rebuild"],
        env=seeded.env,
        capture_output=True,
        text=True,
        timeout=900,  # it loads the sentence model: minutes on a busy machine
        check=True,
    )
    assert "segments" in done.stderr and '"projects"' in done.stdout
    after = topic_snapshot(seeded.pg_dsn)
    assert after["topics"] == snapshot["topics"]
    assert after["members"] == snapshot["members"]
    assert set(before) == {t["topic_id"] for t in topics(seeded, A, project_id="p1")}


def test_redelivery_and_kill_9_change_nothing(seeded: Stack) -> None:
    snapshot = topic_snapshot(seeded.pg_dsn)
    seeded.processes["topics"].kill()
    replay = nodes_for("default", "p1", 5) + nodes_for("other", "p1", 4, seed=2)
    publish_toc(seeded.nats.url, replay, suffix="/again")
    seeded.start("topics")
    eventually(lambda: drained(seeded.nats.url), timeout=600, what="the topics consumer drains")
    assert topic_snapshot(seeded.pg_dsn) == snapshot


def drained(nats_url: str) -> bool:
    import asyncio

    import nats

    async def go() -> bool:
        nc = await nats.connect(nats_url)
        try:
            info = await nc.jetstream().consumer_info("TOC", "topics")
            return bool(info.num_pending == 0 and info.num_ack_pending == 0)
        finally:
            await nc.close()

    return asyncio.run(go())


def test_decay_ranks_a_recent_small_topic_above_an_old_large_one(seeded: Stack) -> None:
    long_ago, lately = NOW - timedelta(days=120), NOW - timedelta(days=2)
    old = [
        theme_segment("default", "p3", "ci pipeline", n, f"old-{n}", long_ago, seed=3)
        for n in range(8)
    ]
    recent = [
        theme_segment("default", "p3", "authentication login", n, f"new-{n}", lately, seed=4)
        for n in range(4)
    ]
    write_toc(seeded.pg_dsn, old + recent)
    publish_toc(seeded.nats.url, old + recent)
    # both themes clustered with every member: two topics can show while the recent segments
    # are still pending (the old ones split in two, or a recent topic not yet whole)
    eventually(
        lambda: sorted(t["size"] for t in topics(seeded, A, project_id="p3")) == [4, 8],
        timeout=120,
        what="p3",
    )
    ranked = topics(seeded, A, project_id="p3")
    assert "authentication" in ranked[0]["label"].lower() or "login" in ranked[0]["label"].lower()
    assert ranked[0]["size"] < ranked[1]["size"]
    month = (NOW - timedelta(days=30)).isoformat()
    this_month = topics(seeded, A, project_id="p3", since=month)
    assert [t["topic_id"] for t in this_month] == [ranked[0]["topic_id"]]
    # as of a month ago: the recent topic had no member yet, the old one had all of its own
    then = topics(seeded, A, project_id="p3", until=month)
    assert [(t["topic_id"], t["size"]) for t in then] == [
        (ranked[1]["topic_id"], ranked[1]["size"])
    ]
    bad = plain_http.get(
        f"{seeded.query_url}/v1/topics", params={"since": "yesterday-ish"}, headers=A
    )
    assert bad.status_code == 422 and bad.json()["field"] == "since"


def test_history_imported_months_later_keeps_its_importance(seeded: Stack) -> None:
    """Sessions imported long after they happened: importance is counted from the project's
    own latest activity (or the time a request names), not the wall clock, under which every
    topic of such a project was worth 0.00-0.02 (issue 53, point 5)."""
    last, earlier = NOW - timedelta(days=150), NOW - timedelta(days=210)
    nodes = [
        theme_segment("default", "p4", "billing invoices", n, f"bill-{n}", last, seed=5)
        for n in range(4)
    ] + [
        theme_segment("default", "p4", "ci pipeline", n, f"ci-{n}", earlier, seed=6)
        for n in range(4)
    ]
    write_toc(seeded.pg_dsn, nodes)
    publish_toc(seeded.nats.url, nodes)
    eventually(
        lambda: sorted(t["size"] for t in topics(seeded, A, project_id="p4")) == [4, 4],
        timeout=120,
        what="p4",
    )
    ranked = topics(seeded, A, project_id="p4")
    # the project's latest work is worth its members' salience (4 x 0.5), the work two months
    # before it a quarter of that, whatever today's date
    assert "billing" in ranked[0]["label"].lower() or "invoice" in ranked[0]["label"].lower()
    assert ranked[0]["importance"] == pytest.approx(2.0, abs=0.01)
    assert ranked[1]["importance"] == pytest.approx(2.0 * 0.5**2, abs=0.01)
    # as of a time the request names (here today's), the old project has faded
    today = topics(seeded, A, project_id="p4", until=NOW.isoformat())
    assert max(t["importance"] for t in today) < 0.1
    # a search's topic tier values them as of its ``now``: a month after the last session
    r = plain_http.post(
        f"{seeded.query_url}/v1/search",
        json={
            "query": "what themes have we been working on?",
            "project_id": "p4",
            "now": (last + timedelta(days=30)).isoformat(),
        },
        headers=A,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    shown = [x for x in r.json()["results"] if x["type"] == "topic"]
    assert shown and shown[0]["salience"] == pytest.approx(1.0, abs=0.01)


def explore(stack: Stack, query: str, headers: dict[str, str] = A) -> dict[str, Any]:
    """A search of project p1 that must be read as an explore question."""
    r = plain_http.post(
        f"{stack.query_url}/v1/search",
        json={"query": query, "project_id": "p1"},
        headers=headers,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    assert answer["intent"] == "explore"
    return answer


def test_explore_search_leads_with_topics(seeded: Stack) -> None:
    answer = explore(seeded, "what themes have we been working on?")
    assert answer["explain"]["tiers"]["topic"]["status"] == "used"
    first = answer["results"][0]
    assert first["type"] == "topic" and first["event_ids"]
    ids = {t["topic_id"] for t in topics(seeded, A, project_id="p1")}
    assert first["id"] in ids
    # another tenant's project of the same name has no topics of ours to offer
    other = explore(seeded, "what themes have we been working on?", B)
    assert not {r["id"] for r in other["results"] if r["type"] == "topic"} & ids


def test_explore_search_of_an_empty_period_asks_the_topics_again_without_it(
    seeded: Stack,
) -> None:
    """The topic tier starts beside the search with the period the question names; when the
    search drops that period (it held nothing), the tier is asked again without it."""
    answer = explore(seeded, "what themes have we been working on in 2019?")
    assert answer["time_range"]["relaxed"] is True, answer["time_range"]
    assert answer["explain"]["tiers"]["topic"]["status"] == "used", answer["explain"]
    assert answer["results"][0]["type"] == "topic"


def test_cli_lists_and_shows_topics(seeded: Stack) -> None:
    env = {**seeded.env, "AGENT_MEMORY_TOKEN": "tok-a"}
    listed = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "topics", "--project", "p1", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    first = json.loads(listed.stdout)["topics"][0]["topic_id"]
    shown = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "topics", "show", first],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert first in shown.stdout and "members" in shown.stdout
