"""Export a project, import it into a fresh deployment: the same memory comes back.

Two stacks, each on its own nats-server and database, every part a real process. Stack A
records events over two sessions, an episode and a playbook entry; ``agent-memory export``
dumps the project; ``agent-memory import`` replays the dump into stack B. Then B's event
listing, episode, playbook, TOC and search answers are A's; importing a second time changes
nothing; and a truncated dump is refused before anything is imported.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import drained, eventually, make_event
from tests.stack import Stack, deployments
from tests.stack import agent_memory as cli

SERVICES = ("gateway", "recorder", "segmenter", "summarizer", "bm25-indexer", "query")
# segments close after 1 s of event time or of idleness, so the TOC is built within seconds
FAST_TOC = {
    "AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER": "false",
    "AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S": "1",
    "AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S": "1",
}
TEXTS = [
    "We decided to keep Postgres as the system of record for every event.",
    "The flaky test was caused by a race in the consumer's ack path.",
    "Fixed: acknowledge only after the commit, the test is green now.",
    "Constraint: never store secrets in the event text, the redactor runs first.",
]
CONSUMERS = ("recorder", "segmenter", "summarizer", "bm25-indexer", "bm25-indexer-toc")


@pytest.fixture
def two_stacks(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, Stack]]:
    with deployments(pg_server, tmp_path_factory, ("a", "b"), SERVICES, **FAST_TOC) as (a, b):
        yield a, b


def events_of(stack: Stack, project: str) -> list[dict[str, Any]]:
    r = plain_http.get(
        f"{stack.query_url}/v1/events", params={"project_id": project, "limit": 500}, timeout=30
    )
    assert r.status_code == 200, r.text
    return [
        {k: v for k, v in e.items() if k not in ("received_at", "recorded_at", "seq")}
        for e in r.json()["events"]
    ]


def toc_terms(stack: Stack, query: str) -> list[Any]:
    r = plain_http.post(
        f"{stack.query_url}/v1/toc/search",
        json={"query": query, "project_id": "proj"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return [(hit["node_id"], hit["title"]) for hit in r.json()["hits"]]


def search_ids(stack: Stack, query: str) -> list[list[str]]:
    r = plain_http.post(
        f"{stack.query_url}/v1/search",
        json={"query": query, "project_id": "proj", "tiers": ["bm25"], "limit": 5},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return [sorted(hit["event_ids"]) for hit in r.json()["results"]]


def settled(stack: Stack, expected: int) -> bool:
    return drained(stack.query_url, expected, consumers=CONSUMERS)


def settings_of(stack: Stack, path: str) -> dict[str, Any]:
    """A project's retention or sharing answer, without when it was set."""
    answer: dict[str, Any] = plain_http.get(f"{stack.query_url}/v1/projects/{path}").json()
    answer.pop("updated_at", None)
    return answer


