"""The segmenter as a real process, fed by the real gateway and recorder, on real servers.

What must hold whatever the delivery: the stored segments are exactly what the pure rules give
for the stored events; every event is the own event of exactly one segment; every closed
version is on the SEGMENTS stream with the stored content, and no content is announced twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import nats
import orjson
import psycopg
import pytest
from nats.js.errors import NotFoundError

from agent_memory_common.contracts.subjects import STREAM_SEGMENTS
from agent_memory_embedded.servers import ManagedProcess, NatsServer, PostgresServer
from agent_memory_segmenter.logic import (
    EventInfo,
    SessionKey,
    Thresholds,
    estimate_tokens,
    segment,
)
from agent_memory_segmenter.settings import SegmenterOptions
from tests.helpers import eventually, make_event
from tests.stack import Stack, create_database, make_stack, start_nats

THRESHOLDS = Thresholds(gap_s=60, token_budget=200, overlap_tokens=50)
ENV = {
    "AGENT_MEMORY_SEGMENTER__GAP_S": "60",
    "AGENT_MEMORY_SEGMENTER__TOKEN_BUDGET": "200",
    "AGENT_MEMORY_SEGMENTER__OVERLAP_TOKENS": "50",
    "AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S": "3600",
    "AGENT_MEMORY_SEGMENTER__HISTORICAL_QUIET_S": "0",  # events of 2026-01-01: no early close
    "AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S": "0.3",
    # the rules are checked on every event; the generated texts repeat within a session, which
    # the recorder's dedup would keep out of every segment (tests/test_dedup_e2e.py covers that)
    "AGENT_MEMORY_RECORDER__DEDUP__ENABLED": "false",
}
WORDS = ("schema", "event", "segment", "replay", "gap", "budget", "overlap", "ulid", "postgres")
BASE_MS = 1_767_225_600_000


# --- data ------------------------------------------------------------------------------------


def generate(
    seed: int, sessions: tuple[str, ...] = ("s1", "s2", "s3"), per: int = 100
) -> list[dict[str, Any]]:
    """Sessions with gaps, short and long texts, and session_end events, in time order."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for s in sessions:
        t = BASE_MS
        for i in range(per):
            t += rng.choice([1_000, 4_000, 15_000, 30_000, 45_000, 90_000, 600_000])
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 45)))
            last = i == per - 1 and s == sessions[-1]
            kind = "session_end" if last or rng.random() < 0.02 else "message"
            out.append(
                make_event(0, session=s, event_id=f"{s}-{i:04d}", ts=t, text=text, type=kind)
            )
    return out


def post(stack: Stack, events: list[dict[str, Any]], chunk: int = 100) -> None:
    with httpx.Client(base_url=stack.gateway_url, timeout=30) as client:
        for start in range(0, len(events), chunk):
            r = client.post("/v1/events", json={"events": events[start : start + chunk]})
            assert r.status_code == 202, r.text


# --- processes -------------------------------------------------------------------------------


@contextlib.contextmanager
def pipeline(
    nats_server: NatsServer, dsn: str, workdir: Path, *, segmenters: int = 1, **env: str
) -> Iterator[Stack]:
    """Gateway, recorder and ``segmenters`` segmenter replicas."""
    stack = make_stack(nats_server, dsn, workdir, **{**ENV, **env})
    try:
        stack.start("gateway")
        stack.start("recorder")
        for n in range(segmenters):
            start_segmenter(stack, n)
        yield stack
    finally:
        stack.stop()


def start_segmenter(stack: Stack, n: int = 0) -> ManagedProcess:
    """Start replica ``n`` and wait until it consumes (it has no HTTP readiness check)."""
    name = "segmenter" if n == 0 else f"segmenter-{n}"
    log = stack.workdir / f"{name}.log"
    starts = log.read_text().count('"segmenter.started"') if log.exists() else 0
    if n == 0:
        proc = stack.start("segmenter")
    else:
        argv = [sys.executable, "-m", "agent_memory_segmenter"]
        proc = ManagedProcess(name, argv, log, env=stack.env)
        proc.start()
        stack.processes[name] = proc
    eventually(
        lambda: log.read_text().count('"segmenter.started"') > starts,
        timeout=60,
        what=f"{name} started",
    )
    return proc


