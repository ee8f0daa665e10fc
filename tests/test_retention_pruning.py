"""Retention end to end (issue 15, items 1, 2 and 5): the whole pipeline and the pruner, each a
real process on a real nats-server and Postgres.

A session 40 days old and one 2 days old go through gateway -> recorder -> segmenter ->
summarizer -> both indexers. Then: the dry run and the run report the same entries per index and
level; after the run, vector-only search no longer finds the old segment or its events while TOC
search, ``/v1/events`` and the TOC tier still do (with an explain note); ``admin rebuild-index``
does not bring them back, and a second dry run finds nothing left to prune. (The TOC tier may
answer with the week over the old segment: the novelty gate keeps one of two equal nodes.)
The old session's decisions are the exception: their grips are never pruned, so a question
still finds them.

Issue 58 (the second test): a pruner run that lands before the indexers reach an import of old
sessions keeps their entries out of both indexes for good, and so does every later old import.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_memory_common.contracts.subjects import STREAM_RECORDED, STREAM_TOC
from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import eventually, tantivy_folder_ids
from tests.stack import Stack, make_stack
from tests.toc_support import consumer_idle

DAY_MS = 86_400_000
OLD = "Decision: the flamingo cache is invalidated by a version stamp in every key."
OLD_MORE = "The flamingo cache keys carry the schema version so a deploy drops them all."
OLD_AGAIN = "Decision: the flamingo cache drops a key whose version stamp is stale."
NEW = "The pelican rollout checklist starts with a canary in one region."
NEW_MORE = "The pelican canary region gets a day of traffic before the next one."
NEW_LAST = "The pelican rollout finishes with every region behind the new build."


def _events() -> list[dict[str, Any]]:
    """Six distinct texts: the recorder's dedup keeps a repeated text out of every index."""
    now = int(time.time() * 1000)
    old, new = now - 40 * DAY_MS, now - 2 * DAY_MS
    events = []
    for i, text in enumerate((OLD, OLD_MORE, OLD_AGAIN)):
        events.append(_event(f"old-{i}", "s-old", old + i * 1000, text))
    for i, text in enumerate((NEW, NEW_MORE, NEW_LAST)):
        events.append(_event(f"new-{i}", "s-new", new + i * 1000, text))
    return events


def _event(event_id: str, session: str, ts: int, text: str, project: str = "ret") -> dict[str, Any]:
    return {
        "event_id": event_id,
        "ts": ts,
        "project_id": project,
        "agent_id": "claude-code",
        "session_id": session,
        "role": "user",
        "type": "message",
        "text": text,
    }


def _search(
    stack: Stack, query: str, tiers: list[str], session_id: str | None = None
) -> dict[str, Any]:
    """``session_id``: the old session's day holds only its one segment, so their texts are
    near-duplicates and the novelty gate keeps whichever ranks first (the day, which the matrix
    keeps); within the session, where a day spanning sessions is not, the segment is shown."""
    r = plain_http.post(
        f"{stack.query_url}/v1/search",
        # explore: TOC nodes are among the wanted types (a question wants events and grips)
        json={
            "query": query,
            "project_id": "ret",
            "tiers": tiers,
            "limit": 50,
            "intent": "explore",
            **({"session_id": session_id} if session_id else {}),
        },
        timeout=30,
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def _cleanup(stack: Stack, dry_run: bool, project_id: str = "ret") -> dict[str, Any]:
    r = plain_http.post(
        f"{stack.pruner_url}/v1/admin/cleanup",
        json={"dry_run": dry_run, "project_id": project_id},
        timeout=120,
    )
    assert r.status_code == 200, r.text
    report: dict[str, Any] = r.json()
    return report


def _cells(report: dict[str, Any]) -> dict[tuple[str, str], int]:
    return {
        (i["index"], lv["level"]): lv["entries"]
        for i in report["indexes"]
        for lv in i["levels"]
        if lv["entries"]
    }


def _segment_id(dsn: str, session: str) -> str | None:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT n.node_id FROM toc_nodes n JOIN toc_node_versions v ON v.tenant = n.tenant "
            "AND v.node_id = n.node_id AND v.version = n.latest_version "
            "WHERE n.level = 'segment' AND v.session_id = %s AND NOT n.is_empty",
            (session,),
        ).fetchone()
    return str(row[0]) if row else None


