"""The event log end to end: gateway -> JetStream -> recorder -> Postgres -> query service,
every part a real process on a real nats-server and Postgres.

The tests that post and read back events of their own ids share the module's stack
(``shared_stack``); those that count every stored event, or stop NATS, get one each (``stack``).
"""

from __future__ import annotations

import functools
import time
from typing import Any

import psycopg

from tests import plain_http
from tests.helpers import drained, eventually, make_event
from tests.stack import Stack


def test_round_trip_single_event(shared_stack: Stack) -> None:
    body = make_event(1, text="remember: the schema uses ULIDs", metadata={"speaker": "Ann"})
    r = plain_http.post(f"{shared_stack.gateway_url}/v1/events", json=body)
    assert r.status_code == 202, r.text
    assert r.json() == {"accepted": 1, "event_ids": ["e-000001"], "refused": 0, "refusals": []}

    got = eventually(
        lambda: (
            (resp := plain_http.get(f"{shared_stack.query_url}/v1/events/e-000001")).status_code
            == 200
            and resp.json()
        ),
        what="event stored",
    )
    assert got["text"] == "remember: the schema uses ULIDs"
    assert got["tenant"] == "default"
    assert got["project_id"] == "proj"
    assert got["role"] == "assistant"
    assert got["metadata"] == {"speaker": "Ann"}
    assert got["ts"].startswith("2026-01-01T00:00:01")


def test_an_id_with_a_slash_can_be_fetched(shared_stack: Stack) -> None:
    """The gateway accepts any printable id, so the query service must serve every one back."""
    body = make_event(1, event_id="run/7/step-1")
    assert plain_http.post(f"{shared_stack.gateway_url}/v1/events", json=body).status_code == 202

    def fetched(path: str) -> dict[str, Any] | None:
        resp = plain_http.get(f"{shared_stack.query_url}/v1/events/{path}")
        return resp.json() if resp.status_code == 200 else None

    for path in ("run/7/step-1", "run%2F7%2Fstep-1"):  # as typed, and as clients quote it
        got = eventually(functools.partial(fetched, path), what=f"event fetched as {path}")
        assert got["event_id"] == "run/7/step-1"


def test_event_without_id_or_ts_gets_ulid_and_receive_time(shared_stack: Stack) -> None:
    body = {"project_id": "p", "agent_id": "a", "session_id": "s", "role": "user", "text": "hi"}
    before = time.time()
    r = plain_http.post(f"{shared_stack.gateway_url}/v1/events", json=body)
    assert r.status_code == 202, r.text
    (event_id,) = r.json()["event_ids"]
    assert len(event_id) == 26
    got = eventually(
        lambda: (
            (resp := plain_http.get(f"{shared_stack.query_url}/v1/events/{event_id}")).status_code
            == 200
            and resp.json()
        )
    )
    from datetime import datetime

    assert abs(datetime.fromisoformat(got["ts"]).timestamp() - before) < 30
    assert got["type"] == "message"


def test_retried_batch_is_stored_once(stack: Stack) -> None:
    batch = {"events": [make_event(i) for i in range(100)]}
    for _ in range(3):
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json=batch)
        assert r.status_code == 202, r.text
        assert r.json()["accepted"] == 100
    eventually(lambda: drained(stack.query_url, 100), what="100 events drained")
    with psycopg.connect(stack.pg_dsn) as conn:
        (n,) = conn.execute("SELECT count(*) FROM events").fetchone() or (0,)
    assert n == 100


def test_secrets_are_redacted_before_storage(shared_stack: Stack) -> None:
    text = "use AKIAIOSFODNN7EXAMPLE and postgres://app:hunter2secret@db/x to connect"
    r = plain_http.post(
        f"{shared_stack.gateway_url}/v1/events",
        json=make_event(7, text=text, metadata={"cmd": "export PGPASSWORD=s3cr3tValue42"}),
    )
    assert r.status_code == 202, r.text
    got = eventually(
        lambda: (
            (resp := plain_http.get(f"{shared_stack.query_url}/v1/events/e-000007")).status_code
            == 200
            and resp.json()
        )
    )
    assert "AKIAIOSFODNN7EXAMPLE" not in got["text"]
    assert "hunter2secret" not in got["text"]
    assert "[REDACTED:aws_access_key]" in got["text"]
    assert "s3cr3tValue42" not in str(got["metadata"])
    assert sum(got["metadata"]["_redactions"].values()) >= 3
    with psycopg.connect(shared_stack.pg_dsn) as conn:
        raw = conn.execute("SELECT text, metadata::text FROM events").fetchall()
    assert all("AKIAIOSFODNN7EXAMPLE" not in t and "s3cr3tValue42" not in m for t, m in raw)