async def _consumers(url: str) -> dict[str, tuple[int, int]]:
    nc = await nats.connect(url, connect_timeout=2, allow_reconnect=False)
    try:
        js = nc.jetstream(timeout=5)
        out = {}
        for stream, durable in (("EVENTS", "recorder"), ("RECORDED", "segmenter")):
            try:
                info = await js.consumer_info(stream, durable)
            except NotFoundError:
                out[durable] = (-1, -1)
                continue
            out[durable] = (info.num_pending or 0, info.num_ack_pending or 0)
        return out
    finally:
        await nc.close()


def consumers(stack: Stack) -> dict[str, tuple[int, int]]:
    return asyncio.run(_consumers(stack.nats.url))


def settled(stack: Stack, expected_events: int) -> bool:
    """All events stored and every RECORDED message handled and acknowledged."""
    if count(stack.pg_dsn, "SELECT count(*) FROM events") != expected_events:
        return False
    return all(state == (0, 0) for state in consumers(stack).values())


def count(dsn: str, query: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return int(row[0])


# --- what is stored and published ------------------------------------------------------------


def expected_segments(dsn: str) -> dict[str, dict[str, Any]]:
    """The pure rules applied to the stored events: what the segments table must hold."""
    sessions: dict[SessionKey, list[EventInfo]] = defaultdict(list)
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT tenant, project_id, session_id, event_id, ts, type, char_length(text), "
            "agent_id FROM events"
        ).fetchall()
    for tenant, project, session, event_id, ts, kind, chars, agent in rows:
        info = EventInfo(event_id, ts, kind, estimate_tokens(chars), agent)
        sessions[SessionKey(tenant, project, session)].append(info)
    out = {}
    for key, events in sessions.items():
        for plan in segment(events, THRESHOLDS):
            out[key.segment_id(plan.ordinal)] = {
                "session_id": key.session_id,
                "ordinal": plan.ordinal,
                "agent_id": plan.agent_id,
                "start_ts": plan.start_ts,
                "end_ts": plan.end_ts,
                "event_ids": plan.event_ids,
                "overlap_count": plan.overlap_count,
                "token_count": plan.token_count,
                "status": "open" if plan.close_reason is None else "closed",
                "close_reason": plan.close_reason,
            }
    return out


def stored_segments(dsn: str) -> dict[str, dict[str, Any]]:
    """Live segments (not retracted), without version and wall-clock columns."""
    with psycopg.connect(dsn) as conn:
        cur = conn.execute(
            "SELECT segment_id, session_id, ordinal, agent_id, start_ts, end_ts, event_ids, "
            "overlap_count, token_count, status, close_reason FROM segments "
            "WHERE status <> 'retracted'"
        )
        names = [d.name for d in cur.description or []]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    return {r.pop("segment_id"): r for r in rows}


def segment_rows(dsn: str) -> dict[str, dict[str, Any]]:
    """Every row of the segments table, by segment id."""
    with psycopg.connect(dsn) as conn:
        cur = conn.execute("SELECT * FROM segments")
        names = [d.name for d in cur.description or []]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    return {r["segment_id"]: r for r in rows}


async def _published(url: str) -> list[tuple[str, dict[str, Any]]]:
    nc = await nats.connect(url, connect_timeout=2, allow_reconnect=False)
    try:
        js = nc.jetstream(timeout=5)
        try:
            info = await js.stream_info(STREAM_SEGMENTS)
        except NotFoundError:
            return []
        out = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            if info.state.messages == 0:
                break
            msg = await js.get_msg(STREAM_SEGMENTS, seq)
            assert msg.data is not None and msg.headers is not None
            out.append((msg.headers["Nats-Msg-Id"], orjson.loads(msg.data)))
        return out
    finally:
        await nc.close()


def published(stack: Stack) -> list[tuple[str, dict[str, Any]]]:
    return asyncio.run(_published(stack.nats.url))


def check_coverage(dsn: str) -> None:
    """Every stored event is the own event of exactly one live segment of its session."""
    with psycopg.connect(dsn) as conn:
        events = conn.execute(
            'SELECT session_id, event_id FROM events ORDER BY session_id, ts, event_id COLLATE "C"'
        ).fetchall()
        segs = conn.execute(
            "SELECT session_id, event_ids, overlap_count FROM segments "
            "WHERE status <> 'retracted' ORDER BY session_id, ordinal"
        ).fetchall()
    own: dict[str, list[str]] = defaultdict(list)
    for session, ids, overlap in segs:
        own[session] += ids[overlap:]
    by_session: dict[str, list[str]] = defaultdict(list)
    for session, event_id in events:
        by_session[session].append(event_id)
    assert own == by_session