def _grip_docs(dsn: str, node_id: str) -> dict[str, str]:
    """Index document id -> memory kind of the grips the summarizer made for ``node_id``."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT tenant, grip_id, memory_kind FROM toc_grips WHERE node_id = %s", (node_id,)
        ).fetchall()
    return {f"grip:{t}:{g}": str(k) for t, g, k in rows}


def _vector_ids(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        return {str(r[0]) for r in conn.execute("SELECT id FROM vector_docs")}


def _cli(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory_cli", "admin", *args],
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
@pytest.mark.timeout(1500)  # eight services and the model load on two shared cores
def test_pruning_forgets_old_detail_in_the_indexes_only(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S="1",
        AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S="1",
        AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S="3600",  # only on demand in this test
    )
    try:
        # the readers first, one at a time: on a loaded machine eight starts at once time out
        for name in ("query", "pruner", "gateway", "recorder"):
            stack.start(name, timeout=300)
        for name in ("segmenter", "summarizer", "bm25-indexer", "embedder"):
            stack.start(name, timeout=300)
        r = plain_http.post(
            f"{stack.gateway_url}/v1/events", json={"events": _events()}, timeout=30
        )
        assert r.status_code == 202, r.text

        old_seg = eventually(
            lambda: _segment_id(stack.pg_dsn, "s-old"), timeout=240, what="old segment"
        )
        eventually(lambda: _segment_id(stack.pg_dsn, "s-new"), timeout=240, what="new segment")
        seg_doc = f"node:default:{old_seg}"
        old_events = {f"event:default:old-{i}" for i in range(3)}
        wanted = {seg_doc, *old_events}
        recent = {f"event:default:new-{i}" for i in range(3)}
        eventually(
            lambda: wanted | recent <= _vector_ids(stack.pg_dsn),
            timeout=300,
            what="old and recent entries embedded",
        )

        def vector_finds_segment() -> bool:
            ids = {
                h["id"]
                for h in _search(stack, "flamingo cache version stamp", ["vector"], "s-old")[
                    "results"
                ]
            }
            return seg_doc in ids

        eventually(vector_finds_segment, timeout=300, what="vector search finds the old segment")
        eventually(
            lambda: (
                seg_doc
                in {h["id"] for h in _search(stack, "flamingo", ["bm25"], "s-old")["results"]}
            ),
            timeout=120,
            what="bm25 finds the old segment",
        )

        # the old session's decisions, as the summarizer classified its grips
        grips = _grip_docs(stack.pg_dsn, old_seg)
        durable = {g for g, kind in grips.items() if kind == "decision"}
        assert durable, grips
        eventually(
            lambda: set(grips) <= _vector_ids(stack.pg_dsn), timeout=300, what="grips embedded"
        )

        # the dry run and the run agree, cell by cell
        dry = _cleanup(stack, dry_run=True)
        assert dry["dry_run"] is True
        cells = _cells(dry)
        assert cells[("vector", "segment")] == 1 and cells[("bm25", "segment")] == 1
        assert cells[("vector", "event")] == 3 and cells[("bm25", "event")] == 3
        assert all(lv not in ("day", "week", "month", "year") for _, lv in cells)
        examples = [
            ex["id"]
            for i in dry["indexes"]
            if i["index"] == "vector"
            for lv in i["levels"]
            for ex in lv["examples"]
        ]
        assert seg_doc in examples
        assert seg_doc in _vector_ids(stack.pg_dsn)  # a dry run removes nothing
        done = _cleanup(stack, dry_run=False)
        assert done["dry_run"] is False
        assert _cells(done) == cells
        assert all(i["status"] == "ok" for i in done["indexes"])

        # vector-only (and bm25) search forgets the old segment and its events ...
        assert not wanted & _vector_ids(stack.pg_dsn)
        # ... whose words and vectors the pruner kept for the descent (one 384-d float16 each)
        with psycopg.connect(stack.pg_dsn) as conn:
            kept_rows = conn.execute(
                "SELECT event_id, length(vector), length(words) FROM pruned_event_words"
            ).fetchall()
        assert {f"event:default:{r[0]}" for r in kept_rows} == old_events, kept_rows
        assert all(r[1] == 768 and r[2] > 0 for r in kept_rows), kept_rows
        # ... but never a decision: its grips stay in both indexes, and a question finds one
        # with the exact events, with no retention note (it is not beyond retention)
        assert durable <= _vector_ids(stack.pg_dsn)
        assert not (set(grips) - durable) & _vector_ids(stack.pg_dsn)
        for tiers in (["vector"], ["bm25"]):
            r = plain_http.post(
                f"{stack.query_url}/v1/search",
                json={
                    "query": "what did we decide about the flamingo cache keys?",
                    "project_id": "ret",
                    "tiers": tiers,
                },
                timeout=30,
            )
            assert r.status_code == 200, r.text
            answer = r.json()
            kept = [h for h in answer["results"] if h["id"] in durable]
            assert kept, (tiers, [h["id"] for h in answer["results"]])
            assert set(kept[0]["event_ids"]) & {"old-0", "old-2"}, kept[0]
            noted = {n["id"] for n in answer["explain"].get("retention", [])}
            assert not noted & durable, answer["explain"]["retention"]
        for tier, query in (("vector", "flamingo cache version stamp"), ("bm25", "flamingo")):
            ids = {h["id"] for h in _search(stack, query, [tier], "s-old")["results"]}
            assert not ids & wanted, (tier, ids)
        # ... the recent session keeps its entries and is still found
        assert recent <= _vector_ids(stack.pg_dsn)
        new_ids = {h["id"] for h in _search(stack, "pelican rollout canary", ["vector"])["results"]}
        assert new_ids and not new_ids & wanted, new_ids
        # ... while TOC search, the TOC tier and /v1/events still find it
        toc = plain_http.post(
            f"{stack.query_url}/v1/toc/search",
            json={"query": "flamingo", "project_id": "ret"},
            timeout=30,
        )
        assert toc.status_code == 200, toc.text
        assert old_seg in json.dumps(toc.json())
        # the TOC tier answers with the old session's words: its segment, or an overview over
        # it (the novelty gate keeps one of two nodes with the same bullets)
        by_toc = _search(stack, "flamingo cache", ["toc"])
        found = {e for h in by_toc["results"] for e in h["event_ids"]}
        assert found & {f"old-{i}" for i in range(3)}, by_toc["results"]
        notes = {n["id"]: n for n in by_toc["explain"].get("retention", [])}
        if seg_doc in {h["id"] for h in by_toc["results"]}:
            assert set(notes[seg_doc]["not_indexed_by"]) == {"vector", "bm25"}
            assert notes[seg_doc]["found_by"] == ["toc"]
        # and the explain note says why a pruned moment came from the event scan only
        by_scan = _search(stack, "flamingo cache", ["scan"])
        assert "event:default:old-0" in {h["id"] for h in by_scan["results"]}
        notes = {n["id"]: n for n in by_scan["explain"].get("retention", [])}
        assert set(notes["event:default:old-0"]["not_indexed_by"]) == {"vector", "bm25"}
        assert notes["event:default:old-0"]["found_by"] == ["scan"]
        one = plain_http.get(f"{stack.query_url}/v1/events/old-0", timeout=30)
        assert one.status_code == 200 and "flamingo" in one.json()["text"]

        # a rebuild keeps it pruned, and nothing is left for the next run
        rebuilt = _cli(stack, "rebuild-index", "--quiet")
        assert "left out by retention" in rebuilt.stdout
        assert not wanted & _vector_ids(stack.pg_dsn)
        ids = {h["id"] for h in _search(stack, "flamingo", ["bm25"], "s-old")["results"]}
        assert not ids & wanted
        assert "event:default:new-0" in _vector_ids(stack.pg_dsn)
        assert durable <= _vector_ids(stack.pg_dsn)  # and a rebuild keeps them
        out = _cli(stack, "cleanup", "--dry-run", "--json").stdout
        again = json.loads(out[out.index("{\n") :])  # after any log line
        assert again["entries"] == 0, _cells(again)

        # retention extended: a rebuild brings the pruned entries back (issue 53) ...
        _set_retention(stack, {ix: dict.fromkeys(LEVELS, "forever") for ix in ("vector", "bm25")})
        rebuilt = _cli(stack, "rebuild-index", "--quiet", "--retention")
        assert ", 0 left out by retention" in rebuilt.stdout, rebuilt.stdout
        assert wanted <= _vector_ids(stack.pg_dsn), rebuilt.stdout
        ids = {h["id"] for h in _search(stack, "flamingo", ["bm25"], "s-old")["results"]}
        assert seg_doc in ids, ids
        # ... and back to the defaults, the next run prunes them again: their records are
        # older than the policy, so they are candidates once more
        _set_retention(stack, {})
        again = _cleanup(stack, dry_run=False)
        assert _cells(again) == cells, _cells(again)
        assert not wanted & _vector_ids(stack.pg_dsn)
        ids = {h["id"] for h in _search(stack, "flamingo", ["bm25"], "s-old")["results"]}
        assert not ids & wanted, ids
    finally:
        stack.stop()


LEVELS = ("event", "segment", "grip", "day", "week", "month", "year")


def _set_retention(stack: Stack, overrides: dict[str, dict[str, str]]) -> None:
    r = plain_http.put(f"{stack.query_url}/v1/projects/ret/retention", json=overrides, timeout=30)
    assert r.status_code == 200, r.text


# --- issue 58: the pruner runs before the indexers reach the old events ------------------------

RACE_OLD = (  # (session, days ago, texts): an import of old sessions, as a February import
    ("s-feb-1", 40, (
        "The heron importer reads the February export one session at a time.",
        "Heron batches are retried with the same ids so a replay changes nothing.",
        "Decision: the heron importer never rewrites an event it already stored.",
    )),
    ("s-feb-2", 38, (
        "The egret dashboard shows the import backlog per project.",
        "Egret alerts fire when the backlog grows for ten minutes.",
        "The egret page polls every five seconds while an import runs.",
    )),
)  # fmt: skip
RACE_NOTE = "Constraint noted: egret alerts page the on-call engineer only during office hours."
RACE_LATE = (  # imported after the pruner's run
    "The ibis archive holds the sessions exported before the migration.",
    "Ibis sessions are replayed in the order they were recorded.",
)
RACE_RECENT = (
    "The kestrel release notes list the import fixes of this week.",
    "Kestrel ships once the import backlog is empty.",
)


def _race_events(now_ms: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the first import: old sessions, a noted constraint, a recent session; the late one)."""
    first: list[dict[str, Any]] = []
    for session, days, texts in RACE_OLD:
        start = now_ms - days * DAY_MS
        first += [
            _event(f"{session}-{i}", session, start + i * 1000, text, "race")
            for i, text in enumerate(texts)
        ]
    note = _event("s-feb-2-note", "s-feb-2", now_ms - 38 * DAY_MS + 10_000, RACE_NOTE, "race")
    note["metadata"] = {"memory_kind": "constraint"}  # durable: kept at any age
    first.append(note)
    recent = now_ms - 2 * DAY_MS
    first += [
        _event(f"s-now-{i}", "s-now", recent + i * 1000, text, "race")
        for i, text in enumerate(RACE_RECENT)
    ]
    late_start = now_ms - 41 * DAY_MS
    late = [
        _event(f"s-late-{i}", "s-late", late_start + i * 1000, text, "race")
        for i, text in enumerate(RACE_LATE)
    ]
    return first, late


