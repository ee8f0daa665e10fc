"""What the runtime wrote is stored and is nobody's memory (issue 52, point 3), end to end on a
real nats-server and Postgres: gateway, recorder, segmenter, summarizer, BM25 indexer, query.

A Claude Code session, read by the same function as the hook and ``agent-memory import``
(``claude_code.transcript_events``), holds real prompts and replies among a slash command and
its expansion, a system reminder (alone, and inside a prompt), the compaction subagent's prompt
and reply and the compact summary. Every event is stored; none of the runtime's is cited by a
TOC bullet or gives a title at any level; the default search does not return them; a search
that asks for the ``runtime`` kind does. The examples are written for this test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_memory_embedded.servers import NatsServer
from agent_memory_hooks import claude_code
from agent_memory_hooks.events import HookContext
from tests import plain_http
from tests.bench.runtime_written import measure, written
from tests.helpers import drained, eventually
from tests.stack import LEAN, make_stack

SESSION = "s-boiler"
PROJECT = "ledger"
RUNTIME_WORDS = ("marmalade", "lighthouse", "pelican", "gazebo", "tangerine")


def line(n: int, kind: str, text: str, **flags: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": [{"type": "text", "text": text}]}
    if kind == "assistant":
        message["model"] = "claude-test"
    return {
        "type": kind,
        "uuid": f"line-{n:02d}",
        "sessionId": SESSION,
        "timestamp": f"2026-01-15T10:{n:02d}:00.000Z",
        "message": message,
        **flags,
    }


COMPACTOR = {"isSidechain": True, "agentId": "acompact-7f3e"}
LINES = [
    line(
        1,
        "user",
        "The invoice exporter drops rows whose currency is null; keep them and write EUR.",
    ),
    line(
        2,
        "assistant",
        "Decision: the exporter keeps rows with a null currency and writes EUR for them, since"
        " finance reconciles the export by its row count.",
    ),
    line(
        3,
        "user",
        "<command-message>review</command-message>\n<command-name>/review</command-name>\n"
        "<command-args>exporter</command-args>",
    ),
    line(
        4,
        "user",
        "Review the pending change of the marmalade ledger with care: naming, error handling"
        " and tests of every module it touches.",
        isMeta=True,
    ),
    line(
        5,
        "user",
        "<system-reminder>\nThe task list is empty; keep the lighthouse checklist current.\n"
        "</system-reminder>",
    ),
    line(
        6,
        "user",
        "Also add a regression test for the rows without a currency.\n"
        "<system-reminder>The pelican gazebo file changed on disk.</system-reminder>",
    ),
    line(
        7,
        "user",
        "Write a detailed summary of the marmalade ledger conversation so far: every request,"
        " decision, file and pending task, so that the work can go on in a new context.",
        **COMPACTOR,
    ),
    line(
        8,
        "assistant",
        "Summary of the marmalade ledger work: the exporter keeps rows with a null currency.",
        **COMPACTOR,
    ),
    line(
        9,
        "user",
        "This tangerine session continues an earlier one. The exporter keeps rows with a null"
        " currency and writes EUR; a regression test is pending.",
        isCompactSummary=True,
    ),
    line(
        10,
        "assistant",
        "The regression test for rows without a currency passes now: the exporter writes EUR"
        " for each of them and the row count matches the ledger.",
    ),
]


def session_events() -> list[dict[str, Any]]:
    ctx = HookContext(runtime="claude-code", now_ms=1_768_471_200_000, project_of=lambda _: PROJECT)
    found = claude_code.transcript_events([(item, i) for i, item in enumerate(LINES)], {}, ctx)
    events: list[dict[str, Any]] = [dict(e) for e in found]
    events.append(
        {
            "event_id": "s-boiler-end",
            "ts": "2026-01-15T10:11:00Z",
            "project_id": PROJECT,
            "agent_id": "claude-code",
            "session_id": SESSION,
            "role": "system",
            "type": "session_end",
            "text": "session ended",
        }
    )
    return events


def search(url: str, **body: Any) -> dict[str, Any]:
    r = plain_http.post(f"{url}/v1/search", json={"project_id": PROJECT, **body}, timeout=30)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def toc(dsn: str) -> list[tuple[str, str, list[dict[str, Any]]]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT n.level, v.title, v.bullets FROM toc_nodes n JOIN toc_node_versions v"
            " ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version"
            " WHERE n.project_id = %s",
            (PROJECT,),
        ).fetchall()
    return [(str(level), str(title), list(bullets)) for level, title, bullets in rows]


@pytest.mark.slow
def test_runtime_written_events_are_stored_and_kept_out_of_toc_and_default_search(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    events = session_events()
    runtime = {
        e["event_id"]: e["metadata"]["runtime_kind"] for e in events if e["type"] == "runtime"
    }
    assert sorted(runtime.values()) == [
        "command",
        "compact_summary",
        "compaction_prompt",
        "compaction_summary",
        "expansion",
        "reminder",
        "reminder",
    ]
    stack = make_stack(nats_server, pg_dsn, tmp_path, **LEAN)
    try:
        for name in ("gateway", "recorder", "segmenter", "summarizer", "bm25-indexer", "query"):
            stack.start(name)
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events})
        assert r.status_code == 202, r.text
        consumers = ("recorder", "segmenter", "summarizer", "bm25-indexer", "bm25-indexer-toc")
        eventually(
            lambda: drained(stack.query_url, len(events), consumers=consumers),
            timeout=180,
            what="pipeline drained",
        )
        eventually(
            lambda: any(level == "year" for level, _, _ in toc(pg_dsn)),
            timeout=120,
            what="the TOC up to the year",
        )

        # every event stored, the runtime's as such
        page = plain_http.get(
            f"{stack.query_url}/v1/events",
            params={"session_id": SESSION, "limit": 100},
            timeout=10,
        ).json()
        stored = {e["event_id"]: e for e in page["events"]}
        assert set(stored) == {e["event_id"] for e in events}
        assert {i for i, e in stored.items() if e["type"] == "runtime"} == set(runtime)
        prompt = next(e for e in stored.values() if e["text"].startswith("Also add"))
        assert prompt["type"] == "message" and "pelican" not in prompt["text"]

        # no bullet cites them, no title or bullet at any level says their words
        nodes = toc(pg_dsn)
        assert {level for level, _, _ in nodes} == {"segment", "day", "week", "month", "year"}
        with psycopg.connect(pg_dsn) as conn:
            grips: dict[str, list[str]] = dict(
                conn.execute("SELECT grip_id, event_ids FROM toc_grips").fetchall()
            )
        for level, title, bullets in nodes:
            assert not any(w in title.lower() for w in RUNTIME_WORDS), (level, title)
            for bullet in bullets:
                cited = {e for g in bullet.get("grip_ids", []) for e in grips.get(g, [])}
                assert not cited & set(runtime), (level, bullet["text"])
                assert not any(w in bullet["text"].lower() for w in RUNTIME_WORDS)
        assert any(b for level, _, b in nodes if level == "segment")  # the session has bullets

        # the default search leaves them out; asking for the runtime kind finds them
        for query in ("marmalade ledger summary", "lighthouse checklist", "review pending change"):
            answer = search(stack.query_url, query=query)
            # an event or a grip is a runtime event's only if it cites one (a segment node's
            # span holds every event of its moment, the runtime's too)
            cited = {
                i
                for r in answer["results"]
                if r["type"] in ("event", "grip")
                for i in r.get("event_ids", [])
            }
            assert not cited & set(runtime), (query, answer["results"])
        asked = search(stack.query_url, query="marmalade ledger summary", kinds=["runtime"])
        found = [i for r in asked["results"] for i in r.get("event_ids", [])]
        assert found and set(found) <= set(runtime)
        assert {runtime[i] for i in found} >= {"compaction_prompt", "expansion"}
        answer = search(stack.query_url, query="regression test currency EUR")
        assert answer["results"]  # what people said is still found

        # bench-real's count, from the transcript's own structure, agrees: nothing in the TOC
        transcript = tmp_path / f"{SESSION}.jsonl"
        transcript.write_text("".join(json.dumps(x) + "\n" for x in LINES))
        report = measure(pg_dsn, written([("claude-code", PROJECT, transcript)]), {PROJECT})
        assert report.texts == 6 and report.events == 6  # the prompt with a reminder is a prompt
        assert {lv: tuple(n) for lv, n in report.bullets.items()} == {
            lv: (0, n[1]) for lv, n in report.bullets.items()
        }
        assert all(n[0] == 0 for n in report.titles.values()) and report.compaction_nodes == 0
        assert sum(n[1] for n in report.bullets.values()) > 0
    finally:
        stack.stop()