def check_publications(stack: Stack) -> list[tuple[str, dict[str, Any]]]:
    """The stream agrees with the tables, and no segment content was announced twice."""
    msgs = published(stack)
    ids = [m for m, _ in msgs]
    assert len(ids) == len(set(ids)), "a version was published twice"
    for msg_id, body in msgs:
        assert msg_id == f"{body['tenant']}/{body['segment_id']}/v{body['version']}"
    with psycopg.connect(stack.pg_dsn) as conn:
        versions = {
            f"{t}/{s}/v{v}": p
            for t, s, v, p in conn.execute(
                "SELECT tenant, segment_id, version, payload FROM segment_versions"
            ).fetchall()
        }
        assert count(stack.pg_dsn, "SELECT count(*) FROM segment_outbox") == 0
    assert dict(msgs) == versions, "stream and segment_versions differ"
    rows = segment_rows(stack.pg_dsn)
    history: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _, body in msgs:
        history[body["segment_id"]].append(body)
    for seg_id, row in rows.items():
        bodies = sorted(history.get(seg_id, []), key=lambda b: b["version"])
        if row["status"] == "open":
            assert all(b["version"] < row["version"] for b in bodies)
            continue
        latest = bodies[-1]
        assert latest["version"] == row["version"]
        if row["status"] == "closed":
            assert latest["event_ids"] == row["event_ids"]
            assert latest["close_reason"] == row["close_reason"]
            assert latest["token_count"] == row["token_count"]
            assert datetime.fromisoformat(latest["end_ts"]) == row["end_ts"]
        for before, after in itertools.pairwise(bodies):
            strip = ("version",)
            assert {k: v for k, v in before.items() if k not in strip} != {
                k: v for k, v in after.items() if k not in strip
            }, f"{seg_id}: the same content was published twice"
    return msgs


def check_all(stack: Stack) -> list[tuple[str, dict[str, Any]]]:
    assert stored_segments(stack.pg_dsn) == expected_segments(stack.pg_dsn)
    check_coverage(stack.pg_dsn)
    return check_publications(stack)


# --- tests -----------------------------------------------------------------------------------


