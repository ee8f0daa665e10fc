"""The fast intake path gives the pydantic path's answer for every input.

``prepare`` skips pydantic when plain checks prove a request valid. That is only safe if the
fast path never accepts what ``EventIn`` refuses and writes byte-for-byte the wire JSON that
``Event.to_wire`` writes, so these tests run both paths over the same inputs: hand-picked events
and a few hundred random combinations of good and bad field values.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from agent_memory_common.redaction.engine import Redactor
from agent_memory_common.web.http import ApiError
from agent_memory_gateway.intake import (
    _fast_items,
    check_batch,
    normalise,
    parse_body,
    prepare,
    validate,
)
from agent_memory_gateway.settings import GatewayOptions

OPTIONS = GatewayOptions(max_event_bytes=4096)
REDACTOR = Redactor()
RECEIVED = datetime(2026, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)
ABSENT = object()

BASE: dict[str, Any] = {
    "project_id": "agent-memory",
    "agent_id": "claude-code",
    "session_id": "s-1",
    "role": "assistant",
    "text": "hello",
}


def reference(body: bytes) -> list[bytes] | ApiError:
    """The pydantic path on its own: what the gateway answered before the fast path."""
    try:
        raw, batch = parse_body(body)
        check_batch(raw, batch, OPTIONS)
        items = validate(raw, batch, OPTIONS)
    except ApiError as exc:
        return exc
    events = normalise(items, tenant="t", received_at=RECEIVED, redactor=REDACTOR)
    return [e.to_wire() for e in events]


def fast(body: bytes) -> list[bytes] | ApiError:
    try:
        prepared = prepare(body, OPTIONS, tenant="t", received_at=RECEIVED, redactor=REDACTOR)
    except ApiError as exc:
        return exc
    return [p.wire for p in prepared]


def took_fast_path(body: bytes) -> bool:
    raw, _ = parse_body(body)
    return _fast_items(raw, OPTIONS.max_event_bytes) is not None


def without_generated_ids(wires: list[bytes], sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Decoded events; ids the gateway generated (random ULIDs) become a marker."""
    out = []
    for wire, event in zip(wires, sent, strict=True):
        data = orjson.loads(wire)
        if event.get("event_id") is None:
            assert len(data["event_id"]) == 26
            data["event_id"] = "<generated>"
        out.append(data)
    return out


def assert_same(body: bytes, sent: list[dict[str, Any]]) -> None:
    want, got = reference(body), fast(body)
    if isinstance(want, ApiError):
        assert isinstance(got, ApiError), f"fast path accepted what pydantic refuses: {body!r}"
        assert (got.status, got.code, got.field, got.message, got.details) == (
            want.status,
            want.code,
            want.field,
            want.message,
            want.details,
        )
        assert not took_fast_path(body)
        return
    assert isinstance(got, list), got
    if all(e.get("event_id") is not None for e in sent):
        assert got == want  # byte for byte
    else:
        assert without_generated_ids(got, sent) == without_generated_ids(want, sent)


GOOD_EVENTS: list[dict[str, Any]] = [
    BASE,
    {**BASE, "event_id": "e-1", "ts": 1_767_225_600_123, "type": "tool_call", "role": "tool"},
    {**BASE, "event_id": "e-2", "ts": 1_767_225_600_123.5, "user_id": "ann"},
    {**BASE, "event_id": "e-3", "ts": "2026-03-15T12:00:00+02:00", "type": "note"},
    {**BASE, "event_id": "e-4", "ts": "2026-03-15T10:00:00", "text": ""},
    {**BASE, "event_id": "e-5", "ts": "2026-03-15T10:00:00.5Z", "user_id": None},
    {**BASE, "event_id": " spaced id ", "text": "ünïcödé 😀 and a tab\tinside"},
    {**BASE, "event_id": "x" * 200, "session_id": "😀" * 200},
    {**BASE, "event_id": "e-6", "text": "export PGPASSWORD=hunter2xyz && psql"},
    {**BASE, "event_id": "e-7", "metadata": {"tool": "Bash", "duration_ms": 12, "ok": True}},
    {
        **BASE,
        "event_id": "e-8",
        "text": "token: ghp_" + "a1B2" * 9,
        "metadata": {"api_key": "abc123secret", "nested": {"x": ["Bearer abcdefgh12345678"]}},
    },
    {**BASE, "event_id": "e-9", "text": "nul\x00here", "metadata": {"k\x00": ["v\x00", 1.5]}},
    {**BASE, "event_id": "e-10", "metadata": {}, "type": "session_end"},
]


@pytest.mark.parametrize("event", GOOD_EVENTS)
def test_one_good_event_takes_the_fast_path_and_writes_the_same_wire(event: dict[str, Any]) -> None:
    body = orjson.dumps(event)
    assert took_fast_path(body)
    assert_same(body, [event])


