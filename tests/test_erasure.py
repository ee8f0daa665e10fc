"""Cascade erasure end to end (issue 15 items 3 and 5): every service a real process on a real
nats-server and Postgres. A session whose text holds a unique phrase is erased; afterwards the
phrase and the erased ids are nowhere: not in any answer (events, search, TOC nodes at every
level, grips), not in any table at any version (events, segments, TOC versions, grips, vector
entries, episodes), not in any JetStream stream; the other session is untouched. A kill -9 of a
participant during an erasure still ends verified; a tenant cannot erase another's data.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import nats
import psycopg
import pytest

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import Stack, module_stack

PHRASE = "zebra quartz umbrella seventeen"
OTHER = "heron basalt lantern"
A = {"Authorization": "Bearer tok-a"}
B = {"Authorization": "Bearer tok-b"}
STREAMS = ("EVENTS", "RECORDED", "SEGMENTS", "TOC")


@pytest.fixture(scope="module")
def erasure_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    with module_stack(
        pg_server,
        tmp_path_factory,
        AGENT_MEMORY_TOKENS="tok-a:tenant-a,tok-b:tenant-b",
        AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S="1",
        AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S="1",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    ) as s:
        for name in ("segmenter", "summarizer", "bm25-indexer", "embedder"):
            s.start(name)
        yield s


def _session(start: int, session: str, words: str, n: int = 6) -> list[dict[str, Any]]:
    events = [
        make_event(
            start + i,
            project="p",
            session=session,
            text=f"Step {i} of {session}: the {words} decision keeps the cache warm {i}.",
        )
        for i in range(n)
    ]
    events[-1]["type"] = "session_end"  # closes the segment now (no idle wait)
    return events


def _post(stack: Stack, events: list[dict[str, Any]], headers: dict[str, str] = A) -> None:
    r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events}, headers=headers)
    assert r.status_code == 202, r.text


def _rows(dsn: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql, args).fetchall()


def _everywhere_in_postgres(dsn: str, needle: str) -> dict[str, int]:
    """Rows of every store (all versions) whose text holds ``needle``."""
    like = f"%{needle.lower()}%"
    checks = {
        "events": "SELECT count(*) FROM events WHERE lower(text) LIKE %s",
        "toc_versions": "SELECT count(*) FROM toc_node_versions"
        " WHERE lower(title || bullets::text || search_text || keywords::text) LIKE %s",
        "grips": "SELECT count(*) FROM toc_grips WHERE lower(excerpt) LIKE %s",
        "vectors": "SELECT count(*) FROM vector_docs WHERE lower(title || text) LIKE %s",
        "episodes": "SELECT count(*) FROM episodes WHERE lower(task || coalesce(summary, ''))"
        " LIKE %s",
    }
    return {k: int(_rows(dsn, q, like)[0][0]) for k, q in checks.items()}


def _in_streams(nats_url: str, needle: str) -> dict[str, int]:
    async def go() -> dict[str, int]:
        nc = await nats.connect(nats_url)
        try:
            js = nc.jetstream(timeout=10)
            out = {}
            for stream in STREAMS:
                info = await js.stream_info(stream)
                hits = 0
                for seq in range(info.state.first_seq, info.state.last_seq + 1):
                    try:
                        msg = await js.get_msg(stream, seq)
                    except nats.js.errors.NotFoundError:
                        continue  # deleted
                    hits += needle.lower().encode() in (msg.data or b"").lower()
                out[stream] = hits
            return out
        finally:
            await nc.close()

    return asyncio.run(go())


def _summarized(dsn: str, needle: str) -> bool:
    return bool(
        _rows(
            dsn,
            "SELECT 1 FROM toc_node_versions WHERE level = 'day' AND lower(search_text) LIKE %s",
            f"%{needle.lower()}%",
        )
    )


def _indexed(stack: Stack, needle: str) -> bool:
    vec = _rows(stack.pg_dsn, "SELECT count(*) FROM vector_docs WHERE text LIKE %s", f"%{needle}%")
    answer = _search(stack, needle, ["bm25"])
    return bool(vec[0][0]) and bool(answer["results"])


def _search(stack: Stack, query: str, tiers: list[str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"query": query, "project_id": "p"}
    if tiers:
        body["tiers"] = tiers
    r = plain_http.post(f"{stack.query_url}/v1/search", json=body, headers=A, timeout=30)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def _erase(stack: Stack, scope: dict[str, Any], headers: dict[str, str] = A) -> dict[str, Any]:
    r = plain_http.post(
        f"{stack.query_url}/v1/erasures",
        json={"project_id": "p", "scope": scope},
        headers=headers,
    )
    assert r.status_code == 202, r.text
    accepted: dict[str, Any] = r.json()
    return accepted


def _receipt(stack: Stack, erasure_id: str, headers: dict[str, str] = A) -> dict[str, Any]:
    r = plain_http.get(f"{stack.query_url}/v1/erasures/{erasure_id}", headers=headers)
    assert r.status_code == 200, r.text
    receipt: dict[str, Any] = r.json()
    return receipt


def _verified(stack: Stack, erasure_id: str) -> dict[str, Any] | None:
    receipt = _receipt(stack, erasure_id)
    return receipt if receipt["verified"] else None


def _toc_texts(stack: Stack) -> str:
    """Every TOC node reachable from the years, every version, with children and grips."""
    q, out = stack.query_url, []
    toc = plain_http.get(f"{q}/v1/toc", params={"project_id": "p"}, headers=A).json()
    todo = [y["node_id"] for y in toc["years"]]
    while todo:
        node_id = todo.pop()
        node = plain_http.get(f"{q}/v1/toc/nodes/{node_id}", headers=A).json()
        for version in range(1, int(node["version"]) + 1):
            r = plain_http.get(
                f"{q}/v1/toc/nodes/{node_id}", params={"version": version}, headers=A
            )
            out.append(r.text)  # 404 for a removed version
        for bullet in node.get("bullets") or ():
            for grip in bullet.get("grips") or ():
                out.append(plain_http.get(f"{q}/v1/grips/{grip['grip_id']}", headers=A).text)
        kids = plain_http.get(f"{q}/v1/toc/nodes/{node_id}/children", headers=A).json()
        out.append(str(kids))
        todo += [k["node_id"] for k in kids.get("children") or () if "node_id" in k]
    return "\n".join(out).lower()


@pytest.mark.slow
def test_an_erased_session_leaves_no_trace(erasure_stack: Stack) -> None:
    stack = erasure_stack
    _post(stack, _session(0, "secret", PHRASE) + _session(100, "keep", OTHER))
    eventually(lambda: _summarized(stack.pg_dsn, PHRASE), 240, "the secret session summarized")
    eventually(lambda: _summarized(stack.pg_dsn, OTHER), 120, "the other session summarized")
    eventually(lambda: _indexed(stack, PHRASE), 240, "the secret session indexed")
    assert _in_streams(stack.nats.url, PHRASE)["EVENTS"] == 6

    # the dry run says what would go and changes nothing
    r = plain_http.post(
        f"{stack.query_url}/v1/erasures/dry-run",
        json={"project_id": "p", "scope": {"session_id": "secret"}},
        headers=A,
    )
    assert r.status_code == 200, r.text
    assert r.json()["counts"]["events"] == 6 and r.json()["counts"]["grips"] >= 1
    assert _everywhere_in_postgres(stack.pg_dsn, PHRASE)["events"] == 6

    accepted = _erase(stack, {"session_id": "secret"})
    assert accepted["events"] == 6
    receipt = eventually(lambda: _verified(stack, accepted["erasure_id"]), 120, "verified")
    counts = receipt["counts"]
    assert counts["events"] == 6
    assert counts["toc_versions_removed"] >= 2 and counts["grips"] >= 1
    assert counts["stream_events"] == 6 and counts["stream_recorded"] == 6
    assert counts["vector_entries"] >= 6 and counts["bm25_documents"] >= 6
    assert receipt["waiting_for"] == [] and receipt["findings"] == {}

    # nowhere: any table at any version, any stream, any answer
    left = _rows(  # which vector documents, if any: says what a failure is about
        stack.pg_dsn,
        "SELECT id, type, level, title, indexed_at FROM vector_docs WHERE text LIKE %s",
        f"%{PHRASE}%",
    )
    assert not left, left
    assert _everywhere_in_postgres(stack.pg_dsn, PHRASE) == dict.fromkeys(
        ("events", "toc_versions", "grips", "vectors", "episodes"), 0
    )
    assert _in_streams(stack.nats.url, PHRASE) == dict.fromkeys(STREAMS, 0)
    events = plain_http.get(f"{stack.query_url}/v1/events", params={"project_id": "p"}, headers=A)
    assert PHRASE not in events.text and OTHER in events.text
    for tiers in (["bm25"], ["toc"], None):
        answer = _search(stack, PHRASE, tiers)
        assert PHRASE not in str(answer).lower(), tiers
        assert not any("e-00000" in str(r.get("event_ids")) for r in answer["results"])
    toc = _toc_texts(stack)
    assert PHRASE not in toc and OTHER in toc
    r = plain_http.get(f"{stack.query_url}/v1/events/e-000001", headers=A)
    assert r.status_code == 404

    # the audit log: who, when, scope, counts; never the content
    log = plain_http.get(f"{stack.query_url}/v1/erasures", headers=A).json()["erasures"]
    assert [e["erasure_id"] for e in log] == [accepted["erasure_id"]]
    assert log[0]["requested_by"] == "tenant-a" and log[0]["scope"] == {"session_id": "secret"}
    assert PHRASE not in str(log)

    # a replay cannot bring it back: the recorder refuses an erased event id
    _post(stack, _session(0, "secret", PHRASE)[:2])
    _post(stack, [make_event(500, project="p", session="later", text="after the replay")])
    eventually(
        lambda: _rows(stack.pg_dsn, "SELECT 1 FROM events WHERE event_id = 'e-000500'"),
        60,
        "the later event recorded",
    )
    assert _everywhere_in_postgres(stack.pg_dsn, PHRASE)["events"] == 0


@pytest.mark.slow
def test_a_tenant_cannot_erase_another_tenants_data(erasure_stack: Stack) -> None:
    stack = erasure_stack
    _post(stack, _session(200, "theirs", "osprey granite", n=3), headers=A)
    eventually(
        lambda: _rows(stack.pg_dsn, "SELECT 1 FROM events WHERE event_id = 'e-000202'"),
        60,
        "stored",
    )
    accepted = _erase(stack, {"session_id": "theirs"}, headers=B)
    assert accepted["events"] == 0
    r = plain_http.get(f"{stack.query_url}/v1/erasures/{accepted['erasure_id']}", headers=A)
    assert r.status_code == 404
    eventually(lambda: _verified_as(stack, accepted["erasure_id"], B), 60, "B's empty erasure")
    stored = _rows(stack.pg_dsn, "SELECT count(*) FROM events WHERE session_id = 'theirs'")
    assert stored[0][0] == 3
    r = plain_http.post(
        f"{stack.query_url}/v1/erasures",
        json={"project_id": "p", "scope": {"session_id": "x", "agent_id": "y"}},
        headers=A,
    )
    assert r.status_code == 422 and "scope" in r.text


def _verified_as(stack: Stack, erasure_id: str, headers: dict[str, str]) -> bool:
    return bool(_receipt(stack, erasure_id, headers)["verified"])


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["summarizer", "segmenter"])
def test_kill_9_during_an_erasure_still_ends_verified(erasure_stack: Stack, victim: str) -> None:
    stack = erasure_stack
    start = 300 if victim == "summarizer" else 400
    words = f"{victim} kestrel obsidian"
    _post(stack, _session(start, f"doomed-{victim}", words))
    eventually(lambda: _summarized(stack.pg_dsn, words), 240, "summarized")
    accepted = _erase(stack, {"session_id": f"doomed-{victim}"})
    stack.processes[victim].kill()
    stack.start(victim)
    receipt = eventually(lambda: _verified(stack, accepted["erasure_id"]), 180, "verified")
    assert receipt["counts"]["events"] == 6
    assert _everywhere_in_postgres(stack.pg_dsn, words) == dict.fromkeys(
        ("events", "toc_versions", "grips", "vectors", "episodes"), 0
    )
    assert _in_streams(stack.nats.url, words) == dict.fromkeys(STREAMS, 0)