def _race_docs(dsn: str) -> tuple[set[str], set[str]]:
    """(doc ids the default matrix prunes from both indexes, doc ids it keeps), from Postgres:
    events and segments older than 30 days and their grips, bar the durable ones."""
    pruned: set[str] = set()
    kept: set[str] = set()
    with psycopg.connect(dsn) as conn:
        for tenant, event_id, old, durable in conn.execute(
            "SELECT tenant, event_id, ts < now() - interval '30 days', "
            "coalesce(metadata->>'memory_kind', '') = 'constraint' FROM events "
            "WHERE project_id = 'race'"
        ):
            (pruned if old and not durable else kept).add(f"event:{tenant}:{event_id}")
        for tenant, node_id, old in conn.execute(
            "SELECT n.tenant, n.node_id, n.start_ts < now() - interval '30 days' "
            "FROM toc_nodes n WHERE n.project_id = 'race' AND n.level = 'segment' "
            "AND n.latest_version > 0 AND NOT n.is_empty"
        ):
            (pruned if old else kept).add(f"node:{tenant}:{node_id}")
        for tenant, grip_id, old, kind in conn.execute(
            "SELECT g.tenant, g.grip_id, v.start_ts < now() - interval '30 days', g.memory_kind "
            "FROM toc_grips g JOIN toc_node_versions v ON v.tenant = g.tenant "
            "AND v.node_id = g.node_id AND v.version = g.node_version WHERE g.project_id = 'race'"
        ):
            durable = kind in ("decision", "constraint", "preference", "procedure", "definition")
            (pruned if old and not durable else kept).add(f"grip:{tenant}:{grip_id}")
    return pruned, kept


