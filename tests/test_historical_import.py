"""Issue 53, point 3: imported history is ready at once.

Every service runs with the default segmenter settings (idle flush 600 s). A backlog of
sessions that ended months ago is posted the way ``agent-memory import`` posts it, beside a
live session (events of now). Before the fix, the last segment of each imported session
closed only after the 600 s wall-clock idle flush, while ``/v1/status`` already said
``drained: true`` (every consumer had caught up with what it had been given), so the TOC was
complete ten minutes after the last vector. Now those segments close seconds after the events
are in, ``drained`` stays false while one of them is open, and the live session's segment stays
open without holding ``drained`` back.
"""

from __future__ import annotations

import functools
import random
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from agent_memory_common.core.catalog import CONSUMERS
from agent_memory_embedded.servers import NatsServer
from agent_memory_segmenter.settings import SegmenterOptions
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import LEAN, Stack, make_stack

AGENT_MEMORY = str(Path(sys.executable).parent / "agent-memory")
CLAUDE_PROJECTS = (
    Path(__file__).parents[1]
    / "libs/agents/agent_memory_hooks/tests/fixtures/hooks/claude-code/projects"
)
CLAUDE_SESSION = "5d0c7a3e-9b1f-4e2a-8c6d-2f4e6a8b0c1d"  # of 2026-02-03
PROJECT = "imported"
SESSIONS = tuple(f"hist-{n}" for n in range(3))
PER_SESSION = 40
WORDS = tuple(
    [
        "schema",
        "migration",
        "outbox",
        "tenant",
        "lock",
        "timeout",
        "replica",
        "segment",
        "summary",
        "vector",
        "index",
        "cursor",
        "retention",
        "pruner",
        "gateway",
        "recorder",
        "embedding",
        "token",
        "budget",
        "overlap",
        "gap",
        "idle",
        "flush",
        "topic",
        "cluster",
        "salience",
        "grip",
        "decision",
        "constraint",
        "deadline",
        "rollback",
        "release",
        "canary",
    ]
)


def backlog(now_ms: int) -> list[dict[str, Any]]:
    """Sessions of about four months ago, 30 s between events: one segment each."""
    rng = random.Random(53)
    out = []
    for n, session in enumerate(SESSIONS):
        start = now_ms - (120 - n) * 86_400_000
        for i in range(PER_SESSION):
            text = f"{session} step {i}: " + " ".join(rng.sample(WORDS, 10))
            out.append(
                make_event(
                    0,
                    project=PROJECT,
                    session=session,
                    event_id=f"{session}-{i:03d}",
                    ts=start + i * 30_000,
                    text=text,
                )
            )
    return out


