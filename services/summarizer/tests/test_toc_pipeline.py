"""The summarizer as a real process on real servers: segments in, a versioned TOC out.

Events are written straight into Postgres and segment messages published as the segmenter
publishes them (tests/toc_support.py); everything after that is the service under test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import eventually
from tests.stack import Stack, make_stack
from tests.toc_support import (
    all_summarized,
    consumer_idle,
    event_text,
    insert_events,
    make_events,
    publish_segments,
    retraction,
    segment_payload,
    toc_messages,
    utc,
)


@pytest.fixture
def toc_stack(nats_server: NatsServer, pg_dsn: str, tmp_path: Path) -> Iterator[Stack]:
    stack = make_stack(nats_server, pg_dsn, tmp_path, AGENT_MEMORY_SUMMARIZER__BATCH_SIZE="8")
    try:
        yield stack
    finally:
        stack.stop()


def rows(dsn: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(query, params).fetchall()


def parents(dsn: str) -> dict[str, str | None]:
    return {r[0]: r[1] for r in rows(dsn, "SELECT node_id, parent_id FROM toc_nodes")}


def wait_done(stack: Stack, expected: dict[str, int]) -> None:
    eventually(lambda: all_summarized(stack.pg_dsn, expected), timeout=60, what="summarized")
    eventually(lambda: consumer_idle(stack.nats.url), timeout=30, what="summarizer idle")


def versions_per_node(dsn: str) -> dict[str, int]:
    return dict(rows(dsn, "SELECT node_id, count(*) FROM toc_node_versions GROUP BY node_id"))


def test_tree_across_month_and_year_boundaries_with_grips(toc_stack: Stack) -> None:
    dsn = toc_stack.pg_dsn
    sessions = {
        "sg_dec30": make_events("dec30", utc(2025, 12, 30, 9), 12, session="a"),  # 2026-W01
        "sg_mar27": make_events("mar27", utc(2026, 3, 27, 10), 12, session="b"),  # W13: March
        "sg_mar31": make_events("mar31", utc(2026, 3, 31, 9), 12, session="c"),  # W14: April
        "sg_apr06": make_events("apr06", utc(2026, 4, 6, 9), 12, session="d"),  # W15: April
    }
    for session_events in sessions.values():
        insert_events(dsn, session_events)
    # the April 1st segment carries the last two events of March 31st as overlap
    apr01 = make_events("apr01", utc(2026, 4, 1, 9), 10, session="c")
    insert_events(dsn, apr01)
    payloads = [segment_payload(ev, segment_id=sid) for sid, ev in sessions.items()]
    payloads.append(
        segment_payload(sessions["sg_mar31"][-2:] + apr01, segment_id="sg_apr01", overlap_count=2)
    )
    publish_segments(toc_stack.nats.url, payloads)
    toc_stack.start("summarizer")
    wait_done(toc_stack, {p["segment_id"]: 1 for p in payloads})

    tree = parents(dsn)
    assert tree["segment:sg_mar31"] == "day:2026-03-31@proj"
    assert tree["day:2026-03-31@proj"] == "week:2026-W14@proj"
    assert tree["week:2026-W14@proj"] == "month:2026-04@proj"  # Thursday 2026-04-02
    assert tree["segment:sg_apr01"] == "day:2026-04-01@proj"  # its own events' day
    assert tree["day:2026-04-01@proj"] == "week:2026-W14@proj"
    assert tree["week:2026-W13@proj"] == "month:2026-03@proj"  # Thursday 2026-03-26
    assert tree["week:2026-W15@proj"] == "month:2026-04@proj"
    assert tree["day:2025-12-30@proj"] == "week:2026-W01@proj"
    assert tree["week:2026-W01@proj"] == "month:2026-01@proj"  # Thursday 2026-01-01
    assert tree["month:2026-01@proj"] == tree["month:2026-03@proj"] == "year:2026@proj"
    assert tree["year:2026@proj"] is None
    assert not any(n.startswith("year:2025") or n.startswith("month:2025") for n in tree)

    (month_children,) = rows(
        dsn,
        "SELECT v.child_ids FROM toc_nodes n JOIN toc_node_versions v USING (tenant, node_id) "
        "WHERE n.node_id = 'month:2026-04@proj' AND v.version = n.latest_version",
    )
    assert month_children[0] == ["week:2026-W14@proj", "week:2026-W15@proj"]
    (year,) = rows(
        dsn,
        "SELECT v.child_ids FROM toc_nodes n JOIN toc_node_versions v USING (tenant, node_id) "
        "WHERE n.node_id = 'year:2026@proj' AND v.version = n.latest_version",
    )
    assert year[0] == ["month:2026-01@proj", "month:2026-03@proj", "month:2026-04@proj"]

    # every bullet of every version has a grip, whose events exist and hold its excerpt
    texts = {r[0]: r[1] for r in rows(dsn, "SELECT event_id, text FROM events")}
    grips = {r[0]: r[1:] for r in rows(dsn, "SELECT grip_id, event_ids, excerpt FROM toc_grips")}
    versions = rows(dsn, "SELECT node_id, level, bullets, title, keywords FROM toc_node_versions")
    assert len({v[0] for v in versions}) == 5 + 5 + 4 + 3 + 1  # segments, days, weeks, ...
    # each segment made one version of each ancestor: W14 (2 segments), April (3), 2026 (5)
    assert len(versions) == 5 + 5 + (1 + 1 + 2 + 1) + (1 + 1 + 3) + 5
    for node_id, level, bullets, title, keywords in versions:
        assert title and keywords, node_id
        assert 3 <= len(bullets) <= 7, (node_id, bullets)
        for bullet in bullets:
            assert bullet["grip_ids"], (node_id, bullet)
            for gid in bullet["grip_ids"]:
                event_ids, excerpt = grips[gid]
                assert event_ids and all(e in texts for e in event_ids)
                core = excerpt.strip("…")
                assert any(core in " ".join(texts[e].split()) for e in event_ids), excerpt
        if level == "segment" and node_id == "segment:sg_apr01":
            cited = {e for b in bullets for g in b["grip_ids"] for e in grips[g][0]}
            assert cited <= {e.event_id for e in apr01}, "overlap events are the predecessor's"

    # one TOC message per node version, each under its <tenant>/<node_id>/v<version> id
    messages = toc_messages(toc_stack.nats.url)
    ids = [m[0] for m in messages]
    assert len(ids) == len(set(ids)) == len(versions)
    sample = dict(messages)["default/segment:sg_mar27/v1"]
    assert sample["level"] == "segment" and sample["parent_id"] == "day:2026-03-27@proj"
    assert {g["grip_id"] for g in sample["grips"]} == {
        g for b in sample["bullets"] for g in b["grip_ids"]
    }


def test_duplicate_and_stale_delivery_make_nothing_and_new_version_climbs(
    toc_stack: Stack,
) -> None:
    dsn, url = toc_stack.pg_dsn, toc_stack.nats.url
    events = make_events("dup", utc(2026, 5, 4, 9), 16)
    insert_events(dsn, events)
    v1 = segment_payload(events[:10], segment_id="sg_dup")
    publish_segments(url, [v1])
    toc_stack.start("summarizer")
    wait_done(toc_stack, {"sg_dup": 1})
    first = versions_per_node(dsn)
    assert set(first.values()) == {1} and len(first) == 5

    publish_segments(url, [v1], msg_id_suffix="-redelivered")  # JetStream would drop a repeat
    eventually(lambda: consumer_idle(url), what="duplicate handled")
    assert versions_per_node(dsn) == first

    v2 = segment_payload(events, segment_id="sg_dup", version=2)  # a late event grew it
    publish_segments(url, [v2])
    wait_done(toc_stack, {"sg_dup": 2})
    second = versions_per_node(dsn)
    assert second == {node: 2 for node in first}, "one new version of the node and each ancestor"
    latest = dict(rows(dsn, "SELECT node_id, latest_version FROM toc_nodes"))
    assert set(latest.values()) == {2}
    old_events = rows(
        dsn, "SELECT event_ids FROM toc_node_versions WHERE node_id = 'segment:sg_dup' ORDER BY 1"
    )
    assert sorted(len(r[0]) for r in old_events) == [10, 16], "old versions stay"

    publish_segments(url, [v1, v2], msg_id_suffix="-again")  # stale and duplicate
    eventually(lambda: consumer_idle(url), what="stale handled")
    assert versions_per_node(dsn) == second
    causes = rows(dsn, "SELECT node_id, cause, count(*) FROM toc_node_versions GROUP BY 1, 2")
    assert all(r[2] == 1 for r in causes)
    ids = [m[0] for m in toc_messages(url)]
    assert len(ids) == len(set(ids)) == 10


def test_segment_moving_to_another_day_then_retracted(toc_stack: Stack) -> None:
    dsn, url = toc_stack.pg_dsn, toc_stack.nats.url
    stay = make_events("stay", utc(2026, 6, 1, 8), 8, session="other")
    early = make_events("early", utc(2026, 6, 1, 22), 6, session="m")
    later = make_events("later", utc(2026, 6, 10, 9), 6, session="m")
    insert_events(dsn, stay + early + later)
    publish_segments(
        url,
        [
            segment_payload(stay, segment_id="sg_stay"),
            segment_payload(early, segment_id="sg_move"),
        ],
    )
    toc_stack.start("summarizer")
    wait_done(toc_stack, {"sg_stay": 1, "sg_move": 1})
    assert parents(dsn)["segment:sg_move"] == "day:2026-06-01@proj"

    # v2: the session was re-cut and this ordinal now holds events of another week
    publish_segments(url, [segment_payload(later, segment_id="sg_move", version=2)])
    wait_done(toc_stack, {"sg_move": 2})
    tree = parents(dsn)
    assert tree["segment:sg_move"] == "day:2026-06-10@proj"
    latest = {
        r[0]: (r[1], r[2])
        for r in rows(
            dsn,
            "SELECT n.node_id, v.child_ids, n.is_empty FROM toc_nodes n "
            "JOIN toc_node_versions v ON v.tenant = n.tenant AND v.node_id = n.node_id "
            "AND v.version = n.latest_version",
        )
    }
    assert latest["day:2026-06-01@proj"] == (["segment:sg_stay"], False)
    assert latest["day:2026-06-10@proj"] == (["segment:sg_move"], False)
    assert latest["month:2026-06@proj"][0] == ["week:2026-W23@proj", "week:2026-W24@proj"]

    publish_segments(url, [retraction(segment_payload(later, segment_id="sg_move"), 3)])
    wait_done(toc_stack, {"sg_move": 3})
    latest = {
        r[0]: (r[1], r[2])
        for r in rows(
            dsn,
            "SELECT n.node_id, v.child_ids, n.is_empty FROM toc_nodes n "
            "JOIN toc_node_versions v ON v.tenant = n.tenant AND v.node_id = n.node_id "
            "AND v.version = n.latest_version",
        )
    }
    assert latest["segment:sg_move"] == ([], True)
    assert latest["day:2026-06-10@proj"] == ([], True)
    assert latest["week:2026-W24@proj"] == ([], True)
    assert latest["month:2026-06@proj"] == (["week:2026-W23@proj"], False)
    counts = Counter(node.split(":")[0] for node in versions_per_node(dsn))
    assert counts["segment"] == 2


def test_end_to_end_from_the_gateway_through_the_real_segmenter(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    """gateway -> recorder -> segmenter -> summarizer -> query: the contract between the stages
    holds with every stage the real one (a token budget of 600 forces several segments, with
    overlap, out of one session)."""

    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_SEGMENTER__TOKEN_BUDGET="600",
        AGENT_MEMORY_SEGMENTER__OVERLAP_TOKENS="100",
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    )
    try:
        for name in ("gateway", "recorder", "segmenter", "summarizer", "query"):
            stack.start(name)
        events = [
            {
                "event_id": f"e2e-{i:03d}",
                "ts": (utc(2026, 3, 31, 23, 30) + i * timedelta(minutes=1)).isoformat(),
                "project_id": "e2e",
                "agent_id": "claude-code",
                "session_id": "live",
                "role": "user" if i % 2 == 0 else "assistant",
                "type": "message",
                "text": event_text(i),
            }
            for i in range(40)
        ]
        events.append(
            {
                **events[-1],
                "event_id": "e2e-end",
                "type": "session_end",
                "text": "",
                "ts": (utc(2026, 4, 1, 0, 15)).isoformat(),
            }
        )
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events}, timeout=30)
        assert r.status_code == 202, r.text

        def segment_nodes() -> list[tuple[Any, ...]]:
            found = rows(
                pg_dsn,
                "SELECT s.segment_id, s.version, n.source_version FROM segments s "
                "LEFT JOIN toc_nodes n ON n.node_id = 'segment:' || s.segment_id "
                "WHERE s.status = 'closed'",
            )
            return found if found and all(f[1] == f[2] for f in found) else []

        done = eventually(segment_nodes, timeout=90, what="every closed segment summarized")
        assert len(done) >= 3, "the budget cut the session into several segments"
        years = plain_http.get(f"{stack.query_url}/v1/toc", params={"project_id": "e2e"}).json()
        assert [y["node_id"] for y in years["years"]] == ["year:2026@e2e"]
        grips = rows(pg_dsn, "SELECT event_ids FROM toc_grips")
        stored = {r[0] for r in rows(pg_dsn, "SELECT event_id FROM events")}
        assert grips and all(set(g[0]) <= stored for g in grips)
        # the session crosses midnight into April 1st: both days exist, both under April
        tree = parents(pg_dsn)
        assert tree.get("day:2026-03-31@e2e") == tree.get("day:2026-04-01@e2e")
        assert tree["day:2026-03-31@e2e"] == "week:2026-W14@e2e"
    finally:
        stack.stop()