def test_list_filters_order_and_cursor_pagination(stack: Stack) -> None:
    events = [make_event(i, session="s1" if i < 30 else "s2") for i in range(50)]
    assert (
        plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events}).status_code
        == 202
    )
    eventually(lambda: drained(stack.query_url, 50))

    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {"session_id": "s1", "limit": 7}
        if cursor:
            params["cursor"] = cursor
        page = plain_http.get(f"{stack.query_url}/v1/events", params=params).json()
        seen += [e["event_id"] for e in page["events"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [f"e-{i:06d}" for i in range(30)]

    desc = plain_http.get(
        f"{stack.query_url}/v1/events", params={"order": "desc", "limit": 3}
    ).json()
    assert [e["event_id"] for e in desc["events"]] == ["e-000049", "e-000048", "e-000047"]

    window = plain_http.get(
        f"{stack.query_url}/v1/events",
        params={"since": "2026-01-01T00:00:10Z", "until": "2026-01-01T00:00:13Z"},
    ).json()
    assert [e["event_id"] for e in window["events"]] == ["e-000010", "e-000011", "e-000012"]

    missing = plain_http.get(f"{stack.query_url}/v1/events/nope")
    assert missing.status_code == 404
    assert missing.json()["field"] == "event_id"
    bad = plain_http.get(f"{stack.query_url}/v1/events", params={"since": "yesterday-ish"})
    assert bad.status_code == 422
    assert bad.json()["field"] == "since"
    bad_cursor = plain_http.get(f"{stack.query_url}/v1/events", params={"cursor": "xyz"})
    assert bad_cursor.status_code == 422
    assert bad_cursor.json()["field"] == "cursor"


def test_status_reports_consumers_and_drained(stack: Stack) -> None:
    status = plain_http.get(f"{stack.query_url}/v1/status").json()
    names = {c["name"] for c in status["consumers"]}
    assert "recorder" in names
    assert status["events_stored"] == 0
    plain_http.post(
        f"{stack.gateway_url}/v1/events", json={"events": [make_event(i) for i in range(5)]}
    )
    eventually(lambda: drained(stack.query_url, 5))
    status = plain_http.get(f"{stack.query_url}/v1/status").json()
    recorder = next(c for c in status["consumers"] if c["name"] == "recorder")
    assert recorder["pending"] == 0 and recorder["ack_pending"] == 0
    assert recorder["ack_floor"] >= 5
    for url in (stack.gateway_url, stack.query_url):
        assert plain_http.get(f"{url}/healthz").status_code == 200
        assert plain_http.get(f"{url}/readyz").status_code == 200
    assert plain_http.get(f"{stack.query_url}/docs").status_code == 200
    assert "/v1/events" in plain_http.get(f"{stack.gateway_url}/openapi.json").json()["paths"]


def test_gateway_answers_503_while_nats_is_down_and_recovers(stack: Stack) -> None:
    assert plain_http.post(f"{stack.gateway_url}/v1/events", json=make_event(1)).status_code == 202
    stack.nats.stop()
    started = time.monotonic()
    r = plain_http.post(f"{stack.gateway_url}/v1/events", json=make_event(2), timeout=30)
    assert r.status_code == 503, r.text
    assert r.headers["retry-after"].isdigit()
    assert time.monotonic() - started < 10
    stack.nats.start(timeout=30)
    eventually(
        lambda: (
            plain_http.post(f"{stack.gateway_url}/v1/events", json=make_event(2)).status_code == 202
        ),
        timeout=60,
        what="gateway accepting again",
    )
    eventually(lambda: drained(stack.query_url, 2), timeout=60, what="both events stored")