def test_a_batch_of_good_events_takes_the_fast_path_and_writes_the_same_wire() -> None:
    events = GOOD_EVENTS
    for body in (orjson.dumps({"events": events}), orjson.dumps(events)):
        assert took_fast_path(body)
        assert_same(body, events)


def test_redaction_counts_are_recorded_on_the_fast_path() -> None:
    event = {**BASE, "event_id": "r", "text": "PGPASSWORD=hunter2xyz"}
    event["metadata"] = {"db_password": "x1y2z3"}
    got = fast(orjson.dumps(event))
    assert isinstance(got, list) and len(got) == 1
    wire = got[0]
    data = orjson.loads(wire)
    assert "hunter2xyz" not in data["text"] and "x1y2z3" not in wire.decode()
    assert data["metadata"]["_redactions"] == {"password": 2}


# Values for each field, good and bad; ABSENT leaves the key out.
POOL: dict[str, list[Any]] = {
    "event_id": [ABSENT, None, "", "e", "x" * 200, "x" * 201, "a\nb", "a\x7fb", " e ", 5, ["e"]],
    "ts": [
        ABSENT,
        None,
        1_767_225_600_000,
        1_767_225_600_000.25,
        1_767_225_600,
        True,
        "2026-03-15T10:00:00Z",
        "2026-03-15T12:00:00+02:00",
        "2026-03-15T10:00:00",
        "last tuesday",
        "",
        [],
        32_503_680_000_001,
    ],
    "project_id": [ABSENT, None, "", "p", "x" * 201, "a\tb", 7, "proj ect/ü", "😀" * 201],
    "agent_id": [ABSENT, "a", "", "x" * 200, False],
    "session_id": [ABSENT, "s", "\x00", {"s": 1}],
    "user_id": [ABSENT, None, "", "u", "x" * 201, "a\x00b", 3],
    "role": [ABSENT, None, "user", "tool", "system", "robot", "", 1, "User"],
    "type": [ABSENT, None, "message", "note", "tool_result", "thought", 2],
    "text": [ABSENT, None, "", "hello", "password=hunter2abc", "a\x00b", "ünï", 42, "x" * 5000],
    "metadata": [
        ABSENT,
        None,
        {},
        {"k": 1},
        {"password": "hunter2abc", "n": [1, "a\x00"]},
        [1],
        "s",
        {"big": "y" * 4090},
    ],
    "sesion_id": [ABSENT, ABSENT, ABSENT, "typo"],
}


def _random_event(rng: random.Random) -> dict[str, Any]:
    event: dict[str, Any] = {}
    for name, values in POOL.items():
        # mostly good values, so that whole batches are often valid
        value = rng.choice(values) if rng.random() < 0.12 else BASE.get(name, ABSENT)
        if value is not ABSENT:
            event[name] = value
    return event


def test_random_events_get_the_same_answer_from_both_paths() -> None:
    rng = random.Random(20260501)
    fast_taken = refused = 0
    for _ in range(600):
        events = [_random_event(rng) for _ in range(rng.choice((1, 1, 3)))]
        single = len(events) == 1 and rng.random() < 0.5
        body = orjson.dumps(events[0] if single else {"events": events})
        assert_same(body, events)
        fast_taken += took_fast_path(body)
        refused += isinstance(reference(body), ApiError)
    # both paths must really have been exercised, or the comparison proves nothing
    assert fast_taken > 150 and refused > 150, (fast_taken, refused)


@pytest.mark.parametrize(
    "body",
    [
        b'{"project_id": ',
        b'{"text": "\xff\xfe"}',
        b'"just a string"',
        b'{"events": {"a": 1}}',
        b'{"events": []}',
        b'{"events": [], "x": 1}',
        orjson.dumps({"events": [BASE] * 1001}),
    ],
)
def test_bodies_refused_before_any_event_is_looked_at(body: bytes) -> None:
    want, got = reference(body), fast(body)
    assert isinstance(want, ApiError) and isinstance(got, ApiError)
    assert (got.status, got.code, got.field, got.message) == (
        want.status,
        want.code,
        want.field,
        want.message,
    )


@pytest.mark.parametrize("over", [0, 1])
def test_the_size_limit_is_the_same_to_the_byte(over: int) -> None:
    meta = {"k": "y" * 100}
    meta_bytes = len(orjson.dumps(meta))
    text = "ü" * ((OPTIONS.max_event_bytes - meta_bytes) // 2) + "x" * (over + meta_bytes % 2)
    event = {**BASE, "event_id": "big", "text": text, "metadata": meta}
    assert len(text.encode()) + meta_bytes == OPTIONS.max_event_bytes + over
    body = orjson.dumps({"events": [BASE, event]})
    assert took_fast_path(body) is (over == 0)
    assert_same(body, [BASE, event])
