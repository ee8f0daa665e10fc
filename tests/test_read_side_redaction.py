"""A secret stored before its rule existed never leaves the query service.

The gateway's ``password`` rule is switched off (as if the rule were added later), so the
secret reaches Postgres, the BM25 index and the TOC; every answer of the query service must
still carry the placeholder, because it passes its answers through the current detector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import make_stack

SECRET = "Tr0ub4dor&3xq"
TEXTS = [
    "We set up the reporting database for the billing service today.",
    f"The reporting db password: {SECRET} and the user is reporter.",
    "Next we point the nightly export job at the reporting database.",
]


def _strings(value: Any) -> str:
    return httpx.Response(200, json=value).text


@pytest.mark.slow
def test_stored_secret_is_redacted_in_every_answer(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_GATEWAY__REDACT_DISABLE='["password"]',
        AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S="1",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    )
    try:
        for name in ("gateway", "recorder", "segmenter", "summarizer", "bm25-indexer", "query"):
            stack.start(name)
        events = [make_event(i, project="billing", text=t) for i, t in enumerate(TEXTS)]
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events})
        assert r.status_code == 202, r.text
        q = stack.query_url

        # stored as is: without the read side, every check below would fail
        def stored() -> bool:
            with psycopg.connect(stack.pg_dsn) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM events WHERE text LIKE %s", (f"%{SECRET}%",)
                )
                got = row.fetchone()
            return bool(got and got[0] == 1)

        eventually(stored, timeout=60, what="the event stored with its secret")

        listing = plain_http.get(f"{q}/v1/events", params={"project_id": "billing"}).json()
        one = plain_http.get(f"{q}/v1/events/e-000001").json()
        assert "[REDACTED:password]" in one["text"]

        def found() -> dict[str, Any] | None:
            answer = plain_http.post(
                f"{q}/v1/search",
                json={"query": "reporting db password", "project_id": "billing", "tiers": ["bm25"]},
            ).json()
            return answer if answer["results"] else None

        search = eventually(found, timeout=120, what="bm25 finds the event")

        def segment_node() -> dict[str, Any] | None:
            toc = plain_http.get(f"{q}/v1/toc", params={"project_id": "billing"}).json()
            node_id = toc["years"][0]["node_id"] if toc["years"] else None
            while node_id is not None:
                node: dict[str, Any] = plain_http.get(f"{q}/v1/toc/nodes/{node_id}").json()
                if node["level"] == "segment":
                    return node
                kids = plain_http.get(f"{q}/v1/toc/nodes/{node_id}/children").json()["children"]
                node_id = kids[0]["node_id"] if kids else None
            return None

        segment = eventually(segment_node, timeout=180, what="the session's segment summarised")
        children = plain_http.get(f"{q}/v1/toc/nodes/{segment['node_id']}/children").json()
        grips = [
            plain_http.get(f"{q}/v1/grips/{g['grip_id']}").json()
            for b in segment["bullets"]
            for g in b["grips"]
        ]
        for answer in (listing, one, search, segment, children, *grips):
            text = _strings(answer)
            assert SECRET not in text and "&3xq" not in text, text
        assert "[REDACTED:password]" in _strings(children)
    finally:
        stack.stop()