@pytest.mark.slow  # two pipelines without the model (FAST_TOC): pytest's 300 s bound
def test_a_project_round_trips_between_deployments(
    two_stacks: tuple[Stack, Stack], tmp_path: Path
) -> None:
    a, b = two_stacks
    events = [
        make_event(i, session=f"s{i // 4}", text=TEXTS[i % 4], ts=1_767_225_600_000 + i * 60_000)
        for i in range(8)
    ]
    events.append(make_event(99, project="other", text="Another project's event."))
    assert plain_http.post(f"{a.gateway_url}/v1/events", json={"events": events}).status_code == 202
    episode = plain_http.post(
        f"{a.query_url}/v1/episodes",
        json={"episode_id": "ep-1", "task": "fix the flaky test", "project_id": "proj"},
    )
    assert episode.status_code in (200, 201), episode.text
    r = plain_http.post(
        f"{a.query_url}/v1/episodes/ep-1/actions",
        json={"actions": [{"action_id": "a1", "action": "ran pytest", "ok": False}]},
    )
    assert r.status_code in (200, 201), r.text
    r = plain_http.post(
        f"{a.query_url}/v1/episodes/ep-1/complete",
        json={"outcome": "success", "lessons": ["ack after commit"], "summary": "fixed"},
    )
    assert r.status_code == 200, r.text
    r = plain_http.post(
        f"{a.query_url}/v1/playbooks/proj/entries",
        json={"entries": [{"text": "Run the consumer tests twice.", "section": "testing"}]},
    )
    assert r.status_code == 200, r.text
    # the project's settings travel with it
    r = plain_http.put(
        f"{a.query_url}/v1/projects/proj/retention", json={"vector": {"segment": "90d"}}
    )
    assert r.status_code == 200, r.text
    r = plain_http.put(f"{a.query_url}/v1/projects/proj/sharing", json={"strategy": "team"})
    assert r.status_code == 200, r.text
    r = plain_http.put(f"{a.query_url}/v1/projects/other/sharing", json={"strategy": "separate"})
    assert r.status_code == 200, r.text
    eventually(lambda: settled(a, 9), timeout=180, what="stack A drained")

    dump = tmp_path / "proj.jsonl.gz"
    out = cli(a, "export", "--project", "proj", "-o", str(dump), "--quiet")
    assert out.returncode == 0, out.stderr
    assert "8 event(s)" in out.stderr and "1 episode(s)" in out.stderr

    for attempt in (1, 2):  # the second import changes nothing
        out = cli(b, "import", str(dump), "--quiet", "--wait-pins", "0")
        assert out.returncode == 0, out.stdout + out.stderr
        assert "imported 8 event(s)" in out.stdout
        assert ("1 new episode(s)" if attempt == 1 else "0 new episode(s)") in out.stdout
        assert ("2 project setting(s)" if attempt == 1 else "0 project setting(s)") in out.stdout
        eventually(lambda: settled(b, 8), timeout=180, what="stack B drained")

    assert events_of(b, "proj") == events_of(a, "proj")
    assert events_of(b, "other") == []
    ep_a = plain_http.get(f"{a.query_url}/v1/episodes/ep-1").json()
    ep_b = plain_http.get(f"{b.query_url}/v1/episodes/ep-1").json()
    assert ep_b == ep_a
    book_a = plain_http.get(f"{a.query_url}/v1/playbooks/proj/entries").json()["entries"]
    book_b = plain_http.get(f"{b.query_url}/v1/playbooks/proj/entries").json()["entries"]
    assert book_b == book_a and len(book_a) == 1
    for path in ("proj/retention", "proj/sharing", "other/sharing"):
        a_view, b_view = (settings_of(stack, path) for stack in (a, b))
        if path == "other/sharing":  # another project's setting stays out of a project's dump
            assert (a_view["strategy"], b_view["strategy"]) == ("separate", "unified")
        else:
            assert b_view == a_view, path

    def same_toc() -> bool:
        seen = toc_terms(a, "flaky test")
        return bool(seen) and toc_terms(b, "flaky test") == seen

    eventually(same_toc, timeout=180, what="the same TOC in both")
    # both TOCs built and indexed: search (events and TOC nodes, BM25) answers alike
    for query in ("flaky test race", "Postgres system of record"):

        def same_answer(q: str = query) -> bool:
            return settled(a, 9) and settled(b, 8) and search_ids(a, q) == search_ids(b, q)

        eventually(same_answer, timeout=120, what=f"the same search answer for {query!r}")
        assert search_ids(a, query)


def test_a_truncated_dump_is_refused(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl.gz"
    with gzip.open(good, "wb") as f:
        f.write(b'{"kind":"header","format":"agent-memory-export","version":1}\n')
        f.write(b'{"kind":"event","event_id":"e1","text":"x"}\n')
    env = {**os.environ, "AGENT_MEMORY_GATEWAY__PORT": "9"}  # nothing listens: must not be asked
    out = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "import", str(good)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2
    assert "truncated: no end line" in out.stderr
