"""Nothing lost, nothing doubled: kill -9 of the recorder, and a nats-server restart, mid-ingest."""

from __future__ import annotations

import threading
import time

import httpx
import psycopg
import pytest

from tests.helpers import drained, eventually, make_event
from tests.stack import Stack

pytestmark = pytest.mark.slow


def _count(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*), count(DISTINCT event_id) FROM events").fetchone()
    assert row is not None
    assert row[0] == row[1], "an event was stored twice"
    return int(row[0])


def test_kill_9_recorder_mid_stream_then_restart_stores_exactly_10000(stack: Stack) -> None:
    total = 10_000
    # small batches keep the recorder busy for a few seconds, so the kill lands mid-stream
    stack.processes["recorder"].stop()
    stack.env["AGENT_MEMORY_RECORDER__BATCH_SIZE"] = "25"
    stack.start("recorder")
    with httpx.Client(base_url=stack.gateway_url, timeout=30) as client:
        for start in range(0, total, 500):
            batch = [make_event(i) for i in range(start, start + 500)]
            r = client.post("/v1/events", json={"events": batch})
            assert r.status_code == 202, r.text
    eventually(lambda: _count(stack.pg_dsn) >= 500, what="recorder mid-stream", timeout=60)
    stack.processes["recorder"].kill()
    stored_at_crash = _count(stack.pg_dsn)
    assert 0 < stored_at_crash < total, "the crash must happen mid-stream"
    stack.start("recorder")
    eventually(lambda: drained(stack.query_url, total), timeout=120, what="10,000 events drained")
    assert _count(stack.pg_dsn) == total


def test_nats_restart_during_ingest_loses_no_accepted_event(stack: Stack) -> None:
    accepted: list[str] = []
    refused = 0
    stop = threading.Event()

    def client_loop() -> None:
        nonlocal refused
        i = 0
        with httpx.Client(base_url=stack.gateway_url, timeout=30) as client:
            while not stop.is_set():
                batch = [make_event(j) for j in range(i, i + 20)]
                try:
                    r = client.post("/v1/events", json={"events": batch})
                except httpx.HTTPError:
                    refused += 1
                    continue
                if r.status_code == 202:
                    accepted.extend(r.json()["event_ids"])
                    i += 20
                else:
                    assert r.status_code == 503, r.text
                    refused += 1
                    time.sleep(0.05)

    thread = threading.Thread(target=client_loop)
    thread.start()
    try:
        eventually(lambda: len(accepted) >= 400, what="ingest under way")
        stack.nats.stop()
        time.sleep(1.5)
        stack.nats.start(timeout=30)
        n = len(accepted)
        eventually(lambda: len(accepted) >= n + 400, timeout=60, what="ingest resumed")
    finally:
        stop.set()
        thread.join(timeout=60)
    assert refused > 0, "the restart should have been visible to the client"
    eventually(lambda: drained(stack.query_url, len(set(accepted))), timeout=120, what="drained")
    with psycopg.connect(stack.pg_dsn) as conn:
        stored = {r[0] for r in conn.execute("SELECT event_id FROM events")}
    assert set(accepted) <= stored