def historical_segments(dsn: str) -> list[tuple[str, str]]:
    """(segment_id, status) of the imported sessions' live segments."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT segment_id, status FROM segments WHERE project_id = %s "
            "AND status <> 'retracted' ORDER BY segment_id",
            (PROJECT,),
        ).fetchall()
    return [(str(a), str(b)) for a, b in rows]


def toc_complete(dsn: str) -> datetime | None:
    """When the imported sessions' TOC was last written, once every segment has its node
    (summarising its current version) under a day node; None before that."""
    with psycopg.connect(dsn) as conn:
        segments = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE status = 'closed') FROM segments "
            "WHERE project_id = %s AND status <> 'retracted'",
            (PROJECT,),
        ).fetchone()
        nodes = conn.execute(
            "SELECT count(*) FILTER (WHERE n.level = 'segment' AND n.source_version = s.version"
            "                          AND n.parent_id LIKE 'day:%%'),"
            "       max(n.updated_at) "
            "FROM toc_nodes n LEFT JOIN segments s"
            "  ON s.tenant = n.tenant AND n.node_id = 'segment:' || s.segment_id "
            "WHERE n.project_id = %s",
            (PROJECT,),
        ).fetchone()
        days = conn.execute(
            "SELECT count(*) FROM toc_nodes WHERE project_id = %s AND level = 'day'", (PROJECT,)
        ).fetchone()
    assert segments is not None and nodes is not None and days is not None
    total, closed = segments
    if not total or closed != total or nodes[0] != total or days[0] != len(SESSIONS):
        return None
    return nodes[1]  # type: ignore[no-any-return]


def last_event_vector(dsn: str) -> datetime:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT max(indexed_at), count(*) FROM vector_docs WHERE type = 'event' "
            "AND project_id = %s",
            (PROJECT,),
        ).fetchone()
    assert row is not None and row[1] == len(SESSIONS) * PER_SESSION, row
    return row[0]  # type: ignore[no-any-return]


def agent_memory(stack: Stack, *args: str) -> str:
    proc = subprocess.run(
        [AGENT_MEMORY, *args, *(["--quiet"] if args[0] == "import" else [])],
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _ok(url: str) -> bool:
    try:
        return plain_http.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.timeout(900)
def test_an_imported_backlog_is_in_the_toc_within_seconds_and_drained_waits_for_it(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    defaults = SegmenterOptions()
    assert defaults.idle_flush_s == 600.0  # the idle flush that used to decide, in force
    stack = make_stack(nats_server, pg_dsn, tmp_path, **LEAN)
    assert not any(k.startswith("AGENT_MEMORY_SEGMENTER__") for k in stack.env)
    try:
        for name in ("query", "gateway", *CONSUMERS):
            stack.start(name, timeout=300)
        for name in CONSUMERS:  # the embedder and topics load their model first
            ready = functools.partial(_ok, f"{stack.metrics_urls[name]}/readyz")
            eventually(ready, timeout=400, what=f"{name} ready")
        now_ms = int(time.time() * 1000)
        live = [
            make_event(i, project="live", session="live", event_id=f"live-{i}", ts=now_ms + i)
            for i in range(2)
        ]
        events = backlog(now_ms)
        with httpx.Client(base_url=stack.gateway_url, timeout=30) as client:
            assert client.post("/v1/events", json={"events": live}).status_code == 202
            for start in range(0, len(events), 50):  # in batches, as the importer does
                r = client.post("/v1/events", json={"events": events[start : start + 50]})
                assert r.status_code == 202, r.text
        posted = time.monotonic()
        with psycopg.connect(stack.pg_dsn) as conn:
            row = conn.execute("SELECT now()").fetchone()
        assert row is not None
        posted_at: datetime = row[0]  # the database's clock, as the TOC's updated_at

        # Until the TOC is complete and the status drained: sample the status, then the
        # segments. A segment still open after the status answered was open when it answered.
        wrong: list[str] = []
        closing_seen = 0
        done_at: float | None = None
        status: dict[str, Any] = {}
        while time.monotonic() - posted < 600:  # the consumers' pace is the machine's
            status = plain_http.get(f"{stack.query_url}/v1/status", timeout=10).json()
            still_open = [s for s, st in historical_segments(stack.pg_dsn) if st == "open"]
            if still_open:
                closing_seen = max(closing_seen, status["segments_closing"])
            if status["drained"] and still_open:
                wrong.append(f"drained while {still_open} open: {status}")
            stored = status["events_stored"] == len(events) + len(live)
            if status["drained"] and stored and toc_complete(stack.pg_dsn) is not None:
                done_at = time.monotonic()
                break
            time.sleep(0.3)
        assert not wrong, wrong[:3]
        assert done_at is not None, f"never drained with the TOC complete: {status}"
        assert closing_seen >= 1  # the open historical tails were counted as closing

        complete = toc_complete(stack.pg_dsn)
        assert complete is not None
        toc_s = (complete - posted_at).total_seconds()
        after_vectors = (complete - last_event_vector(stack.pg_dsn)).total_seconds()
        print(
            f"\nimported {len(events)} events in {len(SESSIONS)} sessions: TOC complete "
            f"{toc_s:.1f} s after the last post and {after_vectors:.1f} s after the last event "
            f"vector; drained {done_at - posted:.1f} s after the last post"
        )
        assert toc_s < 60, f"TOC complete {toc_s:.0f} s after the last post (idle flush: 600 s)"
        assert after_vectors < 30, f"TOC complete {after_vectors:.0f} s after the last vector"

        # the live session's last segment waits for its agent, open, and holds nothing back
        assert status["segments_open"] == 1 and status["segments_closing"] == 0, status
        with psycopg.connect(stack.pg_dsn) as conn:
            row = conn.execute(
                "SELECT status, historical FROM segments WHERE session_id = 'live'"
            ).fetchone()
        assert row == ("open", False)

        # the command: an import of a Claude Code session of months ago, waiting for the
        # phases; the status shows them too
        out = agent_memory(stack, "import", "claude-code", str(CLAUDE_PROJECTS), "--wait", "300")
        assert "waiting for the pipeline" in out and "done: the imported sessions" in out, out
        assert re.search(r"segments +working +\d+ open, [1-9]\d* closing", out), out
        with psycopg.connect(stack.pg_dsn) as conn:
            states = conn.execute(
                "SELECT DISTINCT s.status, n.node_id IS NOT NULL FROM segments s "
                "LEFT JOIN toc_nodes n ON n.node_id = 'segment:' || s.segment_id "
                "WHERE s.session_id = %s",
                (CLAUDE_SESSION,),
            ).fetchall()
        assert states == [("closed", True)], states
        out = agent_memory(stack, "status")
        assert "drained: True" in out and "phases:" in out, out
        assert re.search(r"segments +done +1 open, 0 closing", out), out
    finally:
        stack.stop()
