"""Descend when the indexes have forgotten (issue 53, point 1), end to end: the pipeline, the
pruner and the query service, each a real process on a real nats-server and Postgres.

A session 40 days old goes through gateway -> recorder -> segmenter -> summarizer ->
bm25-indexer; then two recent sessions. The pruner's run takes the old session's events,
segment and grips out of the indexes (the matrix keeps them 30 days); its day, week and month
stay. A question whose words are said only in one old event then finds that exact event,
through the summaries the indexes still hold: explain's ``descent`` names the node it was
opened from. The same query service with the step turned off
(``AGENT_MEMORY_QUERY__SEARCH__DESCENT_TOP=0``) does not find it: the proof that the descent,
not a fallback tier, brought it back.

``FRESH_ROWS`` is small here, as a large store makes it: once BM25 has answered, the TOC and
scan fallbacks look only at the newest items (docs/search.md), so in a store of any size an
old moment is not found by them. No embedder: the step scores by words alone.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import eventually
from tests.stack import make_stack

DAY_MS = 86_400_000
OLD = (
    "I started on the heron ledger export this morning, from the billing replica.",
    "The heron ledger export writes one file for every merchant account it finds.",
    "Last night the heron ledger came back with a sparse merkle root over two shards only.",
    "I reran the heron ledger export and it finished in about four minutes.",
)
PHRASE_EVENT = "old-2"
QUESTION = "heron ledger sparse merkle root"
NEW = (
    "The pelican rollout checklist starts with a canary in one region.",
    "The pelican canary region gets a day of traffic before the next one.",
    "The pelican rollout finishes with every region behind the new build.",
    "The osprey dashboard shows the ledger of deploys for each region.",
    "The osprey alerts page lists the last ten pages sent to the on-call.",
    "I moved the osprey panels so that the error rate is first.",
    "The pelican rollback takes the region back to the previous build.",
    "The osprey dashboard now loads in under a second.",
)


def _event(event_id: str, session: str, ts: int, text: str) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "ts": ts,
        "project_id": "desc",
        "agent_id": "claude-code",
        "session_id": session,
        "role": "user",
        "type": "message",
        "text": text,
    }


def _post(url: str, events: list[dict[str, Any]]) -> None:
    r = plain_http.post(f"{url}/v1/events", json={"events": events}, timeout=30)
    assert r.status_code == 202, r.text


def _summarized(dsn: str, session: str) -> bool:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM toc_nodes n JOIN toc_node_versions v ON v.tenant = n.tenant"
            " AND v.node_id = n.node_id AND v.version = n.latest_version"
            " WHERE n.level = 'segment' AND v.session_id = %s AND NOT n.is_empty",
            (session,),
        ).fetchone()
    return bool(row and row[0])


def _search(url: str) -> dict[str, Any]:
    r = plain_http.post(
        f"{url}/v1/search",
        json={"query": QUESTION, "project_id": "desc", "limit": 10},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def _first_ids(answer: dict[str, Any], k: int = 5) -> list[str]:
    ids: list[str] = []
    for result in answer["results"]:
        for event_id in result["event_ids"]:
            if event_id not in ids:
                ids.append(event_id)
    return ids[:k]


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_a_pruned_moment_is_found_through_its_summaries(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S="1",
        AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S="1",
        AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S="3600",  # only on demand in this test
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
        AGENT_MEMORY_QUERY__SEARCH__FRESH_ROWS="5",
        # a loaded test machine: the step's budget is not what this test measures
        AGENT_MEMORY_QUERY__SEARCH__DESCENT_BUDGET_MS="2000",
    )
    try:
        for name in ("query", "pruner", "gateway", "recorder"):
            stack.start(name, timeout=300)
        for name in ("segmenter", "summarizer", "bm25-indexer"):
            stack.start(name, timeout=300)
        now = int(time.time() * 1000)
        old = now - 40 * DAY_MS
        _post(
            stack.gateway_url,
            [_event(f"old-{i}", "s-old", old + i * 1000, t) for i, t in enumerate(OLD)],
        )
        eventually(lambda: _summarized(stack.pg_dsn, "s-old"), timeout=300, what="old session")
        # then the recent work: the newest items, which the fallbacks still look at
        recent = []
        for i, text in enumerate(NEW):
            session, ts = ("s-new-a", now - 3 * DAY_MS) if i < 4 else ("s-new-b", now - DAY_MS)
            recent.append(_event(f"new-{i}", session, ts + i * 1000, text))
        _post(stack.gateway_url, recent)
        for session in ("s-new-a", "s-new-b"):

            def done(session: str = session) -> bool:
                return _summarized(stack.pg_dsn, session)

            eventually(done, timeout=300, what=session)

        def indexed() -> bool:
            return PHRASE_EVENT in _first_ids(_search(stack.query_url), 10)

        eventually(indexed, timeout=300, what="the old moment found while indexed")

        r = plain_http.post(
            f"{stack.pruner_url}/v1/admin/cleanup", json={"project_id": "desc"}, timeout=120
        )
        assert r.status_code == 200, r.text
        went = {
            (i["index"], lv["level"]): lv["entries"]
            for i in r.json()["indexes"]
            for lv in i["levels"]
        }
        assert went.get(("bm25", "event"), 0) >= 3, went
        # the pruner kept the words of each event it pruned (what the descent matches), and
        # nothing of the recent ones it left indexed
        with psycopg.connect(stack.pg_dsn) as conn:
            worded = {
                str(r[0]): str(r[1])
                for r in conn.execute("SELECT event_id, words::text FROM pruned_event_words")
            }
        assert set(worded) == {f"old-{i}" for i in range(len(OLD))}, sorted(worded)
        assert "'merkl'" in worded[PHRASE_EVENT], worded[PHRASE_EVENT]

        answer = _search(stack.query_url)
        shown = json.dumps(answer["explain"], indent=1, default=str)
        print(shown)
        assert PHRASE_EVENT in _first_ids(answer), (_first_ids(answer), shown)
        descent = answer["explain"]["descent"]
        assert descent["project"] is True and descent["period"] is False, descent  # no period
        returned = {d["id"]: d for d in descent["returned"]}
        assert f"event:default:{PHRASE_EVENT}" in returned, descent
        opened = {o["id"]: o for o in descent["opened"]}
        path = returned[f"event:default:{PHRASE_EVENT}"]["from"]
        assert path in opened and opened[path]["level"] in ("day", "week", "month", "year"), descent
        assert any("descent:" in note for note in answer["explain"]["fallbacks"]), answer[
            "explain"
        ]["fallbacks"]

        # the proof: the same store, the step off, and the moment is not found
        stack.processes.pop("query").stop()
        stack.env["AGENT_MEMORY_QUERY__SEARCH__DESCENT_TOP"] = "0"
        stack.start("query", timeout=300)
        without = _search(stack.query_url)
        assert "descent" not in without["explain"]
        assert PHRASE_EVENT not in _first_ids(without), (_first_ids(without), without["explain"])
    finally:
        stack.stop()
