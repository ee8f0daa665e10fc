"""Dedup at ingest end to end (issue 15 items 4-5), every part a real process on a real
nats-server and Postgres: a retried prompt and a re-sent tool output are stored (append-only)
and marked ``duplicate_of``, indexed once (pgvector, Tantivy) and add no TOC bullet.

Two sessions tell the same story; session "retry" also retries the prompt and re-sends the
test output (a new clock time in it). Both must end with the same index documents and bullets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import drained, eventually
from tests.stack import LEAN, make_stack

T0 = 1_767_225_600_000
PROMPT = "The reconciliation job takes nine seconds again; find out why and make it fast."
OUTPUT = (
    "$ pytest tests/test_reconcile.py -q\n"
    "F..... FAILED tests/test_reconcile.py::test_reconcile_is_fast - AssertionError: took "
    "9.02 s, expected under 1 s; the query plan shows a sequential scan on payments filtered by "
    "status = 'pending' over 4,100,000 rows at 10:41:07"
)
FIX = (
    "Decision: we add a partial index on payments(status) WHERE status = 'pending'; the "
    "reconciliation job now takes 40 ms instead of 9 s."
)


def story(session: str, *, retry: bool) -> list[dict[str, Any]]:
    base = {"project_id": "proj", "agent_id": "claude-code", "session_id": session}
    turns: list[tuple[str, str, str, str]] = [
        ("start", "system", "session_start", "session started"),
        ("prompt", "user", "message", PROMPT),
    ]
    if retry:
        turns.append(("prompt-retry", "user", "message", "  " + PROMPT.upper()))
    turns.append(("output", "tool", "tool_result", OUTPUT))
    if retry:
        turns.append(
            ("output-again", "tool", "tool_result", OUTPUT.replace("10:41:07", "10:43:55"))
        )
    turns += [("fix", "assistant", "message", FIX), ("end", "system", "session_end", "ended")]
    return [
        {
            **base,
            "event_id": f"{session}-{name}",
            "ts": T0 + i * 20_000,
            "role": role,
            "type": kind,
            "text": text,
        }
        for i, (name, role, kind, text) in enumerate(turns)
    ]


def status(url: str) -> dict[str, Any]:
    """The status, or an empty dict while the query service is too busy to answer."""
    try:
        answer: dict[str, Any] = plain_http.get(f"{url}/v1/status", timeout=30).json()
    except httpx.HTTPError:
        return {}
    return answer


def bullets(dsn: str, session: str) -> list[str] | None:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT v.bullets FROM toc_nodes n JOIN toc_node_versions v"
            " ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version"
            " WHERE n.level = 'segment' AND v.session_id = %s",
            (session,),
        ).fetchall()
    if not rows:
        return None
    return [b["text"] for (bs,) in rows for b in bs]


def vector_docs(dsn: str, session: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT unnest(event_ids) FROM vector_docs WHERE type = 'event' AND session_id = %s",
            (session,),
        ).fetchall()
    return sorted(r[0] for r in rows)


@pytest.mark.slow
def test_a_duplicate_is_stored_once_indexed_once_and_adds_no_bullet(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    # the embedder service loads the model (vectors are checked); the query service need not:
    # its one search asks the BM25 tier alone
    stack = make_stack(nats_server, pg_dsn, tmp_path, **LEAN)
    try:
        for name in (
            "gateway",
            "recorder",
            "segmenter",
            "summarizer",
            "bm25-indexer",
            "embedder",
            "query",
        ):
            stack.start(name)
        plain, retried = story("plain", retry=False), story("retry", retry=True)
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": plain + retried})
        assert r.status_code == 202, r.text
        # the same batch sent again (an agent's retry of the whole request): stored once
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": retried})
        assert r.status_code == 202, r.text
        total = len(plain) + len(retried)
        consumers = (
            "recorder",
            "segmenter",
            "summarizer",
            "bm25-indexer",
            "bm25-indexer-toc",
            "embedder",
            "embedder-toc",
        )  # the services started here (the topic clusterer is not)
        eventually(
            lambda: drained(stack.query_url, total, consumers=consumers),
            timeout=180,
            what="pipeline drained",
        )
        with psycopg.connect(pg_dsn) as conn:
            marked = conn.execute(
                "SELECT event_id, duplicate_of, method FROM event_duplicates ORDER BY 1"
            ).fetchall()
        assert marked == [
            ("retry-output-again", "retry-output", "near"),
            ("retry-prompt-retry", "retry-prompt", "exact"),
        ]
        assert status(stack.query_url)["duplicates_stored"] == 2

        page = plain_http.get(
            f"{stack.query_url}/v1/events", params={"session_id": "retry"}, timeout=10
        ).json()
        marks = {e["event_id"]: e["duplicate_of"] for e in page["events"]}
        assert marks == {
            "retry-start": None,
            "retry-prompt": None,
            "retry-prompt-retry": "retry-prompt",
            "retry-output": None,
            "retry-output-again": "retry-output",
            "retry-fix": None,
            "retry-end": None,
        }
        one = plain_http.get(f"{stack.query_url}/v1/events/retry-output-again", timeout=10).json()
        assert one["duplicate_of"] == "retry-output"

        # indexed once: the vector index holds the same documents for both sessions
        want = ["prompt", "output", "fix"]
        eventually(
            lambda: (
                [e.split("-", 1)[1] for e in vector_docs(pg_dsn, "retry")]
                and len(vector_docs(pg_dsn, "plain")) == len(vector_docs(pg_dsn, "retry"))
            ),
            timeout=180,
            what="vector documents",
        )
        indexed = {e.split("-", 1)[1] for e in vector_docs(pg_dsn, "retry")}
        assert "prompt-retry" not in indexed and "output-again" not in indexed
        assert set(want) <= indexed
        found = plain_http.post(
            f"{stack.query_url}/v1/search",
            json={
                "query": "reconciliation sequential scan",
                "session_id": "retry",
                "tiers": ["bm25"],
                "limit": 20,
            },
            timeout=30,
        ).json()
        ids = {i for res in found["results"] for i in res["event_ids"]}
        assert ids and not ids & {"retry-prompt-retry", "retry-output-again"}

        # summarised once: the retried session's segments have exactly the plain one's bullets
        plain_bullets = eventually(lambda: bullets(pg_dsn, "plain"), timeout=180, what="toc")
        retry_bullets = eventually(lambda: bullets(pg_dsn, "retry"), timeout=180, what="toc")
        assert sorted(retry_bullets) == sorted(plain_bullets)
        with psycopg.connect(pg_dsn) as conn:
            seg_events = conn.execute(
                "SELECT unnest(event_ids) FROM segments WHERE session_id = 'retry'"
            ).fetchall()
        assert not {e for (e,) in seg_events} & {"retry-prompt-retry", "retry-output-again"}
    finally:
        stack.stop()