def test_in_order_delivery_segments_every_event_once_and_publishes_closed_segments(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    events = generate(seed=1)
    with pipeline(nats_server, pg_dsn, tmp_path) as stack:
        post(stack, events)
        eventually(lambda: settled(stack, len(events)), timeout=60, what="segmenter drained")
        msgs = check_all(stack)
        rows = segment_rows(stack.pg_dsn)
    reasons = {r["close_reason"] for r in rows.values()}
    # the data exercises every rule, and in-order delivery never needs a second version
    assert {"gap", "token_budget", "session_end", None} <= reasons
    assert any(r["overlap_count"] > 0 for r in rows.values())
    assert all(r["version"] == 1 for r in rows.values())
    closed = [r for r in rows.values() if r["status"] == "closed"]
    assert len(msgs) == len(closed) > 10
    assert {r["status"] for r in rows.values()} == {"open", "closed"}


def test_replay_shuffled_late_and_duplicated_into_an_empty_database_gives_the_same_segments(
    pg_server: PostgresServer, tmp_path: Path
) -> None:
    events = generate(seed=2)
    # three closed segments (gap, gap, session_end) of which a late event at 50 s merges the
    # first two: the session has one segment fewer, so its last one is retracted
    merge = [
        make_event(0, session="merge", event_id=f"m-{i}", ts=BASE_MS + ms, type=kind)
        for i, (ms, kind) in enumerate(
            [(0, "message"), (100_000, "message"), (300_000, "session_end"), (50_000, "message")]
        )
    ]
    late = _late_rounds(events, seed=9)
    late[0] += merge[:3]
    late[-1] += merge[3:]
    runs = []
    for name, rounds in (("in-order", [events + merge]), ("shuffled", late)):
        workdir = tmp_path / name
        nats_server = start_nats(workdir)
        dsn = create_database(pg_server)
        try:
            with pipeline(nats_server, dsn, workdir) as stack:
                seen: set[str] = set()
                for batch in rounds:
                    post(stack, batch)
                    seen |= {e["event_id"] for e in batch}
                    # let the segmenter close segments before the late events arrive
                    n = len(seen)

                    def round_done(n: int = n) -> bool:
                        return settled(stack, n)

                    eventually(round_done, timeout=60, what="round drained")
                check_all(stack)
                runs.append((stored_segments(dsn), segment_rows(dsn)))
        finally:
            nats_server.stop()
    (first, _), (second, second_rows) = runs
    assert second == first
    # the late rounds really did change closed segments (else this test proves little)
    assert any(r["version"] > 1 for r in second_rows.values())
    assert any(r["status"] == "retracted" for r in second_rows.values())


def _late_rounds(events: list[dict[str, Any]], seed: int) -> list[list[dict[str, Any]]]:
    """Four rounds of shuffled events, each with some repeats of earlier ones."""
    rng = random.Random(seed)
    shuffled = events[:]
    rng.shuffle(shuffled)
    size = len(shuffled) // 4 + 1
    rounds = [shuffled[i : i + size] for i in range(0, len(shuffled), size)]
    seen: list[dict[str, Any]] = []
    out = []
    for r in rounds:
        repeats = rng.sample(seen + r, min(20, len(seen + r)))
        out.append(r + repeats)
        seen += r
    return out


def test_two_segmenter_replicas_at_once_give_the_same_segments_as_the_rules(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    events = generate(seed=3)
    rng = random.Random(4)
    shuffled = events + rng.sample(events, 40)
    rng.shuffle(shuffled)
    env = {"AGENT_MEMORY_SEGMENTER__BATCH_SIZE": "4", "AGENT_MEMORY_LOG_LEVEL": "DEBUG"}
    with pipeline(nats_server, pg_dsn, tmp_path, segmenters=2, **env) as stack:
        post(stack, shuffled, chunk=20)
        eventually(lambda: settled(stack, len(events)), timeout=90, what="segmenters drained")
        check_all(stack)
        # both replicas took part
        assert '"segmenter.batch"' in stack.log("segmenter")
        assert '"segmenter.batch"' in stack.log("segmenter-1")


def test_idle_flush_closes_a_quiet_session_once_and_a_resumed_one_as_a_new_version(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    idle = {"AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S": "1.5"}
    first = [make_event(i, session="quiet", event_id=f"q-{i}", ts=BASE_MS + i) for i in range(5)]
    with pipeline(nats_server, pg_dsn, tmp_path, segmenters=2, **idle) as stack:
        post(stack, first)
        row = eventually(
            lambda: _closed_row(stack.pg_dsn, 1), timeout=30, what="idle segment closed"
        )
        assert row["close_reason"] == "idle" and row["event_ids"] == [f"q-{i}" for i in range(5)]
        time.sleep(1.5)  # a few more idle rounds on both replicas: nothing more may happen
        assert [m for m, _ in published(stack)] == [f"default/{row['segment_id']}/v1"]
        assert _flushes(stack) == 1
        with psycopg.connect(pg_dsn) as conn:
            last = conn.execute("SELECT max(recorded_at) FROM events").fetchone()
        assert last is not None
        assert (row["closed_at"] - last[0]).total_seconds() >= 1.5

        # the session resumes within the gap: the same segment grows, as version 2
        more = [make_event(i, session="quiet", event_id=f"q-{i}", ts=BASE_MS + i) for i in (5, 6)]
        post(stack, more)
        row = eventually(lambda: _closed_row(stack.pg_dsn, 2), timeout=30, what="v2 closed")
        assert row["event_ids"] == [f"q-{i}" for i in range(7)]
        assert [m for m, _ in published(stack)] == [
            f"default/{row['segment_id']}/v1",
            f"default/{row['segment_id']}/v2",
        ]
        assert _flushes(stack) == 2
        check_all_but_idle(stack)


def test_a_historical_session_closes_seconds_after_its_events_a_live_one_waits(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    """Issue 53, point 3. With the default idle flush (600 s of wall clock), the last segment
    of a session whose events are months old (an import) closes once no event came for it for
    HISTORICAL_QUIET_S, instead of ten minutes later; the last segment of a live session (events
    of now) stays open however quiet it is, as the agent may only have paused."""
    defaults = SegmenterOptions()
    assert (defaults.idle_flush_s, defaults.historical_quiet_s) == (600.0, 5.0)
    in_force = {
        "AGENT_MEMORY_SEGMENTER__IDLE_FLUSH_S": str(defaults.idle_flush_s),
        "AGENT_MEMORY_SEGMENTER__HISTORICAL_QUIET_S": str(defaults.historical_quiet_s),
        "AGENT_MEMORY_SEGMENTER__IDLE_CHECK_INTERVAL_S": str(defaults.idle_check_interval_s),
    }
    now_ms = int(time.time() * 1000)
    old = [make_event(i, session="imported", event_id=f"old-{i}", ts=BASE_MS + i) for i in range(6)]
    live = [make_event(i, session="live", event_id=f"live-{i}", ts=now_ms + i) for i in range(3)]
    with pipeline(nats_server, pg_dsn, tmp_path, segmenters=1, **in_force) as stack:
        post(stack, old[:3] + live)
        time.sleep(2)  # less than the quiet period: the import goes on, the tail stays open
        post(stack, old[3:])
        posted = time.monotonic()

        def imported_closed() -> dict[str, Any] | None:
            rows = [r for r in segment_rows(stack.pg_dsn).values() if r["session_id"] == "imported"]
            return rows[0] if len(rows) == 1 and rows[0]["status"] == "closed" else None

        row = eventually(imported_closed, timeout=60, what="the imported session's tail closed")
        took = time.monotonic() - posted
        assert took < 30, f"closed {took:.0f} s after the last post"
        assert row["close_reason"] == "idle" and row["version"] == 1
        assert row["event_ids"] == [f"old-{i}" for i in range(6)]
        with psycopg.connect(pg_dsn) as conn:
            last = conn.execute(
                "SELECT max(recorded_at) FROM events WHERE session_id = 'imported'"
            ).fetchone()
        assert last is not None
        quiet = (row["closed_at"] - last[0]).total_seconds()
        assert quiet >= defaults.historical_quiet_s, quiet  # quiet first, then closed
        assert [m for m, _ in published(stack)] == [f"default/{row['segment_id']}/v1"]

        time.sleep(defaults.historical_quiet_s + defaults.idle_check_interval_s + 1)
        (live_row,) = [r for r in segment_rows(pg_dsn).values() if r["session_id"] == "live"]
        assert live_row["status"] == "open" and not live_row["historical"]
        assert len(published(stack)) == 1


def _closed_row(dsn: str, version: int) -> dict[str, Any] | None:
    rows = [r for r in segment_rows(dsn).values() if r["status"] == "closed"]
    if len(rows) == 1 and rows[0]["version"] == version:
        return rows[0]
    return None


def _flushes(stack: Stack) -> int:
    logs = stack.log("segmenter") + stack.log("segmenter-1")
    return logs.count('"segmenter.idle_flushed"')


def check_all_but_idle(stack: Stack) -> None:
    """As check_all, except that the idle flush closed what the rules leave open."""
    expected = expected_segments(stack.pg_dsn)
    for seg in expected.values():
        if seg["status"] == "open":
            seg["status"], seg["close_reason"] = "closed", "idle"
    assert stored_segments(stack.pg_dsn) == expected
    check_coverage(stack.pg_dsn)
    check_publications(stack)


@pytest.mark.slow
def test_kill_9_of_the_segmenter_mid_run_loses_and_duplicates_nothing(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    events = generate(seed=5, sessions=("k1", "k2", "k3", "k4"), per=100)
    env = {"AGENT_MEMORY_SEGMENTER__BATCH_SIZE": "1"}
    with pipeline(nats_server, pg_dsn, tmp_path, segmenters=0, **env) as stack:
        post(stack, events)
        # everything recorded first, so that the segmenter has a long backlog to be killed in
        eventually(
            lambda: (
                consumers(stack)["recorder"] == (0, 0)
                and count(pg_dsn, "SELECT count(*) FROM events") == len(events)
            ),
            timeout=60,
            what="events recorded",
        )
        start_segmenter(stack)
        eventually(
            lambda: count(pg_dsn, "SELECT count(*) FROM segment_versions") >= 3,
            timeout=60,
            what="segmenter under way",
        )
        stack.processes["segmenter"].kill()
        pending, ack_pending = consumers(stack)["segmenter"]
        assert pending + ack_pending > 0, "the kill must land mid-run"
        start_segmenter(stack)
        eventually(lambda: settled(stack, len(events)), timeout=90, what="segmenter drained")
        check_all(stack)