def _segments_of(dsn: str, sessions: set[str]) -> bool:
    """Whether every one of ``sessions`` has a summarized segment with its grips."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT DISTINCT v.session_id FROM toc_nodes n JOIN toc_node_versions v "
            "ON v.tenant = n.tenant AND v.node_id = n.node_id AND v.version = n.latest_version "
            "WHERE n.level = 'segment' AND NOT n.is_empty AND n.project_id = 'race' "
            "AND EXISTS (SELECT 1 FROM toc_grips g WHERE g.node_id = n.node_id)"
        ).fetchall()
    return sessions <= {str(r[0]) for r in rows}


def _bm25_ids(home: Path) -> set[str]:
    """Every live document id in the Tantivy folders under ``home``, read with Tantivy."""
    ids: set[str] = set()
    for meta in sorted((home / "tantivy").glob("**/meta.json")):
        ids.update(tantivy_folder_ids(meta.parent))
    return ids


@pytest.mark.slow
@pytest.mark.timeout(1500)  # seven services and the model load on two shared cores
def test_entries_pruned_before_they_are_indexed_stay_out_of_both_indexes(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    """Issue 58: the pruner's run lands while an import of old sessions is still queued for the
    indexers (its first run is 60 s after start, mid-import). It records the old entries it
    finds in Postgres before the embedder and the bm25-indexer have written any; another old
    session is imported after the run. Once the pipeline is drained, neither index holds an
    entry the matrix prunes (old events, segments, grips), and both hold what it keeps (recent
    entries, a noted constraint, decision grips). Before the fix the indexers wrote them all
    when they reached them, and later runs skipped them as already pruned."""
    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S="1",
        AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S="1",
        AGENT_MEMORY_PRUNER__FIRST_RUN_AFTER_S="3600",  # the run is asked for below
    )
    first, late = _race_events(int(time.time() * 1000))
    try:
        for name in ("query", "pruner", "gateway", "recorder", "segmenter", "summarizer"):
            stack.start(name, timeout=300)
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": first}, timeout=30)
        assert r.status_code == 202, r.text
        eventually(
            lambda: _segments_of(stack.pg_dsn, {"s-feb-1", "s-feb-2", "s-now"}),
            timeout=300,
            what="the first import recorded and summarized",
        )
        # the old entries wait for the indexers, which are not there yet
        assert not consumer_idle(stack.nats.url, STREAM_RECORDED, "embedder")
        assert not consumer_idle(stack.nats.url, STREAM_TOC, "bm25-indexer-toc")
        done = _cleanup(stack, dry_run=False, project_id="race")
        cells = _cells(done)
        assert cells[("vector", "event")] == cells[("bm25", "event")] == 6, cells
        assert cells[("vector", "segment")] == cells[("bm25", "segment")] == 2, cells

        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": late}, timeout=30)
        assert r.status_code == 202, r.text
        eventually(
            lambda: _segments_of(stack.pg_dsn, {"s-late"}),
            timeout=300,
            what="the late import recorded and summarized",
        )
        for name in ("bm25-indexer", "embedder"):
            stack.start(name, timeout=300)
        pruned, kept = _race_docs(stack.pg_dsn)
        assert len(pruned) >= 6 + 2 + 2 + 1, pruned  # events, segments of both imports
        assert {"event:default:s-feb-2-note", "event:default:s-now-0"} <= kept, kept

        def drained() -> bool:
            return all(
                consumer_idle(stack.nats.url, stream, durable)
                for stream, durable in (
                    (STREAM_RECORDED, "embedder"),
                    (STREAM_RECORDED, "bm25-indexer"),
                    (STREAM_TOC, "embedder-toc"),
                    (STREAM_TOC, "bm25-indexer-toc"),
                )
            )

        eventually(drained, timeout=600, what="both indexers drained")
        home = Path(stack.env["AGENT_MEMORY_HOME"])
        vector, bm25 = _vector_ids(stack.pg_dsn), _bm25_ids(home)
        # the indexers ran: what the matrix keeps is in both indexes ...
        assert kept <= vector, sorted(kept - vector)
        assert kept <= bm25, sorted(kept - bm25)
        # ... and nothing it prunes, whether recorded before they reached it or imported after
        assert not pruned & vector, sorted(pruned & vector)
        assert not pruned & bm25, sorted(pruned & bm25)
    finally:
        stack.stop()
